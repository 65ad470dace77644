import ClinicKit
@testable import ClinicStoreSQLite
import ClinicTestPostgres
@testable import ClinicStorePostgres
@testable import ClinicStoreCopy
import Foundation
import GRDB
import PostgresNIO
import Testing

/// `StoreCopy` (`clinic admin copy`): a SQLite database made through ClinicKit into a fresh
/// PostgreSQL database and back into a new file, all or nothing.
@Suite struct StoreCopyTests {
    static let sqliteMigrations: Result<[Migration], any Error> = Result {
        try Migration.load(from: TestPostgres.projectRoot.appendingPathComponent("Migrations"))
    }

    /// A fixed "now": Sunday 2026-11-22 12:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_795_348_800)

    struct Source {
        let folder: String
        let path: String
        let database: SQLiteStore
        let system: ClinicSystem
        let patientId: Int64
        let appointmentId: Int64
    }

    /// A file database with a small directory (demo departments, doctors, hours), a patient
    /// (sealed personal data), a staff account, an appointment booked, rescheduled and
    /// confirmed (history, messages, audit entries).
    static func makeSource() async throws -> Source {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-copy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/source.sqlite"
        let database = try SQLiteStore.open(path: path, migrations: try sqliteMigrations.get())
        let hasher = PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1))
        let now = Self.now
        let system = ClinicSystem(store: database, resources: nil, hasher: hasher, now: { now })
        let csv = """
            external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
            LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE,0,1,America/Los_Angeles
            LA2,Children's Hospital,4650 Sunset Blvd,LOS ANGELES,CA,34.10,-118.29,CHILDREN,1,1,America/Los_Angeles
            MN1,Минская больница,пр. Независимости,Минск,,53.90,27.56,PSYCHIATRIC,0,0,Europe/Minsk
            """
        _ = try system.clinics.importClinics(Data(csv.utf8), demo: true)
        _ = try system.initialize(.empty)
        let anna = try system.clients.registerUser(RegistrationRequest(
            login: "anna", password: "correct-horse-42", name: "Anna", surname: "Smith", street: "Main Street",
            house: "12", city: "Los Angeles", acceptedPrivacy: true))
        let patientId = try #require(anna.id)
        let clinicId = try #require(try database.read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM clinics WHERE external_id = 'LA1'")
        })
        let therapy = try #require(try system.departments.getDepartmentsByClinicId(clinicId).first { $0.specialization == "therapy" })
        let departmentId = try #require(therapy.id)
        let monday0920 = try #require(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20))
        let monday1000 = try #require(LocalDateTime(year: 2026, month: 11, day: 23, hour: 10, minute: 0))
        let booked = try system.appointments.createAppointment(clientId: patientId, departmentId: departmentId, at: .local(monday0920))
        let appointmentId = try #require(booked.id)
        _ = try system.appointments.rescheduleAppointment(appointmentId, clientId: patientId, to: .local(monday1000))
        _ = try system.staff.addStaff(StaffInput(login: "admin-a", name: "Sam", surname: "Lee", role: .clinicAdmin,
                                                 clinicId: clinicId, password: "staff-passphrase-77"))
        _ = try await system.appointments.setStatus(appointmentId, to: .confirmed)
        return Source(folder: folder, path: path, database: database, system: system, patientId: patientId,
                      appointmentId: appointmentId)
    }

    /// Rows per table of a SQLite database.
    static func counts(_ database: SQLiteStore, _ tables: [String]) throws -> [String: Int] {
        try database.read { db in
            var counts: [String: Int] = [:]
            for table in tables { counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM " + table) ?? -1 }
            return counts
        }
    }

    /// Rows per table of a PostgreSQL database.
    static func counts(_ store: PostgresStore, _ tables: [String]) async throws -> [String: Int] {
        try await store.withConnection { connection in
            var counts: [String: Int] = [:]
            for table in tables {
                counts[table] = Int(try await connection.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM " + table),
                                                               logger: TestPostgres.logger).collect().first?.decode(Int64.self) ?? -1)
            }
            return counts
        }
    }

    static func migratedStore() async throws -> (PostgresStore, TestPostgres.Server) {
        let (server, url) = try await TestPostgres.freshDatabase()
        let store = try await PostgresStore.open(url, environment: server.environment, logger: TestPostgres.logger)
        try await store.migrate(try TestPostgres.migrations())
        return (store, server)
    }

    @Test func copiesToPostgreSQLAndBackWithEverythingIntact() async throws {
        let source = try await Self.makeSource()
        defer { try? FileManager.default.removeItem(atPath: source.folder) }
        // A value with every character COPY's text format escapes, and one that looks like its NULL.
        let tricky = "tab\there, new\nline, return\r, back\\slash, \\N, ümlaut"
        try await source.database.writer.write { db in
            try db.execute(sql: "INSERT INTO settings (key, value) VALUES ('test.tricky', ?), ('test.null', '\\N')",
                           arguments: [tricky])
            // An attachment's wrapped key (issue 42) goes both ways byte for byte: without it the
            // copied file would open under no key.
            try db.execute(sql: """
                INSERT INTO attachments (appointment_id, client_id, author, content_type, size, chunk_size, meta, created_at, file_key)
                VALUES (?, ?, 'patient', 'application/pdf', 1, 1, X'00', 0, X'0102030405')
                """, arguments: [source.appointmentId, source.patientId])
        }
        let (store, _) = try await Self.migratedStore()
        defer { Task { await store.shutdown() } }

        let copied = try await StoreCopy.sqliteToPostgres(source: source.database, target: store,
                                                          migrations: try TestPostgres.migrations())
        let tables = copied.map(\.table)
        #expect(tables.contains("clients") && tables.contains("audit_events") && tables.contains("messages"))
        let sqliteCounts = try Self.counts(source.database, tables)
        let postgresCounts = try await Self.counts(store, tables)
        #expect(sqliteCounts == postgresCounts)
        #expect(Dictionary(uniqueKeysWithValues: copied.map { ($0.table, $0.rows) }) == sqliteCounts)
        // The source had something in each table this test cares about.
        for table in ["clinics", "departments", "doctors", "working_hours", "clients", "appointments", "appointment_events",
                      "audit_events", "audit_head", "messages", "staff_accounts", "settings"] {
            #expect((sqliteCounts[table] ?? 0) > 0, "\(table) is empty in the source")
        }

        // A sealed blob byte for byte, an appointment's instants, a flag.
        let (personal, startsAt, endsAt, hospital) = try source.database.read { db -> (Data?, Int64?, Int64?, Int64?) in
            (try Data.fetchOne(db, sql: "SELECT personal FROM clients WHERE id = ?", arguments: [source.patientId]),
             try Int64.fetchOne(db, sql: "SELECT starts_at FROM appointments WHERE id = ?", arguments: [source.appointmentId]),
             try Int64.fetchOne(db, sql: "SELECT ends_at FROM appointments WHERE id = ?", arguments: [source.appointmentId]),
             try Int64.fetchOne(db, sql: "SELECT is_hospital FROM clinics WHERE external_id = 'LA1'"))
        }
        let patientId = source.patientId, appointmentId = source.appointmentId
        let (pgPersonal, pgStarts, pgEnds, pgHospital) = try await store.withConnection { connection in
            let personal = try await connection.query("SELECT personal FROM clients WHERE id = \(patientId)", logger: TestPostgres.logger)
                .collect().first?.decode(ByteBuffer?.self) ?? nil
            let times = try await connection.query("SELECT starts_at, ends_at FROM appointments WHERE id = \(appointmentId)",
                                                   logger: TestPostgres.logger).collect().first?.decode((Date, Date).self)
            let hospital = try await connection.query("SELECT is_hospital FROM clinics WHERE external_id = 'LA1'",
                                                      logger: TestPostgres.logger).collect().first?.decode(Bool.self)
            return (personal.map { Data($0.readableBytesView) }, times?.0, times?.1, hospital)
        }
        #expect(personal != nil && pgPersonal == personal)
        #expect(pgStarts.map { Int64($0.timeIntervalSince1970) } == startsAt)
        #expect(pgEnds.map { Int64($0.timeIntervalSince1970) } == endsAt)
        #expect(pgHospital == (hospital == 1))
        let settings = try await store.withConnection { connection in
            var values: [String: String] = [:]
            for try await (key, value) in try await connection.query("SELECT key, value FROM settings", logger: TestPostgres.logger)
                .decode((String, String).self) { values[key] = value }
            return values
        }
        #expect(settings["test.tricky"] == tricky && settings["test.null"] == "\\N")
        // New rows never reuse a copied id.
        let nextId = try await store.withConnection { connection in
            try await connection.query("SELECT nextval(pg_get_serial_sequence('appointments', 'id'))", logger: TestPostgres.logger)
                .collect().first?.decode(Int64.self)
        }
        #expect((nextId ?? 0) > appointmentId)

        // Back into a new file, with the original's key files beside it.
        let backPath = source.folder + "/back.sqlite"
        let back = try await StoreCopy.postgresToSQLite(source: store, postgresMigrations: try TestPostgres.migrations(),
                                                        targetPath: backPath, sqliteMigrations: try Self.sqliteMigrations.get())
        #expect(back == copied)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: source.folder).filter { $0.contains(".copy-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        for suffix in [".key", ".audit-key"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: backPath + suffix)
        }
        let backDatabase = try SQLiteStore.open(path: backPath, migrations: try Self.sqliteMigrations.get())
        #expect(try Self.counts(backDatabase, tables) == sqliteCounts)
        let report = backDatabase.check()
        #expect(report.isSound, "\(report.summary) \(String(describing: report.keyProblem)) \(String(describing: report.auditKeyProblem))")
        #expect(try backDatabase.read { db in
            try Data.fetchOne(db, sql: "SELECT personal FROM clients WHERE id = ?", arguments: [patientId])
        } == personal)
        #expect(try backDatabase.read { db in try Data.fetchOne(db, sql: "SELECT file_key FROM attachments") }
            == Data([1, 2, 3, 4, 5]))
        // The same answers to the same questions, through ClinicKit (the sealed fields open).
        let now = Self.now
        let backSystem = ClinicSystem(store: backDatabase, resources: nil,
                                      hasher: PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1)),
                                      now: { now })
        let original = try await source.system.appointments(ofPatient: patientId, scope: .all).map(\.appointment)
        let copy = try await backSystem.appointments(ofPatient: patientId, scope: .all).map(\.appointment)
        #expect(!original.isEmpty && copy == original)
        let history = try backSystem.appointments.history(appointmentId, clientId: patientId)
        #expect(history.count == (try source.system.appointments.history(appointmentId, clientId: patientId)).count)
        let (client, _) = try backSystem.clients.logIn(login: "anna", password: "correct-horse-42")
        #expect(client.name == "Anna" && client.surname == "Smith")
        let copiedMessages = try await backSystem.clients.messages(clientId: patientId).count
        #expect(copiedMessages == (try await source.system.clients.messages(clientId: patientId)).count)

        // A second copy into the file is refused, and the file stays as it is.
        let again = await clinicError {
            _ = try await StoreCopy.postgresToSQLite(source: store, postgresMigrations: try TestPostgres.migrations(),
                                                     targetPath: backPath, sqliteMigrations: try Self.sqliteMigrations.get())
        }
        #expect(again?.code == .storeNotEmpty)
    }

    @Test func aTargetWithRowsIsRefusedAndUnchanged() async throws {
        let source = try await Self.makeSource()
        defer { try? FileManager.default.removeItem(atPath: source.folder) }
        let (store, _) = try await Self.migratedStore()
        defer { Task { await store.shutdown() } }
        let first = try await StoreCopy.sqliteToPostgres(source: source.database, target: store, migrations: try TestPostgres.migrations())
        let before = try await Self.counts(store, first.map(\.table))
        // Another patient in the source: a second copy would add rows; it is refused instead.
        _ = try source.system.clients.registerUser(RegistrationRequest(
            login: "boris", password: "correct-horse-42", name: "Boris", surname: "Ivanov", street: "Main Street",
            house: "1", city: "Los Angeles", acceptedPrivacy: true))
        let error = await clinicError {
            _ = try await StoreCopy.sqliteToPostgres(source: source.database, target: store, migrations: try TestPostgres.migrations())
        }
        #expect(error?.code == .storeNotEmpty)
        #expect(error?.key == .copyTargetNotEmpty)
        #expect(try await Self.counts(store, first.map(\.table)) == before)
    }

    @Test func aFailureMidwayLeavesTheTargetEmpty() async throws {
        let source = try await Self.makeSource()
        defer { try? FileManager.default.removeItem(atPath: source.folder) }
        // SQLite refuses only equal starts; PostgreSQL refuses every overlap of a doctor's
        // active appointments: this row passes the first and breaks the copy at appointments,
        // after every table before it was written.
        let appointmentId = source.appointmentId
        try await source.database.writer.write { db in
            try db.execute(sql: """
                INSERT INTO appointments (client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at,
                                          status, notes, created_at, updated_at)
                SELECT NULL, clinic_id, department_id, doctor_id, doctor_name, starts_at + 60, ends_at + 60, 'scheduled', '',
                       created_at, updated_at FROM appointments WHERE id = ?
                """, arguments: [appointmentId])
        }
        let (store, _) = try await Self.migratedStore()
        defer { Task { await store.shutdown() } }
        let error = await clinicError {
            _ = try await StoreCopy.sqliteToPostgres(source: source.database, target: store, migrations: try TestPostgres.migrations())
        }
        #expect(error?.code == .storage && error?.key == .copyRowRefused && error?.arguments.first == "appointments",
                "\(String(describing: error))")
        let tables = ["clinics", "departments", "doctors", "clients", "settings", "staff_accounts", "appointments", "audit_events"]
        let counts = try await Self.counts(store, tables)
        #expect(counts.values.allSatisfy { $0 == 0 }, "\(counts)")

        // A target without the schema: refused before anything is written.
        let (server, url) = try await TestPostgres.freshDatabase()
        let bare = try await PostgresStore.open(url, environment: server.environment, logger: TestPostgres.logger)
        defer { Task { await bare.shutdown() } }
        let missing = await clinicError {
            _ = try await StoreCopy.sqliteToPostgres(source: source.database, target: bare, migrations: try TestPostgres.migrations())
        }
        #expect(missing?.code == .storage && missing?.key == .copyTargetNotMigrated)
        let tablesThere = try await bare.withConnection { connection in
            try await connection.query("SELECT count(*)::bigint FROM pg_tables WHERE schemaname = current_schema()",
                                       logger: TestPostgres.logger).collect().first?.decode(Int64.self)
        }
        #expect(tablesThere == 0)

        // Back into a file that fails (a source without the schema): no file is left behind.
        let backPath = source.folder + "/back.sqlite"
        let back = await clinicError {
            _ = try await StoreCopy.postgresToSQLite(source: bare, postgresMigrations: try TestPostgres.migrations(),
                                                     targetPath: backPath, sqliteMigrations: try Self.sqliteMigrations.get())
        }
        #expect(back?.code == .storage)
        #expect(!FileManager.default.fileExists(atPath: backPath))
    }

    /// The command line: the default directory (7,146 clinics with demo departments, doctors
    /// and hours) to PostgreSQL and back, with the refusals' codes.
    @Test func theCommandCopiesTheDefaultDirectoryBothWays() async throws {
        let (server, url) = try await TestPostgres.freshDatabase()
        let folder = try CLIPostgresTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let env = server.environment
        let sourcePath = folder + "/clinic.sqlite"
        let initRun = CLIPostgresTests.clinic(["init", "--db", sourcePath, "--json"], in: folder, environment: env)
        #expect(initRun.status == 0, "\(initRun.stderr)")
        // Not migrated yet: refused with the command to run.
        let early = CLIPostgresTests.clinic(["admin", "copy", "--db", sourcePath, "--to", url.redacted, "--json"], in: folder,
                                           environment: env)
        #expect(early.status == 6 && early.errorCode == "storage_error", "\(early.stderr)")
        let migrate = CLIPostgresTests.clinic(["admin", "migrate", "--db", url.redacted], in: folder, environment: env)
        #expect(migrate.status == 0, "\(migrate.stderr)")
        // A target key file with another key in it: refused before anything is written (the
        // copy below finds the target still empty).
        func keyText() -> String { Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString() + "\n" }
        for (path, text) in [(sourcePath + ".key", keyText()), (folder + "/other.key", keyText())]
        where !FileManager.default.fileExists(atPath: path) {
            #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
        }
        let conflict = CLIPostgresTests.clinic(["admin", "copy", "--db", sourcePath, "--to", url.redacted, "--json"], in: folder,
                                              environment: env.merging(["CLINIC_KEY_FILE": folder + "/other.key"]) { $1 })
        #expect(conflict.status == 6 && conflict.errorCode == "key_error" && conflict.stderr.contains("other.key"), "\(conflict.stderr)")
        let copy = CLIPostgresTests.clinic(["admin", "copy", "--db", sourcePath, "--to", url.redacted, "--json"], in: folder,
                                          environment: env)
        #expect(copy.status == 0, "\(copy.stderr)")
        let tables = copy.json?["tables"] as? [[String: Any]] ?? []
        let clinics = tables.first { $0["table"] as? String == "clinics" }?["rows"] as? Int
        #expect(clinics == 7146, "\(copy.stdout)")
        #expect((copy.json?["rows"] as? Int ?? 0) > 7146)

        let again = CLIPostgresTests.clinic(["admin", "copy", "--db", sourcePath, "--to", url.redacted, "--json"], in: folder,
                                           environment: env)
        #expect(again.status == 5 && again.errorCode == "store_not_empty", "\(again.stderr)")
        let russian = CLIPostgresTests.clinic(["admin", "copy", "--db", sourcePath, "--to", url.redacted, "--lang", "ru"], in: folder,
                                             environment: env)
        #expect(russian.status == 5 && russian.stderr.contains("не пуста"), "\(russian.stderr)")
        let same = CLIPostgresTests.clinic(["admin", "copy", "--db", sourcePath, "--to", sourcePath, "--json"], in: folder,
                                          environment: env)
        #expect(same.status == 2 && same.errorCode == "invalid_input", "\(same.stderr)")
        let both = CLIPostgresTests.clinic(["admin", "copy", "--from", url.redacted, "--to", url.redacted + "x", "--json"],
                                          in: folder, environment: env)
        #expect(both.status == 2 && both.errorCode == "store_unsupported", "\(both.stderr)")

        let backPath = folder + "/back.sqlite"
        let back = CLIPostgresTests.clinic(["admin", "copy", "--from", url.redacted, "--to", backPath, "--json"], in: folder,
                                          environment: env)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.json?["rows"] as? Int == copy.json?["rows"] as? Int)
        // The key files came along both ways (to the store's default place, then beside the file).
        for suffix in [".key", ".audit-key"] where FileManager.default.fileExists(atPath: sourcePath + suffix) {
            #expect(FileManager.default.contents(atPath: backPath + suffix) == FileManager.default.contents(atPath: sourcePath + suffix),
                    "\(suffix) was not carried: \(back.stderr)")
        }
        let check = CLIPostgresTests.clinic(["admin", "check", "--db", backPath, "--json"], in: folder, environment: env)
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        let list = CLIPostgresTests.clinic(["clinics", "list", "--db", backPath, "--json"], in: folder, environment: env)
        let original = CLIPostgresTests.clinic(["clinics", "list", "--db", sourcePath, "--json"], in: folder, environment: env)
        #expect(list.status == 0 && list.stdout == original.stdout)
        let existing = CLIPostgresTests.clinic(["admin", "copy", "--from", url.redacted, "--to", backPath, "--json"], in: folder,
                                              environment: env)
        #expect(existing.status == 5 && existing.errorCode == "store_not_empty", "\(existing.stderr)")
    }

    /// COPY's instants: UTC seconds as PostgreSQL reads them, against Foundation's calendar.
    @Test func instantsInCopyText() throws {
        #expect(StoreCopy.isoInstant(0) == "1970-01-01 00:00:00+00")
        #expect(StoreCopy.isoInstant(-1) == "1969-12-31 23:59:59+00")
        #expect(StoreCopy.isoInstant(951_782_400) == "2000-02-29 00:00:00+00")
        #expect(StoreCopy.isoInstant(1_795_348_800) == "2026-11-22 12:00:00+00")
        #expect(StoreCopy.isoInstant(-62_135_596_801) == nil)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        for _ in 0..<2000 {
            let seconds = Int64.random(in: -5_000_000_000...50_000_000_000)
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))) + "+00"
            #expect(StoreCopy.isoInstant(seconds) == expected, "\(seconds)")
        }
    }

    /// Days in COPY's text are real days; PostgreSQL's binary days read back as the same text.
    @Test func daysInCopyTextAndBack() throws {
        #expect(StoreCopy.isDay("2026-02-28") && StoreCopy.isDay("2024-02-29"))
        for bad in ["2026-02-30", "2026-13-01", "9999-99-99", " 2026-02-01", "2026-2-01", "２０２６-02-01", ""] {
            #expect(!StoreCopy.isDay(bad), "\(bad)")
        }
        #expect(PostgresTransaction.day(daysSince2000: 0) == "2000-01-01")
        #expect(PostgresTransaction.day(daysSince2000: -1) == "1999-12-31")
        #expect(PostgresTransaction.day(daysSince2000: 59) == "2000-02-29")
        #expect(PostgresTransaction.day(daysSince2000: 9_822) == "2026-11-22")
    }

    /// A live database: another writer keeps adding rows while the copy runs. The copy is one
    /// snapshot: it has the rows written before it began and none after, and PostgreSQL has
    /// exactly what it reports.
    @Test func aLiveDatabaseCopiesAsOneSnapshot() async throws {
        let source = try await Self.makeSource()
        defer { try? FileManager.default.removeItem(atPath: source.folder) }
        let (store, _) = try await Self.migratedStore()
        defer { Task { await store.shutdown() } }
        let before = try Self.counts(source.database, ["settings"])["settings"] ?? 0
        // The writer counts its commits; the test waits for commits, not for time: one before
        // the copy starts, one after it ended.
        final class Writes: @unchecked Sendable {
            let lock = NSLock(); var count = 0; var failure: String?; var stop = false
            func read() -> (Int, String?, Bool) { lock.withLock { (count, failure, stop) } }
        }
        let writes = Writes()
        let done = DispatchSemaphore(value: 0)
        let writer = source.database.writer
        DispatchQueue.global().async {
            var number = 0
            while !writes.read().2 {
                do {
                    try writer.write { db in
                        try db.execute(sql: "INSERT INTO settings (key, value) VALUES (?, 'x')", arguments: ["live.\(number)"])
                    }
                    writes.lock.withLock { writes.count += 1 }
                } catch {
                    writes.lock.withLock { writes.failure = String(describing: error); writes.stop = true }
                }
                number += 1
            }
            done.signal()
        }
        func waitForWrites(beyond count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while writes.read().0 <= count && writes.read().1 == nil && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        try await waitForWrites(beyond: 0)
        let copied = try await StoreCopy.sqliteToPostgres(source: source.database, target: store,
                                                          migrations: try TestPostgres.migrations())
        try await waitForWrites(beyond: writes.read().0)
        writes.lock.withLock { writes.stop = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { done.wait(); continuation.resume() }
        }
        #expect(writes.read().1 == nil, "the live writer failed: \(writes.read().1 ?? "")")
        let reported = Dictionary(uniqueKeysWithValues: copied.map { ($0.table, $0.rows) })
        #expect(try await Self.counts(store, copied.map(\.table)) == reported)
        let after = try Self.counts(source.database, ["settings"])["settings"] ?? 0
        let copiedSettings = reported["settings"] ?? 0
        #expect(copiedSettings > before && copiedSettings < after, "\(before) \(copiedSettings) \(after)")
    }
}
