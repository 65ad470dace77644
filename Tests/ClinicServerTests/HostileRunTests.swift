import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import XCTest

/// Issue 23's defects where a user meets them, over HTTP against the real server: each test
/// failed before its fix.
final class HostileRunTests: XCTestCase {
    // MARK: 1. A deleted patient's access log

    func testADeletedPatientsLogGoesToNoOneWhoRegistersAfter() async throws {
        let s = try await StaffAPITests.makeWorld()
        let desk = try XCTUnwrap(s.tokens["desk-a"])
        // The receptionist reads the day (patient.read) and writes to the patient (message.send).
        let day = try await s.server.send(.GET, "/v1/staff/schedule?date=\(s.monday)", token: desk)
        XCTAssertEqual(day.status, 200, day.text)
        let sent = try await s.server.send(.POST, "/v1/staff/messages",
                                           json: ["patientLogin": "stafftest", "text": "Your HIV test result is ready"], token: desk)
        XCTAssertEqual(sent.status, 201, sent.text)
        let before = try await s.server.send(.GET, "/v1/me/access-log", token: s.patient)
        XCTAssertTrue(before.text.contains("HIV"), before.text)
        let oldId = try s.server.scalar("SELECT id FROM clients WHERE login = 'stafftest'")

        let deleted = try await s.server.send(.DELETE, "/v1/me", json: ["password": ServerHarness.password], token: s.patient)
        XCTAssertEqual(deleted.status, 200, deleted.text)
        let stranger = try await s.server.patient("newcomer")
        let newId = try s.server.scalar("SELECT id FROM clients WHERE login = 'newcomer'")
        XCTAssertGreaterThan(newId, oldId, "an id is never given twice")
        let log = try await s.server.send(.GET, "/v1/me/access-log", token: stranger)
        XCTAssertEqual(log.status, 200)
        XCTAssertEqual(log.array.count, 0, log.text)
        XCTAssertFalse(log.text.contains("HIV"))
        // The rows stay for the chain.
        XCTAssertGreaterThan(try s.server.scalar("SELECT count(*) FROM audit_events WHERE client_id = \(oldId)"), 0)
    }

    // MARK: 2. What staff learn of a patient's other bookings

    func testStaffBookingSaysNothingOfOtherClinicsAndIsInTheAccessLog() async throws {
        let s = try await StaffAPITests.makeWorld()
        let desk = try XCTUnwrap(s.tokens["desk-a"])
        // A time free both at clinic A and at Reno.
        let renoDepartment = try await s.server.renoDepartment()
        let reno = try await s.server.send(.GET, "/v1/departments/\(renoDepartment)/slots?days=14")
        let here = try await s.server.send(.GET, "/v1/departments/\(s.department)/slots?days=14")
        func free(_ reply: ServerHarness.Reply) -> Set<String> {
            Set(reply.array.filter { $0["isAvailable"] as? Bool == true }.compactMap { $0["start"] as? String })
        }
        let common = free(reno).intersection(free(here)).sorted()
        let time = try XCTUnwrap(common.dropFirst(2).first)
        let own = try await s.server.send(.POST, "/v1/appointments", json: ["departmentId": renoDepartment, "start": time], token: s.patient)
        XCTAssertEqual(own.status, 201, own.text)
        let renoAppointment = try XCTUnwrap(own.object["id"] as? Int)

        let clash = try await s.server.send(.POST, "/v1/staff/appointments",
                                            json: ["patientLogin": "stafftest", "departmentId": s.department, "start": time], token: desk)
        XCTAssertEqual(clash.status, 409, clash.text)
        XCTAssertEqual(clash.errorCode, "patient_unavailable")
        XCTAssertFalse(try XCTUnwrap(clash.errorMessage).contains(String(renoAppointment)), clash.text)

        XCTAssertEqual(try s.server.cli(["admin", "settings", "set", "booking.max_active", "2"]).status, 0)
        let other = try XCTUnwrap(free(here).sorted().last)
        let limit = try await s.server.send(.POST, "/v1/staff/appointments",
                                            json: ["patientLogin": "stafftest", "departmentId": s.department, "start": other], token: desk)
        XCTAssertEqual(limit.status, 409, limit.text)
        XCTAssertEqual(limit.errorCode, "patient_unavailable")
        XCTAssertFalse(try XCTUnwrap(limit.errorMessage).contains("2"), limit.text)

        let log = try await s.server.send(.GET, "/v1/me/access-log", token: s.patient)
        XCTAssertEqual(log.array.filter { $0["action"] as? String == "appointment.book-refused" }.count, 2, log.text)
    }

    // MARK: 3. The calendar address after a password change

