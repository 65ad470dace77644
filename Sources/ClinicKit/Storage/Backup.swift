import Foundation
import GRDB

/// What `check` found.
public struct CheckReport: Sendable, Equatable {
    /// `["ok"]` for a sound database, otherwise SQLite's list of problems.
    public let integrity: [String]
    public let foreignKeyViolations: Int
    public var isSound: Bool { integrity == ["ok"] && foreignKeyViolations == 0 }

    /// What is wrong, in SQLite's words: its integrity messages, then the foreign key count.
    public var summary: String {
        var parts = integrity == ["ok"] ? [] : Array(integrity.prefix(3))
        if foreignKeyViolations > 0 { parts.append("\(foreignKeyViolations) foreign key violations") }
        return parts.joined(separator: "; ")
    }
}

extension DatabaseManager {
    /// A consistent copy of the database at `path`, taken with SQLite's online backup API
    /// from a read snapshot: other processes keep writing meanwhile, and the copy is the
    /// database as of one instant. Written to a temporary file beside `path`, then renamed,
    /// so `path` never holds half a backup. Mode 0600.
    public func backup(to path: String) throws {
        let url = URL(fileURLWithPath: path)
        guard !FileManager.default.fileExists(atPath: path) else { throw ClinicError.invalid(.backupExists, path) }
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).partial")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let descriptor = Foundation.open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ClinicError(.storage, .backupUnwritable, path) }
        close(descriptor)
        do {
            let destination = try DatabaseQueue(path: temporary.path)
            try writer.backup(to: destination)
            // One self-contained file: the copy inherits WAL mode, which would make every
            // later reader of it create -wal and -shm files beside it.
            try destination.writeWithoutTransaction { db in _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }
            try destination.close()
        } catch let error as DatabaseError {
            throw Self.map(error)
        }
        // link() fails if `path` appeared meanwhile: a backup never overwrites a file.
        guard link(temporary.path, path) == 0 else {
            if errno == EEXIST { throw ClinicError.invalid(.backupExists, path) }
            throw ClinicError(.storage, .backupUnwritable, path)
        }
        KeyFile.syncFolder(of: path)
    }

    /// `PRAGMA integrity_check` and `foreign_key_check` of the live database.
    public func check() throws -> CheckReport {
        try read { db in try Self.check(db) }
    }

    static func check(_ db: Database) throws -> CheckReport {
        CheckReport(integrity: try String.fetchAll(db, sql: "PRAGMA integrity_check"),
                    foreignKeyViolations: try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count)
    }

    /// Checks a backup without changing it: it must be an SQLite database that passes
    /// `integrity_check` and `foreign_key_check`, made by this program (its migrations known and
    /// unchanged, none newer). Returns its migration version.
    public func verifyBackup(at path: String) throws -> Int {
        guard FileManager.default.isReadableFile(atPath: path) else { throw ClinicError.invalid(.fileUnreadable, path) }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                let report = try Self.check(db)
                guard report.isSound else { throw ClinicError(.invalidInput, .backupDamaged, arguments: [path, report.summary]) }
                guard try db.tableExists("schema_migrations") else { throw ClinicError.invalid(.backupNotOurs, path) }
                if let column = try Self.mistypedColumn(db) { throw ClinicError.invalid(.backupNotOurs, path + " (" + column + ")") }
                let version = try runner.verifiedVersion(db)
                guard version > 0 else { throw ClinicError.invalid(.backupNotOurs, path) }
                // Its patients must open with this database's key.
                if let theirs = try Self.keyCheck(db), let ours = try self.read({ try Self.keyCheck($0) }), theirs != ours {
                    throw ClinicError.invalid(.backupOtherKey, path)
                }
                return version
            }
        } catch let error as DatabaseError {
            throw ClinicError(.invalidInput, .backupDamaged, arguments: [path, Self.describe(error)])
        }
    }

    /// The first column (`table.column`) holding a value of another type than it is declared
    /// with (SQLite allows that; reading it would fail), or nil.
    static func mistypedColumn(_ db: Database) throws -> String? {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        for table in tables {
            for column in try Row.fetchAll(db, sql: "SELECT name, type FROM pragma_table_info(?)", arguments: [table]) {
                let name = try column.decode(String.self, forColumn: "name")
                let declared = try column.decode(String.self, forColumn: "type").uppercased()
                let allowed: [String] = declared.contains("INT") ? ["integer"] : declared.contains("REAL") ? ["real", "integer"]
                    : declared.contains("TEXT") ? ["text"] : declared.contains("BLOB") ? ["blob"] : []
                guard !allowed.isEmpty else { continue }
                let quotedTable = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                let quotedColumn = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                let list = (allowed + ["null"]).map { "'" + $0 + "'" }.joined(separator: ", ")
                let wrong = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(quotedTable) WHERE typeof(\(quotedColumn)) NOT IN (\(list)))") ?? false
                if wrong { return table + "." + name }
            }
        }
        return nil
    }

    /// Replaces the live database with a verified backup. The database being replaced is
    /// first backed up to `aside`; the copy in is one SQLite backup under the writer lock (other
    /// clinic processes wait), and a backup from an older version is then migrated up.
    public func restore(from path: String, keepingAside aside: String) throws {
        _ = try verifyBackup(at: path)
        var configuration = Configuration()
        configuration.readonly = true
        let source: DatabaseQueue
        do { source = try DatabaseQueue(path: path, configuration: configuration) } catch let error as DatabaseError {
            throw Self.map(error)
        }
        defer { try? source.close() }
        // The database is kept aside and replaced under the same lock: no write falls between.
        // A backup from an older version is migrated up under the same lock; if that fails,
        // the replaced database is copied back from `aside`: a refused restore changes nothing.
        let copy = {
            try self.backup(to: aside)
            try self.mapErrors { try source.backup(to: self.writer) }
            do {
                try self.migrateHoldingLock()
            } catch {
                let previous = try self.mapErrors { try DatabaseQueue(path: aside, configuration: configuration) }
                try self.mapErrors { try previous.backup(to: self.writer) }
                try? previous.close()
                try? FileManager.default.removeItem(atPath: aside)
                throw error
            }
        }
        if let writerLock { try writerLock.withLock(limit: Self.busyLimit, copy) } else { try copy() }
    }
}

