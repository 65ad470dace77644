import Crypto
import Foundation
import GRDB

/// One schema migration: `Migrations/NNNN_name.sql` with an up part and a down part,
/// separated by the marker lines `-- migrate:up` and `-- migrate:down`.
public struct Migration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let up: String
    public let down: String
    /// SHA-256 of the whole file, hex. An applied migration whose file changed is refused.
    public let checksum: String

    static let upMarker = "-- migrate:up"
    static let downMarker = "-- migrate:down"

    public init(version: Int, name: String, contents: String) throws {
        let lines = contents.components(separatedBy: "\n")
        var upLines: [Substring] = []
        var downLines: [Substring] = []
        enum Part { case preamble, up, down }
        var part = Part.preamble
        var sawUp = false, sawDown = false
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces).lowercased()
            if trimmed == Self.upMarker {
                guard !sawUp, !sawDown else { throw Self.malformed(version, name) }
                sawUp = true; part = .up; continue
            }
            if trimmed == Self.downMarker {
                guard sawUp, !sawDown else { throw Self.malformed(version, name) }
                sawDown = true; part = .down; continue
            }
            switch part {
            case .preamble: break
            case .up: upLines.append(Substring(line))
            case .down: downLines.append(Substring(line))
            }
        }
        guard sawUp, sawDown else { throw Self.malformed(version, name) }
        self.version = version
        self.name = name
        self.up = upLines.joined(separator: "\n")
        self.down = downLines.joined(separator: "\n")
        self.checksum = SHA256.hash(data: Data(contents.utf8)).hexString
    }

    private static func malformed(_ version: Int, _ name: String) -> ClinicError {
        ClinicError(.migrationMismatch, .migrationMalformed, String(format: "%04d_%@", version, name))
    }

    /// Reads every `NNNN_name.sql` file of a folder, in version order. Versions must run
    /// 1, 2, 3… without gaps or duplicates.
    public static func load(from directory: URL) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw ClinicError(.storage, .migrationsMissing, directory.path)
        }
        var migrations: [Migration] = []
        for file in names where file.hasSuffix(".sql") {
            let stem = file.dropLast(4)
            let parts = stem.split(separator: "_", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 4, let version = Int(parts[0]) else {
                throw ClinicError(.migrationMismatch, .migrationMalformed, file)
            }
            let url = directory.appendingPathComponent(file)
            guard let data = FileManager.default.contents(atPath: url.path),
                  let contents = String(data: data, encoding: .utf8)
            else { throw ClinicError(.migrationMismatch, .migrationMalformed, file) }
            migrations.append(try Migration(version: version, name: String(parts[1]), contents: contents))
        }
        migrations.sort { $0.version < $1.version }
        for (index, migration) in migrations.enumerated() where migration.version != index + 1 {
            throw ClinicError(.migrationMismatch, .migrationSequence, String(migration.version))
        }
        return migrations
    }
}

extension Sequence where Element == UInt8 {
    /// Lower-case hex, two digits a byte (on every request's token hash: no `String(format:)`).
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

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
