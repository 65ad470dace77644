import Foundation
import Testing

@Suite struct EndToEndTests {
    let password = "correct-horse-42\n"

    func registerAndLogIn(_ cli: CLIHarness, _ login: String, session: String? = nil) throws {
        let registered = try cli.run(["register", "--login", login, "--name", "Anna", "--surname", "O'Brien",
                                      "--street", "Main Street", "--house", "12A", "--city", "los angeles",
                                      "--accept-privacy", "--password-stdin"], input: password, session: session)
        #expect(registered.status == 0, "\(registered.stderr)")
        let loggedIn = try cli.run(["login", "--login", login, "--password-stdin"], input: password, session: session)
        #expect(loggedIn.status == 0, "\(loggedIn.stderr)")
    }

    @Test func aPatientsWholeJourney() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        try registerAndLogIn(cli, "anna")
        let mode = try FileManager.default.attributesOfItem(atPath: cli.sessionPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        if CLIStore.current == .sqlite {
            let databaseMode = try FileManager.default.attributesOfItem(atPath: cli.databasePath)[.posixPermissions] as? Int
            #expect(databaseMode == 0o600, "the database holds personal data")
        }

        let whoami = try cli.run(["whoami", "--json"])
        #expect((whoami.json() as? [String: Any])?["login"] as? String == "anna")

        let list = try cli.run(["clinics", "list", "--city", "LOS ANGELES", "--json"])
        let clinics = try #require(list.json() as? [[String: Any]])
        #expect(clinics.map { $0["name"] as? String } == ["Adventist Medical Center", "Children's Hospital"])
        #expect(Set(clinics[0].keys) == ["id", "name", "address", "city", "lat", "lon", "isPediatric", "isHospital", "timeZone"])
        #expect(clinics[1]["isPediatric"] as? Bool == true)
        #expect(clinics[1]["address"] as? String == "4650 Sunset Blvd, Suite 1")
        #expect(clinics[0]["timeZone"] as? String == "America/Los_Angeles")
        let clinicId = try #require(clinics[0]["id"] as? Int)

        let pediatric = try cli.run(["clinics", "list", "--pediatric", "--json"])
        #expect((pediatric.json() as? [[String: Any]])?.count == 1)

        let shown = try cli.run(["clinics", "show", String(clinicId), "--json"])
        let detail = try #require(shown.json() as? [String: Any])
        #expect(detail["name"] as? String == "Adventist Medical Center")
        #expect((detail["departments"] as? [[String: Any]])?.count == 5)

        let departments = try #require(try cli.run(["departments", String(clinicId), "--json"]).json() as? [[String: Any]])
        let therapy = try #require(departments.first { $0["specialization"] as? String == "therapy" })
        let departmentId = try #require(therapy["id"] as? Int)
        let doctors = try #require(try cli.run(["doctors", String(departmentId), "--json"]).json() as? [[String: Any]])
        #expect(doctors.count == 2)
        #expect((doctors[0]["hours"] as? [[String: Any]])?.count == 10)
        // The table says the ten intervals as one line (issue 46), not ten.
        let table = try cli.run(["doctors", String(departmentId)])
        #expect(table.stdout.contains("Mon–Fri 08:00–12:00 and 13:00–17:00 (20 min)") && !table.stdout.contains("Tue 08:00"), "\(table.stdout)")

        let monday = nextMonday()
        let booked = try cli.run(["book", "--department", String(departmentId), "--at", "\(monday) 09:20",
                                  "--notes", "first visit", "--json"])
        #expect(booked.status == 0, "\(booked.stderr)")
        let appointment = try #require(booked.json() as? [String: Any])
        #expect(Set(appointment.keys) == ["id", "clinicId", "departmentId", "doctorId", "doctorName", "start", "end", "status", "notes"])
        #expect(appointment["status"] as? String == "scheduled")
        #expect(appointment["notes"] as? String == "first visit")
        let start = try #require(appointment["start"] as? String)
        #expect(start.hasPrefix(monday + "T1") && start.hasSuffix(":20:00Z"), "09:20 Pacific is 16:20Z or 17:20Z: \(start)")
        let appointmentId = try #require(appointment["id"] as? Int)

        let upcoming = try #require(try cli.run(["appointments", "--json"]).json() as? [[String: Any]])
        #expect(upcoming.map { $0["id"] as? Int } == [appointmentId])

        let moved = try cli.run(["reschedule", String(appointmentId), "--to", "\(monday) 10:40", "--json"])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(((moved.json() as? [String: Any])?["start"] as? String)?.hasSuffix(":40:00Z") == true)

        let human = try cli.run(["appointments"])
        #expect(human.stdout.contains("10:40 AM"), "human output is in the clinic's local time: \(human.stdout)")
        #expect(human.stdout.contains("Adventist Medical Center"))

        let cancelled = try cli.run(["cancel", String(appointmentId), "--json"])
        #expect((cancelled.json() as? [String: Any])?["status"] as? String == "cancelled")
        #expect((try cli.run(["appointments", "--json"]).json() as? [[String: Any]])?.isEmpty == true)
        let all = try #require(try cli.run(["appointments", "--all", "--json"]).json() as? [[String: Any]])
        #expect(all.map { $0["status"] as? String } == ["cancelled"])

        let logout = try cli.run(["logout"])
        #expect(logout.status == 0)
        #expect(!FileManager.default.fileExists(atPath: cli.sessionPath))
        let after = try cli.run(["whoami", "--json"])
        #expect(after.status != 0)
        #expect(after.errorCode == "not_logged_in")
    }

