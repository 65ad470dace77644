import Foundation
import NIOCore
import HTTPTypes
import Testing

/// Issue 23's defects where a user meets them, over HTTP in process: each test failed before
/// its fix.
@Suite struct HostileRunTestsInProcess {
    // MARK: 1. A deleted patient's access log

    @Test func aDeletedPatientsLogGoesToNoOneWhoRegistersAfter() async throws {
        try await InProcessServer.run { server in
            let s = try await StaffAPITestsInProcess.makeWorld(server)
            let desk = try #require(s.tokens["desk-a"])
            // The receptionist reads the day (patient.read) and writes to the patient (message.send).
            let day = try await s.server.send(.GET, "/v1/staff/schedule?date=\(s.monday)", token: desk)
            #expect(day.status == 200, "\(day.text)")
            let sent = try await s.server.send(.POST, "/v1/staff/messages",
                                               json: ["patientLogin": "stafftest", "text": "Your HIV test result is ready"], token: desk)
            #expect(sent.status == 201, "\(sent.text)")
            let before = try await s.server.send(.GET, "/v1/me/access-log", token: s.patient)
            #expect(before.text.contains("HIV"), "\(before.text)")
            let oldId = try s.server.scalar("SELECT id FROM clients WHERE login = 'stafftest'")

            let deleted = try await s.server.send(.DELETE, "/v1/me", json: ["password": ServerHarness.password], token: s.patient)
            #expect(deleted.status == 200, "\(deleted.text)")
            let stranger = try await s.server.patient("newcomer")
            let newId = try s.server.scalar("SELECT id FROM clients WHERE login = 'newcomer'")
            #expect(newId > oldId, "an id is never given twice")
            let log = try await s.server.send(.GET, "/v1/me/access-log", token: stranger)
            #expect(log.status == 200)
            #expect(log.array.count == 0, "\(log.text)")
            #expect(!(log.text.contains("HIV")))
            // The rows stay for the chain.
            #expect(try s.server.scalar("SELECT count(*) FROM audit_events WHERE client_id = \(oldId)") > 0)
        }
    }

    // MARK: 2. What staff learn of a patient's other bookings

    @Test func staffBookingSaysNothingOfOtherClinicsAndIsInTheAccessLog() async throws {
        try await InProcessServer.run { server in
            let s = try await StaffAPITestsInProcess.makeWorld(server)
            let desk = try #require(s.tokens["desk-a"])
            // A time free both at clinic A and at Reno.
            let renoDepartment = try await s.server.renoDepartment()
            let reno = try await s.server.send(.GET, "/v1/departments/\(renoDepartment)/slots?days=14")
            let here = try await s.server.send(.GET, "/v1/departments/\(s.department)/slots?days=14")
            func free(_ reply: InProcessServer.Reply) -> Set<String> {
                Set(reply.array.filter { $0["isAvailable"] as? Bool == true }.compactMap { $0["start"] as? String })
            }
            // Not during the patient's own booking from makeWorld: its slot stays free at clinic A
            // (a second doctor), and which common time is third depends on the day the test runs.
            let mine = try await s.server.send(.GET, "/v1/appointments", token: s.patient)
            let busy = ((mine.object["items"] as? [[String: Any]]) ?? []).compactMap { item -> (String, String)? in
                guard let start = item["start"] as? String, let end = item["end"] as? String else { return nil }
                return (start, end)
            }
            #expect(busy.count == 1, "\(mine.text)")
            let ends = Dictionary(here.array.compactMap { slot -> (String, String)? in
                guard let start = slot["start"] as? String, let end = slot["end"] as? String else { return nil }
                return (start, end)
            }, uniquingKeysWith: { first, _ in first })
            let common = free(reno).intersection(free(here)).sorted().filter { start in
                let end = ends[start] ?? start
                return !busy.contains { $0.0 < end && start < $0.1 } // UTC instants in one format order as text
            }
            let time = try #require(common.dropFirst(2).first)
            let own = try await s.server.send(.POST, "/v1/appointments", json: ["departmentId": renoDepartment, "start": time], token: s.patient)
            #expect(own.status == 201, "\(own.text)")
            let renoAppointment = try #require(own.object["id"] as? Int)

            let clash = try await s.server.send(.POST, "/v1/staff/appointments",
                                                json: ["patientLogin": "stafftest", "departmentId": s.department, "start": time], token: desk)
            #expect(clash.status == 409, "\(clash.text)")
            #expect(clash.errorCode == "patient_unavailable")
            #expect(!(try #require(clash.errorMessage).contains(String(renoAppointment))), "\(clash.text)")

            #expect(try s.server.cli(["admin", "settings", "set", "booking.max_active", "2"]).status == 0)
            let other = try #require(free(here).sorted().last)
            let limit = try await s.server.send(.POST, "/v1/staff/appointments",
                                                json: ["patientLogin": "stafftest", "departmentId": s.department, "start": other], token: desk)
            #expect(limit.status == 409, "\(limit.text)")
            #expect(limit.errorCode == "patient_unavailable")
            #expect(!(try #require(limit.errorMessage).contains("2")), "\(limit.text)")

            let log = try await s.server.send(.GET, "/v1/me/access-log", token: s.patient)
            #expect(log.array.filter { $0["action"] as? String == "appointment.book-refused" }.count == 2, "\(log.text)")
        }
    }

