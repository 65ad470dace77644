import Foundation
import HTTPTypes
import Testing

/// The waitlist's pinned API (issue 45) against the server with its worker running: a patient
/// waits, another cancels, the first is offered the time (within the worker's interval) and
/// books it; refusals are answered with their codes and change nothing.
@Suite struct WaitlistAPITestsInProcess {
    @Test func aWaitingPatientIsOfferedTheCancelledTimeAndBooksIt() async throws {
        try await InProcessServer.run(environment: ["CLINIC_WAITLIST_INTERVAL": "100"]) { server in
            let anna = try await server.patient("wl-anna"), bob = try await server.patient("wl-bob")
            let (department, _) = try await server.department()
            let start = try await server.freeSlot(department)
            let booked = try await server.send(.post, "/v1/appointments", json: ["departmentId": department, "start": start], token: anna)
            #expect(booked.status == 201, "\(booked.text)")
            let appointment = try #require(booked.object["id"] as? Int)

            let joined = try await server.send(.post, "/v1/waitlist", json: ["departmentId": department], token: bob)
            #expect(joined.status == 201, "\(joined.text)")
            #expect(joined.object["status"] as? String == "waiting")
            let entry = try #require(joined.object["id"] as? Int)
            #expect(try await server.send(.get, "/v1/waitlist", token: bob).object["items"].map { ($0 as? [Any])?.count } == 1)
            #expect(joined.object["paused"] as? Bool == false)
            // Issue 55: resuming is the entry's patient's alone; it answers the entry.
            let resumed = try await server.send(.post, "/v1/waitlist/\(entry)/resume", token: bob)
            #expect(resumed.status == 200 && resumed.object["paused"] as? Bool == false, "\(resumed.text)")
            #expect(try await server.send(.post, "/v1/waitlist/\(entry)/resume", token: anna).status == 404)

            // Refusals: twice at one department, a window in the past, hours across midnight, no such department.
            let before = try server.fingerprint()
            let twice = try await server.send(.post, "/v1/waitlist", json: ["departmentId": department], token: bob)
            #expect(twice.status == 409 && twice.errorCode == "already_waiting", "\(twice.text)")
            let past = try await server.send(.post, "/v1/waitlist", json: ["departmentId": department, "from": "2020-01-01",
                                                                           "to": "2020-01-02"], token: anna)
            #expect(past.status == 400 && past.errorCode == "invalid_input", "\(past.text)")
            let hours = try await server.send(.post, "/v1/waitlist", json: ["departmentId": department, "hoursFrom": "22:00",
                                                                            "hoursTo": "02:00"], token: anna)
            #expect(hours.status == 400, "\(hours.text)")
            let nowhere = try await server.send(.post, "/v1/waitlist", json: ["departmentId": 99_999_999], token: anna)
            #expect(nowhere.status == 404, "\(nowhere.text)")
            #expect(try server.fingerprint() == before, "refusals change nothing")

            let cancelled = try await server.send(.post, "/v1/appointments/\(appointment)/cancel", token: anna)
            #expect(cancelled.status == 200, "\(cancelled.text)")
            // The worker offers it within its interval (100 ms here): wait up to 10 s.
            var offer: [String: Any]?
            for _ in 0..<100 {
                offer = (try await server.send(.get, "/v1/waitlist/offers", token: bob).object["items"] as? [[String: Any]])?.first
                if offer != nil { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let offered = try #require(offer, "the cancelled time was offered")
            #expect(offered["start"] as? String == start && offered["entryId"] as? Int == entry)
            let offerId = try #require(offered["id"] as? Int)
            // Held for Bob: Anna cannot book it back.
            let again = try await server.send(.post, "/v1/appointments", json: ["departmentId": department, "start": start], token: anna)
            #expect(again.status == 409, "\(again.text)")
            #expect(try await server.send(.post, "/v1/waitlist/offers/\(offerId)/accept", token: anna).status == 404)

            let accepted = try await server.send(.post, "/v1/waitlist/offers/\(offerId)/accept", token: bob,
                                                 headers: ["Idempotency-Key": "wl-accept-1"])
            #expect(accepted.status == 201, "\(accepted.text)")
            #expect(accepted.object["start"] as? String == start && accepted.object["status"] as? String == "scheduled")
            let replay = try await server.send(.post, "/v1/waitlist/offers/\(offerId)/accept", token: bob,
                                               headers: ["Idempotency-Key": "wl-accept-1"])
            #expect(replay.status == 201 && replay.object["id"] as? Int == accepted.object["id"] as? Int, "a retry books once")
            let twiceAccepted = try await server.send(.post, "/v1/waitlist/offers/\(offerId)/accept", token: bob)
            #expect(twiceAccepted.status == 422 && twiceAccepted.errorCode == "invalid_transition", "\(twiceAccepted.text)")
            #expect((try await server.send(.get, "/v1/waitlist", token: bob).object["items"] as? [Any])?.isEmpty == true)

            // Leaving: Anna joins and leaves; a second leave is not found.
            // With an `Idempotency-Key` (issue 56: kept in the join's own transaction): a retry
            // replays the entry, the key with another body is refused.
            let annas = try await server.send(.post, "/v1/waitlist", json: ["departmentId": department, "weekdays": [1, 2, 3]],
                                              token: anna, headers: ["Idempotency-Key": "wl-join-1"])
            #expect(annas.status == 201 && (annas.object["weekdays"] as? [Int]) == [1, 2, 3], "\(annas.text)")
            let retried = try await server.send(.post, "/v1/waitlist", json: ["departmentId": department, "weekdays": [1, 2, 3]],
                                                token: anna, headers: ["Idempotency-Key": "wl-join-1"])
            #expect(retried.status == 201 && retried.headers["Idempotent-Replayed"].first == "true", "\(retried.text)")
            #expect(retried.object["id"] as? Int == annas.object["id"] as? Int)
            let reused = try await server.send(.post, "/v1/waitlist", json: ["departmentId": department], token: anna,
                                               headers: ["Idempotency-Key": "wl-join-1"])
            #expect(reused.errorCode == "idempotency_key_reused", "\(reused.text)")
            let annasId = try #require(annas.object["id"] as? Int)
            #expect(try await server.send(.delete, "/v1/waitlist/\(annasId)", token: bob).status == 404)
            #expect(try await server.send(.delete, "/v1/waitlist/\(annasId)", token: anna).status == 204)
            #expect(try await server.send(.delete, "/v1/waitlist/\(annasId)", token: anna).status == 404)
            #expect(try await server.send(.post, "/v1/waitlist/offers/\(offerId)/decline", token: bob).status == 422)
            #expect(try await server.send(.get, "/v1/waitlist").status == 401)
            // `/v1/waitlist/offers` is GET's only, though `DELETE /v1/waitlist/{id}` has its shape (found by Schemathesis).
            let options = try await server.send(.options, "/v1/waitlist/offers", token: bob)
            #expect(options.status == 405 && options.headers["Allow"] == ["GET, HEAD"], "\(options.headers["Allow"])")
            #expect(try await server.send(.delete, "/v1/waitlist/offers", token: bob).status == 405)
            #expect(try await server.send(.options, "/v1/waitlist/5", token: bob).headers["Allow"] == ["DELETE"])
        }
    }

    @Test func theFrontDeskPutsAPatientOnMovesThemUpAndTakesThemOff() async throws {
        try await InProcessServer.run { server in
            let s = try await StaffAPITestsInProcess.makeWorld(server)
            let desk = try #require(s.tokens["desk-a"]), doctor = try #require(s.tokens["doctor-a"])
            let other = try #require(s.tokens["admin-b"])
            _ = try await server.patient("wl-phone")
            let added = try await server.send(.post, "/v1/staff/waitlist", json: [
                "patientLogin": "wl-phone", "departmentId": s.department, "priority": 3, "hoursFrom": "08:00", "hoursTo": "12:00"],
                token: desk)
            #expect(added.status == 201 && added.object["priority"] as? Int == 3, "\(added.text)")
            let entry = try #require(added.object["id"] as? Int)
            #expect(try await server.send(.post, "/v1/staff/waitlist", json: ["patientLogin": "wl-phone", "departmentId": s.department],
                                          token: doctor).status == 403, "a doctor does not run the front desk")
            #expect(try await server.send(.post, "/v1/staff/waitlist", json: ["patientLogin": "wl-phone", "departmentId": s.department],
                                          token: other).status == 404, "another clinic's department")
            let listed = try await server.send(.get, "/v1/staff/waitlist?departmentId=\(s.department)", token: desk)
            let items = try #require(listed.object["items"] as? [[String: Any]])
            #expect(items.map { $0["id"] as? Int } == [entry] && items.first?["patientName"] as? String == "Anna Smith", "\(listed.text)")
            #expect(((try await server.send(.get, "/v1/staff/waitlist", token: other)).object["items"] as? [Any])?.isEmpty == true)
            let moved = try await server.send(.patch, "/v1/staff/waitlist/\(entry)", json: ["priority": 9], token: desk)
            #expect(moved.status == 200 && moved.object["priority"] as? Int == 9, "\(moved.text)")
            #expect(try await server.send(.patch, "/v1/staff/waitlist/\(entry)", json: ["priority": 5000], token: desk).status == 400)
            #expect(try await server.send(.delete, "/v1/staff/waitlist/\(entry)", token: other).status == 404)
            #expect(try await server.send(.delete, "/v1/staff/waitlist/\(entry)", token: desk).status == 204)
            #expect(try await server.send(.delete, "/v1/staff/waitlist/\(entry)", token: desk).status == 404)
        }
    }
}
