import CArgon2
import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The defects a hostile run found (issue "Hardening"): each test failed before its fix.
@Suite struct HardeningTests {
    let monday = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)

    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hardening-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    func fileSystem(_ folder: Folder, hasher: PasswordHasher = fastHasher, clock: TestClock = TestClock()) throws -> ClinicSystem {
        let database = try SQLiteStore.open(path: folder.path("live.sqlite"), migrations: projectMigrations)
        let system = ClinicSystem(store: database, resources: nil, hasher: hasher, now: { clock.now })
        let csv = "external_id,name,city,state,lat,lon,category\nLA1,Adventist,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE\n"
        _ = try system.importDirectory(Data(csv.utf8), demo: true)
        return system
    }

    // MARK: 1. Parallel log-ins

    /// 30 wrong passwords at once: the check-and-reserve happens before the slow hash, so at
    /// most 5 are checked; the right password afterwards is locked out too.
    @Test func parallelGuessesAreCheckedAtMostFiveTimes() throws {
        let folder = try Folder()
        let clock = TestClock()
        // The real Argon2 parameters: each check is slow, as an attacker's burst would find it.
        let system = try fileSystem(folder, hasher: PasswordHasher(), clock: clock)
        _ = try register(system, "anna")
        let results = LockedBox<[ClinicError.Code]>([])
        let live = folder.path("live.sqlite")
        DispatchQueue.concurrentPerform(iterations: 30) { index in
            // Each attempt on its own connection, as separate processes would be.
            do {
                let database = try SQLiteStore.open(path: live, migrations: projectMigrations)
                let clients = ClientController(database: database, hasher: PasswordHasher(), now: { clock.now })
                _ = try clients.logIn(login: "anna", password: "wrong-horse-\(index)")
                results.withLock { $0.append(.internalError) }
            } catch let error as ClinicError {
                results.withLock { $0.append(error.code) }
            } catch {
                results.withLock { $0.append(.internalError) }
            }
        }
        let codes = results.current
        let checked = codes.filter { $0 == .invalidCredentials }.count
        #expect(codes.count == 30)
        #expect(checked <= ClientController.throttleLimit, "\(checked) passwords were checked")
        #expect(codes.filter { $0 == .accountLocked }.count == 30 - checked, "\(codes)")
        #expect(expectError(.accountLocked) { _ = try system.clients.logIn(login: "anna", password: "correct-horse-42") } != nil,
                "the right password waits for the window to end")
        clock.advance(ClientController.throttleWindow)
        #expect(try system.clients.logIn(login: "anna", password: "correct-horse-42").client.login == "anna")
    }

    /// A success gives back only its own reservation: failures of the window stay counted.
    @Test func aSuccessDoesNotWipeTheWindowsFailures() throws {
        let system = try makeSystem()
        _ = try register(system, "anna")
        for _ in 0..<4 { _ = expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "anna", password: "wrong-horse-42") } }
        _ = try system.clients.logIn(login: "anna", password: "correct-horse-42")
        #expect(try storedInt(system, "SELECT failures FROM login_attempts") == 4)
        _ = expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "anna", password: "wrong-horse-42") }
        #expect(expectError(.accountLocked) { _ = try system.clients.logIn(login: "anna", password: "correct-horse-42") } != nil)
    }

    /// A name no account can have (a NUL, a control character, over 64 characters) is a wrong
    /// password on every store, for patients and staff alike, and nothing is counted for it:
    /// PostgreSQL cannot even compare a text holding a NUL (a fuzzer's 500 before).
    @Test func aLoginNoAccountCanHaveIsAWrongPasswordOnEveryStore() async throws {
        let system = try makeSystem()
        _ = try register(system, "anna")
        for login in ["\u{0}", "anna\u{0}", "an\u{7}na", "an\nna", String(repeating: "a", count: 65)] {
            #expect(expectError(.invalidCredentials) { _ = try system.clients.logIn(login: login, password: "correct-horse-42") } != nil)
            #expect(expectError(.invalidCredentials) { _ = try system.staff.logIn(login: login, password: "correct-horse-42") } != nil)
            #expect(try await system.clients.isLoginTaken(login) == false)
            #expect(expectError(.notFound) { _ = try system.clients.getUserByLogin(login) } != nil)
        }
        #expect(try storedInt(system, "SELECT count(*) FROM login_attempts") == 0)
        // The name itself, with the spaces registration trims, still logs in.
        _ = try system.clients.logIn(login: " anna ", password: "correct-horse-42")
    }

    /// A success whose window ended meanwhile gives back nothing of the next window's.
    @Test func aReleaseTouchesOnlyItsOwnWindow() throws {
        let system = try makeSystem()
        try system.database.writing { tx in
            _ = try tx.countLoginAttempt(loginKey: "anna", at: Date(seconds: 2000)) // 1 failure, the window from 2000
            try ClientController.releaseAttempt(tx, "anna", window: 1000)
        }
        #expect(try storedInt(system, "SELECT failures FROM login_attempts") == 1)
    }

    // MARK: 2. Deleted accounts

    /// By both paths, the CLI's seam and a server's awaited store (issue 56).
    @Test(arguments: [false, true]) func deletingAnAccountCancelsItsFutureAppointmentsAndFreesTheSlots(awaited: Bool) async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let past = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: monday)
        let later = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 30, hour: 9, minute: 20)!)
        let future = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: later)
        clock.advance(2 * 86_400) // the first one has started now
        if awaited {
            try await system.clients.deleteAccount(clientId: anna.id ?? 0, password: "correct-horse-42", passwords: InlinePasswordRunner())
        } else {
            try { try system.clients.deleteAccount(clientId: anna.id ?? 0, password: "correct-horse-42") }()
        }

        try system.database.reading { tx in
            let statuses = try [past.id ?? 0, future.id ?? 0].compactMap { try tx.appointment(id: $0) }
            #expect(statuses.map(\.status.rawValue) == ["scheduled", "cancelled"], "past kept, future cancelled")
            #expect(statuses.allSatisfy { $0.clientId == nil })
            let event = try tx.appointmentEvents(of: [future.id ?? 0]).last
            let what: String? = event?.event, who: String? = event?.actor, why: String? = event?.reason
            #expect(what == "cancelled" && who == "patient" && why == "account deleted")
            #expect(try tx.appointmentEvents(of: [past.id ?? 0]).count == 1)
        }
        // The slot is free again: another patient books it.
        let bob = try register(system, "bob")
        let taken = try { try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy, at: later,
                                                                    doctorId: future.doctorId) }()
        #expect(taken.startsAt == future.startsAt && taken.doctorId == future.doctorId)
    }

    // MARK: 3. Restore and check compare the schema

    func damagedBackup(_ folder: Folder, _ system: ClinicSystem, _ name: String, _ sql: String) throws -> String {
        let path = folder.path(name)
        try system.sqliteFile.backup(to: path)
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: sql) }
        try queue.close()
        return path
    }

    @Test(.sqliteOnly) func restoreRefusesAndCheckNamesABrokenSchema() throws {
        let folder = try Folder()
        let system = try fileSystem(folder)
        #expect(try system.sqliteFile.check().isSound)
        #expect(try system.sqliteFile.check().schema.isEmpty && (try system.sqliteFile.check()).version == projectMigrations.count)
        let cases: [(String, String, String)] = [
            ("dropped-table.sqlite", "DROP TABLE geocode_cache", "missing table geocode_cache"),
            ("dropped-column.sqlite", "ALTER TABLE appointment_events DROP COLUMN reason", "missing column appointment_events.reason"),
            ("stray-trigger.sqlite", "CREATE TRIGGER stray AFTER INSERT ON clinics BEGIN SELECT 1; END", "unexpected trigger stray on clinics"),
            ("dropped-index.sqlite", "DROP INDEX appointment_events_appointment",
             "missing index appointment_events_appointment on appointment_events"),
        ]
        let before = try fingerprint(system)
        for (name, sql, difference) in cases {
            let path = try damagedBackup(folder, system, name, sql)
            let refused = expectError(.invalidInput) { try system.sqliteFile.restore(from: path, keepingAside: folder.path(name + ".aside")) }
            #expect(refused?.key == .backupNotOurs, "\(name)")
            #expect(refused?.arguments.joined().contains(difference) == true, "\(name): \(refused?.arguments ?? [])")
            #expect(!FileManager.default.fileExists(atPath: folder.path(name + ".aside")))
            // `check` of that file as the live database names the difference.
            let report = SQLiteStore.check(path: path, runner: MigrationRunner(migrations: projectMigrations))
            #expect(!report.isSound && report.schema.first == difference, "\(name): \(report.schema)")
            #expect(report.integrity == ["ok"], "the file itself is sound")
        }
        #expect(try fingerprint(system) == before)
    }

    // MARK: 4. A damaged live database

    /// Random bytes over a table no command reads at start: the database opens, backup blames
    /// the live database and leaves nothing; check reports instead of failing.
    @Test(.sqliteOnly) func aDamagedLiveDatabaseIsNamedAndLeavesNoBackup() throws {
        let folder = try Folder()
        let live = folder.path("live.sqlite")
        do {
            let system = try fileSystem(folder)
            try system.sqliteFile.writer.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            let (page, size) = try system.sqliteFile.read { db in
                (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'working_hours'") ?? 0,
                 try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0)
            }
            #expect(page > 1 && size > 0)
            let handle = try #require(FileHandle(forUpdatingAtPath: live))
            var generator = SeededGenerator(seed: 17)
            try handle.seek(toOffset: UInt64((page - 1) * size))
            try handle.write(contentsOf: Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }))
            try handle.close()
        }

        let damaged = try SQLiteStore.open(path: live, migrations: projectMigrations)
        let error = expectError(.storage) { try damaged.backup(to: folder.path("copy.sqlite")) }
        #expect(error?.key == .databaseDamaged && error?.arguments.first == live, "\(String(describing: error))")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix("copy") || $0.hasPrefix(".copy") }
        #expect(left.isEmpty, "\(left)")

        let report = SQLiteStore.check(path: live, runner: MigrationRunner(migrations: projectMigrations))
        #expect(!report.isSound && report.integrity != ["ok"] && !report.integrity.isEmpty)
        #expect(!damaged.check().isSound)
    }

    @Test(.sqliteOnly) func checkReportsAFileThatIsNoDatabaseAtAll() throws {
        let folder = try Folder()
        let path = folder.path("garbage.sqlite")
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: path))
        let report = SQLiteStore.check(path: path, runner: MigrationRunner(migrations: projectMigrations))
        #expect(!report.isSound)
        #expect(report.integrity.joined().contains("not a database"), "\(report.integrity)")
    }

    // MARK: 5. File modes

    @Test(.sqliteOnly) func aPreExistingDatabaseFileIsMadePrivate() throws {
        let folder = try Folder()
        let path = folder.path("live.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        #expect(FileManager.default.createFile(atPath: path + "-shm", contents: nil, attributes: [.posixPermissions: 0o644]))
        let system = try fileSystem(folder)
        defer { withExtendedLifetime(system) {} }
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file): \(String(mode ?? 0, radix: 8))")
        }
    }

    /// A database path that is a link to no file yet: the file SQLite makes there is private.
    @Test(.sqliteOnly) func aDatabaseMadeThroughALinkIsPrivate() throws {
        let folder = try Folder()
        try FileManager.default.createSymbolicLink(atPath: folder.path("link.sqlite"), withDestinationPath: folder.path("real.sqlite"))
        let database = try SQLiteStore.open(path: folder.path("link.sqlite"), migrations: projectMigrations)
        defer { withExtendedLifetime(database) {} }
        for file in ["real.sqlite", "real.sqlite-wal"] {
            #expect(try FileManager.default.attributesOfItem(atPath: folder.path(file))[.posixPermissions] as? Int == 0o600, "\(file)")
        }
    }

    @Test func theSessionFileIsNeverFollowedThroughALink() throws {
        let folder = try Folder()
        let target = folder.path("victim")
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o644)
        try FileManager.default.createSymbolicLink(atPath: folder.path("session"), withDestinationPath: target)
        let file = SessionFile(path: folder.path("session"))
        #expect(expectError(.insecureSessionFile) { try file.write("token") }?.key == .sessionFileLink)
        #expect(expectError(.insecureSessionFile) { _ = try file.read() }?.key == .sessionFileLink)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious\n")
        #expect(try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int == 0o644)
    }

    // MARK: 6. Unicode that spelling needs

    @Test func joinersAreSpellingAndOverridesAreNot() throws {
        let system = try makeSystem()
        let persian = try system.clients.registerUser(RegistrationRequest(
            login: "nasrin", password: "correct-horse-42", name: "نسرین", surname: "علی\u{200C}زاده", street: "Main Street",
            house: "12", city: "Los Angeles", acceptedPrivacy: true))
        #expect(persian.surname == "علی\u{200C}زاده")
        let family = "Bring the kids 👨\u{200D}👩\u{200D}👧"
        let booked = try system.appointments.createAppointment(clientId: persian.id ?? 0,
                                                               departmentId: try department(system, "LA1", "therapy").id ?? 0,
                                                               at: monday, notes: family)
        #expect(booked.notes == family)
        let validator = Validator()
        #expect(validator.isValidStreet("Rue\u{200D} de la Paix"))
        for control in ["\u{202E}", "\u{2066}", "\u{0007}", "\u{0085}", "\t"] {
            #expect(!validator.isValidStreet("Main\(control)Street"), "\(control.unicodeScalars.first?.value ?? 0)")
            #expect(expectError(.invalidInput) { _ = try AppointmentController.checkedNotes("a\(control)b") } != nil)
        }
        #expect(!validator.containsOnlyLetters("\u{200C}Anna"), "a joiner joins letters, it does not start a name")
        #expect(try AppointmentController.checkedNotes("line one\nline two") == "line one\nline two")
        // An address to geocode keeps to the same rule.
        #expect(expectError(.invalidInput) { _ = try system.geocoding.resolve("Reno\u{202E}, NV") }?.key == .addressInvalid)
    }

    /// The form the choice among places gives is a valid city: "Georgetown, IN 47122".
    @Test func aCityMayEndInAZIPCode() {
        let validator = Validator()
        for city in ["Georgetown, IN 47122", "Boston MA 02115", "Boston, MA 02115-3000", "Los Angeles, CA"] {
            #expect(validator.isValidCity(city), "\(city)")
        }
        for city in ["02115", "Boston, 021", "Boston 02115, MA", "Bo5ton", "Boston, MA 02115 02116"] {
            #expect(!validator.isValidCity(city), "\(city)")
        }
    }

    // MARK: 7. Normalised passwords

    @Test func aPasswordLogsInWhateverItsUnicodeForm() throws {
        let system = try makeSystem()
        let composed = "caf\u{E9}-horse-42", decomposed = "cafe\u{301}-horse-42"
        _ = try register(system, "anna", password: composed)
        #expect(try system.clients.logIn(login: "anna", password: decomposed).client.login == "anna")
        #expect(PasswordHasher.prepared("pass\u{00A0}word\u{3000}x") == "pass word x", "non-ASCII spaces are spaces")
    }

    @Test func aHashOfTheRawBytesStillWorksAndIsReplaced() throws {
        let system = try makeSystem()
        let decomposed = "cafe\u{301}-horse-42"
        let anna = try register(system, "anna", password: "some-other-pass-42")
        // A hash made before passwords were prepared: of the bytes as typed.
        let raw = Array(decomposed.utf8), salt = [UInt8](repeating: 7, count: 16)
        var encoded = [CChar](repeating: 0, count: 256)
        let status = raw.withUnsafeBytes { pwd in
            argon2id_hash_encoded(1, 1024, 1, pwd.baseAddress, pwd.count, salt, salt.count, 32, &encoded, encoded.count)
        }
        #expect(status == ARGON2_OK.rawValue)
        let legacy = String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        try system.database.writing { tx in try tx.setPasswordHash(legacy, ofClient: anna.id ?? 0) }
        #expect(fastHasher.match(decomposed, against: legacy) == .raw)
        _ = try system.clients.logIn(login: "anna", password: decomposed)
        let rehashed = try system.clients.getUserById(anna.id ?? 0).passwordHash
        #expect(rehashed != legacy)
        #expect(fastHasher.match("caf\u{E9}-horse-42", against: rehashed) == .prepared, "now any form logs in")
    }

    // MARK: Docs and code that disagreed

    @Test func smallDisagreements() throws {
        // ±18:00 at most.
        #expect(throws: ClinicError.self) { _ = try TimeInput.parse("2026-11-30T09:20+18:59") }
        #expect((try? TimeInput.parse("2026-11-30T09:20-18:00")) != nil)
        // -0 is 0.
        let zero = try CoordinateParser.parse("-0,-0")
        #expect(String(format: "%.5f", zero.latitude) == "0.00000" && String(format: "%.5f", zero.longitude) == "0.00000")
        // One number reader: no exponents, hex or words, in imports either.
        for bad in ["4e1", "0x10", "nan", "inf", "1.2.3", ""] { #expect(Text.decimal(bad) == nil, "\(bad)") }
        #expect(Text.decimal("-12.5") == -12.5)
        let system = try makeSystem()
        let report = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nX1,Exp,Reno,NV,4e1,-119.8\n".utf8),
                                                      skipInvalid: true)
        #expect(report.skipped.count == 1 && report.inserted == 0)
        // Automatic backup settings: empty is the default; hex is refused.
        let empty = try #require(try AutomaticBackups.fromEnvironment(["CLINIC_BACKUP_DIR": "/x", "CLINIC_BACKUP_INTERVAL_HOURS": "",
                                                                       "CLINIC_BACKUP_KEEP": ""]))
        #expect(empty.interval == 24 * 3600 && empty.keep == 7)
        for bad in ["0x10", "1e2", "-1", "+5"] {
            #expect(throws: ClinicError.self) { _ = try AutomaticBackups.fromEnvironment(["CLINIC_BACKUP_DIR": "/x", "CLINIC_BACKUP_INTERVAL_HOURS": bad]) }
        }
        #expect(throws: ClinicError.self) { _ = try AutomaticBackups.fromEnvironment(["CLINIC_BACKUP_DIR": "/x", "CLINIC_BACKUP_KEEP": "+5"]) }
        // A database path under a regular file says so.
        let folder = try Folder()
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder.path("plain")))
        let error = expectError(.storage) { _ = try SQLiteStore.open(path: folder.path("plain/sub/db.sqlite"), migrations: projectMigrations) }
        #expect(error?.arguments.last == folder.path("plain") + " is a file, not a folder", "\(error?.arguments ?? [])")
    }
}