    // MARK: 3. The calendar address after a password change

    @Test func aPasswordChangeAndSigningOutElsewhereRenewTheCalendarAddress() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("feeder")
            let issued = try await server.send(.POST, "/v1/me/calendar-token", token: token)
            #expect(issued.status == 201, "\(issued.text)")
            let first = try #require(issued.object["token"] as? String)
            let feed = try await server.send(.GET, "/v1/me/calendar.ics?token=\(first)")
            #expect(feed.status == 200)

            let changed = try await server.send(.POST, "/v1/me/password",
                                                json: ["oldPassword": ServerHarness.password, "newPassword": "a brand new long passphrase"],
                                                token: token)
            #expect(changed.status == 200, "\(changed.text)")
            let stale = try await server.send(.GET, "/v1/me/calendar.ics?token=\(first)")
            #expect(stale.status == 404, "the feed read before the change stops working")
            let renewed = try await server.send(.GET, "/v1/me/calendar-token", token: token)
            let second = try #require(renewed.object["token"] as? String)
            #expect(second != first)
            let fresh = try await server.send(.GET, "/v1/me/calendar.ics?token=\(second)")
            #expect(fresh.status == 200)
            let inbox = try await server.send(.GET, "/v1/messages", token: token)
            #expect(inbox.array.filter { $0["kind"] as? String == "account" }.count == 1, "\(inbox.text)")

