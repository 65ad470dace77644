import Foundation
@testable import ClinicStoreSQLite
import GRDB
import HTTPTypes
import Testing

/// The server's application in this process (`InProcessServer`, HummingbirdTesting's router
/// client): every endpoint, the error codes with the database unchanged after each refusal,
/// idempotent replays, limits, languages, the CLI sharing sessions with the API (the `clinic`
/// binary beside it), a writer lock held elsewhere, and a double-booking race.
@Suite struct APIEndToEndTestsInProcess {
    @Test func healthReadinessAndHeaders() async throws {
        try await InProcessServer.run { server in
            let health = try await server.send(.GET, "/healthz")
            #expect(health.status == 200)
            #expect(health.object["status"] as? String == "ok")
            let ready = try await server.send(.GET, "/readyz")
            #expect(ready.status == 200)
            #expect(ready.object["status"] as? String == "ready")
            #expect(ready.object["schemaVersion"] as? Int == ready.object["latestVersion"] as? Int)
            #expect(health.headers["X-Content-Type-Options"].first == "nosniff")
            #expect(health.headers["Cache-Control"].first == "no-store")
            #expect(health.headers["Strict-Transport-Security"].isEmpty, "HSTS only under TLS")
        }
    }

    @Test func patientJourney() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("anna", device: ["name": "Anna's phone", "platform": "android", "appVersion": "2.1"])

            let me = try await server.send(.GET, "/v1/me", token: token)
            #expect(me.status == 200)
            #expect(me.object["login"] as? String == "anna")
            #expect(me.object["city"] as? String == "Boston")
            let bostonLat = try #require(me.object["lat"] as? Double)

            // Editing the city geocodes it again.
            let patched = try await server.send(.PATCH, "/v1/me", json: ["city": "Reno"], token: token)
            #expect(patched.status == 200, "\(patched.text)")
            #expect(patched.object["city"] as? String == "Reno")
            #expect(abs((try #require(patched.object["lat"] as? Double)) - (bostonLat)) > 1)

            // Devices: named, never with a token.
            let sessions = try await server.send(.GET, "/v1/sessions", token: token)
            #expect(sessions.status == 200)
            #expect(sessions.array.count == 1)
            #expect((sessions.array.first?["device"] as? [String: Any])?["name"] as? String == "Anna's phone")
            #expect(sessions.array.first?["current"] as? Bool == true)
            #expect(!(sessions.text.contains(token)))

            let policy = try await server.send(.GET, "/v1/privacy-policy", headers: ["Accept-Language": "ru"])
            #expect(policy.object["language"] as? String == "ru")
            #expect((policy.object["version"] as? Int) != nil)

            let (department, clinicId) = try await server.department()
            let clinic = try await server.send(.GET, "/v1/clinics/\(clinicId)")
            #expect(clinic.status == 200)
            #expect(!((clinic.object["departments"] as? [Any] ?? []).isEmpty))
            let doctors = try await server.send(.GET, "/v1/departments/\(department)/doctors")
            #expect(doctors.status == 200)
            #expect(!(doctors.array.isEmpty))

