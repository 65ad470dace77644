import Foundation
import Testing

/// `clinic messages`, `profile email`, `profile calendar-url`, `appointments ics`,
/// `staff message` and `admin deliver` as a user runs them (e-mail itself: Tests/python).
@Suite struct MessagesEndToEndTests {
    let password = "correct-horse-42", staffPassword = "kettle-harbor-lantern"

    func bookedPatient(_ cli: CLIHarness) throws -> (appointment: [String: Any], clinicId: Int) {
        try cli.setUpDirectory()
        #expect(try cli.run(["register", "--login", "pat", "--name", "Pat", "--surname", "Smith", "--street", "Main Street",
                             "--house", "1", "--city", "Reno", "--accept-privacy", "--password-stdin"], input: password + "\n").status == 0)
        #expect(try cli.run(["login", "--login", "pat", "--password-stdin"], input: password + "\n").status == 0)
        let clinics = try #require(try cli.run(["clinics", "list", "--json"]).json() as? [[String: Any]])
        let clinicId = try #require(clinics.first { $0["name"] as? String == "Renown Regional" }?["id"] as? Int)
        let department = try #require((try cli.run(["departments", String(clinicId), "--json"]).json() as? [[String: Any]])?.first?["id"] as? Int)
        let slots = try #require(try cli.run(["slots", "--department", String(department), "--from", nextMonday(), "--json"]).json() as? [[String: Any]])
        let start = try #require(slots.first { $0["isAvailable"] as? Bool == true }?["start"] as? String)
        let booked = try #require(try cli.run(["book", "--department", String(department), "--at", start, "--json"]).json() as? [String: Any])
        return (booked, clinicId)
    }

    @Test func theInboxAndTheCalendarFromTheCommandLine() throws {
        let cli = try CLIHarness()
        let (appointment, _) = try bookedPatient(cli)
        let id = try #require(appointment["id"] as? Int)
        let whoami = try #require(try cli.run(["whoami", "--json"]).json() as? [String: Any])
        #expect(whoami["unreadMessages"] as? Int == 1)
        #expect(try cli.run(["whoami"]).stdout.contains("1 unread."))
        let list = try cli.run(["messages"])
        #expect(list.status == 0 && list.stdout.contains("Appointment booked: ") && list.stdout.contains("(unread)"))
        let messages = try #require(try cli.run(["messages", "--json"]).json() as? [[String: Any]])
        let messageId = try #require(messages.first?["id"] as? Int)
        let read = try cli.run(["messages", "read", String(messageId)])
        #expect(read.status == 0 && read.stdout.contains("Renown Regional") && read.stdout.contains("Appointment number: \(id)"))
        #expect((try cli.run(["messages", "--unread", "--json"]).json() as? [Any])?.isEmpty == true)
        #expect(try cli.run(["messages", "read", "999", "--json"]).errorCode == "not_found")
        #expect(try cli.run(["messages", "read", "x"]).status == 2)

        let ics = try cli.run(["appointments", "ics", String(id)])
        #expect(ics.status == 0 && ics.stdout.hasPrefix("BEGIN:VCALENDAR\r\n") && ics.stdout.contains("TZID:America/Los_Angeles"))
        #expect(try cli.run(["appointments", "ics", "999", "--json"]).errorCode == "not_found")

        let url = try #require(try cli.run(["profile", "calendar-url", "--json"], environment: ["CLINIC_PUBLIC_URL": "https://clinic.example.org/"]).json() as? [String: Any])
        let token = try #require(url["token"] as? String)
        #expect(url["url"] as? String == "https://clinic.example.org/v1/me/calendar.ics?token=" + token)
        #expect((try cli.run(["profile", "calendar-url", "--json"]).json() as? [String: Any])?["token"] as? String == token)
        let rotated = try #require(try cli.run(["profile", "calendar-url", "--rotate", "--json"]).json() as? [String: Any])
        #expect(rotated["token"] as? String != token)
        #expect(try cli.run(["profile", "calendar-url", "--rotate", "--revoke"]).status == 2)
        #expect(try cli.run(["profile", "calendar-url", "--revoke"]).status == 0)

        // E-mail: the address waits for its code; the code is in the outbox, not on screen.
        #expect(try cli.run(["profile", "email", "set", "not-an-address", "--json"]).errorCode == "invalid_input")
        let set = try cli.run(["profile", "email", "set", "pat@example.org"])
        #expect(set.status == 0 && set.stdout.contains("pat@example.org") && !set.stdout.contains(where: \.isNumber))
        #expect(try cli.run(["profile", "email", "set", "pat@example.org", "--json"]).errorCode == "rate_limited")
        #expect(try cli.run(["profile", "email", "confirm", "000000", "--json"]).errorCode == "invalid_input")
        let email = try #require(try cli.run(["profile", "email", "--json"]).json() as? [String: Any])
        #expect(email["pendingEmail"] as? String == "pat@example.org" && email["email"] == nil)
        #expect(try cli.run(["profile", "email", "remove"]).status == 0)
        #expect(try cli.run(["profile", "email"]).stdout.contains("No e-mail address"))
    }

    @Test func staffMessagesAndTheOperatorsRound() throws {
        let cli = try CLIHarness()
        let (appointment, clinicId) = try bookedPatient(cli)
        let start = try #require(appointment["start"] as? String)
        let staffSession = cli.sessionPath + "-desk"
        #expect(try cli.run(["admin", "staff", "add", "--login", "desk", "--name", "Sam", "--surname", "Lee", "--role", "receptionist",
                             "--clinic", String(clinicId), "--password-stdin"], input: staffPassword + "\n").status == 0)
        let staffEnvironment = ["CLINIC_STAFF_SESSION": staffSession]
        #expect(try cli.run(["staff", "message", "--patient", "pat", "Hello", "--json"], environment: staffEnvironment).errorCode == "not_logged_in")
        #expect(try cli.run(["staff", "login", "--login", "desk", "--password-stdin"], input: staffPassword + "\n",
                            environment: staffEnvironment).status == 0)
        let before = try cli.fingerprint(excluding: ["staff_sessions"])
        #expect(try cli.run(["staff", "message", "Hello", "--json"], environment: staffEnvironment).errorCode == "invalid_input")
        #expect(try cli.run(["staff", "message", "--patient", "nobody", "Hello", "--json"], environment: staffEnvironment).errorCode == "not_found")
        #expect(try cli.run(["staff", "message", "--date", "2026-13-01", "Hello", "--json"], environment: staffEnvironment).errorCode == "invalid_input")
        #expect(try cli.fingerprint(excluding: ["staff_sessions"]) == before)
        let sent = try #require(try cli.run(["staff", "message", "--date", String(start.prefix(10)), "Dr. Thompson is ill",
                                             "--json"], environment: staffEnvironment).json() as? [String: Any])
        #expect(sent["recipients"] as? Int == 1)
        let messages = try #require(try cli.run(["messages", "--json"]).json() as? [[String: Any]])
        #expect(messages.first?["kind"] as? String == "clinic" && messages.first?["body"] as? String == "Dr. Thompson is ill")

        // The operator's round without a mail server writes reminders only; a bad setting is refused.
        let round = try cli.run(["admin", "deliver"])
        #expect(round.status == 0 && round.stdout.contains("CLINIC_SMTP_URL"))
        let report = try #require(try cli.run(["admin", "deliver", "--json"]).json() as? [String: Any])
        #expect(report["sent"] as? Int == 0 && report["reminders"] as? Int == 0)
        for (url, from) in [("http://mail.example.org", "clinic@example.org"), ("smtp://", "clinic@example.org"),
                            ("smtp://mail.example.org", "nobody")] {
            let refused = try cli.run(["admin", "deliver", "--json"], environment: ["CLINIC_SMTP_URL": url, "CLINIC_MAIL_FROM": from])
            #expect(refused.errorCode == "invalid_input", "\(url) \(from): \(refused.stderr)")
        }
    }
}