            // "Sign out everywhere else": the other device and the address go, this session stays.
            let body: [String: Any] = ["login": "feeder", "password": "a brand new long passphrase"]
            let other = try await server.send(.POST, "/v1/sessions", json: body)
            let otherToken = try #require(other.object["token"] as? String)
            let ended = try await server.send(.DELETE, "/v1/sessions/others", token: token)
            #expect(ended.status == 204, "\(ended.text)")
            let gone = try await server.send(.GET, "/v1/me", token: otherToken)
            #expect(gone.status == 401)
            let kept = try await server.send(.GET, "/v1/me", token: token)
            #expect(kept.status == 200)
            let staleAgain = try await server.send(.GET, "/v1/me/calendar.ics?token=\(second)")
            #expect(staleAgain.status == 404)
        }
    }

    // MARK: 4. Password checks made with a session

    @Test func passwordChecksWithASessionCountTowardsTheLogInLock() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("guessed")
            var statuses: [Int] = []
            for attempt in 0..<8 {
                let reply = attempt % 2 == 0
                    ? try await server.send(.POST, "/v1/me/password", json: ["oldPassword": "wrong guess \(attempt)",
                                                                             "newPassword": "another long passphrase"], token: token)
                    : try await server.send(.DELETE, "/v1/me", json: ["password": "wrong guess \(attempt)"], token: token)
                statuses.append(reply.status)
            }
            #expect(Array(statuses.prefix(5)) == [401, 401, 401, 401, 401])
            #expect(Array(statuses.suffix(3)) == [429, 429, 429], "locked after five, as log-in is")
            #expect(try server.scalar("SELECT failures FROM login_attempts") == 5)
            let login = try await server.send(.POST, "/v1/sessions", json: ["login": "guessed", "password": ServerHarness.password])
            #expect(login.status == 429, "the lock holds for log-in too")
            #expect(login.errorCode == "account_locked")
        }
    }

    // MARK: 7. Searches that find nothing

    @Test func aVisitNoScheduleHoldsIsRefusedAndSearchesSayWhetherTheyAreComplete() async throws {
        try await InProcessServer.run { server in
            let long = try await server.send(.GET, "/v1/find?specialization=therapy&lat=36.3&lon=-119.6&minutes=480&before=2099-01-01T00:00:00Z")
            #expect(long.status == 400, "\(long.text)")
            #expect(long.errorCode == "invalid_input")
            let found = try await server.send(.GET, "/v1/find?specialization=therapy&lat=36.3&lon=-119.6")
            #expect(found.status == 200, "\(found.text)")
            #expect(found.headers["Search-Complete"].first == "true")
        }
    }

    // MARK: 10. A space typed into a form

    @Test func aPlusInAQueryIsASpaceAndAnUnknownSpecializationIsAnError() async throws {
        try await InProcessServer.run { server in
            let nearest = try await server.send(.GET, "/v1/clinics/nearest?address=Reno,+NV")
            #expect(nearest.status == 200, "\(nearest.text)")
            #expect(nearest.array.first?["name"] as? String == "Renown Regional")
            let find = try await server.send(.GET, "/v1/find?specialization=emergency+medicine&address=Reno,+NV")
            #expect(find.status == 200, "\(find.text)")
            #expect(find.array.count == 1, "\(find.text)")
            let city = try await server.send(.GET, "/v1/clinics?city=los+angeles")
            #expect((city.object["items"] as? [Any])?.count == 2, "\(city.text)")
            let filtered = try await server.send(.GET, "/v1/clinics/nearest?address=Reno,+NV&specialization=emergency+medicine&limit=5")
            #expect(filtered.array.count == 1, "\(filtered.text)")
            let typo = try await server.send(.GET, "/v1/find?specialization=cardiolgy&address=Reno,+NV")
            #expect(typo.status == 404, "\(typo.text)")
            #expect(typo.errorCode == "not_found")
            #expect(try #require(typo.errorMessage).contains("cardiology"), "\(typo.text)")
            let russian = try await server.send(.GET, "/v1/clinics/nearest?address=Reno,+NV&specialization=kardio", headers: ["Accept-Language": "ru"])
            #expect(russian.status == 404)
            #expect(try #require(russian.errorMessage).contains("кардиология"), "\(russian.text)")
        }
    }

    // MARK: 22. Street addresses


    // MARK: 22. Street addresses

    @Test func aStreetAddressIsAskedOfTheGeocoderOnceAndFallsBackToTheZIPCode() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nominatim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("queries.log"), portFile = folder.appendingPathComponent("port")
        let geocoder = Process()
        geocoder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        geocoder.arguments = ["python3", URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/nominatim.py").path, log.path, portFile.path]
        try geocoder.run()
        defer { kill(geocoder.processIdentifier, SIGKILL) }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: portFile.path) && Date() < deadline && geocoder.isRunning { usleep(20_000) }
        let port = try String(contentsOf: portFile, encoding: .utf8)
        try await InProcessServer.run(geocoderURL: "http://127.0.0.1:\(port)") { server in

            let address = "4650 Sunset Blvd, Los Angeles, CA 90027".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let first = try await server.send(.GET, "/v1/geocode?q=\(address)")
            #expect(first.status == 200, "\(first.text)")
            #expect(first.object["precision"] as? String == "address", "\(first.text)")
            #expect(abs((try #require(first.object["lat"] as? Double)) - (34.0976)) <= 1e-6)
            let again = try await server.send(.GET, "/v1/geocode?q=\(address)")
            #expect(again.object["precision"] as? String == "address")
            let nearest = try await server.send(.GET, "/v1/clinics/nearest?address=\(address)")
            #expect(nearest.array.first?["name"] as? String == "Children's Hospital", "\(nearest.text)")
            let asked = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
            #expect(asked == ["4650 Sunset Blvd, Los Angeles, CA 90027"], "asked once, then answered from the cache")

            // An address the geocoder does not know: the ZIP code's centre, and the answer says so.
            let unknown = "1 Nowhere Lane, Los Angeles, CA 90027".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let fallback = try await server.send(.GET, "/v1/geocode?q=\(unknown)")
            #expect(fallback.status == 200, "\(fallback.text)")
            #expect(fallback.object["precision"] as? String == "postcode", "\(fallback.text)")
            // A city is no street: the geocoder is not asked.
            _ = try await server.send(.GET, "/v1/geocode?q=Reno,+NV")
            #expect(try String(contentsOf: log, encoding: .utf8).split(separator: "\n").count == 2)
        }
    }

    // MARK: 18. Duplicate JSON keys

    @Test func aBodyNamingAKeyTwiceIsRefused() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("twice")
            let (department, _) = try await server.department()
            let first = try await server.freeSlot(department), second = try await server.freeSlot(department, skipping: 1)
            let before = try server.fingerprint()
            for body in [#"{"departmentId": \#(department), "start": "\#(first)", "start": "\#(second)"}"#,
                         #"{"departmentId": \#(department), "start": "\#(first)", "st\u0061rt": "\#(second)"}"#] {
                let reply = try await server.send(.POST, "/v1/appointments", raw: Data(body.utf8), token: token,
                                                  headers: ["Content-Type": "application/json", "Idempotency-Key": UUID().uuidString])
                #expect(reply.status == 400, "\(reply.text)")
                #expect(reply.errorCode == "invalid_input")
                #expect(try #require(reply.errorMessage).contains("start"), "\(reply.text)")
            }
            #expect(try server.fingerprint() == before)
            // The same key in two different objects is not a duplicate.
            let nested = #"{"login": "twice", "password": "\#(ServerHarness.password)", "#
                + #""device": {"name": "a", "platform": "android", "appVersion": "1", "password": "b"}}"#
            let session = try await server.send(.POST, "/v1/sessions", raw: Data(nested.utf8), headers: ["Content-Type": "application/json"])
            #expect(session.status == 201, "\(session.text)")
        }
    }

    // MARK: 19. The booking horizon

    @Test func bookingsPastTheHorizonAreRefused() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("farahead")
            let (department, _) = try await server.department()
            let before = try server.fingerprint()
            let far = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": "9999-12-31T09:00:00Z"],
                                            token: token)
            #expect(far.status == 422, "\(far.text)")
            #expect(far.errorCode == "slot_unavailable")
            #expect(try #require(far.errorMessage).contains("365"), "\(far.text)")
            #expect(try server.fingerprint() == before)
            #expect(try server.cli(["admin", "settings", "set", "booking.horizon_days", "3"]).status == 0)
            let slots = try await server.send(.GET, "/v1/departments/\(department)/slots?days=14")
            let limit = Date().addingTimeInterval(3 * 86_400 + 60)
            let formatter = ISO8601DateFormatter()
            for slot in slots.array where slot["isAvailable"] as? Bool == true {
                let startText = try #require(slot["start"] as? String)
                let start = try #require(formatter.date(from: startText))
                #expect(start <= limit, "no free slot is offered past the horizon")
            }
        }
    }
}