    func testAPasswordChangeAndSigningOutElsewhereRenewTheCalendarAddress() async throws {
        let server = try ServerHarness()
        let token = try await server.patient("feeder")
        let issued = try await server.send(.POST, "/v1/me/calendar-token", token: token)
        XCTAssertEqual(issued.status, 201, issued.text)
        let first = try XCTUnwrap(issued.object["token"] as? String)
        let feed = try await server.send(.GET, "/v1/me/calendar.ics?token=\(first)")
        XCTAssertEqual(feed.status, 200)

        let changed = try await server.send(.POST, "/v1/me/password",
                                            json: ["oldPassword": ServerHarness.password, "newPassword": "a brand new long passphrase"],
                                            token: token)
        XCTAssertEqual(changed.status, 200, changed.text)
        let stale = try await server.send(.GET, "/v1/me/calendar.ics?token=\(first)")
        XCTAssertEqual(stale.status, 404, "the feed read before the change stops working")
        let renewed = try await server.send(.GET, "/v1/me/calendar-token", token: token)
        let second = try XCTUnwrap(renewed.object["token"] as? String)
        XCTAssertNotEqual(second, first)
        let fresh = try await server.send(.GET, "/v1/me/calendar.ics?token=\(second)")
        XCTAssertEqual(fresh.status, 200)
        let inbox = try await server.send(.GET, "/v1/messages", token: token)
        XCTAssertEqual(inbox.array.filter { $0["kind"] as? String == "account" }.count, 1, inbox.text)

        // "Sign out everywhere else": the other device and the address go, this session stays.
        let body: [String: Any] = ["login": "feeder", "password": "a brand new long passphrase"]
        let other = try await server.send(.POST, "/v1/sessions", json: body)
        let otherToken = try XCTUnwrap(other.object["token"] as? String)
        let ended = try await server.send(.DELETE, "/v1/sessions/others", token: token)
        XCTAssertEqual(ended.status, 204, ended.text)
        let gone = try await server.send(.GET, "/v1/me", token: otherToken)
        XCTAssertEqual(gone.status, 401)
        let kept = try await server.send(.GET, "/v1/me", token: token)
        XCTAssertEqual(kept.status, 200)
        let staleAgain = try await server.send(.GET, "/v1/me/calendar.ics?token=\(second)")
        XCTAssertEqual(staleAgain.status, 404)
    }

    // MARK: 4. Password checks made with a session

    func testPasswordChecksWithASessionCountTowardsTheLogInLock() async throws {
        let server = try ServerHarness()
        let token = try await server.patient("guessed")
        var statuses: [Int] = []
        for attempt in 0..<8 {
            let reply = attempt % 2 == 0
                ? try await server.send(.POST, "/v1/me/password", json: ["oldPassword": "wrong guess \(attempt)",
                                                                         "newPassword": "another long passphrase"], token: token)
                : try await server.send(.DELETE, "/v1/me", json: ["password": "wrong guess \(attempt)"], token: token)
            statuses.append(reply.status)
        }
        XCTAssertEqual(Array(statuses.prefix(5)), [401, 401, 401, 401, 401])
        XCTAssertEqual(Array(statuses.suffix(3)), [429, 429, 429], "locked after five, as log-in is")
        XCTAssertEqual(try server.scalar("SELECT failures FROM login_attempts"), 5)
        let login = try await server.send(.POST, "/v1/sessions", json: ["login": "guessed", "password": ServerHarness.password])
        XCTAssertEqual(login.status, 429, "the lock holds for log-in too")
        XCTAssertEqual(login.errorCode, "account_locked")
    }

    // MARK: 7. Searches that find nothing

    func testAVisitNoScheduleHoldsIsRefusedAndSearchesSayWhetherTheyAreComplete() async throws {
        let server = try ServerHarness()
        let long = try await server.send(.GET, "/v1/find?specialization=therapy&lat=36.3&lon=-119.6&minutes=480&before=2099-01-01T00:00:00Z")
        XCTAssertEqual(long.status, 400, long.text)
        XCTAssertEqual(long.errorCode, "invalid_input")
        let found = try await server.send(.GET, "/v1/find?specialization=therapy&lat=36.3&lon=-119.6")
        XCTAssertEqual(found.status, 200, found.text)
        XCTAssertEqual(found.headers["Search-Complete"].first, "true")
    }

    // MARK: 10. A space typed into a form

