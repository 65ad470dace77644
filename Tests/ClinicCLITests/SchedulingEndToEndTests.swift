import Foundation
@testable import ClinicStoreSQLite
import GRDB
import Testing

@Suite struct SchedulingEndToEndTests {
    let password = "correct-horse-42\n"

    func patient(_ cli: CLIHarness, _ login: String) throws -> String {
        let session = cli.folder.appendingPathComponent("session-\(login)").path
        let registered = try cli.run(["register", "--login", login, "--name", "Pat", "--surname", "Smith", "--street", "Main Street",
                                      "--house", "1", "--city", "Los Angeles", "--accept-privacy", "--password-stdin"],
                                     input: password, session: session)
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(try cli.run(["login", "--login", login, "--password-stdin"], input: password, session: session).status == 0)
        return session
    }

    func departmentId(_ cli: CLIHarness, city: String, _ specialization: String) throws -> Int {
        let clinics = try #require(try cli.run(["clinics", "list", "--city", city, "--json"]).json() as? [[String: Any]])
        let clinicId = try #require(clinics.first?["id"] as? Int)
        let departments = try #require(try cli.run(["departments", String(clinicId), "--json"]).json() as? [[String: Any]])
        return try #require(departments.first { $0["specialization"] as? String == specialization }?["id"] as? Int)
    }