extension InProcessServer {
    /// A department of the Reno clinic.
    func renoDepartment() async throws -> Int {
        let clinics = try await send(.GET, "/v1/clinics?limit=100")
        guard let reno = (clinics.object["items"] as? [[String: Any]])?.first(where: { $0["name"] as? String == "Renown Regional" })?["id"] as? Int,
              let department = try await send(.GET, "/v1/clinics/\(reno)/departments").array.first?["id"] as? Int else {
            throw InProcessError.failed("no Reno department")
        }
        return department
    }
}

/// The web app as a browser without JavaScript meets it: cookies kept by hand, redirects not followed.
@Suite struct WebFormTestsInProcess {
    @Test func theFormsTokenIsTiedToTheSessionAndRenewedAtLogIn() async throws {
        try await InProcessServer.run { server in
            _ = try await server.patient("webber")

            // A made-up cookie and a form token to match it: refused, as before any page was read.
            let madeUp = String(repeating: "ab", count: 32)
            let forged = try await server.web(.POST, "/login", cookies: ["clinic_csrf": madeUp],
                                       form: ["csrf": madeUp, "login": "webber", "password": ServerHarness.password])
            #expect(forged.status == 403, "\(forged.text)")

            let loginPage = try await server.web(.GET, "/login", cookies: [:])
            let nonce = try #require(loginPage.cookie("clinic_csrf"))
            let anonymous = try #require(loginPage.csrf)
            #expect(anonymous != nonce, "the token is not the cookie")
            let signedIn = try await server.web(.POST, "/login", cookies: ["clinic_csrf": nonce],
                                         form: ["csrf": anonymous, "login": "webber", "password": ServerHarness.password])
            #expect(signedIn.status == 303, "\(signedIn.text)")
            let session = try #require(signedIn.cookie("clinic_session"))
            let renewedNonce = try #require(signedIn.cookie("clinic_csrf"))
            #expect(renewedNonce != nonce, "log-in renews the forms' cookie")

            let home = try await server.web(.GET, "/", cookies: ["clinic_csrf": nonce, "clinic_session": session])
            let bound = try #require(home.csrf)
            #expect(bound != anonymous, "a token read before the log-in")
            let stale = try await server.web(.POST, "/logout", cookies: ["clinic_csrf": nonce, "clinic_session": session],
                                      form: ["csrf": anonymous])
            #expect(stale.status == 403, "…is good for nothing after it")

            // A booking on the web is counted in the metrics like the API's (item 16).
            let (department, _) = try await server.department()
            let start = try await server.freeSlot(department)
            let booked = try await server.web(.POST, "/appointments", cookies: ["clinic_csrf": nonce, "clinic_session": session],
                                       form: ["csrf": bound, "department": String(department), "start": start])
            #expect(booked.status == 303, "\(booked.text)")
            let metrics = try await server.send(.GET, "/metrics")
            #expect(metrics.text.contains(#"clinic_appointment_changes_total{operation="book",outcome="ok"} 1"#), "\(metrics.text)")

            let out = try await server.web(.POST, "/logout", cookies: ["clinic_csrf": nonce, "clinic_session": session],
                                    form: ["csrf": bound])
            #expect(out.status == 303)
        }
    }