    func testAPlusInAQueryIsASpaceAndAnUnknownSpecializationIsAnError() async throws {
        let server = try ServerHarness()
        let nearest = try await server.send(.GET, "/v1/clinics/nearest?address=Reno,+NV")
        XCTAssertEqual(nearest.status, 200, nearest.text)
        XCTAssertEqual(nearest.array.first?["name"] as? String, "Renown Regional")
        let find = try await server.send(.GET, "/v1/find?specialization=emergency+medicine&address=Reno,+NV")
        XCTAssertEqual(find.status, 200, find.text)
        XCTAssertEqual(find.array.count, 1, find.text)
        let city = try await server.send(.GET, "/v1/clinics?city=los+angeles")
        XCTAssertEqual((city.object["items"] as? [Any])?.count, 2, city.text)
        let filtered = try await server.send(.GET, "/v1/clinics/nearest?address=Reno,+NV&specialization=emergency+medicine&limit=5")
        XCTAssertEqual(filtered.array.count, 1, filtered.text)
        let typo = try await server.send(.GET, "/v1/find?specialization=cardiolgy&address=Reno,+NV")
        XCTAssertEqual(typo.status, 404, typo.text)
        XCTAssertEqual(typo.errorCode, "not_found")
        XCTAssertTrue(try XCTUnwrap(typo.errorMessage).contains("cardiology"), typo.text)
        let russian = try await server.send(.GET, "/v1/clinics/nearest?address=Reno,+NV&specialization=kardio", headers: ["Accept-Language": "ru"])
        XCTAssertEqual(russian.status, 404)
        XCTAssertTrue(try XCTUnwrap(russian.errorMessage).contains("кардиология"), russian.text)
    }

    // MARK: 22. Street addresses

    func testAStreetAddressIsAskedOfTheGeocoderOnceAndFallsBackToTheZIPCode() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nominatim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("queries.log"), portFile = folder.appendingPathComponent("port")
        let geocoder = Process()
        geocoder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        geocoder.arguments = ["python3", URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/nominatim.py").path, log.path, portFile.path]
        try geocoder.run()
        defer { kill(geocoder.processIdentifier, SIGKILL) }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: portFile.path) && Date() < deadline && geocoder.isRunning { usleep(20_000) }
        let port = try String(contentsOf: portFile, encoding: .utf8)
        let server = try ServerHarness(environment: ["CLINIC_GEOCODER_URL": "http://127.0.0.1:\(port)"])

        let address = "4650 Sunset Blvd, Los Angeles, CA 90027".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let first = try await server.send(.GET, "/v1/geocode?q=\(address)")
        XCTAssertEqual(first.status, 200, first.text)
        XCTAssertEqual(first.object["precision"] as? String, "address", first.text)
        XCTAssertEqual(try XCTUnwrap(first.object["lat"] as? Double), 34.0976, accuracy: 1e-6)
        let again = try await server.send(.GET, "/v1/geocode?q=\(address)")
        XCTAssertEqual(again.object["precision"] as? String, "address")
        let nearest = try await server.send(.GET, "/v1/clinics/nearest?address=\(address)")
        XCTAssertEqual(nearest.array.first?["name"] as? String, "Children's Hospital", nearest.text)
        let asked = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(asked, ["4650 Sunset Blvd, Los Angeles, CA 90027"], "asked once, then answered from the cache")