    @Test func everyErrorCodeOnBadInputLeavesTheDatabaseUnchanged() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        try registerAndLogIn(cli, "anna")
        let otherSession = cli.folder.appendingPathComponent("other-session").path
        try registerAndLogIn(cli, "bob", session: otherSession)
        let clinics = try #require(try cli.run(["clinics", "list", "--city", "Reno", "--json"]).json() as? [[String: Any]])
        let reno = try #require(clinics.first?["id"] as? Int)
        let departments = try #require(try cli.run(["departments", String(reno), "--json"]).json() as? [[String: Any]])
        let surgery = try #require(departments.first { $0["specialization"] as? String == "surgery" }?["id"] as? Int)
        let monday = nextMonday()
        let booked = try cli.run(["book", "--department", String(surgery), "--at", "\(monday) 10:00", "--json"])
        let appointmentId = try #require((booked.json() as? [String: Any])?["id"] as? Int)

        let nobody = cli.folder.appendingPathComponent("no-session").path
        let cases: [(code: String, arguments: [String], input: String, session: String?)] = [
            ("invalid_input", ["book", "--department", String(surgery), "--at", "next tuesday"], "", nil),
            ("invalid_input", ["clinics", "list", "--limit", "0"], "", nil),
            ("invalid_input", ["clinics", "show", "abc"], "", nil),
            ("invalid_input", ["register", "--login", "cleo"], "", nil),
            ("invalid_input", ["admin", "migrate", "--to", "99"], "", nil),
            ("not_logged_in", ["appointments"], "", nobody),
            ("invalid_credentials", ["login", "--login", "anna", "--password-stdin"], "wrong-horse-42\n", nobody),
            ("invalid_credentials", ["login", "--login", "nobody", "--password-stdin"], "correct-horse-42\n", nobody),
            ("weak_password", ["register", "--login", "cleo", "--name", "Cleo", "--surname", "B", "--street", "Main Street",
                               "--house", "1", "--city", "Reno", "--accept-privacy", "--password-stdin"], "Password123\n", nil),
            ("login_taken", ["register", "--login", "ANNA", "--name", "A", "--surname", "B", "--street", "Main Street",
                             "--house", "1", "--city", "Reno", "--accept-privacy", "--password-stdin"], password, nil),
            ("weak_password", ["register", "--login", "cleo", "--name", "Cleo", "--surname", "B", "--street", "Main Street",
                               "--house", "1", "--city", "Reno", "--accept-privacy", "--password-stdin"], "short\n", nil),
            ("privacy_not_accepted", ["register", "--login", "cleo", "--name", "Cleo", "--surname", "B", "--street", "Main Street",
                                      "--house", "1", "--city", "Reno", "--password-stdin"], password, nil),
            ("not_found", ["clinics", "show", "999999"], "", nil),
            ("not_found", ["departments", "999999"], "", nil),
            ("not_found", ["cancel", "999999"], "", nil),
            ("forbidden", ["cancel", String(appointmentId)], "", otherSession),
            ("forbidden", ["reschedule", String(appointmentId), "--to", "\(monday) 11:00"], "", otherSession),
            ("slot_taken", ["book", "--department", String(surgery), "--at", "\(monday) 10:00"], "", otherSession),
            ("slot_unavailable", ["book", "--department", String(surgery), "--at", "\(monday) 10:10"], "", otherSession),
            ("slot_unavailable", ["book", "--department", String(surgery), "--at", "2001-01-01 10:00"], "", otherSession),
        ]
        for item in cases {
            // A failed log-in is counted for throttling: that table, and only that one, changes.
            let counted: Set<String> = item.code == "invalid_credentials" ? ["login_attempts"] : []
            let before = try cli.fingerprint(excluding: counted)
            let attemptsBefore = try cli.fingerprint()
            let result = try cli.run(item.arguments + ["--json"], input: item.input, session: item.session)
            #expect(result.status != 0, "\(item.arguments)")
            #expect(result.errorCode == item.code, "\(item.arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(item.arguments)")
            #expect(try cli.fingerprint(excluding: counted) == before, "\(item.arguments) changed the database")
            if !counted.isEmpty { #expect(try cli.fingerprint() != attemptsBefore, "the failure was counted") }
        }
        // One failure for anna above, four more: the next attempt is refused without looking at the password.
        for _ in 0..<4 {
            _ = try cli.run(["login", "--login", "anna", "--password-stdin"], input: "wrong-horse-42\n", session: nobody)
        }
        let locked = try cli.run(["login", "--login", "anna", "--password-stdin", "--json"], input: password, session: nobody)
        #expect(locked.errorCode == "account_locked", "\(locked.stderr)")
        #expect(locked.status == 3)
    }