            // Book with a key; the retry gets the same answer and books nothing more.
            let start = try await server.freeSlot(department)
            let key = UUID().uuidString
            let booking: [String: Any] = ["departmentId": department, "start": start, "notes": "first visit"]
            let booked = try await server.send(.POST, "/v1/appointments", json: booking, token: token, headers: ["Idempotency-Key": key])
            #expect(booked.status == 201, "\(booked.text)")
            let appointmentId = try #require(booked.object["id"] as? Int)
            #expect(booked.object["start"] as? String == start)
            let before = try server.fingerprint()
            let replay = try await server.send(.POST, "/v1/appointments", json: booking, token: token, headers: ["Idempotency-Key": key])
            #expect(replay.status == 201)
            #expect(replay.body == booked.body)
            #expect(replay.headers["Idempotent-Replayed"].first == "true")
            let reused = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start, "notes": "other"],
                                               token: token, headers: ["Idempotency-Key": key])
            #expect(reused.status == 422)
            #expect(reused.errorCode == "idempotency_key_reused")
            #expect(try server.fingerprint() == before, "a replay and a reused key change nothing")
            #expect(try server.scalar("SELECT count(*) FROM appointments") == 1)

            // The slot is now taken for the department's slots view.
            let shown = try await server.send(.GET, "/v1/appointments/\(appointmentId)", token: token)
            #expect(shown.status == 200)
            #expect((shown.object["history"] as? [[String: Any]])?.first?["event"] as? String == "booked")

            let list = try await server.send(.GET, "/v1/appointments?scope=upcoming", token: token)
            #expect((list.object["items"] as? [[String: Any]])?.count == 1)
            #expect(list.object.keys.contains("nextCursor"))
            #expect(list.object["nextCursor"] is NSNull)

            // Reschedule (with a key, replayed), then cancel.
            let later = try await server.freeSlot(department, skipping: 3)
            let moveKey = UUID().uuidString
            let moved = try await server.send(.POST, "/v1/appointments/\(appointmentId)/reschedule", json: ["start": later], token: token,
                                              headers: ["Idempotency-Key": moveKey])
            #expect(moved.status == 200, "\(moved.text)")
            #expect(moved.object["start"] as? String == later)
            let movedAgain = try await server.send(.POST, "/v1/appointments/\(appointmentId)/reschedule", json: ["start": later],
                                                   token: token, headers: ["Idempotency-Key": moveKey])
            #expect(movedAgain.body == moved.body)
            let history = try await server.send(.GET, "/v1/appointments/\(appointmentId)", token: token)
            #expect((history.object["history"] as? [[String: Any]])?.compactMap { $0["event"] as? String } == ["booked", "rescheduled"])
            let cancelled = try await server.send(.POST, "/v1/appointments/\(appointmentId)/cancel", token: token)
            #expect(cancelled.status == 200, "\(cancelled.text)")
            #expect(cancelled.object["status"] as? String == "cancelled")
            let cancelledAgain = try await server.send(.POST, "/v1/appointments/\(appointmentId)/cancel", token: token)
            #expect(cancelledAgain.status == 422)
            #expect(cancelledAgain.errorCode == "invalid_transition")

            let export = try await server.send(.GET, "/v1/me/export", token: token)
            #expect(export.status == 200)
            #expect((export.object["appointments"] as? [Any])?.count == 1)
            #expect(export.headers["Cache-Control"].first == "no-store")

            // A password change ends the other sessions, not this one.
            let other = try await server.logIn("anna")
            let changed = try await server.send(.POST, "/v1/me/password", json: ["oldPassword": ServerHarness.password,
                                                                                 "newPassword": "a different long passphrase"], token: token)
            #expect(changed.status == 200, "\(changed.text)")
            let ended = try await server.send(.GET, "/v1/me", token: other)
            #expect(ended.status == 401)
            #expect(ended.headers["WWW-Authenticate"].first == "Bearer")
            #expect(try await server.send(.GET, "/v1/me", token: token).status == 200)

            // Delete: a wrong password changes nothing; the right one removes the patient.
            let wrong = try await server.send(.DELETE, "/v1/me", json: ["password": "not it at all"], token: token)
            #expect(wrong.status == 401)
            #expect(wrong.errorCode == "invalid_credentials")
            let deleted = try await server.send(.DELETE, "/v1/me", json: ["password": "a different long passphrase"], token: token)
            #expect(deleted.status == 200, "\(deleted.text)")
            #expect(try server.scalar("SELECT count(*) FROM clients") == 0)
            #expect(try await server.send(.GET, "/v1/me", token: token).status == 401)
        }
    }

    @Test func sessionsSignOut() async throws {
        try await InProcessServer.run { server in
            let phone = try await server.patient("boris", device: ["name": "Phone", "platform": "ios", "appVersion": "1.0"])
            let laptop = try await server.logIn("boris", device: ["name": "Laptop", "platform": "web", "appVersion": "1.0"])
            // A request records a use of its session (awaited, before it is answered); the other one's stays.
            try server.execute("UPDATE sessions SET last_used_at = last_used_at - 3600")
            let sessions = try await server.send(.GET, "/v1/sessions", token: laptop)
            #expect(try server.scalar("SELECT count(*) FROM sessions WHERE last_used_at >= unixepoch() - 600") == 1)
            #expect(sessions.array.count == 2)
            let phoneId = try #require(sessions.array.first { ($0["device"] as? [String: Any])?["name"] as? String == "Phone" }?["id"] as? Int)
            #expect(try await server.send(.DELETE, "/v1/sessions/\(phoneId)", token: laptop).status == 204)
            #expect(try await server.send(.GET, "/v1/me", token: phone).status == 401)
            #expect(try await server.send(.DELETE, "/v1/sessions/\(phoneId)", token: laptop).status == 404)
            #expect(try await server.send(.DELETE, "/v1/sessions/current", token: laptop).status == 204)
            #expect(try await server.send(.GET, "/v1/me", token: laptop).status == 401)
            #expect(try server.scalar("SELECT count(*) FROM sessions") == 0)
        }
    }

    @Test func directorySearchAndPaging() async throws {
        try await InProcessServer.run { server in
            let first = try await server.send(.GET, "/v1/clinics?limit=2")
            #expect(first.status == 200)
            let firstItems = try #require(first.object["items"] as? [[String: Any]])
            #expect(firstItems.count == 2)
            let cursor = try #require(first.object["nextCursor"] as? String)
            let second = try await server.send(.GET, "/v1/clinics?limit=2&cursor=\(cursor)")
            let secondItems = try #require(second.object["items"] as? [[String: Any]])
            #expect(secondItems.count == 1)
            #expect(second.object["nextCursor"] is NSNull)
            let names = (firstItems + secondItems).compactMap { $0["name"] as? String }
            #expect(names == names.sorted())
            #expect(Set((firstItems + secondItems).compactMap { $0["id"] as? Int }).count == 3)
            #expect(try await server.send(.GET, "/v1/clinics?cursor=garbage").errorCode == "invalid_input")
            #expect(try await server.send(.GET, "/v1/clinics?limit=0").status == 400)
            #expect(try await server.send(.GET, "/v1/clinics?limit=101").status == 400)
            let reno = try await server.send(.GET, "/v1/clinics?city=Reno")
            #expect((reno.object["items"] as? [[String: Any]])?.count == 1)

            let nearest = try await server.send(.GET, "/v1/clinics/nearest?lat=34.06&lon=-118.26&limit=3")
            #expect(nearest.status == 200)
            let distances = nearest.array.compactMap { $0["distanceMeters"] as? Double }
            #expect(distances.count == 3)
            #expect(distances == distances.sorted())
            #expect(nearest.array.first?["name"] as? String == "Adventist Medical Center")
            let byAddress = try await server.send(.GET, "/v1/clinics/nearest?address=Reno,%20NV")
            #expect(byAddress.array.first?["name"] as? String == "Renown Regional")
            let pediatric = try await server.send(.GET, "/v1/clinics/nearest?lat=39.5&lon=-119.8&pediatric=true")
            #expect(pediatric.array.first?["name"] as? String == "Children's Hospital")
            #expect(try await server.send(.GET, "/v1/clinics/nearest?lat=34").errorCode == "invalid_input")
            #expect(try await server.send(.GET, "/v1/clinics/nearest?lat=34&lon=-118&address=Reno").errorCode == "invalid_input")
            #expect(try await server.send(.GET, "/v1/clinics/nearest?me=true").status == 401)

            let geocoded = try await server.send(.GET, "/v1/geocode?q=Reno,%20NV")
            #expect(geocoded.status == 200)
            #expect(geocoded.object["timeZone"] as? String == "America/Los_Angeles")
            #expect(try await server.send(.GET, "/v1/geocode").errorCode == "invalid_input")

            let (department, _) = try await server.department()
            let clinicId = try await server.department().clinicId
            let departments = try await server.send(.GET, "/v1/clinics/\(clinicId)/departments")
            let specialization = try #require(departments.array.first?["specialization"] as? String)
            let found = try await server.send(.GET, "/v1/find?specialization=\(specialization.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&lat=34&lon=-118")
            #expect(found.status == 200, "\(found.text)")
            #expect(found.array.first?["departmentId"] as? Int == department)
            #expect((found.array.first?["start"] as? String) != nil)

            let slots = try await server.send(.GET, "/v1/departments/\(department)/slots?days=2")
            #expect(slots.status == 200)
            #expect(slots.array.allSatisfy { $0["isAvailable"] is Bool && $0["doctorName"] is String })
            #expect(try await server.send(.GET, "/v1/departments/\(department)/slots?days=0").status == 400)
            #expect(try await server.send(.GET, "/v1/departments/999999/slots").status == 404)
            #expect(try await server.send(.GET, "/v1/clinics/999999").errorCode == "not_found")
            #expect(try await server.send(.GET, "/v1/clinics/abc").status == 404)
        }
    }

    /// Each refusal answers its code and status, and leaves the database as it was.
    @Test func errorsChangeNothing() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("carla")
            // A time two doctors of a department have free: one is booked, the other overlaps.
            var department = 0
            var slots: [[String: Any]] = []
            var sharedSlot: [String: Any]?
            for clinic in (try await server.send(.GET, "/v1/clinics").object["items"] as? [[String: Any]] ?? []) where sharedSlot == nil {
                for candidate in try await server.send(.GET, "/v1/clinics/\(clinic["id"] as? Int ?? 0)/departments").array where sharedSlot == nil {
                    department = candidate["id"] as? Int ?? 0
                    slots = try await server.send(.GET, "/v1/departments/\(department)/slots?days=14").array.filter { $0["isAvailable"] as? Bool == true && isFarEnoughAhead($0["start"] as? String ?? "") }
                    sharedSlot = slots.first { slot in slots.filter { $0["start"] as? String == slot["start"] as? String }.count > 1 }
                }
            }
            let shared = try #require(sharedSlot)
            let start = try #require(shared["start"] as? String)
            let doctors = slots.filter { $0["start"] as? String == start }.compactMap { $0["doctorId"] as? Int }
            let taken = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start, "doctorId": doctors[0]],
                                              token: token)
            #expect(taken.status == 201)
            let before = try server.fingerprint()

            struct Case { let method: HTTPRequest.Method; let path: String; let json: Any?; let raw: Data?; let headers: [String: String]
                          let token: Bool; let status: Int; let code: String }
            let register: [String: Any] = ["login": "dora", "password": ServerHarness.password, "name": "Dora", "surname": "Lee",
                                           "street": "Main St", "house": "1", "city": "Boston", "acceptPrivacy": true]
            var weak = register; weak["password"] = "password"
            var noConsent = register; noConsent["acceptPrivacy"] = false
            var taken409 = register; taken409["login"] = "carla"
            var noCity = register; noCity["city"] = "Qwxzzy Nowhere"
            let cases: [Case] = [
                Case(method: .POST, path: "/v1/patients", json: nil, raw: Data("{".utf8), headers: ["Content-Type": "application/json"],
                     token: false, status: 400, code: "invalid_input"),
                Case(method: .POST, path: "/v1/patients", json: ["login": 5], raw: nil, headers: [:], token: false, status: 400, code: "invalid_input"),
                Case(method: .POST, path: "/v1/patients", json: nil, raw: Data("login=x".utf8),
                     headers: ["Content-Type": "application/x-www-form-urlencoded"], token: false, status: 415, code: "unsupported_media_type"),
                Case(method: .POST, path: "/v1/patients", json: weak, raw: nil, headers: [:], token: false, status: 422, code: "weak_password"),
                Case(method: .POST, path: "/v1/patients", json: noConsent, raw: nil, headers: [:], token: false, status: 403,
                     code: "privacy_not_accepted"),
                Case(method: .POST, path: "/v1/patients", json: taken409, raw: nil, headers: [:], token: false, status: 409, code: "login_taken"),
                Case(method: .POST, path: "/v1/patients", json: noCity, raw: nil, headers: [:], token: false, status: 400, code: "invalid_input"),
                Case(method: .POST, path: "/v1/sessions", json: ["login": "carla", "password": "wrong password here"], raw: nil, headers: [:],
                     token: false, status: 401, code: "invalid_credentials"),
                Case(method: .GET, path: "/v1/appointments", json: nil, raw: nil, headers: [:], token: false, status: 401, code: "not_logged_in"),
                Case(method: .GET, path: "/v1/appointments", json: nil, raw: nil, headers: ["Authorization": "Bearer " + String(repeating: "a", count: 64)],
                     token: false, status: 401, code: "not_logged_in"),
                Case(method: .GET, path: "/v1/appointments?scope=later", json: nil, raw: nil, headers: [:], token: true, status: 400, code: "invalid_input"),
                Case(method: .POST, path: "/v1/appointments", json: ["departmentId": department, "start": start, "doctorId": doctors[0]], raw: nil,
                     headers: [:], token: true, status: 409, code: "slot_taken"),
                Case(method: .POST, path: "/v1/appointments", json: ["departmentId": department, "start": start, "doctorId": doctors[1]], raw: nil,
                     headers: [:], token: true, status: 409, code: "overlapping_appointment"),
                Case(method: .POST, path: "/v1/appointments", json: ["departmentId": department, "start": "tomorrow-ish"], raw: nil, headers: [:],
                     token: true, status: 400, code: "invalid_input"),
                Case(method: .POST, path: "/v1/appointments", json: ["departmentId": department, "start": "2020-01-06T10:00:00Z"], raw: nil,
                     headers: [:], token: true, status: 422, code: "slot_unavailable"),
                Case(method: .POST, path: "/v1/appointments", json: ["departmentId": 999999, "start": start], raw: nil, headers: [:],
                     token: true, status: 404, code: "not_found"),
                Case(method: .POST, path: "/v1/appointments", json: ["departmentId": department, "start": start], raw: nil,
                     headers: ["Idempotency-Key": String(repeating: "k", count: 300)], token: true, status: 400, code: "invalid_input"),
                Case(method: .POST, path: "/v1/appointments", json: nil, raw: Data(repeating: 0x20, count: 1 << 20),
                     headers: ["Content-Type": "application/json"], token: true, status: 413, code: "too_large"),
                Case(method: .GET, path: "/v1/clinics", json: nil, raw: Data(repeating: 0x20, count: 1 << 20), headers: [:], token: false,
                     status: 413, code: "too_large"),
                Case(method: .PUT, path: "/v1/clinics", json: nil, raw: nil, headers: [:], token: false, status: 405, code: "method_not_allowed"),
                Case(method: .RAW(value: "QUERY"), path: "/v1/appointments/1", json: nil, raw: nil, headers: [:], token: true, status: 405,
                     code: "method_not_allowed"),
                Case(method: .GET, path: "/v1/departments/\(department)/slots?from=9999-12-31", json: nil, raw: nil, headers: [:], token: false,
                     status: 400, code: "invalid_input"),
                Case(method: .GET, path: "/v1/nothing-here", json: nil, raw: nil, headers: [:], token: false, status: 404, code: "not_found"),
                Case(method: .POST, path: "/v1/appointments/999999/cancel", json: nil, raw: nil, headers: [:], token: true, status: 404, code: "not_found"),
            ]
            for item in cases {
                let reply = try await server.send(item.method, item.path, json: item.json, raw: item.raw, token: item.token ? token : nil,
                                                  headers: item.headers)
                #expect(reply.status == item.status, "\(item.method) \(item.path): \(reply.text)")
                #expect(reply.errorCode == item.code, "\(item.method) \(item.path)")
                #expect(!((reply.errorMessage ?? "").isEmpty))
                #expect(reply.headers["Content-Type"].first == "application/json; charset=utf-8")
                if item.status == 401 { #expect(reply.headers["WWW-Authenticate"].first == "Bearer") }
                #expect(try server.fingerprint() == before, "\(item.method) \(item.path) changed the database")
            }
            #expect(!(server.serverLog.contains(token)), "tokens never reach the log")
            #expect(!(server.serverLog.contains(ServerHarness.password)))
            #expect(server.serverLog.contains("route=/v1/appointments/{id}/cancel") || server.serverLog.contains("route=/v1/appointments/:id/cancel"), "\(server.serverLog)")
        }
    }

    @Test func anotherPatientsAppointmentIsNotFound() async throws {
        try await InProcessServer.run { server in
            let owner = try await server.patient("erin")
            let stranger = try await server.patient("fred")
            let (department, _) = try await server.department()
            let start = try await server.freeSlot(department)
            let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start], token: owner)
            let id = try #require(booked.object["id"] as? Int)
            let before = try server.fingerprint()
            let later = try await server.freeSlot(department, skipping: 2)
            for (method, path, body) in [(HTTPRequest.Method.GET, "/v1/appointments/\(id)", nil as [String: Any]?),
                                         (.POST, "/v1/appointments/\(id)/reschedule", ["start": later]),
                                         (.POST, "/v1/appointments/\(id)/cancel", nil)] {
                let reply = try await server.send(method, path, json: body, token: stranger)
                #expect(reply.status == 404, "\(method) \(path): 404, not 403, so ids do not leak")
                #expect(reply.errorCode == "not_found")
            }
            #expect(try server.fingerprint() == before)
            let theirs = try await server.send(.GET, "/v1/appointments", token: stranger)
            #expect((theirs.object["items"] as? [Any])?.count == 0)
        }
    }

    @Test func russianMessages() async throws {
        try await InProcessServer.run { server in
            let reply = try await server.send(.GET, "/v1/clinics/999999", headers: ["Accept-Language": "ru-RU,ru;q=0.9,en;q=0.5"])
            #expect(reply.errorCode == "not_found")
            #expect((reply.errorMessage ?? "").range(of: "\\p{Cyrillic}", options: .regularExpression) != nil, "\(reply.text)")
            let english = try await server.send(.GET, "/v1/clinics/999999", headers: ["Accept-Language": "de, en;q=0.3"])
            #expect(((english.errorMessage ?? "").range(of: "\\p{Cyrillic}", options: .regularExpression)) == nil)
            // Without the header, a patient's saved language.
            let registered = try await server.send(.POST, "/v1/patients", json: [
                "login": "galina", "password": ServerHarness.password, "name": "Галина", "surname": "Петрова", "street": "Main St",
                "house": "5", "city": "Boston", "language": "ru", "acceptPrivacy": true,
            ])
            #expect(registered.status == 201, "\(registered.text)")
            let token = try await server.logIn("galina")
            let refusal = try await server.send(.GET, "/v1/appointments/999999", token: token)
            #expect((refusal.errorMessage ?? "").range(of: "\\p{Cyrillic}", options: .regularExpression) != nil, "\(refusal.text)")
        }
    }

    @Test func tokensAreSharedWithTheCLI() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("hana")
            // The API's token in the CLI's session file.
            try (token + "\n").write(toFile: server.sessionPath, atomically: true, encoding: .utf8)
            #expect(chmod(server.sessionPath, 0o600) == 0)
            let whoami = try server.cli(["whoami", "--json"])
            #expect(whoami.status == 0, "\(whoami.stderr)")
            #expect(whoami.stdout.contains("\"login\" : \"hana\""), "\(whoami.stdout)")
            // A CLI log-in's token on the API.
            let login = try server.cli(["login", "--login", "hana", "--password-stdin"], input: ServerHarness.password + "\n")
            #expect(login.status == 0, "\(login.stderr)")
            let cliToken = try String(contentsOfFile: server.sessionPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(cliToken != token)
            let me = try await server.send(.GET, "/v1/me", token: cliToken)
            #expect(me.status == 200)
            #expect(me.object["login"] as? String == "hana")
            // Logging out in the CLI ends it for the API.
            #expect(try server.cli(["logout"]).status == 0)
            #expect(try await server.send(.GET, "/v1/me", token: cliToken).status == 401)
        }
    }

    @Test func rateLimitOnLogIns() async throws {
        try await InProcessServer.run(authBurst: 3, authPerMinute: 1) { server in
            var statuses: [Int] = []
            var retryAfter: String?
            for _ in 0..<5 {
                let reply = try await server.send(.POST, "/v1/sessions", json: ["login": "nobody", "password": "whatever it is"])
                statuses.append(reply.status)
                if reply.status == 429 {
                    retryAfter = reply.headers["Retry-After"].first
                    #expect(reply.errorCode == "rate_limited")
                }
            }
            #expect(statuses == [401, 401, 401, 429, 429])
            #expect(Int(retryAfter ?? "") ?? 0 > 0)
            // Registration shares the bucket; other routes do not.
            #expect(try await server.send(.POST, "/v1/patients", json: ["login": "x"]).status == 429)
            #expect(try await server.send(.GET, "/v1/clinics").status == 200)
        }
    }

    @Test func accountLockedAnswers429WithRetryAfter() async throws {
        try await InProcessServer.run { server in
            _ = try await server.patient("ivan")
            var last: InProcessServer.Reply?
            for _ in 0..<6 {
                last = try await server.send(.POST, "/v1/sessions", json: ["login": "ivan", "password": "not the password"])
            }
            #expect(last?.status == 429)
            #expect(last?.errorCode == "account_locked")
            #expect(Int(last?.headers["Retry-After"].first ?? "") ?? 0 > 0)
        }
    }

    /// The booking limit answers 422 `limit_reached`; a writer lock held elsewhere past the
    /// busy limit answers 503 `busy` with `Retry-After`; neither changes anything.
    @Test func limitReachedAndBusy() async throws {
        try await InProcessServer.run { server in
            #expect(try server.cli(["admin", "settings", "set", "booking.max_active", "1"]).status == 0)
            let token = try await server.patient("jane")
            let (department, _) = try await server.department()
            let first = try await server.freeSlot(department)
            let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": first], token: token)
            #expect(booked.status == 201, "\(booked.text)")
            let before = try server.fingerprint()
            let second = try await server.freeSlot(department, skipping: 5)
            let limited = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": second], token: token)
            #expect(limited.status == 422, "\(limited.text)")
            #expect(limited.errorCode == "limit_reached")
            #expect(try server.fingerprint() == before)

            // Another process holds the writers' lock (as a long import would).
            let descriptor = open(server.databasePath + ".lock", O_RDWR | O_CREAT, 0o600)
            #expect(descriptor >= 0)
            #expect(flock(descriptor, LOCK_EX) == 0)
            let busy = try await server.send(.POST, "/v1/appointments/\(booked.object["id"] as? Int ?? 0)/cancel", token: token)
            flock(descriptor, LOCK_UN)
            close(descriptor)
            #expect(busy.status == 503, "\(busy.text)")
            #expect(busy.errorCode == "busy")
            #expect(Int(busy.headers["Retry-After"].first ?? "") ?? 0 > 0)
            #expect(try server.fingerprint() == before)
            // Once the lock is free, the same request goes through.
            let cancelled = try await server.send(.POST, "/v1/appointments/\(booked.object["id"] as? Int ?? 0)/cancel", token: token)
            #expect(cancelled.status == 200, "\(cancelled.text)")
        }
    }

    /// An operator's status change shows in the patient's access log, newest first, with no
    /// request or staff ids.
    @Test func accessLogShowsTheOperatorsChange() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("logged")
            let empty = try await server.send(.GET, "/v1/me/access-log", token: token)
            #expect(empty.array.count == 0, "\(empty.text)")
            let (department, _) = try await server.department()
            let start = try await server.freeSlot(department)
            let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start], token: token)
            #expect(booked.status == 201, "\(booked.text)")
            let id = try #require(booked.object["id"] as? Int)
            let changed = try server.cli(["admin", "appointment", "set-status", String(id), "confirmed"])
            #expect(changed.status == 0, "\(changed.stderr)")
            let log = try await server.send(.GET, "/v1/me/access-log", token: token)
            #expect(log.status == 200, "\(log.text)")
            #expect(log.array.map { $0["action"] as? String } == ["appointment.status"])
            #expect(log.array.first?["appointmentId"] as? Int == id)
            #expect(log.array.first?["role"] as? String == "operator")
            #expect(Set(log.array.first?.keys ?? [:].keys) == ["at", "actor", "role", "clinicId", "action", "appointmentId", "detail"])
            let anonymous = try await server.send(.GET, "/v1/me/access-log")
            #expect(anonymous.status == 401)
        }
    }

    /// A directory imported by the CLI while the server runs is searched at once, and a clinic
    /// renamed in the database is shown renamed.
    @Test func serverSeesADirectoryImportedByTheCLI() async throws {
        try await InProcessServer.run { server in
            let before = try await server.send(.GET, "/v1/clinics/nearest?lat=39.53&lon=-119.81")
            #expect(before.array.first?["name"] as? String == "Renown Regional")
            let file = server.folder.appendingPathComponent("more.csv")
            try """
                external_id,name,address,city,state,zip,lat,lon,category,is_pediatric,is_hospital
                RN2,Sparks Family Clinic,1 Main St,Reno,NV,89501,39.5301,-119.8101,CLINIC,0,0
                """.write(to: file, atomically: true, encoding: .utf8)
            let imported = try server.cli(["admin", "import-clinics", file.path])
            #expect(imported.status == 0, "\(imported.stderr)")
            let after = try await server.send(.GET, "/v1/clinics/nearest?lat=39.53&lon=-119.81")
            #expect(after.array.first?["name"] as? String == "Sparks Family Clinic")
            // A clinic renamed in place by another program (not a move: migration 9's trigger; the
            // server keeps clinic rows beside its index).
            let queue = try DatabaseQueue(path: server.databasePath)
            try await queue.write { db in try db.execute(sql: "UPDATE clinics SET name = 'Sparks Community Clinic' WHERE external_id = 'RN2'") }
            try queue.close()
            let later = try await server.send(.GET, "/v1/clinics/nearest?lat=39.53&lon=-119.81")
            #expect(later.array.first?["name"] as? String == "Sparks Community Clinic")
        }
    }

    /// 32 patients book one slot at once: exactly one 201, the others 409, one appointment.
    @Test func doubleBookingRace() async throws {
        try await InProcessServer.run { server in
            let (department, _) = try await server.department()
            let start = try await server.freeSlot(department)
            // One doctor's slot: the department may have several doctors at that time.
            let slots = try await server.send(.GET, "/v1/departments/\(department)/slots?days=14")
            let doctorId = try #require(slots.array.first { $0["start"] as? String == start }?["doctorId"] as? Int)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<32 { group.addTask { try await server.patient("racer\(index)") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(tokens.count == 32)
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for token in tokens {
                    group.addTask {
                        let reply = try await server.send(.POST, "/v1/appointments",
                                                          json: ["departmentId": department, "start": start, "doctorId": doctorId], token: token)
                        return (reply.status, reply.errorCode)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 201 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0.0 == 409 && $0.1 == "slot_taken" }.count == 31, "\(statuses)")
            #expect(try server.scalar("SELECT count(*) FROM appointments WHERE doctor_id = \(doctorId) AND status IN ('scheduled', 'confirmed')") == 1)
        }
    }
}
