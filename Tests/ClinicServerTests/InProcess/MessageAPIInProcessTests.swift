import Foundation
import HTTPTypes
import Testing

/// Messages, e-mail addresses, calendar files and the calendar feed over HTTP, in process
/// (`InProcessServer`): each route with a patient's token, none and another patient's; refusals change nothing.
@Suite struct MessageAPITestsInProcess {
    @Test func theInboxOverHTTP() async throws {
        try await InProcessServer.run { server in
            let anna = try await server.patient("inbox-anna"), ben = try await server.patient("inbox-ben")
            let (department, _) = try await server.department()
            let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department,
                                                                                "start": try await server.freeSlot(department)], token: anna)
            #expect(booked.status == 201, "\(booked.text)")
            let appointment = try #require(booked.object["id"] as? Int)
            let me = try await server.send(.GET, "/v1/me", token: anna)
            #expect(me.object["unreadMessages"] as? Int == 1, "\(me.text)")
            let inbox = try await server.send(.GET, "/v1/messages", token: anna)
            #expect(inbox.status == 200, "\(inbox.text)")
            let message = try #require(inbox.array.first)
            #expect(message["kind"] as? String == "booked")
            #expect(message["appointmentId"] as? Int == appointment)
            #expect((message["readAt"]) == nil)
            let id = try #require(message["id"] as? Int)
            // Russian on request: the stored message stays in the language it was written in.
            #expect((message["subject"] as? String ?? "").hasPrefix("Appointment booked: "))

            let before = try server.fingerprint()
            for (token, status) in [(nil, 401), (ben, 404)] as [(String?, Int)] {
                let read = try await server.send(.POST, "/v1/messages/\(id)/read", token: token)
                #expect(read.status == status, "\(read.text)")
            }
            let strange = try await server.send(.GET, "/v1/messages?unread=perhaps", token: anna)
            #expect(strange.errorCode == "invalid_input", "\(strange.text)")
            #expect(try server.fingerprint() == before)