/// Backups taken by any command when `CLINIC_BACKUP_DIR` is set: at most one per `interval`
/// (the newest backup's time is read from the folder, so nothing is written to the database
/// to decide), keeping the newest `keep`.
public struct AutomaticBackups: Sendable {
    public let directory: URL
    public let interval: TimeInterval
    public let keep: Int

    public static let prefix = "clinic-"

    public init(directory: URL, interval: TimeInterval = 24 * 3600, keep: Int = 7) {
        self.directory = directory
        self.interval = interval
        self.keep = keep
    }

    /// From `CLINIC_BACKUP_DIR`, `CLINIC_BACKUP_INTERVAL_HOURS` (default 24) and
    /// `CLINIC_BACKUP_KEEP` (default 7); nil when no folder is set.
    public static func fromEnvironment(_ environment: [String: String]) throws -> AutomaticBackups? {
        guard let folder = environment["CLINIC_BACKUP_DIR"], !folder.isEmpty else { return nil }
        var interval: TimeInterval = 24 * 3600, keep = 7
        if let text = environment["CLINIC_BACKUP_INTERVAL_HOURS"] {
            guard let hours = Double(text), hours.isFinite, hours >= 0, hours <= 24 * 365 else {
                throw ClinicError.invalid(.backupSetting, "CLINIC_BACKUP_INTERVAL_HOURS", text)
            }
            interval = hours * 3600
        }
        if let text = environment["CLINIC_BACKUP_KEEP"] {
            guard let count = Int(text), (1...1000).contains(count) else {
                throw ClinicError.invalid(.backupSetting, "CLINIC_BACKUP_KEEP", text)
            }
            keep = count
        }
        return AutomaticBackups(directory: URL(fileURLWithPath: folder, isDirectory: true), interval: interval, keep: keep)
    }

    /// The automatic backups in the folder, oldest first (their names sort by time). Only names
    /// this program gives (`clinic-YYYYMMDD-HHMMSS[-xxxxxxxx].sqlite`): other files there are
    /// never taken for one, nor deleted.
    public func existing() -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let pattern = #"^clinic-[0-9]{8}-[0-9]{6}(-[0-9A-F]{8})?\.sqlite$"#
        return names.filter { $0.range(of: pattern, options: .regularExpression) != nil }.sorted()
            .map { directory.appendingPathComponent($0) }
    }

    /// Takes a backup if the newest is older than `interval`, then deletes all but the newest
    /// `keep`. Returns the new backup's path, nil when none was due.
    @discardableResult
    public func runIfDue(_ database: DatabaseManager, now: Date = Date()) throws -> String? {
        if let newest = existing().last,
           let modified = (try? FileManager.default.attributesOfItem(atPath: newest.path))?[.modificationDate] as? Date,
           now.timeIntervalSince(modified) < interval {
            return nil
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw ClinicError(.storage, .backupUnwritable, directory.path)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        var path = directory.appendingPathComponent("\(Self.prefix)\(formatter.string(from: now)).sqlite").path
        if FileManager.default.fileExists(atPath: path) { path = path.replacingOccurrences(of: ".sqlite", with: "-\(UUID().uuidString.prefix(8)).sqlite") }
        try database.backup(to: path)
        for old in existing().dropLast(keep) { try? FileManager.default.removeItem(at: old) }
        return path
    }
}
