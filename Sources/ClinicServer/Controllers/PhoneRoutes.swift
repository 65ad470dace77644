import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Text messages (issue 45): the signed-in patient's mobile number (`/v1/me/phone`), and what
/// the SMS gateway brings back (`/v1/texts/…`): incoming texts, shown by the shared key
/// (`CLINIC_SMS_SECRET`), and delivery reports, each at the signed address the outbox gave the
/// gateway. The rules are `ClientController+Phone`'s and `TextController`'s.
struct PhoneRoutes {
    struct PhoneBody: Decodable, Sendable { let phone: String }
    struct CodeBody: Decodable, Sendable { let code: String }

    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        let patient = group.group("me/phone").add(middleware: PatientAuthenticator(dependencies: dependencies))
        patient.get(use: phone)
        patient.put(use: setPhone)
        patient.delete(use: removePhone)
        patient.post("confirm", use: confirm)
        group.get("texts/incoming", use: incoming)
        group.get("texts/report", use: report)
    }

    @Sendable func phone(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let status = try await dependencies.awaited(patient.language) { [system] in try await system.clients.phone(clientId: patient.id) }
        return try HTTPMapping.json(PhoneJSON(status))
    }

    @Sendable func setPhone(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let body = try await RequestBody.decode(PhoneBody.self, from: request, context: context)
        let address = context.clientAddress
        let status = try await dependencies.codeSent(patient.language) { [system] in
            try await system.clients.setPhone(clientId: patient.id, number: body.phone, from: address)
        }
        return try HTTPMapping.json(PhoneJSON(status), status: .accepted)
    }

    @Sendable func confirm(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        try dependencies.checkAuthRate(context, patient.language) // a code guess, as a log-in is
        let body = try await RequestBody.decode(CodeBody.self, from: request, context: context)
        let status = try await dependencies.awaited(patient.language) { [system] in
            try await system.clients.confirmPhone(clientId: patient.id, code: body.code)
        }
        return try HTTPMapping.json(PhoneJSON(status))
    }

    @Sendable func removePhone(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        try await dependencies.awaited(patient.language) { [system] in try await system.clients.removePhone(clientId: patient.id) }
        return Response(status: .noContent)
    }

    /// The gateway's settings; without them its callbacks are not here.
    func gateway(_ context: APIContext) throws -> SMSSettings {
        guard let sms = dependencies.settings.sms else { throw APIFailure(ServerError(.notFound, .routeNotFound, "/v1/texts")) }
        return sms
    }

    /// `GET /v1/texts/incoming?key=&from=&text=`: a text from a phone. The answer's body (plain
    /// text) is what the gateway texts back; empty for none.
    @Sendable func incoming(_ request: Request, context: APIContext) async throws -> Response {
        let sms = try gateway(context)
        let query = request.uri.queryParameters
        guard let key = query.get("key"), sms.isSecret(key) else { throw ClinicError(.forbidden, .textKeyWrong) }
        let from = String((query.get("from") ?? "").prefix(40)), text = String((query.get("text") ?? "").prefix(1000))
        let answer: String?
        do {
            let handled = try await dependencies.awaited(context.language) { [system] in try await system.texts.handle(from: from, text: text) }
            answer = handled.reply
            switch handled.consent {
            case .optedOut: dependencies.metrics.texts("opted_out")
            case .optedIn: dependencies.metrics.texts("opted_in")
            case nil: break
            }
        } catch let failure as APIFailure where Self.isUnknownSender(failure) {
            // A number no patient confirmed: nothing changed, nothing texted back. Answered 200
            // all the same: the gateway asks again after any other status, and this one will
            // never be known; the log and the metrics tell it.
            dependencies.metrics.texts("unknown_sender")
            context.logger.info("text from an unknown number", metadata: ["code": "not_found"])
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"])
        }
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
        // Kannel sends the answer as GSM-7 unless told otherwise: a Russian answer is UCS-2.
        if let answer, TextMessage(answer).coding == .ucs2, let coding = HTTPField.Name("X-Kannel-Coding") { headers[coding] = "2" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: answer ?? "")))
    }

    static func isUnknownSender(_ failure: APIFailure) -> Bool {
        if case .library(let error) = failure.problem { return error.key == .textUnknownNumber }
        return false
    }

    /// `GET /v1/texts/report?delivery=&sig=&status=`: a delivery report. Answered 200 (Kannel
    /// asks again after any other status, 204 included).
    @Sendable func report(_ request: Request, context: APIContext) async throws -> Response {
        let sms = try gateway(context)
        let query = request.uri.queryParameters
        guard let delivery = query.get("delivery").flatMap(Int64.init), delivery > 0,
              let signature = query.get("sig"), sms.isReportSignature(signature, deliveryId: delivery) else {
            throw ClinicError(.forbidden, .textKeyWrong)
        }
        // A report signed for this delivery is answered 200 even when there is nothing to record
        // (an unknown status, a delivery gone with its account): asking again would not help.
        let status = query.get("status").flatMap(Int.init) ?? -1
        do {
            let recorded = try await dependencies.awaited(context.language) { [system] in
                try await system.texts.report(deliveryId: delivery, status: status)
            }
            switch recorded {
            case .delivered: dependencies.metrics.texts("delivered")
            case .failed, .rejected: dependencies.metrics.texts("failed")
            case .accepted, .buffered: break
            }
        } catch let failure as APIFailure where failure.status == .badRequest || failure.status == .notFound {
            context.logger.info("delivery report not recorded", metadata: ["code": "\(failure.code)", "delivery": "\(delivery)"])
        }
        return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"])
    }
}