        // An address the geocoder does not know: the ZIP code's centre, and the answer says so.
        let unknown = "1 Nowhere Lane, Los Angeles, CA 90027".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let fallback = try await server.send(.GET, "/v1/geocode?q=\(unknown)")
        XCTAssertEqual(fallback.status, 200, fallback.text)
        XCTAssertEqual(fallback.object["precision"] as? String, "postcode", fallback.text)
        // A city is no street: the geocoder is not asked.
        _ = try await server.send(.GET, "/v1/geocode?q=Reno,+NV")
        XCTAssertEqual(try String(contentsOf: log, encoding: .utf8).split(separator: "\n").count, 2)
    }

    // MARK: 18. Duplicate JSON keys

    func testABodyNamingAKeyTwiceIsRefused() async throws {
        let server = try ServerHarness()
        let token = try await server.patient("twice")
        let (department, _) = try await server.department()
        let first = try await server.freeSlot(department), second = try await server.freeSlot(department, skipping: 1)
        let before = try server.fingerprint()
        for body in [#"{"departmentId": \#(department), "start": "\#(first)", "start": "\#(second)"}"#,
                     #"{"departmentId": \#(department), "start": "\#(first)", "st\u0061rt": "\#(second)"}"#] {
            let reply = try await server.send(.POST, "/v1/appointments", raw: Data(body.utf8), token: token,
                                              headers: ["Content-Type": "application/json", "Idempotency-Key": UUID().uuidString])
            XCTAssertEqual(reply.status, 400, reply.text)
            XCTAssertEqual(reply.errorCode, "invalid_input")
            XCTAssertTrue(try XCTUnwrap(reply.errorMessage).contains("start"), reply.text)
        }
        XCTAssertEqual(try server.fingerprint(), before)
        // The same key in two different objects is not a duplicate.
        let nested = #"{"login": "twice", "password": "\#(ServerHarness.password)", "#
            + #""device": {"name": "a", "platform": "android", "appVersion": "1", "password": "b"}}"#
        let session = try await server.send(.POST, "/v1/sessions", raw: Data(nested.utf8), headers: ["Content-Type": "application/json"])
        XCTAssertEqual(session.status, 201, session.text)
    }

    // MARK: 19. The booking horizon

    func testBookingsPastTheHorizonAreRefused() async throws {
        let server = try ServerHarness()
        let token = try await server.patient("farahead")
        let (department, _) = try await server.department()
        let before = try server.fingerprint()
        let far = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": "9999-12-31T09:00:00Z"],
                                        token: token)
        XCTAssertEqual(far.status, 422, far.text)
        XCTAssertEqual(far.errorCode, "slot_unavailable")
        XCTAssertTrue(try XCTUnwrap(far.errorMessage).contains("365"), far.text)
        XCTAssertEqual(try server.fingerprint(), before)
        XCTAssertEqual(try server.cli(["admin", "settings", "set", "booking.horizon_days", "3"]).status, 0)
        let slots = try await server.send(.GET, "/v1/departments/\(department)/slots?days=14")
        let limit = Date().addingTimeInterval(3 * 86_400 + 60)
        let formatter = ISO8601DateFormatter()
        for slot in slots.array where slot["isAvailable"] as? Bool == true {
            let start = try XCTUnwrap(formatter.date(from: try XCTUnwrap(slot["start"] as? String)))
            XCTAssertLessThanOrEqual(start, limit, "no free slot is offered past the horizon")
        }
    }
}

extension ServerHarness {
    /// A department of the Reno clinic.
    func renoDepartment() async throws -> Int {
        let clinics = try await send(.GET, "/v1/clinics?limit=100")
        guard let reno = (clinics.object["items"] as? [[String: Any]])?.first(where: { $0["name"] as? String == "Renown Regional" })?["id"] as? Int,
              let department = try await send(.GET, "/v1/clinics/\(reno)/departments").array.first?["id"] as? Int else {
            throw HarnessError.failed("no Reno department")
        }
        return department
    }
}

/// The web app as a browser without JavaScript meets it: cookies kept by hand, redirects not followed.
final class WebFormTests: XCTestCase {
    struct Page {
        let status: Int
        let headers: HTTPHeaders
        let text: String
        /// The forms' CSRF token on the page.
        var csrf: String? {
            text.firstMatch(of: #/name="csrf" value="([0-9a-f]{64})"/#).map { String($0.output.1) }
        }
        func cookie(_ name: String) -> String? {
            for header in headers["Set-Cookie"] where header.hasPrefix(name + "=") {
                return String(header.dropFirst(name.count + 1).prefix { $0 != ";" })
            }
            return nil
        }
    }

