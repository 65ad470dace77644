import ClinicKit
import ClinicStorePostgres
import ClinicStoreSQLite
import Dispatch
import Foundation
import GRDB
import Logging
import NIOCore
import PostgresNIO

// `admin copy` from PostgreSQL to a new SQLite file.

extension StoreCopy {
    // MARK: PostgreSQL → SQLite

    /// Copies `source` (at the latest of `postgresMigrations`) into a new SQLite file at
    /// `targetPath`, which must not exist or be empty. Returns the rows per table.
    public static func postgresToSQLite(source: PostgresStore, postgresMigrations: [Migration], targetPath: String,
                                        sqliteMigrations: [Migration]) async throws -> [TableCount] {
        let target = URL(fileURLWithPath: targetPath).standardizedFileURL
        if let attributes = try? FileManager.default.attributesOfItem(atPath: target.path) {
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 1
            let regular = (attributes[.type] as? FileAttributeType) == .typeRegular
            if size != 0 || !regular { throw ClinicError(.storeNotEmpty, .copyTargetFileExists, target.path) }
        }
        let (current, latest) = try await source.schemaStatus(postgresMigrations)
        guard current == latest else {
            throw ClinicError(.storage, .copySourceNotMigrated, source.url.redacted, String(current), String(latest))
        }
        let snapshot = try await source.transaction(attempts: 1) { connection, logger in
            try await StoreCopy.readPostgres(connection, logger: logger)
        }
        return try await PostgresStore.offCooperativePool {
            try StoreCopy.writeSQLite(snapshot, to: target, migrations: sqliteMigrations)
        }
    }

