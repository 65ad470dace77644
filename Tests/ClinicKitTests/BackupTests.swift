import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

@Suite(.sqliteOnly) struct BackupTests {
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("backup-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    func fileSystem(_ folder: Folder, _ name: String = "live.sqlite") throws -> ClinicSystem {
        let database = try SQLiteStore.open(path: folder.path(name), migrations: projectMigrations)
        let system = ClinicSystem(store: database, resources: nil, hasher: fastHasher, now: { testNow })
        let csv = "external_id,name,city,state,lat,lon,category\nLA1,Adventist,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE\n"
        _ = try system.importDirectory(Data(csv.utf8), demo: true)
        return system
    }

    func count(_ path: String, _ table: String) throws -> Int {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(table)") ?? -1 }
    }

    @Test func aBackupIsConsistentWhileAnotherWriterKeepsWriting() throws {
        let folder = try Folder()
        let system = try fileSystem(folder)
        // A second connection, as another process would be, writing all the while.
        let other = try SQLiteStore.open(path: folder.path("live.sqlite"), migrations: projectMigrations)
        let stop = LockedBox(false)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var number = 0
            while !stop.current {
                number += 1
                try? other.write { db in try db.execute(sql: "INSERT INTO settings (key, value) VALUES (?, 'x')", arguments: ["w\(number)"]) }
            }
            done.signal()
        }
        for index in 0..<5 {
            let path = folder.path("copy\(index).sqlite")
            try system.sqliteFile.backup(to: path)
            #expect(try system.sqliteFile.verifyBackup(at: path) == projectMigrations.count)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "one self-contained file")
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        stop.withLock { $0 = true }
        done.wait()
        #expect(try count(folder.path("copy4.sqlite"), "settings") >= count(folder.path("copy0.sqlite"), "settings"))
        #expect(try count(folder.path("copy0.sqlite"), "clinics") == 1)
        #expect(expectError(.invalidInput) { try system.sqliteFile.backup(to: folder.path("copy0.sqlite")) }?.key == .backupExists)
    }

    @Test func restoreChecksTheBackupThenReplacesAndKeepsTheOldAside() throws {
        let folder = try Folder()
        let system = try fileSystem(folder)
        try system.sqliteFile.backup(to: folder.path("good.sqlite"))
        _ = try register(system, "anna") // after the backup
        let before = try fingerprint(system)

        try "not a database at all".write(toFile: folder.path("garbage.sqlite"), atomically: true, encoding: .utf8)
        #expect(expectError(.invalidInput) { try system.sqliteFile.restore(from: folder.path("garbage.sqlite"), keepingAside: folder.path("a1")) }?.key == .backupDamaged)
        let foreign = try DatabaseQueue(path: folder.path("foreign.sqlite"))
        try foreign.write { try $0.execute(sql: "CREATE TABLE t (x)") }
        try foreign.close()
        #expect(expectError(.invalidInput) { try system.sqliteFile.restore(from: folder.path("foreign.sqlite"), keepingAside: folder.path("a2")) }?.key == .backupNotOurs)
        // A backup from a newer program.
        try system.sqliteFile.backup(to: folder.path("newer.sqlite"))
        let newer = try DatabaseQueue(path: folder.path("newer.sqlite"))
        try newer.write { try $0.execute(sql: "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (99, 'future', 'x', 0)") }
        try newer.close()
        #expect(expectError(.databaseTooNew) { try system.sqliteFile.restore(from: folder.path("newer.sqlite"), keepingAside: folder.path("a3")) } != nil)
        #expect(expectError(.invalidInput) { try system.sqliteFile.restore(from: folder.path("missing.sqlite"), keepingAside: folder.path("a4")) } != nil)
        #expect(try fingerprint(system) == before, "refused restores change nothing")
        #expect(!FileManager.default.fileExists(atPath: folder.path("a1")))

        try system.sqliteFile.restore(from: folder.path("good.sqlite"), keepingAside: folder.path("aside.sqlite"))
        #expect(try system.sqliteFile.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM clients") } == 0, "back to before anna")
        #expect(try count(folder.path("aside.sqlite"), "clients") == 1, "the replaced database is kept")
        #expect(try system.sqliteFile.check().isSound)
    }