    func web(_ server: ServerHarness, _ client: HTTPClient, _ method: HTTPMethod, _ path: String, cookies: [String: String],
             form: [String: String]? = nil) async throws -> Page {
        var request = HTTPClientRequest(url: server.url + path)
        request.method = method
        if !cookies.isEmpty {
            request.headers.add(name: "Cookie", value: cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            let body = form.map { key, value in
                key + "=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            }.joined(separator: "&")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 4 * 1024 * 1024)
        return Page(status: Int(response.status.code), headers: response.headers, text: String(buffer: body))
    }

    func testTheFormsTokenIsTiedToTheSessionAndRenewedAtLogIn() async throws {
        let server = try ServerHarness()
        _ = try await server.patient("webber")
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        defer { _ = client.shutdown() as EventLoopFuture<Void> }

        // A made-up cookie and a form token to match it: refused, as before any page was read.
        let madeUp = String(repeating: "ab", count: 32)
        let forged = try await web(server, client, .POST, "/login", cookies: ["clinic_csrf": madeUp],
                                   form: ["csrf": madeUp, "login": "webber", "password": ServerHarness.password])
        XCTAssertEqual(forged.status, 403, forged.text)

        let loginPage = try await web(server, client, .GET, "/login", cookies: [:])
        let nonce = try XCTUnwrap(loginPage.cookie("clinic_csrf"))
        let anonymous = try XCTUnwrap(loginPage.csrf)
        XCTAssertNotEqual(anonymous, nonce, "the token is not the cookie")
        let signedIn = try await web(server, client, .POST, "/login", cookies: ["clinic_csrf": nonce],
                                     form: ["csrf": anonymous, "login": "webber", "password": ServerHarness.password])
        XCTAssertEqual(signedIn.status, 303, signedIn.text)
        let session = try XCTUnwrap(signedIn.cookie("clinic_session"))
        let renewedNonce = try XCTUnwrap(signedIn.cookie("clinic_csrf"))
        XCTAssertNotEqual(renewedNonce, nonce, "log-in renews the forms' cookie")

        let home = try await web(server, client, .GET, "/", cookies: ["clinic_csrf": nonce, "clinic_session": session])
        let bound = try XCTUnwrap(home.csrf)
        XCTAssertNotEqual(bound, anonymous, "a token read before the log-in")
        let stale = try await web(server, client, .POST, "/logout", cookies: ["clinic_csrf": nonce, "clinic_session": session],
                                  form: ["csrf": anonymous])
        XCTAssertEqual(stale.status, 403, "…is good for nothing after it")

        // A booking on the web is counted in the metrics like the API's (item 16).
        let (department, _) = try await server.department()
        let start = try await server.freeSlot(department)
        let booked = try await web(server, client, .POST, "/appointments", cookies: ["clinic_csrf": nonce, "clinic_session": session],
                                   form: ["csrf": bound, "department": String(department), "start": start])
        XCTAssertEqual(booked.status, 303, booked.text)
        let metrics = try await server.send(.GET, "/metrics")
        XCTAssertTrue(metrics.text.contains(#"clinic_appointment_changes_total{operation="book",outcome="ok"} 1"#), metrics.text)

        let out = try await web(server, client, .POST, "/logout", cookies: ["clinic_csrf": nonce, "clinic_session": session],
                                form: ["csrf": bound])
        XCTAssertEqual(out.status, 303)
    }

    func testStaffPagesAndActionsComeFromTheLibrarysRule() async throws {
        let s = try await StaffAPITests.makeWorld()
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        defer { _ = client.shutdown() as EventLoopFuture<Void> }
        let loginPage = try await web(s.server, client, .GET, "/staff", cookies: [:])
        XCTAssertFalse(loginPage.text.contains(#"href="/register""#), "no patients' menu on the staff's pages")
        let nonce = try XCTUnwrap(loginPage.cookie("clinic_csrf"))
        let signedIn = try await web(s.server, client, .POST, "/staff/login", cookies: ["clinic_csrf": nonce],
                                     form: ["csrf": try XCTUnwrap(loginPage.csrf), "login": "desk-a", "password": StaffAPITests.staffPassword])
        XCTAssertEqual(signedIn.status, 303, signedIn.text)
        let staff = try XCTUnwrap(signedIn.cookie("clinic_staff"))
        let day = try await web(s.server, client, .GET, "/staff?date=\(s.monday)", cookies: ["clinic_csrf": nonce, "clinic_staff": staff])
        XCTAssertEqual(day.status, 200)
        XCTAssertFalse(day.text.contains(#"href="/register""#))
        // A future appointment: check-in and cancel, never complete (a receptionist may not) nor no-show (not yet begun).
        XCTAssertTrue(day.text.contains("/staff/appointments/\(s.appointment)/check-in"))
        XCTAssertTrue(day.text.contains("/staff/appointments/\(s.appointment)/cancel"))
        XCTAssertFalse(day.text.contains("/staff/appointments/\(s.appointment)/complete"), day.text)
        XCTAssertFalse(day.text.contains("/staff/appointments/\(s.appointment)/no-show"), day.text)
        let checkIn = try await web(s.server, client, .POST, "/staff/appointments/\(s.appointment)/check-in",
                                    cookies: ["clinic_csrf": nonce, "clinic_staff": staff], form: ["csrf": try XCTUnwrap(day.csrf), "date": s.monday])
        XCTAssertEqual(checkIn.status, 303, checkIn.text)
        let after = try await web(s.server, client, .GET, "/staff?date=\(s.monday)", cookies: ["clinic_csrf": nonce, "clinic_staff": staff])
        XCTAssertFalse(after.text.contains("/staff/appointments/\(s.appointment)/complete"), "checked in: still not the receptionist's")
        XCTAssertFalse(after.text.contains("/staff/appointments/\(s.appointment)/check-in"))
        let metrics = try await s.server.send(.GET, "/metrics")
        XCTAssertTrue(metrics.text.contains(#"clinic_appointment_changes_total{operation="check-in",outcome="ok"} 1"#), metrics.text)
    }
}
