import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

@Suite(.sqliteOnly) struct MigrationTests {
    /// A folder of migration files for one test.
    final class Folder {
        let url: URL
        init(_ files: [String: String]) throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for (name, contents) in files { try write(name, contents) }
        }
        func write(_ name: String, _ contents: String) throws {
            try contents.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        func remove(_ name: String) throws { try FileManager.default.removeItem(at: url.appendingPathComponent(name)) }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    static let first = """
        -- migrate:up
        CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        -- migrate:down
        DROP TABLE things;
        """
    static let second = """
        -- migrate:up
        CREATE TABLE tags (id INTEGER PRIMARY KEY, thing_id INTEGER REFERENCES things (id), tag TEXT);
        -- migrate:down
        DROP TABLE tags;
        """

    func tables(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'schema_migrations' ORDER BY name")
    }

    @Test func upDownAndUpAgain() throws {
        let folder = try Folder(["0001_things.sql": Self.first, "0002_tags.sql": Self.second])
        let queue = try DatabaseQueue()
        let runner = MigrationRunner(migrations: try Migration.load(from: folder.url))
        #expect(try runner.migrate(queue) == [1, 2])
        #expect(try queue.read(tables) == ["tags", "things"])
        try queue.write { try $0.execute(sql: "INSERT INTO things (name) VALUES ('kept')") }
        #expect(try runner.migrate(queue, to: 1) == [2])
        #expect(try queue.read(tables) == ["things"])
        #expect(try queue.read { try runner.verifiedVersion($0) } == 1)
        #expect(try runner.migrate(queue) == [2])
        // Data of a migration that was not moved survives the down and up of another.
        #expect(try queue.read { try String.fetchAll($0, sql: "SELECT name FROM things") } == ["kept"])
        #expect(try runner.migrate(queue, to: 0) == [2, 1])
        #expect(try queue.read(tables).isEmpty)
        #expect(try runner.migrate(queue, to: 0).isEmpty)
    }

    @Test func changedMigrationIsRefusedAndNothingChanges() throws {
        let folder = try Folder(["0001_things.sql": Self.first])
        let queue = try DatabaseQueue()
        try MigrationRunner(migrations: try Migration.load(from: folder.url)).migrate(queue)
        try folder.write("0001_things.sql", Self.first.replacingOccurrences(of: "name TEXT", with: "title TEXT"))
        try folder.write("0002_tags.sql", Self.second)
        let runner = MigrationRunner(migrations: try Migration.load(from: folder.url))
        let error = expectError(.migrationMismatch) { try runner.migrate(queue) }
        #expect(error?.key == .migrationChanged)
        #expect(try queue.read(tables) == ["things"])
    }

    @Test func databaseNewerThanProgramIsRefusedUntouched() throws {
        let folder = try Folder(["0001_things.sql": Self.first, "0002_tags.sql": Self.second])
        let queue = try DatabaseQueue()
        try MigrationRunner(migrations: try Migration.load(from: folder.url)).migrate(queue)
        try folder.remove("0002_tags.sql")
        let older = MigrationRunner(migrations: try Migration.load(from: folder.url))
        #expect(expectError(.databaseTooNew) { try older.migrate(queue) } != nil)
        #expect(expectError(.databaseTooNew) { try older.migrate(queue, to: 0) } != nil)
        #expect(try queue.read(tables) == ["tags", "things"])
    }

    @Test func failingMigrationLeavesSchemaAsItWas() throws {
        let folder = try Folder([
            "0001_things.sql": Self.first,
            "0002_broken.sql": "-- migrate:up\nCREATE TABLE half (id INTEGER);\nCREATE TABLE oops (;\n-- migrate:down\nDROP TABLE half;\n",
        ])
        let queue = try DatabaseQueue()
        let runner = MigrationRunner(migrations: try Migration.load(from: folder.url))
        #expect(throws: (any Error).self) { try runner.migrate(queue) }
        #expect(try queue.read(tables).isEmpty, "not even migration 1 stays: a move is one transaction")
        #expect(try queue.read { try runner.verifiedVersion($0) } == 0)
    }

    @Test func malformedFilesAndGapsAreRefused() throws {
        let noDown = try Folder(["0001_things.sql": "-- migrate:up\nCREATE TABLE t (id INTEGER);\n"])
        #expect(expectError(.migrationMismatch) { _ = try Migration.load(from: noDown.url) } != nil)
        let gap = try Folder(["0001_things.sql": Self.first, "0003_tags.sql": Self.second])
        #expect(expectError(.migrationMismatch) { _ = try Migration.load(from: gap.url) } != nil)
        let badName = try Folder(["1_things.sql": Self.first])
        #expect(expectError(.migrationMismatch) { _ = try Migration.load(from: badName.url) } != nil)
    }

    @Test func targetOutOfRangeIsInvalidInput() throws {
        let folder = try Folder(["0001_things.sql": Self.first])
        let runner = MigrationRunner(migrations: try Migration.load(from: folder.url))
        let queue = try DatabaseQueue()
        #expect(expectError(.invalidInput) { try runner.migrate(queue, to: 2) } != nil)
        #expect(expectError(.invalidInput) { try runner.migrate(queue, to: -1) } != nil)
    }

    @Test func projectMigrationsGoDownAndUpWithForeignKeysOn() throws {
        let system = try makeSystem()
        _ = try register(system, "anna")
        let before = try system.sqliteFile.currentVersion()
        #expect(before == projectMigrations.count)
        try system.sqliteFile.migrate(to: 0)
        // sqlite_sequence is SQLite's own (made by the first AUTOINCREMENT table, migration 14),
        // and cannot be dropped.
        let left = try system.sqliteFile.read(tables).filter { $0 != "sqlite_sequence" }
        #expect(left.isEmpty, "down parts drop every table: \(left)")
        try system.sqliteFile.migrate()
        #expect(try system.sqliteFile.read(tables).contains("appointments"))
    }

    @Test func migrationFiveFoldsCityKeysWrittenByAnOlderProgram() throws {
        let system = try makeSystem()
        _ = try system.importDirectory(Data("external_id,name,city,state,lat,lon\nSW1,United General,Sedro-Woolley,WA,48.5,-122.2\n".utf8))
        try system.sqliteFile.migrate(to: 4)
        // As version 1's folding left it: the hyphen kept.
        try system.sqliteFile.write { db in try db.execute(sql: "UPDATE clinics SET city_key = 'sedro-woolley' WHERE external_id = 'SW1'") }
        #expect(try system.clinics.getAllClinics(ClinicFilter(city: "Sedro Woolley")).isEmpty)
        try system.sqliteFile.migrate()
        #expect(try system.clinics.getAllClinics(ClinicFilter(city: "Sedro Woolley")).map(\.name) == ["United General"])
        #expect(try system.clinics.getAllClinics(ClinicFilter(city: "SEDRO-WOOLLEY")).count == 1)
    }
}

@Suite(.sqliteOnly) struct DurabilityTests {
    @Test func filesAreWALWithFullSynchronousCommits() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("durable-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try SQLiteStore.open(path: folder.appendingPathComponent("c.sqlite").path, migrations: projectMigrations)
        let (journal, synchronous, foreignKeys) = try database.writer.writeWithoutTransaction { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"),
             try Int.fetchOne(db, sql: "PRAGMA foreign_keys"))
        }
        #expect(journal == "wal")
        #expect(synchronous == 2, "FULL: a commit survives power loss")
        #expect(foreignKeys == 1)
        let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("c.sqlite").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}

@Suite(.sqliteOnly) struct ProjectMigrationRoundTrips {
    /// Down to each version and up again: what the migrations at or below it own survives.
    @Test(arguments: [3, 2, 1])
    func dataOwnedByOtherMigrationsSurvivesADownAndUp(target: Int) async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0
        let doctor = try system.departments.getDoctorsByDepartmentId(cardiology)[0].id ?? 0
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology,
                                                      at: .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!))
        _ = try await system.departments.addException(doctorId: doctor, day: LocalDateTime(year: 2026, month: 11, day: 25)!, hours: nil)
        _ = expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "anna", password: "wrong-horse-42") }
        func counts() throws -> [String: Int] {
            try system.sqliteFile.read { db in
                var result: [String: Int] = [:]
                for table in ["clinics", "clients", "appointments", "working_exceptions", "appointment_events", "login_attempts"]
                where try db.tableExists(table) {
                    result[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)")
                }
                return result
            }
        }
        let before = try counts()
        #expect(before.values.allSatisfy { $0 > 0 }, "\(before)")
        try system.sqliteFile.migrate(to: target)
        let down = try counts()
        #expect(down["clinics"] == before["clinics"] && down["clients"] == 1 && down["appointments"] == 1, "0001's data stays")
        #expect((down["working_exceptions"] != nil) == (target >= 2) && (down["login_attempts"] != nil) == (target >= 3))
        try system.sqliteFile.migrate()
        let up = try counts()
        #expect(up["clinics"] == before["clinics"] && up["clients"] == 1 && up["appointments"] == 1)
        #expect(try await system.clients.getUserById(anna.id ?? 0).surname == "Smith", "personal data sealed again, readable")
        if target >= 2 { #expect(up["working_exceptions"] == 1 && up["appointment_events"] == before["appointment_events"]) }
        #expect(try system.sqliteFile.check().isSound)
    }
}