    @Test func humanErrorsSpeakTheChosenLanguageWithStableExitStatus() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let english = try cli.run(["clinics", "show", "999999"])
        #expect(english.status == 4)
        #expect(english.stderr == "There is no clinic 999999.\n")
        let russian = try cli.run(["clinics", "show", "999999", "--lang", "ru"])
        #expect(russian.status == 4)
        #expect(russian.stderr == "Клиники 999999 нет.\n")
        let fromEnvironment = try cli.run(["appointments"], session: cli.folder.appendingPathComponent("none").path,
                                          environment: ["LANG": "ru_RU.UTF-8"])
        #expect(fromEnvironment.status == 3)
        #expect(fromEnvironment.stderr.hasPrefix("Вы не вошли."))
    }

    @Test func firstUseFillsTheDefaultDirectory() throws {
        let cli = try CLIHarness()
        let result = try cli.run(["clinics", "list", "--city", "Hanford", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let clinics = try #require(result.json() as? [[String: Any]])
        #expect(clinics.map { $0["name"] as? String }.contains("ADVENTIST MEDICAL CENTER"))
        let first = try #require(clinics.first?["id"] as? Int)
        let shown = try #require(try cli.run(["clinics", "show", String(first), "--json"]).json() as? [String: Any])
        #expect((shown["departments"] as? [[String: Any]])?.isEmpty == false)
        let initialized = try cli.run(["init", "--json"])
        #expect((initialized.json() as? [String: Any])?["clinics"] as? Int == 7146)
        #expect((initialized.json() as? [String: Any])?["created"] as? Bool == false)
    }

    @Test func migrationsMoveDownAndUpFromTheCommandLine() throws {
        let cli = try CLIHarness()
        #expect(try cli.run(["init", "--empty"]).status == 0)
        let down = try #require(try cli.run(["admin", "migrate", "--to", "0", "--json"]).json() as? [String: Any])
        #expect(down["version"] as? Int == 0)
        let up = try #require(try cli.run(["admin", "migrate", "--json"]).json() as? [String: Any])
        #expect((up["version"] as? Int ?? 0) >= 1)
        #expect((up["ran"] as? [Int])?.first == 1)
    }

    @Test func importReportsBadRowsAndImportsNothing() throws {
        let cli = try CLIHarness()
        #expect(try cli.run(["init", "--empty"]).status == 0)
        let file = cli.folder.appendingPathComponent("bad.csv")
        try "external_id,name,lat,lon\nA,Good,1,2\nB,,1,2\nC,Bad,100,2\n".write(to: file, atomically: true, encoding: .utf8)
        let before = try cli.fingerprint()
        let refused = try cli.run(["admin", "import-clinics", file.path, "--json"])
        #expect(refused.errorCode == "invalid_input")
        #expect(refused.stderr.contains("\"line\":3") && refused.stderr.contains("\"line\":4"))
        #expect(try cli.fingerprint() == before)
        let partial = try #require(try cli.run(["admin", "import-clinics", file.path, "--skip-invalid", "--json"]).json() as? [String: Any])
        #expect(partial["inserted"] as? Int == 1)
        #expect((partial["skipped"] as? [[String: Any]])?.count == 2)
    }

    @Test func withoutATerminalNothingWaitsForInput() throws {
        let cli = try CLIHarness()
        #expect(try cli.run(["init", "--empty"]).status == 0)
        let login = try cli.run(["login", "--login", "anna", "--json"])
        #expect(login.errorCode == "invalid_input")
        // Global options may come first, and a negative number may follow an option.
        let early = try cli.run(["--json", "--lang", "ru", "clinics", "list", "--limit", "-5"])
        #expect(early.errorCode == "invalid_input")
        #expect(early.stderr.contains("Лимит"), "\(early.stderr)")
        let help = try cli.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("clinics"))
    }
}
