import Foundation
import HTTPTypes
import Testing

/// FHIR's changes as the store's awaited use cases (issue 56): `$hold` kept under its key; `$book` of a hold with an
/// `Idempotency-Key` books once and answers a retry with the same Bundle, marked replayed; a
/// refusal is kept as its OperationOutcome; the hold is gone once booked.
@Suite struct FHIRChangesTestsInProcess {
    static func parameters(_ reference: String, comment: Bool = true) -> [String: Any] {
        var parameter: [[String: Any]] = [["name": "appointment-reference", "valueReference": ["reference": "Appointment/\(reference)"]]]
        if comment { parameter.append(["name": "comment", "valueString": "Knee, left"]) }
        return ["resourceType": "Parameters", "parameter": parameter]
    }

    @Test func aHoldBookedWithAKeyIsKeptAndARefusalToo() async throws {
        try await InProcessServer.run { server in
            let s = try await StaffAPITestsInProcess.makeWorld(server)
            let holder = try await server.patient("fhir-holder"), other = try await server.patient("fhir-other")
            let slots = try await server.send(.GET, "/v1/departments/\(s.department)/slots?from=\(s.monday)&days=1&doctorId=\(s.otherDoctor)")
            let slot = try #require(slots.array.first { $0["isAvailable"] as? Bool == true })
            let start = try #require(slot["start"] as? String)
            let instant = try #require(ISO8601DateFormatter().date(from: start))
            let proposal = "p-\(s.department)-\(s.otherDoctor)-\(Int(instant.timeIntervalSince1970))"
            let held = try await server.send(.POST, "/fhir/r4/Appointment/$hold", json: Self.parameters(proposal, comment: false),
                                             token: holder, headers: ["Idempotency-Key": "hold-1"])
            #expect(held.status == 200 && held.headers.first(name: "Idempotent-Replayed") == nil, "\(held.text)")
            let heldAgain = try await server.send(.POST, "/fhir/r4/Appointment/$hold", json: Self.parameters(proposal, comment: false),
                                                  token: holder, headers: ["Idempotency-Key": "hold-1"])
            #expect(heldAgain.status == 200 && heldAgain.headers.first(name: "Idempotent-Replayed") == "true")
            func resource(_ reply: InProcessServer.Reply) -> NSDictionary? {
                ((reply.object["entry"] as? [[String: Any]])?.first?["resource"] as? [String: Any]).map { NSDictionary(dictionary: $0) }
            }
            #expect(resource(heldAgain) != nil && resource(heldAgain) == resource(held), "the same hold, its expiry unchanged")
            // Held for everyone else, awaited and kept alike.
            let taken = try await server.send(.POST, "/fhir/r4/Appointment/$hold", json: Self.parameters(proposal, comment: false),
                                              token: other, headers: ["Idempotency-Key": "hold-2"])
            #expect(taken.status == 409 && taken.object["resourceType"] as? String == "OperationOutcome", "\(taken.text)")
            let hold = try #require(((held.object["entry"] as? [[String: Any]])?.first?["resource"] as? [String: Any])?["id"] as? String)

            // Another patient's hold is not found, kept so under their key.
            let refused = try await server.send(.POST, "/fhir/r4/Appointment/$book", json: Self.parameters(hold), token: other,
                                                headers: ["Idempotency-Key": "o-1"])
            #expect(refused.status == 404 && refused.object["resourceType"] as? String == "OperationOutcome", "\(refused.text)")
            let refusedAgain = try await server.send(.POST, "/fhir/r4/Appointment/$book", json: Self.parameters(hold), token: other,
                                                     headers: ["Idempotency-Key": "o-1"])
            #expect(refusedAgain.status == 404 && refusedAgain.body == refused.body)
            #expect(refusedAgain.headers.first(name: "Idempotent-Replayed") == "true")

            let booked = try await server.send(.POST, "/fhir/r4/Appointment/$book", json: Self.parameters(hold), token: holder,
                                               headers: ["Idempotency-Key": "h-1"])
            #expect(booked.status == 200, "\(booked.text)")
            #expect(booked.headers.first(name: "Content-Type")?.hasPrefix("application/fhir+json") == true)
            #expect(booked.headers.first(name: "Idempotent-Replayed") == nil)
            let resource = try #require((booked.object["entry"] as? [[String: Any]])?.first?["resource"] as? [String: Any])
            #expect(resource["status"] as? String == "booked" && resource["comment"] as? String == "Knee, left")
            let id = try #require(resource["id"] as? String)
            let replayed = try await server.send(.POST, "/fhir/r4/Appointment/$book", json: Self.parameters(hold), token: holder,
                                                 headers: ["Idempotency-Key": "h-1"])
            #expect(replayed.status == 200 && replayed.headers.first(name: "Idempotent-Replayed") == "true")
            let again = try #require((replayed.object["entry"] as? [[String: Any]])?.first?["resource"] as? [String: Any])
            #expect(again["id"] as? String == id && again["start"] as? String == resource["start"] as? String)
            // Without the key, the hold is gone.
            let gone = try await server.send(.POST, "/fhir/r4/Appointment/$book", json: Self.parameters(hold), token: holder)
            #expect(gone.status == 404 && gone.object["resourceType"] as? String == "OperationOutcome", "\(gone.text)")
            let mine = try await server.send(.GET, "/v1/appointments?scope=all", token: holder)
            #expect((mine.object["items"] as? [[String: Any]])?.count == 1, "\(mine.text)")

            // PATCH cancels it, awaited, answered with the appointment alone.
            let cancelled = try await server.send(.PATCH, "/fhir/r4/Appointment/\(id)",
                                                  raw: Data(#"[{"op":"replace","path":"/status","value":"cancelled"}]"#.utf8),
                                                  token: holder, headers: ["Content-Type": "application/json-patch+json"])
            #expect(cancelled.status == 200 && cancelled.object["status"] as? String == "cancelled", "\(cancelled.text)")
        }
    }
}