    @Test func aRestoreWhoseMigrationFailsPutsTheReplacedDatabaseBack() throws {
        let folder = try Folder()
        let system = try fileSystem(folder)
        _ = try register(system, "anna")
        try system.sqliteFile.backup(to: folder.path("old.sqlite"))
        // The backup, taken down to version 3 (before encryption) with a copy of the key.
        try FileManager.default.copyItem(atPath: folder.path("live.sqlite.key"), toPath: folder.path("old.sqlite.key"))
        let old = try SQLiteStore.open(path: folder.path("old.sqlite"), migrations: projectMigrations)
        try old.migrate(to: 3)
        _ = try register(system, "boris") // after the backup
        // Migrating it up needs the key, and the key file is now readable by others: refused.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.path("live.sqlite.key"))
        let live = try SQLiteStore.open(path: folder.path("live.sqlite"), migrations: projectMigrations, zones: LazyZones(data: projectData))
        let before = try fingerprint(live)
        #expect(expectError(.keyError) { try live.restore(from: folder.path("old.sqlite"), keepingAside: folder.path("aside")) } != nil)
        #expect(try fingerprint(live) == before, "the replaced database is back: a refused restore changes nothing")
        #expect(try live.currentVersion() == projectMigrations.count)
        #expect(!FileManager.default.fileExists(atPath: folder.path("aside")))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder.path("live.sqlite.key"))
        try live.restore(from: folder.path("old.sqlite"), keepingAside: folder.path("aside"))
        #expect(try live.currentVersion() == projectMigrations.count)
        #expect(try live.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM clients") } == 1, "anna only")
    }

    @Test func aBackupWithValuesOfTheWrongTypeIsRefusedNotACrash() throws {
        let folder = try Folder()
        let system = try fileSystem(folder)
        try system.sqliteFile.backup(to: folder.path("odd.sqlite"))
        let odd = try DatabaseQueue(path: folder.path("odd.sqlite"))
        try odd.write { try $0.execute(sql: "INSERT INTO geocode_cache VALUES ('x', 1, 2, 'city', 'gazetteer', 'yesterday', 0)") }
        try odd.close()
        let error = expectError(.invalidInput) {
            try system.sqliteFile.restore(from: folder.path("odd.sqlite"), keepingAside: folder.path("aside"))
        }
        #expect(error?.key == .backupNotOurs)
    }

    @Test func checkFindsForeignKeyViolations() throws {
        let folder = try Folder()
        let system = try fileSystem(folder)
        #expect(try system.sqliteFile.check().isSound && (try system.sqliteFile.check()).foreignKeyViolations == 0)
        try system.sqliteFile.writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: "INSERT INTO doctors (department_id, name) VALUES (424242, 'Ghost')")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        let report = try system.sqliteFile.check()
        #expect(!report.isSound && report.foreignKeyViolations == 1)
    }

    @Test func automaticBackupsComeAtMostOncePerIntervalAndRotate() throws {
        let folder = try Folder()
        let system = try fileSystem(folder)
        let daily = AutomaticBackups(directory: folder.url.appendingPathComponent("auto"), interval: 24 * 3600, keep: 3)
        #expect(try daily.runIfDue(system.sqliteFile) != nil)
        #expect(try daily.runIfDue(system.sqliteFile) == nil, "not due again within the interval")
        let always = AutomaticBackups(directory: daily.directory, interval: 0, keep: 3)
        for _ in 0..<5 { _ = try always.runIfDue(system.sqliteFile) }
        #expect(always.existing().count == 3)
        #expect(try AutomaticBackups.fromEnvironment([:]) == nil)
        let configured = try #require(try AutomaticBackups.fromEnvironment(["CLINIC_BACKUP_DIR": "/x", "CLINIC_BACKUP_INTERVAL_HOURS": "6",
                                                                            "CLINIC_BACKUP_KEEP": "2"]))
        #expect(configured.interval == 6 * 3600 && configured.keep == 2)
        #expect(expectError(.invalidInput) { _ = try AutomaticBackups.fromEnvironment(["CLINIC_BACKUP_DIR": "/x", "CLINIC_BACKUP_KEEP": "0"]) } != nil)
    }
}