    /// Every table in one REPEATABLE READ transaction: one snapshot of the whole database.
    static func readPostgres(_ connection: PostgresConnection, logger: Logger) async throws -> Snapshot {
        try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
        var snapshot = Snapshot()
        for table in tables {
            let columns = try await connection.query(
                "SELECT column_name::text FROM information_schema.columns WHERE table_schema = current_schema() AND table_name::text = \(table.name)",
                logger: logger).collect().map { try $0.decode(String.self) }
            try checkColumns(table, columns, store: "PostgreSQL")
            let expressions = table.columns.map { column -> String in
                switch column.kind {
                case .int: column.name + "::bigint"
                case .real: column.name + "::double precision"
                case .text, .blob: column.name
                case .bool: column.name + "::integer::bigint"
                case .instant: "floor(extract(epoch FROM " + column.name + "))::bigint"
                case .day: "to_char(" + column.name + ", 'YYYY-MM-DD')"
                }
            }
            let filter = table.name == "audit_head" ? " WHERE " + notEmptyAuditHead : ""
            let sql = "SELECT " + expressions.joined(separator: ", ") + " FROM " + table.name + filter + " ORDER BY " + table.orderBy
            var rows: [[Value]] = []
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
                var values: [Value] = []
                values.reserveCapacity(table.columns.count)
                for (cell, column) in zip(row, table.columns) {
                    values.append(try value(cell, column.kind))
                }
                rows.append(values)
            }
            snapshot.tables.append(TableRows(table: table, rows: rows))
        }
        snapshot.directoryVersion = try await connection.query("SELECT version FROM directory_version WHERE id = 1", logger: logger)
            .collect().first?.decode(Int64.self) ?? 0
        for table in tables where table.identity {
            let last = try await connection.query(
                "SELECT pg_sequence_last_value(pg_get_serial_sequence(\(table.name), 'id')::regclass)", logger: logger)
                .collect().first?.decode(Int64?.self) ?? nil
            let highest = snapshot.tables.first { $0.table.name == table.name }?.rows
                .compactMap(StoreCopy.id).max() ?? 0
            snapshot.sequences[table.name] = max(last ?? 0, highest)
        }
        return snapshot
    }

    /// A new file under a temporary name beside `target`, migrated, filled in one write
    /// transaction, counts compared; renamed to `target` only when all of it succeeded.
    static func writeSQLite(_ snapshot: Snapshot, to target: URL, migrations: [Migration]) throws -> [TableCount] {
        let folder = target.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent("." + target.lastPathComponent + ".copy-" + String(UUID().uuidString.prefix(8)))
        let sidecars = ["", "-wal", "-shm", "-journal", ".lock", ".key", ".audit-key"]
        func removeTemporary() {
            for suffix in sidecars { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
        }
        do {
            let counts = try fillSQLite(snapshot, at: temporary.path, migrations: migrations)
            // The pool is closed (fillSQLite's manager is gone) and its WAL checkpointed into the file.
            // An empty file (checked before) is replaced, one that filled meanwhile is not; link()
            // never overwrites a file that appeared meanwhile.
            if let attributes = try? FileManager.default.attributesOfItem(atPath: target.path) {
                guard (attributes[.size] as? NSNumber)?.intValue == 0 else {
                    throw ClinicError(.storeNotEmpty, .copyTargetFileExists, target.path)
                }
                try FileManager.default.removeItem(at: target)
            }
            guard link(temporary.path, target.path) == 0 else {
                if errno == EEXIST { throw ClinicError(.storeNotEmpty, .copyTargetFileExists, target.path) }
                throw ClinicError(.storage, .databaseUnavailable, target.path, String(cString: strerror(errno)))
            }
            removeTemporary()
            return counts
        } catch {
            removeTemporary()
            if let error = error as? ClinicError { throw error }
            throw ClinicError(.storage, .storageFailure, String(describing: type(of: error)))
        }
    }

    static func fillSQLite(_ snapshot: Snapshot, at path: String, migrations: [Migration]) throws -> [TableCount] {
        let manager = try SQLiteStore.open(path: path, migrations: migrations)
        let counts = try manager.writer.write { db -> [TableCount] in
            for table in tables {
                let present = try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table.name])
                    .compactMap { $0[0] as String? }
                try checkColumns(table, present, store: "SQLite")
                // A new file: only what its migrations put there.
                try db.execute(sql: "DELETE FROM " + table.name)
            }
            var counts: [TableCount] = []
            for rows in snapshot.tables {
                let table = rows.table
                let perStatement = max(1, sqliteBindsPerStatement / table.columns.count)
                let tuple = "(" + Array(repeating: "?", count: table.columns.count).joined(separator: ", ") + ")"
                var start = 0
                while start < rows.rows.count {
                    let batch = rows.rows[start..<min(start + perStatement, rows.rows.count)]
                    var arguments: [DatabaseValue] = []
                    arguments.reserveCapacity(batch.count * table.columns.count)
                    for row in batch {
                        for value in row {
                            switch value {
                            case .null: arguments.append(.null)
                            case .int(let number): arguments.append(number.databaseValue)
                            case .real(let number): arguments.append(number.databaseValue)
                            case .text(let text): arguments.append(text.databaseValue)
                            case .blob(let data): arguments.append(data.databaseValue)
                            }
                        }
                    }
                    let sql = "INSERT INTO " + table.name + " (" + table.columns.map(\.name).joined(separator: ", ") + ") VALUES "
                        + Array(repeating: tuple, count: batch.count).joined(separator: ", ")
                    do {
                        try db.execute(sql: sql, arguments: StatementArguments(arguments))
                    } catch let error as DatabaseError {
                        throw ClinicError(.storage, .copyRowRefused, table.name, "SQLite " + String(error.extendedResultCode.rawValue))
                    }
                    start += perStatement
                }
                counts.append(TableCount(table: table.name, rows: rows.rows.count))
            }
            // AUTOINCREMENT tables only (the others take max(id) + 1 by themselves): SQLite moved
            // their counters to the highest id inserted; the source's sequence may be further on.
            for (name, seq) in snapshot.sequences.sorted(by: { $0.key < $1.key }) where seq > 0 {
                let definition = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                                                     arguments: [name]) ?? ""
                guard definition.uppercased().contains("AUTOINCREMENT") else { continue }
                try db.execute(sql: "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", arguments: [seq, name])
                if db.changesCount == 0 {
                    try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", arguments: [name, seq])
                }
            }
            try db.execute(sql: "UPDATE directory_version SET version = max(version, ?) WHERE id = 1",
                           arguments: [snapshot.directoryVersion])
            for count in counts {
                let found = try Int.fetchOne(db, sql: "SELECT count(*) FROM " + count.table) ?? -1
                guard found == count.rows else {
                    throw ClinicError(.storage, .copyCountMismatch, count.table, String(count.rows), String(found))
                }
            }
            let violations = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
            guard violations.isEmpty else {
                throw ClinicError(.storage, .copyRowRefused, (violations.first?[0] as String?) ?? "?", "foreign key")
            }
            return counts
        }
        try manager.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        // Closed before the file takes its name: nothing of it is left in a -wal beside the temporary name.
        try (manager.writer as? DatabasePool)?.close()
        return counts
    }
}
