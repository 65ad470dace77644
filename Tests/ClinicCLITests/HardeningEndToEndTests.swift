import Foundation
@testable import ClinicStoreSQLite
import GRDB
import Testing

/// The hostile run's findings, as the `clinic` binary shows them (issue "Hardening").
@Suite struct HardeningEndToEndTests {
    let password = "correct-horse-42\n"

    func register(_ cli: CLIHarness, _ login: String) throws {
        let registered = try cli.run(["register", "--login", login, "--name", "Anna", "--surname", "Smith",
                                      "--street", "Main Street", "--house", "12", "--city", "Reno",
                                      "--accept-privacy", "--password-stdin"], input: password)
        #expect(registered.status == 0, "\(registered.stderr)")
    }

    /// 30 processes guess at once: at most 5 passwords are checked.
    @Test func thirtyParallelGuessesAreCheckedAtMostFiveTimes() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        try register(cli, "anna")
        let running = try (0..<30).map { index in
            try cli.start(["login", "--login", "anna", "--password-stdin", "--json"], input: "wrong-horse-\(index)\n")
        }
        let codes = try running.map { try $0.wait().errorCode ?? "none" }
        let checked = codes.filter { $0 == "invalid_credentials" }.count
        #expect(checked >= 1 && checked <= 5, "\(codes)")
        #expect(codes.filter { $0 == "account_locked" }.count == 30 - checked, "\(codes)")
        let right = try cli.run(["login", "--login", "anna", "--password-stdin", "--json"], input: password)
        #expect(right.errorCode == "account_locked", "the right password waits for the window to end")
        #expect(!FileManager.default.fileExists(atPath: cli.sessionPath))
    }

    /// Random bytes in the live file: `backup` names the live database and leaves no file;
    /// `check` reports on stdout and fails.
    @Test(.sqliteOnly) func aDamagedLiveDatabaseIsReportedNotBlamedOnTheBackup() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        try register(cli, "anna")
        let queue = try DatabaseQueue(path: cli.databasePath)
        try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try queue.close()
        let handle = try #require(FileHandle(forUpdatingAtPath: cli.databasePath))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data((0..<Int(size / 2)).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }))
        try handle.close()

        let target = cli.folder.appendingPathComponent("backup.sqlite").path
        for _ in 0..<2 { // a retry to the same name gets the same answer
            let backup = try cli.run(["admin", "backup", target, "--json"])
            #expect(backup.errorCode == "storage_error", "\(backup.stderr)")
            #expect(backup.stderr.contains("The database \(cli.databasePath) is damaged"), "\(backup.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target))
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.folder.path).filter { $0.contains("backup.sqlite") }
        #expect(leftovers.isEmpty, "\(leftovers)")

        let check = try cli.run(["admin", "check", "--json"])
        #expect(check.status != 0)
        let report = try #require(check.json() as? [String: Any], "\(check.stdout) \(check.stderr)")
        #expect(report["ok"] as? Bool == false)
        #expect((report["integrity"] as? [String])?.first != "ok", "\(report)")
        #expect(report["schema"] is [String] && report["foreignKeyViolations"] is Int)

        // The header itself gone: still a report.
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: cli.databasePath))
        let garbage = try cli.run(["admin", "check", "--json"])
        #expect(garbage.status != 0 && (garbage.json() as? [String: Any])?["ok"] as? Bool == false, "\(garbage.stdout) \(garbage.stderr)")
        let human = try cli.run(["admin", "check"])
        #expect(human.status != 0 && human.stdout.contains("not a database"), "\(human.stdout) \(human.stderr)")
    }

    /// A row of the audit trail edited with the file open elsewhere (around its triggers):
    /// `admin check` fails and says which row.
    @Test(.sqliteOnly) func checkFindsAnEditedAuditRow() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        // Doctor 1: the first demo doctor of the imported directory.
        let added = try cli.run(["admin", "exception", "add", "--doctor", "1", "--date", "2027-01-05", "--off"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try cli.run(["admin", "check", "--json"]).status == 0)
        let queue = try DatabaseQueue(path: cli.databasePath)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP TRIGGER audit_events_no_update;
                UPDATE audit_events SET detail = 'doctor 1 2027-01-06 off' WHERE id = 1;
                CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
                BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;
                """)
        }
        try queue.close()
        let check = try cli.run(["admin", "check", "--json"])
        #expect(check.status != 0)
        let report = try #require(check.json() as? [String: Any], "\(check.stdout) \(check.stderr)")
        #expect(report["ok"] as? Bool == false && report["schema"] as? [String] == [], "\(report)")
        #expect((report["audit"] as? [String]) == ["audit row 1 does not match its hash (edited, or a row before it changed)"])
        let human = try cli.run(["admin", "check"])
        #expect(human.stdout.contains("audit: audit row 1"), "\(human.stdout)")
    }

    @Test(.sqliteOnly) func checkNamesASchemaDifference() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        #expect(try cli.run(["admin", "check"]).status == 0)
        let queue = try DatabaseQueue(path: cli.databasePath)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "DROP TABLE geocode_cache") }
        try queue.close()
        let check = try cli.run(["admin", "check"])
        #expect(check.status != 0 && check.stdout.contains("missing table geocode_cache"), "\(check.stdout) \(check.stderr)")
    }

    /// A link placed where the session file goes: `login` neither writes through it nor chmods its target.
    @Test func loginRefusesASessionFileThatIsALink() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        try register(cli, "anna")
        let target = cli.folder.appendingPathComponent("victim").path
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o644)
        try FileManager.default.createSymbolicLink(atPath: cli.sessionPath, withDestinationPath: target)
        let login = try cli.run(["login", "--login", "anna", "--password-stdin", "--json"], input: password)
        #expect(login.errorCode == "insecure_session_file", "\(login.stderr)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious\n")
        #expect(try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int == 0o644)
        #expect(try cli.run(["whoami", "--json"]).errorCode == "insecure_session_file")
    }

    /// `logout` with a session file others can read ends the session all the same.
    @Test func logoutEndsAnExposedSession() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        try register(cli, "anna")
        #expect(try cli.run(["login", "--login", "anna", "--password-stdin"], input: password).status == 0)
        chmod(cli.sessionPath, 0o644)
        #expect(try cli.run(["whoami", "--json"]).errorCode == "insecure_session_file")
        let logout = try cli.run(["logout", "--json"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect((logout.json() as? [String: Any])?["loggedOut"] as? Bool == true)
        #expect(logout.stderr.contains("could be read by other users"), "\(logout.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.sessionPath))
        #expect(try cli.integers("SELECT count(*) FROM sessions") == [0], "revoked in the database")
    }

    /// An empty database file made beforehand with mode 0644 is private once it holds data.
    @Test(.sqliteOnly) func aPreExistingEmptyDatabaseFileBecomesPrivate() throws {
        let cli = try CLIHarness()
        #expect(FileManager.default.createFile(atPath: cli.databasePath, contents: nil, attributes: [.posixPermissions: 0o644]))
        try cli.setUpDirectory()
        try register(cli, "anna")
        for file in [cli.databasePath, cli.databasePath + "-wal", cli.databasePath + "-shm", cli.databasePath + ".key"]
        where FileManager.default.fileExists(atPath: file) {
            #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600, "\(file)")
        }
    }

    /// A database the user may only read: reading commands work, writing ones say why not.
    @Test(.sqliteOnly) func aReadOnlyDatabaseCanBeRead() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let listed = try cli.run(["clinics", "list", "--json"])
        #expect(listed.status == 0)
        let department = try cli.run(["departments", "1", "--json"])
        let departmentId = ((department.json() as? [[String: Any]])?.first?["id"] as? Int) ?? 0

        let before = try cli.fingerprint()
        // Root may write any file: run as nobody, from a copy of the program it can reach.
        let asRoot = geteuid() == 0
        let world = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-ro-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: world) }
        var run: ([String]) throws -> CLIHarness.Result = { try cli.run($0, input: "read-only-horse-42\n") }
        if asRoot {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            try FileManager.default.createDirectory(at: world, withIntermediateDirectories: true)
            for folder in ["Migrations", "Data"] {
                try FileManager.default.copyItem(at: root.appendingPathComponent(folder), to: world.appendingPathComponent(folder))
            }
            try FileManager.default.copyItem(at: CLIHarness.binary, to: world.appendingPathComponent("clinic"))
            chmod(world.path, 0o755)
            // The database's folder and file belong to nobody; the file is read-only for its owner.
            for path in [cli.folder.path, cli.databasePath, cli.databasePath + "-wal", cli.databasePath + "-shm"]
            where FileManager.default.fileExists(atPath: path) {
                #expect(chown(path, 65534, 65534) == 0)
            }
            run = { arguments in
                try cli.run(["--reuid=65534", "--regid=65534", "--clear-groups", world.appendingPathComponent("clinic").path] + arguments,
                            input: "read-only-horse-42\n", environment: ["CLINIC_RESOURCES": world.path],
                            executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
            }
        }
        chmod(cli.databasePath, 0o400)
        let list = try run(["clinics", "list", "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout == listed.stdout)
        let slots = try run(["slots", "--department", String(departmentId), "--days", "1", "--json"])
        #expect(slots.status == 0, "\(slots.stderr)")
        let book = try run(["register", "--login", "rita", "--name", "Rita", "--surname", "Rowe", "--street", "Main Street",
                            "--house", "1", "--city", "Reno", "--accept-privacy", "--password-stdin", "--json"])
        #expect(book.errorCode == "storage_error" && book.stderr.contains("read-only"), "\(book.stderr)")
        #expect(try cli.fingerprint() == before)
    }

    @Test func smallDisagreementsAtTheCommandLine() throws {
        let cli = try CLIHarness()
        let bare = try cli.run(["--json"])
        #expect(bare.errorCode == "invalid_input")
        #expect(!bare.stderr.contains("above") && bare.stderr.contains("clinic --help"), "\(bare.stderr)")
        let zero = try cli.run(["geocode", "--", "-0,-0"])
        #expect(zero.status == 0 && !zero.stdout.contains("-0.0"), "\(zero.stdout)")
    }
}
