import ClinicKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The phone network of a test: what the outbox gives the gateway.
final class TextRecorder: TextSender, Sendable {
    let sent = Mutex<[(to: String, body: String, deliveryId: Int64)]>([])
    func send(to number: String, text: TextMessage, deliveryId: Int64) throws -> String {
        sent.withLock { $0.append((number, text.body, deliveryId)) }
        return "202 0: Accepted for delivery"
    }
}

/// The mobile number and the SMS gateway's callbacks (issue 45) through the HTTP front: a number
/// confirmed by its code, the choices in `PATCH /v1/me`, bad input refused with its code and
/// nothing changed; the gateway's incoming texts and delivery reports only with its key and
/// signature, counted in `/metrics`.
@Suite struct PhoneAPITestsInProcess {
    static let secret = "a-secret-the-gateway-shows-0123"
    static let environment = ["CLINIC_SMS_URL": "http://127.0.0.1:9/cgi-bin/sendsms", "CLINIC_SMS_USER": "clinic",
                              "CLINIC_SMS_PASSWORD": "pw", "CLINIC_SMS_FROM": "Clinic", "CLINIC_SMS_SECRET": secret,
                              "CLINIC_SMS_CALLBACK_URL": "http://127.0.0.1:8080"]

    func incoming(_ server: InProcessServer, key: String = secret, from: String, text: String) async throws -> InProcessServer.Reply {
        let query = [("key", key), ("from", from), ("text", text)].map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        }.joined(separator: "&")
        return try await server.send(.get, "/v1/texts/incoming?" + query)
    }

    @Test func aNumberIsConfirmedByItsCodeAndTheGatewayIsHeardOnlyWithItsKey() async throws {
        // The server's own outbox sends the texts, to this recorder instead of Kannel.
        let recorder = TextRecorder()
        try await InProcessServer.run(environment: Self.environment, textSender: recorder) { server in
            let anna = try await server.patient("ph-anna")
            let before = try server.fingerprint()
            for bad in ["202 555 0143", "+1 800 555 0143", "+1 202 555 01", String(repeating: "9", count: 100)] {
                let refused = try await server.send(.put, "/v1/me/phone", json: ["phone": bad], token: anna)
                #expect(refused.status == 400 && refused.errorCode == "invalid_input", "\(bad): \(refused.text)")
            }
            #expect(try await server.send(.put, "/v1/me/phone", json: ["number": "+12025550143"], token: anna).status == 400)
            let early = try await server.send(.patch, "/v1/me", json: ["textOffers": false], token: anna)
            #expect(early.status == 404, "no number yet: \(early.text)")
            #expect(try server.fingerprint() == before, "refusals change nothing")

            let set = try await server.send(.put, "/v1/me/phone", json: ["phone": "+1 (202) 555-0143"], token: anna)
            #expect(set.status == 202, "\(set.text)")
            #expect(set.object["phone"] as? String == "+12025550143" && set.object["phoneConfirmed"] as? Bool == false)
            // Asking for a code wakes the outbox: the code is sent within a moment (wait up to 10 s).
            for _ in 0..<100 where recorder.sent.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(100)) }
            #expect(recorder.sent.withLock { $0.count } == 1)
            let code = try #require(recorder.sent.withLock { $0.first?.body }?.firstMatch(of: /\d{6}/)).output
            let wrong = try await server.send(.post, "/v1/me/phone/confirm", json: ["code": code == "000000" ? "111111" : "000000"],
                                              token: anna)
            #expect(wrong.status == 400 && wrong.errorCode == "invalid_input", "\(wrong.text)")
            let confirmed = try await server.send(.post, "/v1/me/phone/confirm", json: ["code": String(code)], token: anna)
            #expect(confirmed.status == 200 && confirmed.object["phoneConfirmed"] as? Bool == true, "\(confirmed.text)")
            let me = try await server.send(.get, "/v1/me", token: anna)
            #expect(me.object["phone"] as? String == "+12025550143" && me.object["phoneConfirmed"] as? Bool == true)
            let patched = try await server.send(.patch, "/v1/me", json: ["textOffers": false], token: anna)
            #expect(patched.status == 200 && patched.object["textOffers"] as? Bool == false
                    && patched.object["textReminders"] as? Bool == true, "\(patched.text)")

            // The gateway: its key, a known number, one answer to a STOP.
            #expect(try await incoming(server, key: "wrong", from: "+12025550143", text: "STOP").status == 403)
            #expect(try await server.send(.get, "/v1/texts/incoming?from=%2B12025550143&text=STOP").status == 403)
            // A number nobody confirmed: nothing changes and nothing goes back; answered 200 all the
            // same, since the gateway asks again after any other status.
            let unchanged = try server.fingerprint()
            let stranger = try await incoming(server, from: "+12025559999", text: "STOP")
            #expect(stranger.status == 200 && stranger.text.isEmpty, "\(stranger.text)")
            #expect(try server.fingerprint() == unchanged)
            let stop = try await incoming(server, from: "+12025550143", text: "STOP")
            #expect(stop.status == 200 && stop.text == "You will get no more texts from us. Reply START to get them again.")
            #expect(stop.headers["X-Kannel-Coding"].isEmpty, "GSM-7")
            #expect(stop.headers["Content-Type"].first?.hasPrefix("text/plain") == true)
            let again = try await incoming(server, from: "+12025550143", text: "stop")
            #expect(again.status == 200 && again.text.isEmpty, "answered once")
            #expect(try await server.send(.get, "/v1/me/phone", token: anna).object["textsStopped"] as? Bool == true)

            // Delivery reports: only at the address the outbox signed.
            let delivery = try #require(recorder.sent.withLock { $0.first?.deliveryId })
            let signature = try #require(try SMSSettings.from(environment: Self.environment)).reportSignature(deliveryId: delivery)
            #expect(try await server.send(.get, "/v1/texts/report?delivery=\(delivery)&sig=00&status=1").status == 403)
            #expect(try await server.send(.get, "/v1/texts/report?delivery=\(delivery + 1)&sig=\(signature)&status=1").status == 403)
            // Signed but with nothing to record: answered 200 (the gateway would ask again in vain).
            #expect(try await server.send(.get, "/v1/texts/report?delivery=\(delivery)&sig=\(signature)&status=x").status == 200)
            #expect(try await server.send(.get, "/v1/texts/report?delivery=\(delivery)&sig=\(signature)&status=1").status == 200,
                    "Kannel asks again after any status but 200 and 202")
            let metrics = try await server.send(.get, "/metrics").text
            #expect(metrics.contains("clinic_texts_total{event=\"delivered\"} 1"), "\(metrics.split(separator: "\n").filter { $0.contains("texts") })")
            #expect(metrics.contains("clinic_texts_total{event=\"opted_out\"} 1"))
            #expect(metrics.contains("clinic_texts_total{event=\"unknown_sender\"} 1"))

            #expect(try await server.send(.delete, "/v1/me/phone", token: anna).status == 204)
            #expect(try await server.send(.get, "/v1/me", token: anna).object["phone"] == nil)
        }
    }

    @Test func withoutAGatewayItsCallbacksAreNotHere() async throws {
        try await InProcessServer.run { server -> Void in
            let incoming = try await server.send(.get, "/v1/texts/incoming?key=x&from=%2B12025550143&text=STOP")
            let report = try await server.send(.get, "/v1/texts/report?delivery=1&sig=00&status=1")
            #expect(incoming.status == 404 && report.status == 404)
        }
    }
}
