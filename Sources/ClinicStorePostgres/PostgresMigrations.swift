import ClinicKit
import Foundation
import Logging
import PostgresNIO

/// The PostgreSQL store's migrations (`Migrations/postgres/NNNN_name.sql`, the same format and
/// loader as SQLite's), applied the way `MigrationRunner` applies SQLite's: each applied one
/// recorded in `schema_migrations` with its file's SHA-256; a changed applied file is
/// `migration_mismatch`, an applied version this program does not know `database_too_new`; a
/// whole move is one transaction. Servers sharing the database may migrate at once: the move
/// holds `pg_advisory_xact_lock` (the same key for everyone) from its first statement, so a
/// second one waits, then finds the work done.
extension PostgresStore {
    /// The lock's key: "clinicmg" as a big-endian 64-bit number.
    public static let migrationLockKey: Int64 = 0x636c_696e_6963_6d67

    /// `Migrations/postgres` under the resources' migrations folder.
    public static func migrationsFolder(_ resources: Resources) -> URL {
        resources.migrations.appendingPathComponent("postgres", isDirectory: true)
    }

    /// The version after which appointments' notes are sealed (Migrations/postgres/0006).
    public static let sealedNotesVersion = 6

    /// Moves the schema to `target` (default: the latest), up or down. Returns the versions
    /// applied (up) or reverted (down), in the order they ran.
    ///
    /// The notes are sealed and opened in transactions of their own (the work is the seam's, and
    /// a seam transaction blocks its thread): before a move down past `sealedNotesVersion`
    /// they are opened, and after any move that ends at or above it the notes still in clear
    /// are sealed. Either pass may be run again: one cut short leaves notes in clear, which
    /// this program reads as they are and the next `migrate` (every server's start) seals.
    @discardableResult
    public func migrate(_ migrations: [Migration], to target: Int? = nil) async throws -> [Int] {
        let latest = migrations.last?.version ?? 0
        let target = target ?? latest
        guard (0...latest).contains(target) else {
            throw ClinicError.invalid(.migrationTargetRange, String(target), String(latest))
        }
        if target < Self.sealedNotesVersion, latest >= Self.sealedNotesVersion,
           try await schemaStatus(migrations).current >= Self.sealedNotesVersion {
            try await Self.offCooperativePool { [self] in try openAllNotes() }
        }
        let ran = try await migrateSchema(migrations, to: target)
        if target >= Self.sealedNotesVersion {
            try await Self.offCooperativePool { [self] in _ = try sealPlainNotes() }
        }
        return ran
    }