    @Test func staffPagesAndActionsComeFromTheLibrarysRule() async throws {
        try await InProcessServer.run { server in
            let s = try await StaffAPITestsInProcess.makeWorld(server)
            let loginPage = try await s.server.web(.GET, "/staff", cookies: [:])
            #expect(!(loginPage.text.contains(#"href="/register""#)), "no patients' menu on the staff's pages")
            let nonce = try #require(loginPage.cookie("clinic_csrf"))
            let signedIn = try await s.server.web(.POST, "/staff/login", cookies: ["clinic_csrf": nonce],
                                         form: ["csrf": try #require(loginPage.csrf), "login": "desk-a", "password": StaffAPITestsInProcess.staffPassword])
            #expect(signedIn.status == 303, "\(signedIn.text)")
            let staff = try #require(signedIn.cookie("clinic_staff"))
            let early = try await s.server.web(.GET, "/staff?date=\(s.monday)", cookies: ["clinic_csrf": nonce, "clinic_staff": staff])
            #expect(early.status == 200)
            #expect(!(early.text.contains(#"href="/register""#)))
            // Days ahead: no check-in offered (issue 42). Planted a few minutes ahead, today at the clinic:
            // check-in and cancel, never complete (a receptionist may not) nor no-show (not yet begun).
            #expect(!(early.text.contains("/staff/appointments/\(s.appointment)/check-in")))
            let today = try s.server.plantToday(s.appointment)
            let day = try await s.server.web(.GET, "/staff?date=\(today)", cookies: ["clinic_csrf": nonce, "clinic_staff": staff])
            #expect(day.text.contains("/staff/appointments/\(s.appointment)/check-in"))
            #expect(day.text.contains("/staff/appointments/\(s.appointment)/cancel"))
            #expect(!(day.text.contains("/staff/appointments/\(s.appointment)/complete")), "\(day.text)")
            #expect(!(day.text.contains("/staff/appointments/\(s.appointment)/no-show")), "\(day.text)")
            let checkIn = try await s.server.web(.POST, "/staff/appointments/\(s.appointment)/check-in",
                                        cookies: ["clinic_csrf": nonce, "clinic_staff": staff], form: ["csrf": try #require(day.csrf), "date": s.monday])
            #expect(checkIn.status == 303, "\(checkIn.text)")
            let after = try await s.server.web(.GET, "/staff?date=\(today)", cookies: ["clinic_csrf": nonce, "clinic_staff": staff])
            #expect(!(after.text.contains("/staff/appointments/\(s.appointment)/complete")), "checked in: still not the receptionist's")
            #expect(!(after.text.contains("/staff/appointments/\(s.appointment)/check-in")))
            let metrics = try await s.server.send(.GET, "/metrics")
            #expect(metrics.text.contains(#"clinic_appointment_changes_total{operation="check-in",outcome="ok"} 1"#), "\(metrics.text)")
        }
    }
}
