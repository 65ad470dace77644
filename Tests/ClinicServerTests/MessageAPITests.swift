import AsyncHTTPClient
import Foundation
import NIOHTTP1
import XCTest

/// Messages, e-mail addresses, calendar files and the calendar feed over HTTP, against the real
/// server: each route with a patient's token, none and another patient's; refusals change nothing.
final class MessageAPITests: XCTestCase {
    func testTheInboxOverHTTP() async throws {
        let server = try ServerHarness()
        let anna = try await server.patient("inbox-anna"), ben = try await server.patient("inbox-ben")
        let (department, _) = try await server.department()
        let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department,
                                                                            "start": try await server.freeSlot(department)], token: anna)
        XCTAssertEqual(booked.status, 201, booked.text)
        let appointment = try XCTUnwrap(booked.object["id"] as? Int)
        let me = try await server.send(.GET, "/v1/me", token: anna)
        XCTAssertEqual(me.object["unreadMessages"] as? Int, 1, me.text)
        let inbox = try await server.send(.GET, "/v1/messages", token: anna)
        XCTAssertEqual(inbox.status, 200, inbox.text)
        let message = try XCTUnwrap(inbox.array.first)
        XCTAssertEqual(message["kind"] as? String, "booked")
        XCTAssertEqual(message["appointmentId"] as? Int, appointment)
        XCTAssertNil(message["readAt"])
        let id = try XCTUnwrap(message["id"] as? Int)
        // Russian on request: the stored message stays in the language it was written in.
        XCTAssertTrue((message["subject"] as? String ?? "").hasPrefix("Appointment booked: "))

        let before = try server.fingerprint()
        for (token, status) in [(nil, 401), (ben, 404)] as [(String?, Int)] {
            let read = try await server.send(.POST, "/v1/messages/\(id)/read", token: token)
            XCTAssertEqual(read.status, status, read.text)
        }
        let strange = try await server.send(.GET, "/v1/messages?unread=perhaps", token: anna)
        XCTAssertEqual(strange.errorCode, "invalid_input", strange.text)
        XCTAssertEqual(try server.fingerprint(), before)

        let read = try await server.send(.POST, "/v1/messages/\(id)/read", token: anna)
        XCTAssertEqual(read.status, 200, read.text)
        XCTAssertNotNil(read.object["readAt"] as? String)
        let unread = try await server.send(.GET, "/v1/messages?unread=true", token: anna)
        XCTAssertEqual(unread.array.count, 0, unread.text)
        let after = try await server.send(.GET, "/v1/me", token: anna)
        XCTAssertEqual(after.object["unreadMessages"] as? Int, 0)
        let bens = try await server.send(.GET, "/v1/messages", token: ben)
        XCTAssertEqual(bens.array.count, 0)
    }

    func testCalendarFilesAndTheFeed() async throws {
        let server = try ServerHarness()
        let anna = try await server.patient("ics-anna"), ben = try await server.patient("ics-ben")
        let (department, _) = try await server.department()
        let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department,
                                                                            "start": try await server.freeSlot(department)], token: anna)
        let appointment = try XCTUnwrap(booked.object["id"] as? Int)
        let file = try await server.send(.GET, "/v1/appointments/\(appointment).ics", token: anna)
        XCTAssertEqual(file.status, 200, file.text)
        XCTAssertEqual(file.headers.first(name: "Content-Type"), "text/calendar; charset=utf-8")
        XCTAssertTrue(file.text.hasPrefix("BEGIN:VCALENDAR\r\n") && file.text.contains("BEGIN:VTIMEZONE"))
        XCTAssertTrue(file.text.contains("UID:appointment-\(appointment)-"))
        for (path, token, status) in [("/v1/appointments/\(appointment).ics", nil, 401), ("/v1/appointments/\(appointment).ics", ben, 404),
                                      ("/v1/appointments/abc.ics", anna, 404), ("/v1/appointments/0.ics", anna, 404)] as [(String, String?, Int)] {
            let reply = try await server.send(.GET, path, token: token)
            XCTAssertEqual(reply.status, status, "\(path): \(reply.text)")
        }

        let none = try await server.send(.GET, "/v1/me/calendar-token", token: anna)
        XCTAssertEqual(none.status, 404, none.text)
        let made = try await server.send(.POST, "/v1/me/calendar-token", token: anna)
        XCTAssertEqual(made.status, 201, made.text)
        let token = try XCTUnwrap(made.object["token"] as? String)
        XCTAssertEqual(made.object["url"] as? String, server.url + "/v1/me/calendar.ics?token=" + token)
        XCTAssertNotEqual(token, anna, "not the session token")
        let shown = try await server.send(.GET, "/v1/me/calendar-token", token: anna)
        XCTAssertEqual(shown.object["token"] as? String, token)
        let feed = try await server.send(.GET, "/v1/me/calendar.ics?token=\(token)")
        XCTAssertEqual(feed.status, 200, feed.text)
        XCTAssertTrue(feed.text.contains("UID:appointment-\(appointment)-"))
        // The feed's token is no session, and a session token is no feed token.
        let asSession = try await server.send(.GET, "/v1/me", token: token)
        XCTAssertEqual(asSession.status, 401)
        let sessionAsFeed = try await server.send(.GET, "/v1/me/calendar.ics?token=\(anna)")
        XCTAssertEqual(sessionAsFeed.status, 404)
        let missing = try await server.send(.GET, "/v1/me/calendar.ics")
        XCTAssertEqual(missing.status, 404)
        let rotated = try await server.send(.POST, "/v1/me/calendar-token", token: anna)
        XCTAssertNotEqual(rotated.object["token"] as? String, token)
        let old = try await server.send(.GET, "/v1/me/calendar.ics?token=\(token)")
        XCTAssertEqual(old.status, 404)
        let revoked = try await server.send(.DELETE, "/v1/me/calendar-token", token: anna)
        XCTAssertEqual(revoked.status, 204)
        let gone = try await server.send(.GET, "/v1/me/calendar.ics?token=\(rotated.object["token"] as? String ?? "")")
        XCTAssertEqual(gone.status, 404)
    }

    func testAnEmailAddressOverHTTP() async throws {
        let server = try ServerHarness()
        let anna = try await server.patient("mail-anna")
        let before = try server.fingerprint()
        let bad = try await server.send(.PUT, "/v1/me/email", json: ["address": "not an address"], token: anna)
        XCTAssertEqual(bad.errorCode, "invalid_input", bad.text)
        let anonymous = try await server.send(.PUT, "/v1/me/email", json: ["address": "anna@example.org"])
        XCTAssertEqual(anonymous.status, 401)
        let noPending = try await server.send(.POST, "/v1/me/email/confirm", json: ["code": "123456"], token: anna)
        XCTAssertEqual(noPending.status, 404, noPending.text)
        XCTAssertEqual(try server.fingerprint(), before)

        let set = try await server.send(.PUT, "/v1/me/email", json: ["address": "anna@example.org"], token: anna)
        XCTAssertEqual(set.status, 202, set.text)
        XCTAssertEqual(set.object["pendingEmail"] as? String, "anna@example.org")
        XCTAssertNil(set.object["email"])
        let again = try await server.send(.PUT, "/v1/me/email", json: ["address": "anna@example.org"], token: anna)
        XCTAssertEqual(again.status, 429, again.text)
        XCTAssertEqual(again.headers.first(name: "Retry-After"), "60")
        XCTAssertEqual(try server.scalar("SELECT count(*) FROM deliveries WHERE purpose = 'email_code' AND state = 'pending'"), 1)
        let wrong = try await server.send(.POST, "/v1/me/email/confirm", json: ["code": "12345x"], token: anna)
        XCTAssertEqual(wrong.errorCode, "invalid_input", wrong.text)
        let me = try await server.send(.GET, "/v1/me", token: anna)
        XCTAssertEqual(me.object["pendingEmail"] as? String, "anna@example.org")
        XCTAssertNil(me.object["email"])
        let removed = try await server.send(.DELETE, "/v1/me/email", token: anna)
        XCTAssertEqual(removed.status, 204)
        let shown = try await server.send(.GET, "/v1/me/email", token: anna)
        XCTAssertEqual(shown.status, 200, shown.text)
        XCTAssertNil(shown.object["email"])
        XCTAssertNil(shown.object["pendingEmail"])
        XCTAssertEqual(try server.scalar("SELECT count(*) FROM deliveries WHERE state = 'pending'"), 0)
    }

    func testStaffWriteToTheirPatients() async throws {
        let server = try ServerHarness()
        let anna = try await server.patient("staffmsg-anna")
        let (department, clinicId) = try await server.department()
        let start = try await server.freeSlot(department)
        let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start], token: anna)
        XCTAssertEqual(booked.status, 201, booked.text)
        var tokens: [String: String] = [:]
        for (login, role, doctor) in [("desk-m", "receptionist", nil), ("doc-m", "doctor", booked.object["doctorId"] as? Int)]
            as [(String, String, Int?)] {
            var arguments = ["admin", "staff", "add", "--login", login, "--name", "Sam", "--surname", "Lee", "--role", role,
                             "--clinic", String(clinicId), "--password-stdin"]
            if let doctor { arguments += ["--doctor", String(doctor)] }
            XCTAssertEqual(try server.cli(arguments, input: StaffAPITests.staffPassword + "\n").status, 0)
            let session = try await server.send(.POST, "/v1/staff/sessions", json: ["login": login, "password": StaffAPITests.staffPassword])
            tokens[login] = session.object["token"] as? String
        }
        let body: [String: Any] = ["date": String(start.prefix(10)), "text": "Dr. Thompson is ill on Monday"]
        let before = try server.fingerprint()
        for (token, status) in [(nil, 401), (anna, 401), (tokens["doc-m"], 403)] as [(String?, Int)] {
            let reply = try await server.send(.POST, "/v1/staff/messages", json: body, token: token)
            XCTAssertEqual(reply.status, status, reply.text)
        }
        for bad in [["text": "no target"], ["patientLogin": "staffmsg-anna", "date": "2030-01-01", "text": "both"],
                    ["patientLogin": "staffmsg-anna", "text": ""], ["patientLogin": "nobody", "text": "Hello"]] as [[String: Any]] {
            let reply = try await server.send(.POST, "/v1/staff/messages", json: bad, token: tokens["desk-m"])
            XCTAssertTrue([400, 404].contains(reply.status), "\(bad): \(reply.text)")
        }
        XCTAssertEqual(try server.fingerprint(), before)
        let sent = try await server.send(.POST, "/v1/staff/messages", json: body, token: tokens["desk-m"])
        XCTAssertEqual(sent.status, 201, sent.text)
        XCTAssertEqual(sent.object["recipients"] as? Int, 1)
        let inbox = try await server.send(.GET, "/v1/messages", token: anna)
        XCTAssertEqual(inbox.array.first?["kind"] as? String, "clinic")
        XCTAssertEqual(inbox.array.first?["body"] as? String, "Dr. Thompson is ill on Monday")
        let log = try await server.send(.GET, "/v1/me/access-log", token: anna)
        XCTAssertEqual(log.array.first?["action"] as? String, "message.send")
    }
}
