import ClinicKit
import Foundation
import GRDB

/// What `check` found.
public struct CheckReport: Sendable, Equatable {
    /// `["ok"]` for a sound database, otherwise SQLite's list of problems (or why it could not
    /// be checked at all: "file is not a database").
    public var integrity: [String]
    public var foreignKeyViolations: Int
    /// How the schema differs from what the migrations it claims create ("missing table
    /// clients", "missing column appointments.reason", "unexpected trigger t"); empty when equal.
    public var schema: [String] = []
    /// The migration version it claims; nil when that cannot be read.
    public var version: Int? = nil
    /// Why its personal-data key file does not open its patients, or nil.
    public var keyProblem: ClinicError? = nil
    /// Upcoming appointments whose clinic's time zone changed after they were booked: not a
    /// fault of the database, a list for staff (see `appointmentsAfterZoneChanges`).
    public var zoneChanges: [ZoneChangedAppointment] = []
    /// What breaks the audit trail's hash chain (`AuditLog.verify`); empty when it holds.
    public var audit: [String] = []
    /// Why the audit trail could not be verified (its key file missing or wrong, or a trail
    /// with rows that was never keyed), or nil. Not a finding that it is broken, nor sound.
    public var auditKeyProblem: ClinicError? = nil
    /// That the audit trail has rows but was never keyed (written before audit keys, no change
    /// audited since): its plain chain was verified, which someone who can write the file
    /// could have recomputed. Like `zoneChanges`, a note, not a fault.
    public var auditNote: ClinicError? = nil

    public init(integrity: [String], foreignKeyViolations: Int, schema: [String] = [], version: Int? = nil,
                keyProblem: ClinicError? = nil) {
        self.integrity = integrity
        self.foreignKeyViolations = foreignKeyViolations
        self.schema = schema
        self.version = version
        self.keyProblem = keyProblem
    }

    public var isSound: Bool {
        integrity == ["ok"] && foreignKeyViolations == 0 && schema.isEmpty && keyProblem == nil && audit.isEmpty
            && auditKeyProblem == nil
    }

    /// Nothing found wrong, but the audit trail could not be verified (see `auditKeyProblem`).
    public var isUnverifiedOnly: Bool {
        auditKeyProblem != nil && integrity == ["ok"] && foreignKeyViolations == 0 && schema.isEmpty && keyProblem == nil
            && audit.isEmpty
    }

    /// What is wrong: SQLite's integrity messages, the foreign key count, the schema
    /// differences (the key problem is a message of its own, for the front to word).
    public var summary: String {
        var parts = integrity == ["ok"] ? [] : Array(integrity.prefix(3))
        if foreignKeyViolations > 0 { parts.append("\(foreignKeyViolations) foreign key violations") }
        parts += schema.prefix(5)
        if schema.count > 5 { parts.append("\(schema.count - 5) more schema differences") }
        parts += audit
        return parts.joined(separator: "; ")
    }
}

/// A database's schema as comparable facts: each table, column (with type, NOT NULL, default
/// and primary-key position), index, trigger and view of `sqlite_master` (SQLite's own
/// `sqlite_*` objects aside), keyed by kind and name.
enum SchemaFacts {
    static func read(_ db: Database) throws -> [String: String] {
        var facts: [String: String] = [:]
        let objects = try Row.fetchAll(db, sql: """
            SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name
            """)
        for object in objects {
            let type = try object.decode(String.self, forColumn: "type"), name = try object.decode(String.self, forColumn: "name")
            let table = try object.decode(String.self, forColumn: "tbl_name")
            let sql = try object.decode(String?.self, forColumn: "sql").map(normalized) ?? ""
            guard type == "table" else {
                facts[type == "view" ? "view " + name : "\(type) \(name) on \(table)"] = sql
                continue
            }
            facts["table " + name] = ""
            for column in try Row.fetchAll(db, sql: "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)",
                                           arguments: [name]) {
                let columnName = try column.decode(String.self, forColumn: "name")
                let declared = try column.decode(String.self, forColumn: "type")
                let notNull = try column.decode(Int.self, forColumn: "notnull") != 0
                let defaultValue = try column.decode(String?.self, forColumn: "dflt_value")
                let primaryKey = try column.decode(Int.self, forColumn: "pk")
                facts["column \(name).\(columnName)"] = [declared, notNull ? "NOT NULL" : "NULL",
                                                          defaultValue.map { "DEFAULT " + $0 } ?? "",
                                                          primaryKey > 0 ? "PRIMARY KEY \(primaryKey)" : ""]
                    .filter { !$0.isEmpty }.joined(separator: " ")
            }
        }
        return facts
    }