    private func migrateSchema(_ migrations: [Migration], to target: Int) async throws -> [Int] {
        return try await transaction { connection, logger in
            // Another process migrating holds the lock for as long as its migrations take: wait
            // up to ten minutes, not the session's 30 s. The row is read to the end: a query
            // that returns rows reports a failure (a lock timeout) only when its rows are read,
            // and an unread one left the transaction aborted for the next statement (25P02).
            try await connection.query("SET LOCAL lock_timeout = '10min'", logger: logger)
            _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLockKey))", logger: logger).collect()
            let current = try await Self.verifiedVersion(connection, logger: logger, migrations: migrations)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY,
                    name text NOT NULL,
                    checksum text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """, logger: logger)
            var ran: [Int] = []
            if target > current {
                for migration in migrations where migration.version > current && migration.version <= target {
                    try await Self.run(migration.up, on: connection, logger: logger)
                    try await connection.query("""
                        INSERT INTO schema_migrations (version, name, checksum) \
                        VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                        """, logger: logger)
                    ran.append(migration.version)
                }
            } else if target < current {
                for migration in migrations.reversed() where migration.version <= current && migration.version > target {
                    try await Self.run(migration.down, on: connection, logger: logger)
                    try await connection.query("DELETE FROM schema_migrations WHERE version = \(migration.version)", logger: logger)
                    ran.append(migration.version)
                }
            }
            return ran
        }
    }

    /// A migration's part, statement by statement (`SQLScript`). The text is the program's own
    /// file, never input, and holds no values: hence `unsafeSQL`.
    static func run(_ script: String, on connection: PostgresConnection, logger: Logger) async throws {
        for statement in SQLScript.statements(script) {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }

    /// The applied version and the latest this program knows, after checking the applied ones.
    public func schemaStatus(_ migrations: [Migration]) async throws -> (current: Int, latest: Int) {
        let current = try await withConnection { connection in
            try await Self.verifiedVersion(connection, logger: self.logger, migrations: migrations)
        }
        return (current, migrations.last?.version ?? 0)
    }

    /// The applied versions, after checking that each one is known and unchanged (SQLite's
    /// `MigrationRunner.verifiedVersion`, the same errors).
    static func verifiedVersion(_ connection: PostgresConnection, logger: Logger, migrations: [Migration]) async throws -> Int {
        let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
            .collect().first?.decode(Bool.self) ?? false
        guard exists else { return 0 }
        let latest = migrations.last?.version ?? 0
        var current = 0, count = 0
        let rows = try await connection.query("SELECT version, checksum FROM schema_migrations ORDER BY version", logger: logger)
        for try await (version, checksum) in rows.decode((Int, String).self) {
            guard let known = migrations.first(where: { $0.version == version }) else {
                throw ClinicError(.databaseTooNew, .databaseTooNew, String(version), String(latest))
            }
            guard known.checksum == checksum else {
                throw ClinicError(.migrationMismatch, .migrationChanged, String(format: "%04d_%@", known.version, known.name))
            }
            current = max(current, version)
            count += 1
        }
        guard count == current else { throw ClinicError(.migrationMismatch, .migrationSequence, String(current)) }
        return current
    }

    /// What the applied migrations should have made and is missing (or a migration problem):
    /// empty when the schema is sound. The objects are read from the migrations' own text:
    /// every table, named constraint, index, trigger and function they create and do not drop
    /// again, the extensions, and as many foreign keys per table as they declare.
    public func check(_ migrations: [Migration]) async throws -> (version: Int, latest: Int, problems: [String]) {
        let latest = migrations.last?.version ?? 0
        let current: Int
        do {
            current = try await schemaStatus(migrations).current
        } catch let error as ClinicError where error.code == .migrationMismatch || error.code == .databaseTooNew {
            return (0, latest, [error.message(in: .en)])
        }
        var problems: [String] = []
        if current < latest { problems.append("schema at version \(current) of \(latest): not migrated") }
        let expected = SchemaObjects(migrations.filter { $0.version <= current })
        let found = try await withConnection { connection in
            try await SchemaObjects.present(connection, logger: self.logger)
        }
        for table in expected.tables.sorted() where !found.tables.contains(table) { problems.append("table \(table)") }
        for name in expected.constraints.sorted() where !found.constraints.contains(name) { problems.append("constraint \(name)") }
        for name in expected.indexes.sorted() where !found.indexes.contains(name) { problems.append("index \(name)") }
        for name in expected.triggers.sorted() where !found.triggers.contains(name) { problems.append("trigger \(name)") }
        for name in expected.functions.sorted() where !found.functions.contains(name) { problems.append("function \(name)") }
        for name in expected.extensions.sorted() where !found.extensions.contains(name) { problems.append("extension \(name)") }
        for (table, count) in expected.foreignKeys.sorted(by: { $0.key < $1.key }) where (found.foreignKeys[table] ?? 0) < count {
            problems.append("foreign keys of \(table): \(found.foreignKeys[table] ?? 0) of \(count)")
        }
        return (current, latest, problems)
    }
}

/// Names of schema objects: those the migrations' SQL creates, or those the database has.
struct SchemaObjects: Sendable {
    var tables: Set<String> = []
    var constraints: Set<String> = []
    var indexes: Set<String> = []
    var triggers: Set<String> = []
    var functions: Set<String> = []
    var extensions: Set<String> = []
    var foreignKeys: [String: Int] = [:]

    init() {}

    /// From the up parts of the applied migrations, in order (a later DROP removes a name).
    init(_ migrations: [Migration]) {
        let identifier = "([a-z_][a-z0-9_]*)"
        for migration in migrations {
            var table: String?
            for rawLine in migration.up.components(separatedBy: "\n") {
                let line = rawLine.trimmingCharacters(in: .whitespaces)
                let lower = line.lowercased()
                if lower.hasPrefix("--") { continue }
                if let name = Self.capture(lower, "^create table (?:if not exists )?" + identifier) {
                    tables.insert(name); table = name
                } else if lower.hasPrefix("create") || lower.hasPrefix("alter") || lower.hasPrefix("drop") || lower.hasPrefix(");") {
                    table = lower.hasPrefix("alter table") ? Self.capture(lower, "^alter table " + identifier) : nil
                }
                if let name = Self.capture(lower, "^create (?:unique )?index (?:if not exists )?" + identifier) { indexes.insert(name) }
                if let name = Self.capture(lower, "^create (?:or replace )?function " + identifier) { functions.insert(name) }
                if let name = Self.capture(lower, "^create trigger " + identifier) { triggers.insert(name) }
                if let name = Self.capture(lower, "^create extension (?:if not exists )?" + identifier) { extensions.insert(name) }
                if let name = Self.capture(lower, "constraint " + identifier) { constraints.insert(name) }
                if let table, lower.contains(" references ") {
                    foreignKeys[table, default: 0] += lower.components(separatedBy: " references ").count - 1
                }
                if let name = Self.capture(lower, "^drop table (?:if exists )?" + identifier) {
                    tables.remove(name); foreignKeys[name] = nil
                }
                if let name = Self.capture(lower, "^drop index (?:if exists )?" + identifier) { indexes.remove(name) }
                if let name = Self.capture(lower, "^drop trigger (?:if exists )?" + identifier) { triggers.remove(name) }
                if let name = Self.capture(lower, "^drop function (?:if exists )?" + identifier) { functions.remove(name) }
            }
        }
    }

    static func capture(_ text: String, _ pattern: String) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), match.numberOfRanges > 1,
              let range = Range(match.range(at: 1), in: text) else { return nil }
        return String(text[range])
    }

    /// What the current schema (`current_schema()`) holds.
    static func present(_ connection: PostgresConnection, logger: Logger) async throws -> SchemaObjects {
        var found = SchemaObjects()
        func names(_ query: PostgresQuery) async throws -> Set<String> {
            var result: Set<String> = []
            for try await name in try await connection.query(query, logger: logger).decode(String.self) { result.insert(name) }
            return result
        }
        found.tables = try await names("""
            SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
            """)
        found.indexes = try await names("""
            SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind IN ('i', 'I')
            """)
        found.constraints = try await names("""
            SELECT con.conname::text FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace
            WHERE n.nspname = current_schema()
            """)
        found.triggers = try await names("""
            SELECT t.tgname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND NOT t.tgisinternal
            """)
        found.functions = try await names("""
            SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = current_schema()
            """)
        found.extensions = try await names("SELECT extname::text FROM pg_extension")
        let rows = try await connection.query("""
            SELECT c.relname::text, count(*)::bigint FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND con.contype = 'f' GROUP BY c.relname
            """, logger: logger)
        for try await (table, count) in rows.decode((String, Int64).self) { found.foreignKeys[table] = Int(count) }
        return found
    }
}

extension PostgresStore {
    /// Blocking work (a synchronous transaction, SQLite) on a thread of its own, never on a cooperative-pool thread.
    package static func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}