            let read = try await server.send(.POST, "/v1/messages/\(id)/read", token: anna)
            #expect(read.status == 200, "\(read.text)")
            #expect((read.object["readAt"] as? String) != nil)
            let unread = try await server.send(.GET, "/v1/messages?unread=true", token: anna)
            #expect(unread.array.count == 0, "\(unread.text)")
            let after = try await server.send(.GET, "/v1/me", token: anna)
            #expect(after.object["unreadMessages"] as? Int == 0)
            let bens = try await server.send(.GET, "/v1/messages", token: ben)
            #expect(bens.array.count == 0)
        }
    }

    @Test func calendarFilesAndTheFeed() async throws {
        try await InProcessServer.run { server in
            let anna = try await server.patient("ics-anna"), ben = try await server.patient("ics-ben")
            let (department, _) = try await server.department()
            let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department,
                                                                                "start": try await server.freeSlot(department)], token: anna)
            let appointment = try #require(booked.object["id"] as? Int)
            let file = try await server.send(.GET, "/v1/appointments/\(appointment).ics", token: anna)
            #expect(file.status == 200, "\(file.text)")
            #expect(file.headers.first(name: "Content-Type") == "text/calendar; charset=utf-8")
            #expect(file.text.hasPrefix("BEGIN:VCALENDAR\r\n") && file.text.contains("BEGIN:VTIMEZONE"))
            #expect(file.text.contains("UID:appointment-\(appointment)-"))
            for (path, token, status) in [("/v1/appointments/\(appointment).ics", nil, 401), ("/v1/appointments/\(appointment).ics", ben, 404),
                                          ("/v1/appointments/abc.ics", anna, 404), ("/v1/appointments/0.ics", anna, 404)] as [(String, String?, Int)] {
                let reply = try await server.send(.GET, path, token: token)
                #expect(reply.status == status, "\(path): \(reply.text)")
            }

            let none = try await server.send(.GET, "/v1/me/calendar-token", token: anna)
            #expect(none.status == 404, "\(none.text)")
            let made = try await server.send(.POST, "/v1/me/calendar-token", token: anna)
            #expect(made.status == 201, "\(made.text)")
            let token = try #require(made.object["token"] as? String)
            #expect(made.object["url"] as? String == server.url + "/v1/me/calendar.ics?token=" + token)
            #expect(token != anna, "not the session token")
            let shown = try await server.send(.GET, "/v1/me/calendar-token", token: anna)
            #expect(shown.object["token"] as? String == token)
            let feed = try await server.send(.GET, "/v1/me/calendar.ics?token=\(token)")
            #expect(feed.status == 200, "\(feed.text)")
            #expect(feed.text.contains("UID:appointment-\(appointment)-"))
            // The feed's token is no session, and a session token is no feed token.
            let asSession = try await server.send(.GET, "/v1/me", token: token)
            #expect(asSession.status == 401)
            let sessionAsFeed = try await server.send(.GET, "/v1/me/calendar.ics?token=\(anna)")
            #expect(sessionAsFeed.status == 404)
            let missing = try await server.send(.GET, "/v1/me/calendar.ics")
            #expect(missing.status == 404)
            let rotated = try await server.send(.POST, "/v1/me/calendar-token", token: anna)
            #expect(rotated.object["token"] as? String != token)
            let old = try await server.send(.GET, "/v1/me/calendar.ics?token=\(token)")
            #expect(old.status == 404)
            let revoked = try await server.send(.DELETE, "/v1/me/calendar-token", token: anna)
            #expect(revoked.status == 204)
            let gone = try await server.send(.GET, "/v1/me/calendar.ics?token=\(rotated.object["token"] as? String ?? "")")
            #expect(gone.status == 404)
        }
    }

    @Test func anEmailAddressOverHTTP() async throws {
        try await InProcessServer.run { server in
            let anna = try await server.patient("mail-anna")
            let before = try server.fingerprint()
            let bad = try await server.send(.PUT, "/v1/me/email", json: ["address": "not an address"], token: anna)
            #expect(bad.errorCode == "invalid_input", "\(bad.text)")
            let anonymous = try await server.send(.PUT, "/v1/me/email", json: ["address": "anna@example.org"])
            #expect(anonymous.status == 401)
            let noPending = try await server.send(.POST, "/v1/me/email/confirm", json: ["code": "123456"], token: anna)
            #expect(noPending.status == 404, "\(noPending.text)")
            #expect(try server.fingerprint() == before)

            let set = try await server.send(.PUT, "/v1/me/email", json: ["address": "anna@example.org"], token: anna)
            #expect(set.status == 202, "\(set.text)")
            #expect(set.object["pendingEmail"] as? String == "anna@example.org")
            #expect((set.object["email"]) == nil)
            let again = try await server.send(.PUT, "/v1/me/email", json: ["address": "anna@example.org"], token: anna)
            #expect(again.status == 429, "\(again.text)")
            #expect(again.headers.first(name: "Retry-After") == "60")
            #expect(try server.scalar("SELECT count(*) FROM deliveries WHERE purpose = 'email_code' AND state = 'pending'") == 1)
            let wrong = try await server.send(.POST, "/v1/me/email/confirm", json: ["code": "12345x"], token: anna)
            #expect(wrong.errorCode == "invalid_input", "\(wrong.text)")
            let me = try await server.send(.GET, "/v1/me", token: anna)
            #expect(me.object["pendingEmail"] as? String == "anna@example.org")
            #expect((me.object["email"]) == nil)
            let removed = try await server.send(.DELETE, "/v1/me/email", token: anna)
            #expect(removed.status == 204)
            let shown = try await server.send(.GET, "/v1/me/email", token: anna)
            #expect(shown.status == 200, "\(shown.text)")
            #expect((shown.object["email"]) == nil)
            #expect((shown.object["pendingEmail"]) == nil)
            #expect(try server.scalar("SELECT count(*) FROM deliveries WHERE state = 'pending'") == 0)
        }
    }

    /// The profile page's address: a wrong code is counted and said on the page, and removing
    /// forgets the address waiting and drops its code's mail (the right code is
    /// `AwaitedAccountSecurityTests`'s, on both stores).
    @Test func anEmailAddressOnTheProfilePage() async throws {
        try await InProcessServer.run { server in
            let cookies = try await server.webPatient("mail-web")
            let csrf = try #require(try await server.web(.get, "/profile", cookies: cookies).csrf)

            let set = try await server.web(.post, "/profile/email", cookies: cookies, form: ["csrf": csrf, "address": "mara@example.org"])
            #expect(set.status == 200 && set.text.contains("A code was sent to mara@example.org"), "\(set.text)")
            let wrong = try await server.web(.post, "/profile/email/confirm", cookies: cookies, form: ["csrf": csrf, "code": "12345x"])
            #expect(wrong.status == 400 && wrong.text.contains("The code is wrong or has expired."), "\(wrong.text)")
            #expect(try server.scalar("SELECT attempts FROM email_confirmations") == 1, "the guess is counted")
            #expect(try server.scalar("SELECT count(*) FROM deliveries WHERE purpose = 'email_code' AND state = 'pending'") == 1)

            let removed = try await server.web(.post, "/profile/email/remove", cookies: cookies, form: ["csrf": csrf])
            #expect(removed.status == 200 && removed.text.contains("The address is removed."), "\(removed.text)")
            #expect(!removed.text.contains("mara@example.org"))
            #expect(try server.scalar("SELECT count(*) FROM email_confirmations") == 0)
            #expect(try server.scalar("SELECT count(*) FROM deliveries WHERE state = 'pending'") == 0)
            let none = try await server.web(.post, "/profile/email/confirm", cookies: cookies, form: ["csrf": csrf, "code": "123456"])
            #expect(none.status == 400 && none.text.contains("No e-mail address waits for a code"), "\(none.text)")
        }
    }

    @Test func staffWriteToTheirPatients() async throws {
        try await InProcessServer.run { server in
            let anna = try await server.patient("staffmsg-anna")
            let (department, clinicId) = try await server.department()
            let start = try await server.freeSlot(department)
            let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start], token: anna)
            #expect(booked.status == 201, "\(booked.text)")
            var tokens: [String: String] = [:]
            for (login, role, doctor) in [("desk-m", "receptionist", nil), ("doc-m", "doctor", booked.object["doctorId"] as? Int)]
                as [(String, String, Int?)] {
                var arguments = ["admin", "staff", "add", "--login", login, "--name", "Sam", "--surname", "Lee", "--role", role,
                                 "--clinic", String(clinicId), "--password-stdin"]
                if let doctor { arguments += ["--doctor", String(doctor)] }
                #expect(try server.cli(arguments, input: StaffAPITestsInProcess.staffPassword + "\n").status == 0)
                let session = try await server.send(.POST, "/v1/staff/sessions", json: ["login": login, "password": StaffAPITestsInProcess.staffPassword])
                tokens[login] = session.object["token"] as? String
            }
            let body: [String: Any] = ["date": try await server.localDay(of: start, clinicId: clinicId), "text": "Dr. Thompson is ill on Monday"]
            let before = try server.fingerprint()
            for (token, status) in [(nil, 401), (anna, 401), (tokens["doc-m"], 403)] as [(String?, Int)] {
                let reply = try await server.send(.POST, "/v1/staff/messages", json: body, token: token)
                #expect(reply.status == status, "\(reply.text)")
            }
            for bad in [["text": "no target"], ["patientLogin": "staffmsg-anna", "date": "2030-01-01", "text": "both"],
                        ["patientLogin": "staffmsg-anna", "text": ""], ["patientLogin": "nobody", "text": "Hello"]] as [[String: Any]] {
                let reply = try await server.send(.POST, "/v1/staff/messages", json: bad, token: tokens["desk-m"])
                #expect([400, 404].contains(reply.status), "\(bad): \(reply.text)")
            }
            #expect(try server.fingerprint() == before)
            let sent = try await server.send(.POST, "/v1/staff/messages", json: body, token: tokens["desk-m"])
            #expect(sent.status == 201, "\(sent.text)")
            #expect(sent.object["recipients"] as? Int == 1)
            let inbox = try await server.send(.GET, "/v1/messages", token: anna)
            #expect(inbox.array.first?["kind"] as? String == "clinic")
            #expect(inbox.array.first?["body"] as? String == "Dr. Thompson is ill on Monday")
            let log = try await server.send(.GET, "/v1/me/access-log", token: anna)
            #expect(log.array.first?["action"] as? String == "message.send")
        }
    }
}
