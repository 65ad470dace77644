import ClinicKit
import Crypto
import Foundation
import GRDB

/// Applies migrations up or down, recording each applied one with its checksum in
/// `schema_migrations`. A whole move (several migrations) is one transaction: a failure
/// leaves the schema exactly as it was.
public struct MigrationRunner: Sendable {
    public let migrations: [Migration]

    public init(migrations: [Migration]) { self.migrations = migrations }

    public var latestVersion: Int { migrations.last?.version ?? 0 }

    static func ensureTable(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                checksum TEXT NOT NULL,
                applied_at INTEGER NOT NULL
            )
            """)
    }

    /// The applied versions, after checking that each one is known and unchanged.
    public func verifiedVersion(_ db: Database) throws -> Int {
        guard try db.tableExists("schema_migrations") else { return 0 }
        let rows = try Row.fetchAll(db, sql: "SELECT version, name, checksum FROM schema_migrations ORDER BY version")
        var current = 0
        for row in rows {
            // Decoded, not subscripted: a damaged or foreign file must fail, not crash.
            let version = try row.decode(Int.self, forColumn: "version")
            let checksum = try row.decode(String.self, forColumn: "checksum")
            guard let known = migrations.first(where: { $0.version == version }) else {
                throw ClinicError(.databaseTooNew, .databaseTooNew, String(version), String(latestVersion))
            }
            guard known.checksum == checksum else {
                throw ClinicError(.migrationMismatch, .migrationChanged,
                                  String(format: "%04d_%@", known.version, known.name))
            }
            current = max(current, version)
        }
        guard rows.count == current else {
            throw ClinicError(.migrationMismatch, .migrationSequence, String(current))
        }
        return current
    }

    /// Moves the schema to `target` (default: the latest), up or down. Returns the
    /// versions applied (up) or reverted (down), in the order they ran.
    /// Work a migration needs that SQL cannot do, run in the same transaction: after a
    /// version's up part, or before its down part.
    public typealias Hook = (Database) throws -> Void

    @discardableResult
    public func migrate(_ writer: any DatabaseWriter, to target: Int? = nil, afterUp: [Int: Hook] = [:],
                        beforeDown: [Int: Hook] = [:]) throws -> [Int] {
        let target = target ?? latestVersion
        guard (0...latestVersion).contains(target) else {
            throw ClinicError.invalid(.migrationTargetRange, String(target), String(latestVersion))
        }
        return try writer.writeWithoutTransaction { db in
            var ran: [Int] = []
            // SQLite's way to rebuild a table others point to: foreign keys off for the move (a
            // dropped parent would otherwise cascade into its children), every key checked before
            // the commit, and on again after. The pragma is a no-op inside a transaction, so it is
            // set before it.
            let enforced = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            defer { if enforced { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
            try db.inTransaction(.immediate) {
                let current = try verifiedVersion(db)
                try Self.ensureTable(db)
                if target > current {
                    for migration in migrations where migration.version > current && migration.version <= target {
                        try db.execute(sql: migration.up)
                        try afterUp[migration.version]?(db)
                        try db.execute(
                            sql: "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                            arguments: [migration.version, migration.name, migration.checksum,
                                        Int64(Date().timeIntervalSince1970)])
                        ran.append(migration.version)
                    }
                } else if target < current {
                    for migration in migrations.reversed() where migration.version <= current && migration.version > target {
                        try beforeDown[migration.version]?(db)
                        try db.execute(sql: migration.down)
                        try db.execute(sql: "DELETE FROM schema_migrations WHERE version = ?", arguments: [migration.version])
                        ran.append(migration.version)
                    }
                }
                if !ran.isEmpty, try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") != nil {
                    throw ClinicError(.migrationMismatch, .migrationForeignKeys, String(target))
                }
                return .commit
            }
            return ran
        }
    }
}