    static func normalized(_ sql: String) -> String {
        sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// "missing …", "unexpected …" and "changed …": tables first, then columns, indexes,
    /// triggers and views, each in name order. The columns, indexes and triggers of a table
    /// that is missing or unexpected as a whole are not listed again.
    static func differences(expected: [String: String], actual: [String: String]) -> [String] {
        let kinds = ["table", "column", "index", "trigger", "view"]
        let whole = Set(expected.keys).symmetricDifference(actual.keys).filter { $0.hasPrefix("table ") }.map { $0.dropFirst(6) }
        let keys = Set(expected.keys).union(actual.keys).filter { key in
            !whole.contains { table in key.hasPrefix("column \(table).") || key.hasSuffix(" on \(table)") }
        }
        return keys.sorted { a, b in
            let kindA = kinds.firstIndex(of: String(a.prefix { $0 != " " })) ?? kinds.count
            let kindB = kinds.firstIndex(of: String(b.prefix { $0 != " " })) ?? kinds.count
            return (kindA, a) < (kindB, b)
        }.compactMap { key in
            switch (expected[key], actual[key]) {
            case (.some, nil): "missing " + key
            case (nil, .some): "unexpected " + key
            case let (wanted?, found?) where wanted != found: "changed \(key): \(found), expected \(wanted)"
            default: nil
            }
        }
    }

    private static let expected = LockedBox<[String: [String: String]]>([:])

    /// The schema the migrations up to `version` create, built once per process in memory
    /// (per set of migration files: the key is their checksums).
    static func expected(by runner: MigrationRunner, version: Int) throws -> [String: String] {
        let key = runner.migrations.filter { $0.version <= version }.map(\.checksum).joined(separator: ",")
        return try expected.withLock { cache in
            if let facts = cache[key] { return facts }
            let queue = try DatabaseQueue()
            try runner.migrate(queue, to: version)
            let facts = try queue.read { try read($0) }
            cache[key] = facts
            return facts
        }
    }
}

extension SQLiteStore {
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
            defer { try? destination.close() }
            try writer.backup(to: destination)
            // One self-contained file: the copy inherits WAL mode, which would make every
            // later reader of it create -wal and -shm files beside it.
            try destination.writeWithoutTransaction { db in _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }
            // A copy of a damaged database is no backup: the live one is what is wrong.
            let report = try destination.read { db in Self.integrityCheck(db) }
            guard report.integrity == ["ok"], report.foreignKeyViolations == 0 else {
                throw ClinicError(.storage, .databaseDamaged, self.path ?? "memory", report.summary)
            }
            try destination.close()
        } catch let error as DatabaseError {
            // A copy is as malformed as its source: the live database is what is wrong.
            throw Self.damaged(error, self.path ?? "memory") ?? Self.map(error)
        }
        // link() fails if `path` appeared meanwhile: a backup never overwrites a file.
        guard link(temporary.path, path) == 0 else {
            if errno == EEXIST { throw ClinicError.invalid(.backupExists, path) }
            throw ClinicError(.storage, .backupUnwritable, path)
        }
        KeyFile.syncFolder(of: path)
    }

    /// `PRAGMA integrity_check`, `foreign_key_check`, the schema against its migrations and the
    /// key file against the stored key check, of the live database. It always reports: what
    /// cannot even be read is a problem in the report, not an error.
    public func check() -> CheckReport {
        do {
            return try writer.read { db in fullCheck(db) }
        } catch {
            return CheckReport(integrity: [Self.describe(error)], foreignKeyViolations: 0)
        }
    }

    /// `check` of the database file at `path`, opened read-only apart from any
    /// `SQLiteStore`: a file too damaged to open still gets its report.
    public static func check(path: String, runner: MigrationRunner) -> CheckReport {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            guard FileManager.default.isReadableFile(atPath: path) else {
                return CheckReport(integrity: ["cannot read " + path], foreignKeyViolations: 0)
            }
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            let manager = SQLiteStore(writer: queue, runner: runner, path: path, readOnly: true)
            return try queue.read { db in manager.fullCheck(db) }
        } catch {
            return CheckReport(integrity: [describe(error)], foreignKeyViolations: 0)
        }
    }

    func fullCheck(_ db: Database) -> CheckReport {
        var report = Self.check(db, runner: runner)
        report.keyProblem = keyProblem(db)
        if report.integrity == ["ok"] {
            report.zoneChanges = (try? Self.appointmentsAfterZoneChanges(db, now: Date())) ?? []
            do {
                let key = auditKeys.forChecking(transaction(db))
                report.auditKeyProblem = key.problem
                report.auditNote = key.note
                report.audit = try AuditLog.verify(db, key: key.key, keyed: key.keyed)
            } catch {
                report.audit = ["the audit trail cannot be read: " + Self.describe(error)]
            }
        }
        return report
    }

    /// Integrity, foreign keys and schema, each step reporting what stops it.
    static func check(_ db: Database, runner: MigrationRunner) -> CheckReport {
        var report = integrityCheck(db)
        do {
            let version = try runner.verifiedVersion(db)
            report.version = version
            report.schema = SchemaFacts.differences(expected: try SchemaFacts.expected(by: runner, version: version),
                                                    actual: try SchemaFacts.read(db))
        } catch let error as ClinicError {
            report.schema = [error.message(in: .en)]
        } catch {
            report.schema = [describe(error)]
        }
        return report
    }

    /// `integrity_check` and `foreign_key_check` only: what a copy is checked for before it
    /// becomes a backup.
    static func integrityCheck(_ db: Database) -> CheckReport {
        var report = CheckReport(integrity: ["ok"], foreignKeyViolations: 0)
        do {
            report.integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
        } catch {
            report.integrity = [describe(error)]
            return report
        }
        do {
            report.foreignKeyViolations = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count
        } catch {
            report.integrity.append(describe(error))
        }
        return report
    }

    /// Why the key file does not open this database's patients, or nil (also when no key is
    /// needed yet). Reads only: never creates a key file.
    func keyProblem(_ db: Database) -> ClinicError? {
        guard let keyFile else { return nil }
        do {
            guard let check = try Self.keyCheck(db) else { return nil }
            if let staged = try? KeyFile.read(keyFile.stagedPath), KeyFile.check(staged) == check { return nil }
            guard let key = try KeyFile.read(keyFile.path) else { return ClinicError(.keyError, .keyMissing, keyFile.path) }
            return KeyFile.check(key) == check ? nil : ClinicError(.keyError, .keyWrong, keyFile.path)
        } catch let error as ClinicError {
            return error
        } catch {
            return ClinicError(.storage, .storageFailure, Self.describe(error))
        }
    }

    /// Checks a backup without changing it: it must be an SQLite database that passes
    /// `integrity_check` and `foreign_key_check`, made by this program (its migrations known and
    /// unchanged, none newer, and its schema exactly what they create). Returns its migration
    /// version.
    public func verifyBackup(at path: String) throws -> Int {
        guard FileManager.default.isReadableFile(atPath: path) else { throw ClinicError.invalid(.fileUnreadable, path) }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                let report = Self.check(db, runner: runner)
                guard report.integrity == ["ok"], report.foreignKeyViolations == 0 else {
                    throw ClinicError(.invalidInput, .backupDamaged, arguments: [path, report.summary])
                }
                guard try db.tableExists("schema_migrations") else { throw ClinicError.invalid(.backupNotOurs, path) }
                let version = try runner.verifiedVersion(db)
                guard version > 0 else { throw ClinicError.invalid(.backupNotOurs, path) }
                // Its tables, columns, indexes and triggers are those its migrations create.
                guard report.schema.isEmpty else {
                    throw ClinicError.invalid(.backupNotOurs, path + " (" + report.schema.prefix(3).joined(separator: "; ") + ")")
                }
                if let column = try Self.mistypedColumn(db) { throw ClinicError.invalid(.backupNotOurs, path + " (" + column + ")") }
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
        try checkWritable()
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
                try self.setAuditKeyAside(aside)
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
        // Unset or empty: the default. Decimal numbers only ("0x10" is not 16 hours).
        if let text = environment["CLINIC_BACKUP_INTERVAL_HOURS"], !text.isEmpty {
            guard !text.hasPrefix("-"), !text.hasPrefix("+"), let hours = Text.decimal(text), hours <= 24 * 365 else {
                throw ClinicError.invalid(.backupSetting, "CLINIC_BACKUP_INTERVAL_HOURS", text)
            }
            interval = hours * 3600
        }
        if let text = environment["CLINIC_BACKUP_KEEP"], !text.isEmpty {
            guard text.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int(text), (1...1000).contains(count) else {
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
    public func runIfDue(_ database: SQLiteStore, now: Date = Date()) throws -> String? {
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