    /// Eight processes race for each slot: exactly one wins, the others are told `slot_taken`.
    @Test func doubleBookingIsImpossibleUnderConcurrency() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let sessions = try (0..<8).map { try patient(cli, "racer\($0)") }
        let surgery = try departmentId(cli, city: "Reno", "surgery") // one doctor
        let monday = nextMonday()
        let times = ["09:00", "09:20", "09:40", "13:00"]
        for time in times {
            let racers = try sessions.map { session in
                try cli.start(["book", "--department", String(surgery), "--at", "\(monday) \(time)", "--json"], session: session)
            }
            let results = try racers.map { try $0.wait() }
            let winners = results.filter { $0.status == 0 }
            #expect(winners.count == 1, "\(time): \(results.map(\.stderr))")
            #expect(results.filter { $0.status != 0 }.allSatisfy { $0.errorCode == "slot_taken" }, "\(results.map(\.stderr))")
        }
        if CLIStore.current == .sqlite {
            let queue = try DatabaseQueue(path: cli.databasePath)
            defer { try? queue.close() }
            #expect(try queue.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
        }
        let perSlot = try cli.integers("""
            SELECT count(*) FROM appointments WHERE status IN ('scheduled', 'confirmed') GROUP BY doctor_id, starts_at
            """)
        #expect(perSlot == [1, 1, 1, 1])
        #expect(try cli.integers("SELECT count(*) FROM appointment_events WHERE event = 'booked'") == [4])
    }

    /// A receptionist's day from the command line: the operator adds the account, the
    /// receptionist logs in beside a patient session (their own file), reads the day, checks
    /// the patient in, may not start the visit nor create accounts; the patient reads it all.
    /// Patient "pat" with a cardiology booking next Monday at 08:00 in Los Angeles, and a staff
    /// account `login` with `role` at that clinic, made by the operator.
    struct StaffScene { let session: String; let cardiology: Int; let monday: String; let booked: [String: Any]; let clinic: Int }
    static let staffPassword = "kettle-harbor-lantern\n"

    func staffScene(_ cli: CLIHarness, login: String, role: String) throws -> StaffScene {
        try cli.setUpDirectory()
        let session = try patient(cli, "pat")
        let cardiology = try departmentId(cli, city: "Los Angeles", "cardiology")
        let monday = nextMonday()
        let booked = try #require(try cli.run(["book", "--department", String(cardiology), "--at", "\(monday) 08:00", "--json"],
                                              session: session).json() as? [String: Any])
        let clinic = try #require(booked["clinicId"] as? Int)
        let added = try cli.run(["admin", "staff", "add", "--login", login, "--name", "Sam", "--surname", "Lee", "--role", role,
                                 "--clinic", String(clinic), "--password-stdin", "--json"], input: Self.staffPassword)
        #expect(added.status == 0, "\(added.stderr)")
        return StaffScene(session: session, cardiology: cardiology, monday: monday, booked: booked, clinic: clinic)
    }

    /// `clinic staff report` (issue 46): a clinic admin's month as a table, JSON and CSV; the
    /// others are refused; a bad month is `invalid_input`.
    @Test func aClinicAdminReadsTheMonthAsATableJSONAndCSV() throws {
        let cli = try CLIHarness()
        let scene = try staffScene(cli, login: "boss-r", role: "clinic-admin")
        let session = cli.folder.appendingPathComponent("session-boss-r").path
        #expect(try cli.run(["staff", "login", "--login", "boss-r", "--password-stdin"], input: Self.staffPassword, session: session).status == 0)
        let month = String(scene.monday.prefix(7))
        let table = try cli.run(["staff", "report", "--month", month], session: session)
        #expect(table.status == 0 && table.stdout.contains("Visits") && table.stdout.contains("Cardiology")
                && table.stdout.contains("Freed times refilled"), "\(table.stdout)\(table.stderr)")
        let json = try #require(try cli.run(["staff", "report", "--month", month, "--json"], session: session).json() as? [String: Any])
        #expect((json["total"] as? [String: Any])?["booked"] as? Int == 1 && json["month"] as? String == month, "\(json)")
        let csv = try cli.run(["staff", "report", "--month", month, "--csv"], session: session)
        let lines = csv.stdout.split(separator: "\r\n").map(String.init)
        #expect(lines.first?.hasPrefix("scope,name,booked,") == true && lines.last?.hasPrefix("total,,1,0,0,") == true, "\(csv.stdout)")
        #expect(try cli.run(["staff", "report", "--month", "2026-13", "--json"], session: session).errorCode == "invalid_input")
        let desk = cli.folder.appendingPathComponent("session-desk-r").path
        #expect(try cli.run(["admin", "staff", "add", "--login", "desk-r", "--name", "Kim", "--surname", "Park", "--role", "receptionist",
                             "--clinic", String(scene.clinic), "--password-stdin"], input: Self.staffPassword).status == 0)
        #expect(try cli.run(["staff", "login", "--login", "desk-r", "--password-stdin"], input: Self.staffPassword, session: desk).status == 0)
        #expect(try cli.run(["staff", "report", "--json"], session: desk).errorCode == "forbidden")
    }

    /// Every staff command with every role: no staff session (a patient's only) is exit 3
    /// `not_logged_in`; another clinic's data exit 4 `not_found`; outside the role exit 3
    /// `forbidden`. The refusals are checked (the allowed paths are the other tests').
    @Test func everyStaffCommandWithEveryRole() throws {
        let cli = try CLIHarness()
        let scene = try staffScene(cli, login: "boss-a", role: "clinic-admin")
        let id = try #require(scene.booked["id"] as? Int), doctor = try #require(scene.booked["doctorId"] as? Int)
        let reno = try #require((try cli.run(["clinics", "list", "--city", "Reno", "--json"]).json() as? [[String: Any]])?.first)
        let renoClinic = try #require(reno["id"] as? Int), renoName = try #require(reno["name"] as? String).lowercased()
        let therapy = try departmentId(cli, city: "Los Angeles", "therapy")
        let otherDoctor = try #require((try cli.run(["doctors", String(therapy), "--json"]).json() as? [[String: Any]])?.first?["id"] as? Int)
        var sessions: [String: String] = [:]
        for (login, role, clinic, doctorId) in [("desk-a", "receptionist", scene.clinic, nil), ("doctor-a", "doctor", scene.clinic, doctor),
                                                ("boss-b", "clinic-admin", renoClinic, nil)] as [(String, String, Int, Int?)] {
            // The clinic by its id, or (issue 46) by its name, in any case.
            var arguments = ["admin", "staff", "add", "--login", login, "--name", "Sam", "--surname", "Lee", "--role", role,
                             "--clinic", clinic == renoClinic ? renoName : String(clinic), "--password-stdin"]
            if let doctorId { arguments += ["--doctor", String(doctorId)] }
            #expect(try cli.run(arguments, input: Self.staffPassword).status == 0, "\(login)")
            let session = cli.folder.appendingPathComponent("session-\(login)").path
            #expect(try cli.run(["staff", "login", "--login", login, "--password-stdin"], input: Self.staffPassword, session: session).status == 0)
            sessions[login] = session
        }
        let desk = try #require((try cli.run(["staff", "whoami", "--json"], session: sessions["desk-a"]).json() as? [String: Any])?["id"] as? Int)
        let cardiology = String(scene.cardiology)
        let commands: [[String]] = [
            ["staff", "whoami"],
            ["staff", "schedule", "--date", scene.monday],
            ["staff", "appointment", "check-in", String(id)],
            ["staff", "appointment", "start", String(id)],
            ["staff", "appointment", "complete", String(id)],
            ["staff", "appointment", "no-show", String(id)],
            ["staff", "appointment", "cancel", String(id), "--reason", "ill"],
            ["staff", "book", "--patient", "pat", "--department", cardiology, "--at", "\(scene.monday) 09:00"],
            ["staff", "doctors"],
            ["staff", "doctors", "add", "--department", cardiology, "--name", "Ada Park"],
            ["staff", "doctors", "deactivate", String(otherDoctor)],
            ["staff", "hours", "show", "--doctor", String(doctor)],
            ["staff", "hours", "set", "--doctor", String(otherDoctor), "--weekday", "7", "--off"],
            ["staff", "exceptions", "list", "--doctor", String(doctor)],
            ["staff", "exceptions", "add", "--doctor", String(otherDoctor), "--date", "2030-01-02", "--off"],
            ["staff", "exceptions", "remove", "999"],
            ["staff", "visit-types", "--department", cardiology],
            ["staff", "visit-types", "add", "--department", cardiology, "--name-en", "A", "--name-ru", "Б", "--minutes", "40"],
            ["staff", "visit-types", "update", "999", "--name-en", "A", "--name-ru", "Б", "--minutes", "40"],
            ["staff", "visit-types", "remove", "999"],
            ["staff", "accounts"],
            ["staff", "accounts", "add", "--login", "x2", "--name", "Kim", "--surname", "Park", "--role", "receptionist", "--password-stdin"],
            ["staff", "accounts", "disable", String(desk)],
            ["staff", "calendar", "--from", scene.monday, "--days", "2"],
            ["staff", "actions", String(id)],
            ["staff", "reschedule", String(id), "--to", "\(scene.monday) 10:00", "--reason", "The doctor is away"],
            ["staff", "patients", "pat"],
            ["staff", "register-patient", "--name", "Olga", "--surname", "Berg", "--birth-date", "1980-02-03", "--phone", "5551234567"],
        ]
        // A patient's token put in a staff session file is no staff session either.
        let stolen = cli.folder.appendingPathComponent("stolen").path
        try FileManager.default.copyItem(atPath: scene.session, toPath: stolen + "-staff")
        for command in commands {
            let result = try cli.run(command + ["--json"], input: Self.staffPassword, session: scene.session)
            #expect(result.status == 3 && result.errorCode == "not_logged_in", "a patient only: \(command) \(result.stderr)")
            let patientToken = try cli.run(command + ["--json"], input: Self.staffPassword, session: stolen)
            #expect(patientToken.errorCode == "not_logged_in", "a patient's token: \(command) \(patientToken.stderr)")
        }
        let refused: [String: [Int: String]] = [
            "boss-b": [2: "not_found", 3: "not_found", 4: "not_found", 5: "not_found", 6: "not_found", 7: "not_found", 9: "not_found",
                       10: "not_found", 11: "not_found", 12: "not_found", 13: "not_found", 14: "not_found", 15: "not_found",
                       16: "not_found", 17: "not_found", 18: "not_found", 19: "not_found", 22: "not_found", 24: "not_found",
                       25: "not_found"],
            "desk-a": [3: "forbidden", 4: "forbidden", 9: "forbidden", 10: "forbidden", 12: "forbidden", 14: "forbidden",
                       17: "forbidden", 20: "forbidden", 21: "forbidden", 22: "forbidden"],
            "doctor-a": [2: "forbidden", 5: "forbidden", 6: "forbidden", 7: "forbidden", 9: "forbidden", 10: "forbidden",
                         12: "forbidden", 14: "forbidden", 17: "forbidden", 20: "forbidden", 21: "forbidden", 22: "forbidden",
                         25: "forbidden", 26: "forbidden", 27: "forbidden"],
        ]
        let before = try cli.fingerprint(excluding: ["staff_sessions", "audit_events", "audit_head", "login_attempts", "sessions"])
        for (login, expected) in refused {
            for (index, code) in expected {
                let result = try cli.run(commands[index] + ["--json"], input: Self.staffPassword, session: sessions[login])
                #expect(result.errorCode == code, "\(login) \(commands[index]): \(result.stderr)")
            }
        }
        #expect(try cli.fingerprint(excluding: ["staff_sessions", "audit_events", "audit_head", "login_attempts", "sessions"]) == before,
                "refusals change nothing")
    }

    @Test func aReceptionistsDay() throws {
        let cli = try CLIHarness()
        let scene = try staffScene(cli, login: "desk", role: "receptionist")
        let (session, cardiology, monday, clinic) = (scene.session, scene.cardiology, scene.monday, scene.clinic)
        let id = try #require(scene.booked["id"] as? Int)
        let staffPassword = Self.staffPassword
        #expect(try cli.run(["admin", "staff", "add", "--login", "doc", "--name", "Ann", "--surname", "Wu", "--role", "doctor",
                             "--clinic", String(clinic), "--password-stdin", "--json"], input: staffPassword).errorCode == "invalid_input",
                "a doctor's account needs --doctor")
        // Same CLINIC_SESSION: the staff session goes to its own file beside the patient's.
        let login = try cli.run(["staff", "login", "--login", "desk", "--password-stdin", "--json"], input: staffPassword, session: session)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(FileManager.default.fileExists(atPath: session + "-staff"))
        #expect((try cli.run(["whoami", "--json"], session: session).json() as? [String: Any])?["login"] as? String == "pat")
        #expect((try cli.run(["staff", "whoami", "--json"], session: session).json() as? [String: Any])?["role"] as? String == "receptionist")

        let day = try #require(try cli.run(["staff", "schedule", "--date", monday, "--json"], session: session).json() as? [[String: Any]])
        #expect(day.map { $0["id"] as? Int } == [id])
        #expect(day.first?["patientName"] as? String == "Pat Smith" && day.first?["patientLogin"] as? String == "pat")
        let human = try cli.run(["staff", "schedule", "--date", monday], session: session)
        #expect(human.stdout.contains("Pat Smith") && human.stdout.contains("America/Los_Angeles"), "\(human.stdout)")

        // Days before the visit there is no check-in (issue 42): refused, nothing changed.
        let unchanged = try cli.fingerprint(excluding: ["staff_sessions", "audit_events", "audit_head"])
        let early = try cli.run(["staff", "appointment", "check-in", String(id), "--json"], session: session)
        #expect(early.errorCode == "invalid_transition", "\(early.stderr)")
        #expect(try cli.fingerprint(excluding: ["staff_sessions", "audit_events", "audit_head"]) == unchanged)
        // The visit planted at this very minute: the clinic's today (the CLI runs on the real clock).
        let minute = Int(Date().timeIntervalSince1970) / 60 * 60
        try cli.execute(cli.postgres == nil ? "UPDATE appointments SET starts_at = ?, ends_at = ? WHERE id = ?"
                            : "UPDATE appointments SET starts_at = to_timestamp(?::bigint), ends_at = to_timestamp(?::bigint) WHERE id = ?::bigint",
                        [String(minute), String(minute + 1200), String(id)])
        let arrived = try cli.run(["staff", "appointment", "check-in", String(id), "--json"], session: session)
        #expect((arrived.json() as? [String: Any])?["status"] as? String == "arrived", "\(arrived.stderr)")
        // A check-in by mistake is undone (back to scheduled), told as the screens say it; then done again.
        let undone = try cli.run(["staff", "appointment", "undo-check-in", String(id)], session: session)
        #expect(undone.status == 0 && undone.stdout.contains("booked"), "\(undone.stderr)")
        let again = try cli.run(["staff", "appointment", "check-in", String(id)], session: session)
        #expect(again.stdout.contains("checked in") && !again.stdout.contains("arrived"), "\(again.stdout)")
        let start = try cli.run(["staff", "appointment", "start", String(id), "--json"], session: session)
        #expect(start.status == 3 && start.errorCode == "forbidden", "\(start.stderr)")
        #expect(try cli.run(["staff", "appointment", "cancel", String(id), "--json"], session: session).errorCode == "invalid_input")
        #expect(try cli.run(["staff", "appointment", "check-in", "999999", "--json"], session: session).errorCode == "not_found")
        #expect(try cli.run(["staff", "accounts", "add", "--login", "x2", "--name", "Kim", "--surname", "Park", "--role",
                             "receptionist", "--password-stdin", "--json"], input: staffPassword, session: session).errorCode == "forbidden")

        let forPat = try cli.run(["staff", "book", "--patient", "pat", "--department", String(cardiology), "--at", "\(monday) 09:00",
                                  "--json"], session: session)
        #expect((forPat.json() as? [String: Any])?["status"] as? String == "scheduled", "\(forPat.stderr)")
        let log = try #require(try cli.run(["profile", "access-log", "--json"], session: session).json() as? [[String: Any]])
        #expect(log.map { $0["action"] as? String } == ["appointment.book", "appointment.check-in", "appointment.undo-check-in",
                                                        "appointment.check-in", "patient.read", "patient.read"])
        #expect(log.allSatisfy { $0["role"] as? String == "receptionist" })
        // What the desk may do to it, then moved by the desk (the patient is told) and seen on the calendar.
        let forPatId = try #require((forPat.json() as? [String: Any])?["id"] as? Int)
        let offered = try cli.run(["staff", "actions", String(forPatId), "--json"], session: session)
        #expect(((offered.json() as? [String: Any])?["actions"] as? [String])?.contains("cancel") == true, "\(offered.stdout)")
        let moved = try cli.run(["staff", "reschedule", String(forPatId), "--to", "\(monday) 10:00", "--reason", "The doctor is away"],
                                session: session)
        #expect(moved.status == 0 && moved.stdout.contains("10:00"), "\(moved.stdout)\(moved.stderr)")
        let calendar = try cli.run(["staff", "calendar", "--from", monday, "--json"], session: session)
        let columns = try #require((calendar.json() as? [String: Any])?["doctors"] as? [[String: Any]], "\(calendar.stderr)")
        let shown = columns.flatMap { ($0["appointments"] as? [[String: Any]]) ?? [] }
        #expect(shown.contains { $0["id"] as? Int == forPatId && $0["patientLogin"] as? String == "pat" }, "\(calendar.stdout.prefix(1500))")

        // A walk-in's online account: registered at the desk, given a code, claimed from the
        // command line once (a wrong code and the used one refused, nothing made of them).
        let walkIn = try cli.run(["staff", "register-patient", "--name", "Olga", "--surname", "Berg", "--birth-date", "1980-02-03",
                                  "--phone", "5551234567", "--json"], session: session)
        let walkInId = try #require((walkIn.json() as? [String: Any])?["id"] as? Int, "\(walkIn.stderr)")
        let given = try cli.run(["staff", "claim-code", String(walkInId), "--json"], session: session)
        let code = try #require((given.json() as? [String: Any])?["code"] as? String, "\(given.stderr)")
        let olga = session + "-olga"
        let claim = ["claim", "--login", "olga", "--password-stdin", "--json", "--code"]
        #expect(try cli.run(claim + ["AAAA-BBBB-CCCC"], input: staffPassword, session: olga).errorCode == "invalid_input")
        let claimed = try cli.run(claim + [code], input: staffPassword, session: olga)
        #expect((claimed.json() as? [String: Any])?["login"] as? String == "olga", "\(claimed.stderr)")
        #expect(try cli.run(claim + [code], input: staffPassword, session: olga).errorCode == "invalid_input", "a code works once")
        #expect(try cli.run(["login", "--login", "olga", "--password-stdin"], input: staffPassword, session: olga).status == 0)
        #expect((try cli.run(["whoami", "--json"], session: olga).json() as? [String: Any])?["name"] as? String == "Olga")

        #expect(try cli.run(["staff", "logout"], session: session).status == 0)
        #expect(try cli.run(["staff", "whoami", "--json"], session: session).errorCode == "not_logged_in")
        #expect(try cli.run(["whoami", "--json"], session: session).status == 0, "the patient's session is untouched")
        #expect(try cli.run(["admin", "check", "--json"]).status == 0)
    }

    /// A clinic admin changes a doctor's hours from the command line: refused while it would
    /// strand a booking, forced with a reason, which the patient's history shows.
    @Test func aClinicAdminChangesHours() throws {
        let cli = try CLIHarness()
        let scene = try staffScene(cli, login: "boss", role: "clinic-admin")
        let (session, cardiology, monday) = (scene.session, scene.cardiology, scene.monday)
        let id = try #require(scene.booked["id"] as? Int), doctor = try #require(scene.booked["doctorId"] as? Int)
        #expect(try cli.run(["staff", "login", "--login", "boss", "--password-stdin"], input: Self.staffPassword, session: session).status == 0)
        let doctors = try #require(try cli.run(["staff", "doctors", "--json"], session: session).json() as? [[String: Any]])
        #expect(doctors.contains { $0["id"] as? Int == doctor })
        let refused = try cli.run(["staff", "hours", "set", "--doctor", String(doctor), "--weekday", "1", "--off", "--json"], session: session)
        #expect(refused.status == 5 && refused.errorCode == "hours_conflict" && refused.stderr.contains(String(id)), "\(refused.stderr)")
        #expect(try cli.run(["staff", "hours", "set", "--doctor", String(doctor), "--weekday", "1", "--from", "9:00", "--json"],
                            session: session).errorCode == "invalid_input")
        let forced = try cli.run(["staff", "exceptions", "add", "--doctor", String(doctor), "--date", monday, "--off", "--force",
                                  "--reason", "Dr. Thompson is ill", "--json"], session: session)
        #expect(forced.status == 0, "\(forced.stderr)")
        let shown = try #require(try cli.run(["appointments", "show", String(id), "--json"], session: session).json() as? [String: Any])
        #expect(shown["status"] as? String == "cancelled")
        #expect((shown["history"] as? [[String: Any]])?.last?["reason"] as? String == "Dr. Thompson is ill")

        // A 40-minute visit type: offered where two 20-minute slots fit, booked for 40 minutes.
        let added = try cli.run(["staff", "visit-types", "add", "--department", String(cardiology), "--name-en", "First visit",
                                 "--name-ru", "Первичный приём", "--minutes", "40", "--price-cents", "12000", "--json"], session: session)
        let visit = try #require((added.json() as? [String: Any])?["id"] as? Int, "\(added.stderr)")
        let listed = try #require(try cli.run(["visit-types", String(cardiology), "--json", "--lang", "ru"]).json() as? [[String: Any]])
        #expect(listed.map { $0["name"] as? String } == ["Первичный приём"])
        let tuesday = nextMonday(plus: 1)
        let slots = try #require(try cli.run(["slots", "--department", String(cardiology), "--from", tuesday, "--days", "1",
                                              "--visit-type", String(visit), "--json"]).json() as? [[String: Any]])
        let free = try #require(slots.first { $0["isAvailable"] as? Bool == true })
        let start = try #require(free["start"] as? String)
        let long = try #require(try cli.run(["book", "--department", String(cardiology), "--at", start, "--visit-type", String(visit),
                                             "--json"], session: session).json() as? [String: Any])
        #expect(long["visitTypeId"] as? Int == visit && long["end"] as? String == free["end"] as? String)
        #expect(try cli.run(["book", "--department", String(cardiology), "--at", start, "--visit-type", "999", "--json"],
                            session: session).errorCode == "not_found")
        #expect(try cli.run(["admin", "check", "--json"]).status == 0)
    }

    @Test func slotsFindHistoryAndStaffCommands() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let session = try patient(cli, "anna")
        let cardiology = try departmentId(cli, city: "Los Angeles", "cardiology")
        let monday = nextMonday()
        let slots = try #require(try cli.run(["slots", "--department", String(cardiology), "--from", monday, "--days", "1", "--json"])
            .json() as? [[String: Any]])
        #expect(slots.count == 24)
        #expect(Set(slots[0].keys) == ["doctorId", "doctorName", "start", "end", "isAvailable"])
        let human = try cli.run(["slots", "--department", String(cardiology), "--from", monday, "--days", "1"])
        #expect(human.stdout.contains("8:00 AM–8:20 AM"), "\(human.stdout)")
        #expect(human.stdout.contains("America/Los_Angeles"))

        let booked = try #require(try cli.run(["book", "--department", String(cardiology), "--at", "\(monday) 08:00", "--json"],
                                              session: session).json() as? [String: Any])
        let id = try #require(booked["id"] as? Int)
        let after = try #require(try cli.run(["slots", "--department", String(cardiology), "--from", monday, "--days", "1", "--json"])
            .json() as? [[String: Any]])
        #expect(after.first?["isAvailable"] as? Bool == false)

        let found = try #require(try cli.run(["find", "--specialization", "Кардиология", "--lat", "34.0", "--lon", "-118.2", "--json"])
            .json() as? [[String: Any]])
        #expect(found.count == 1)
        #expect(Set(found[0].keys) == ["clinic", "departmentId", "doctorId", "doctorName", "start", "end"])
        #expect((found[0]["clinic"] as? [String: Any])?["distanceMeters"] != nil)

        #expect(try cli.run(["admin", "appointment", "set-status", String(id), "confirmed"]).status == 0)
        let refused = try cli.run(["admin", "appointment", "set-status", String(id), "scheduled", "--json"])
        #expect(refused.errorCode == "invalid_transition")
        let early = try cli.run(["admin", "appointment", "set-status", String(id), "completed", "--json"])
        #expect(early.errorCode == "invalid_transition")
        let shown = try #require(try cli.run(["appointments", "show", String(id), "--json"], session: session).json() as? [String: Any])
        #expect(shown["status"] as? String == "confirmed")
        #expect((shown["history"] as? [[String: Any]])?.map { $0["event"] as? String } == ["booked", "confirmed"])

        // The operator's change is in the audit trail (the refused ones are not), and the patient reads it.
        let accessLog = try #require(try cli.run(["profile", "access-log", "--json"], session: session).json() as? [[String: Any]])
        #expect(accessLog.map { $0["action"] as? String } == ["appointment.status"])
        #expect(accessLog.first?["role"] as? String == "operator" && accessLog.first?["appointmentId"] as? Int == id)
        let humanLog = try cli.run(["profile", "access-log"], session: session)
        #expect(humanLog.stdout.contains("Changed the appointment's status") && humanLog.stdout.contains("scheduled -> confirmed"), "\(humanLog.stdout)")
        let exported = try cli.run(["admin", "audit", "export", "--since", "2000-01-01"])
        let lines = exported.stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.contains("\"hash\"") == true, "\(exported.stdout) \(exported.stderr)")
        #expect(try cli.run(["admin", "audit", "export", "--since", "2999-01-01T00:00Z"]).stdout.isEmpty)
        #expect(try cli.run(["admin", "audit", "export", "--since", "yesterday", "--json"]).errorCode == "invalid_input")
        #expect(try cli.run(["appointments", "--all", "--json"], session: session).status == 0, "the list is still the default")

        let settings = try #require(try cli.run(["admin", "settings", "set", "booking.max_active", "1", "--json"]).json() as? [String: Any])
        #expect(settings["booking.max_active"] as? Int == 1)
        let limited = try cli.run(["book", "--department", String(cardiology), "--at", "\(monday) 09:00", "--json"], session: session)
        #expect(limited.errorCode == "limit_reached")

        let doctor = try #require(slots.first?["doctorId"] as? Int)
        let tuesday = nextMonday(plus: 1)
        let exception = try cli.run(["admin", "exception", "add", "--doctor", String(doctor), "--date", tuesday, "--off", "--json"])
        #expect(exception.status == 0, "\(exception.stderr)")
        let none = try #require(try cli.run(["slots", "--department", String(cardiology), "--from", tuesday, "--days", "1", "--json"])
            .json() as? [[String: Any]])
        #expect(none.isEmpty, "a day off has no slots")
        let badException = try cli.run(["admin", "exception", "add", "--doctor", String(doctor), "--date", tuesday, "--json"])
        #expect(badException.errorCode == "invalid_input")
        #expect(try cli.run(["slots", "--department", String(cardiology), "--days", "40", "--json"]).errorCode == "invalid_input")
        #expect(try cli.run(["slots", "--department", String(cardiology), "--from", "2026-02-30", "--json"]).errorCode == "invalid_input")
    }
}
