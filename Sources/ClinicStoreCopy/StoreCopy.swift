import ClinicKit
import ClinicStorePostgres
import ClinicStoreSQLite
import Dispatch
import Foundation
import GRDB
import Logging
import NIOCore
import PostgresNIO

/// `clinic admin copy`: a whole database from one store into an empty one of the other kind,
/// row by row, ids kept (issue #25).
///
/// - SQLite → PostgreSQL: the source is read in one read transaction (a WAL snapshot: a live
///   database copies consistently while others write); the target must be migrated to the
///   latest PostgreSQL schema and empty, and is written in one transaction that also compares
///   every table's count with the source before COMMIT. Any failure rolls it all back.
/// - PostgreSQL → SQLite: the source is read in one REPEATABLE READ, READ ONLY transaction; the
///   target file must not exist (or be empty). It is made under a temporary name in the same
///   folder with the SQLite migrations, filled in one write transaction, counts compared, and
///   only then renamed into place: a failure leaves no file behind.
///
/// Rows are copied as they are stored: sealed blobs (personal data, calendar tokens, delivery
/// payloads) byte for byte under the same key, the audit chain's hashes and head as they are.
/// The key files (`<database>.key`, `<database>.audit-key`) are not touched: the same ones must
/// be given to the other store. The schema-version bookkeeping (`schema_migrations`,
/// `sqlite_sequence`) is each store's own and is not copied as rows; identity sequences are
/// moved past the highest id the source ever handed out.
public enum StoreCopy {
    /// How a column is stored: SQLite's storage class and PostgreSQL's type.
    enum Kind: Sendable {
        /// INTEGER ↔ bigint, integer or smallint.
        case int
        /// REAL ↔ double precision.
        case real
        /// TEXT ↔ text.
        case text
        /// INTEGER 0/1 ↔ boolean.
        case bool
        /// INTEGER UTC seconds since 1970 ↔ timestamptz.
        case instant
        /// TEXT 'YYYY-MM-DD' ↔ date.
        case day
        /// BLOB ↔ bytea.
        case blob

        /// The PostgreSQL type a bound value is cast to.
        var postgresType: String {
            switch self {
            case .int: "bigint"
            case .real: "double precision"
            case .text: "text"
            case .bool: "boolean"
            case .instant: "timestamptz"
            case .day: "date"
            case .blob: "bytea"
            }
        }
    }

    struct Column: Sendable {
        let name: String
        let kind: Kind
    }

    struct Table: Sendable {
        let name: String
        let columns: [Column]
        /// `id` is a PostgreSQL identity (SQLite AUTOINCREMENT): explicit ids need
        /// OVERRIDING SYSTEM VALUE, and the sequence is moved on after the copy.
        let identity: Bool
        let orderBy: String
    }

    /// A stored value in the form both stores share (SQLite's storage classes): flags and
    /// instants are integers, days text.
    enum Value: Sendable, Equatable {
        case null
        case int(Int64)
        case real(Double)
        case text(String)
        case blob(Data)
    }

    /// One table's rows, in primary-key order.
    struct TableRows: Sendable {
        let table: Table
        var rows: [[Value]]
    }

    /// What was read from the source: every table's rows, the directory version, and the
    /// highest id each identity sequence handed out.
    struct Snapshot: Sendable {
        var tables: [TableRows] = []
        var directoryVersion: Int64 = 0
        var sequences: [String: Int64] = [:]
    }

    /// A table and the rows copied into it.
    public struct TableCount: Sendable, Encodable, Equatable {
        public let table: String
        public let rows: Int
    }

    /// The tables copied as rows, parents before children (foreign keys). Both schemas have
    /// exactly these columns (checked against each store's catalogue before copying).
    /// `directory_version` is not among them: its one row exists in both schemas from their
    /// migrations, and its version is carried over apart.
    static let tables: [Table] = {
        func table(_ name: String, identity: Bool = true, orderBy: String = "id", _ columns: [(String, Kind)]) -> Table {
            Table(name: name, columns: columns.map { Column(name: $0.0, kind: $0.1) }, identity: identity, orderBy: orderBy)
        }
        return [
            table("clinics", [("id", .int), ("external_id", .text), ("name", .text), ("address", .text), ("city", .text),
                              ("city_key", .text), ("state", .text), ("zip", .text), ("description", .text), ("category", .text),
                              ("lat", .real), ("lon", .real), ("is_pediatric", .bool), ("is_hospital", .bool),
                              ("time_zone", .text), ("phone", .text), ("website", .text)]),
            table("departments", [("id", .int), ("clinic_id", .int), ("specialization", .text), ("is_demo", .bool)]),
            table("doctors", [("id", .int), ("department_id", .int), ("name", .text), ("is_demo", .bool), ("is_active", .bool)]),
            table("working_hours", [("id", .int), ("doctor_id", .int), ("weekday", .int), ("start_minute", .int),
                                    ("end_minute", .int), ("slot_minutes", .int)]),
            table("working_exceptions", [("id", .int), ("doctor_id", .int), ("day", .day), ("start_minute", .int),
                                         ("end_minute", .int), ("slot_minutes", .int)]),
            table("visit_types", [("id", .int), ("department_id", .int), ("name_en", .text), ("name_ru", .text),
                                  ("duration_minutes", .int), ("price_cents", .int), ("is_active", .bool)]),
            table("clients", [("id", .int), ("login", .text), ("login_key", .text), ("password_hash", .text), ("name", .text),
                              ("surname", .text), ("street", .text), ("house", .text), ("city", .text), ("lat", .real),
                              ("lon", .real), ("home_clinic_id", .int), ("preferred_language", .text),
                              ("privacy_accepted_at", .instant), ("privacy_version", .int), ("created_at", .instant),
                              ("personal", .blob), ("email_confirmed", .bool)]),
            table("sessions", [("id", .int), ("client_id", .int), ("token_hash", .text), ("created_at", .instant),
                               ("last_used_at", .instant), ("device_name", .text), ("device_platform", .text),
                               ("device_app_version", .text), ("idle_seconds", .int)]),
            table("geocode_cache", identity: false, orderBy: "query",
                  [("query", .text), ("lat", .real), ("lon", .real), ("precision", .text), ("source", .text),
                   ("created_at", .instant), ("hits", .int)]),
            table("settings", identity: false, orderBy: "key", [("key", .text), ("value", .text)]),
            table("login_attempts", identity: false, orderBy: "login_key",
                  [("login_key", .text), ("failures", .int), ("first_failure_at", .instant)]),
            table("send_counts", identity: false, orderBy: "key",
                  [("key", .text), ("window_start", .instant), ("count", .int)]),
            table("clinic_zone_changes", [("id", .int), ("clinic_id", .int), ("old_zone", .text), ("new_zone", .text),
                                          ("changed_at", .instant)]),
            table("idempotency_keys", identity: false, orderBy: "client_id, key",
                  [("client_id", .int), ("key", .text), ("fingerprint", .text), ("status", .int), ("body", .blob),
                   ("created_at", .instant)]),
            table("staff_accounts", [("id", .int), ("login", .text), ("login_key", .text), ("password_hash", .text),
                                     ("name", .text), ("surname", .text), ("role", .text), ("clinic_id", .int),
                                     ("doctor_id", .int), ("is_active", .bool), ("created_at", .instant)]),
            table("staff_sessions", [("id", .int), ("staff_id", .int), ("token_hash", .text), ("created_at", .instant),
                                     ("last_used_at", .instant), ("idle_seconds", .int)]),
            table("appointments", [("id", .int), ("client_id", .int), ("clinic_id", .int), ("department_id", .int),
                                   ("doctor_id", .int), ("doctor_name", .text), ("starts_at", .instant), ("ends_at", .instant),
                                   ("status", .text), ("notes", .text), ("created_at", .instant), ("updated_at", .instant),
                                   ("visit_type_id", .int)]),
            table("appointment_events", [("id", .int), ("appointment_id", .int), ("event", .text), ("actor", .text),
                                         ("at", .instant), ("starts_at", .instant), ("doctor_id", .int), ("reason", .text),
                                         ("staff_id", .int)]),
            table("audit_events", [("id", .int), ("at", .instant), ("actor", .text), ("staff_id", .int), ("role", .text),
                                   ("clinic_id", .int), ("action", .text), ("client_id", .int), ("appointment_id", .int),
                                   ("request_id", .text), ("detail", .text), ("hash", .text)]),
            table("audit_head", identity: false, [("id", .int), ("last_id", .int), ("hash", .text)]),
            table("email_confirmations", identity: false, orderBy: "client_id",
                  [("client_id", .int), ("code_hash", .text), ("expires_at", .instant), ("attempts", .int)]),
            table("calendar_feeds", identity: false, orderBy: "client_id",
                  [("client_id", .int), ("token_hash", .text), ("token_sealed", .blob), ("created_at", .instant)]),
            table("patient_search", identity: false, orderBy: "client_id, token", [("token", .blob), ("client_id", .int)]),
            table("walk_ins", identity: false, orderBy: "client_id",
                  [("client_id", .int), ("clinic_id", .int), ("staff_id", .int), ("created_at", .instant)]),
            table("claim_codes", identity: false, orderBy: "client_id",
                  [("client_id", .int), ("code_hash", .text), ("expires_at", .instant)]),
            table("messages", [("id", .int), ("client_id", .int), ("kind", .text), ("appointment_id", .int),
                               ("clinic_id", .int), ("staff_id", .int), ("subject", .text), ("body", .text),
                               ("created_at", .instant), ("read_at", .instant), ("dedupe_key", .text)]),
            table("deliveries", [("id", .int), ("client_id", .int), ("message_id", .int), ("purpose", .text),
                                 ("payload", .blob), ("created_at", .instant), ("next_attempt_at", .instant),
                                 ("attempts", .int), ("state", .text), ("sent_at", .instant), ("reply", .text),
                                 ("last_error", .text), ("report", .text), ("reported_at", .instant)]),
            table("phones", identity: false, orderBy: "client_id",
                  [("client_id", .int), ("number_sealed", .blob), ("number_key", .text), ("confirmed", .bool), ("code_hash", .text),
                   ("code_expires_at", .instant), ("code_attempts", .int), ("code_sent_at", .instant),
                   ("text_reminders", .bool), ("text_offers", .bool), ("stopped", .bool), ("updated_at", .instant)]),
            table("slot_holds", [("id", .int), ("client_id", .int), ("clinic_id", .int), ("department_id", .int),
                                 ("doctor_id", .int), ("visit_type_id", .int), ("starts_at", .instant), ("ends_at", .instant),
                                 ("expires_at", .instant), ("created_at", .instant), ("for_offer", .bool)]),
            table("waitlist_entries", [("id", .int), ("client_id", .int), ("clinic_id", .int), ("department_id", .int),
                                       ("doctor_id", .int), ("visit_type_id", .int), ("first_day", .text), ("last_day", .text),
                                       ("from_minute", .int), ("to_minute", .int), ("weekdays", .int),
                                       ("before_appointment_id", .int), ("priority", .int), ("staff_id", .int), ("status", .text),
                                       ("created_at", .instant), ("updated_at", .instant), ("note", .blob), ("lapses", .int),
                                       ("queued_at", .instant)]),
            table("waitlist_offers", [("id", .int), ("entry_id", .int), ("client_id", .int), ("hold_id", .int), ("clinic_id", .int),
                                      ("department_id", .int), ("doctor_id", .int), ("starts_at", .instant), ("ends_at", .instant),
                                      ("expires_at", .instant), ("status", .text), ("appointment_id", .int),
                                      ("created_at", .instant), ("closed_at", .instant), ("link_hash", .text),
                                      ("link_used_at", .instant)]),
            table("waitlist_freed", [("id", .int), ("department_id", .int), ("doctor_id", .int), ("starts_at", .instant),
                                     ("ends_at", .instant), ("freed_at", .instant)]),
            table("attachments", [("id", .int), ("appointment_id", .int), ("client_id", .int), ("author", .text),
                                  ("staff_id", .int), ("content_type", .text), ("size", .int), ("width", .int), ("height", .int),
                                  ("thumbnail_size", .int), ("chunk_size", .int), ("meta", .blob), ("created_at", .instant),
                                  ("file_key", .blob)]),
            table("attachment_chunks", [("id", .int), ("attachment_id", .int), ("part", .int), ("idx", .int), ("data", .blob)]),
            table("threads", identity: false, orderBy: "appointment_id",
                  [("appointment_id", .int), ("client_id", .int), ("clinic_id", .int), ("state", .text), ("patient_unread", .int),
                   ("staff_unread", .int), ("last_at", .instant)]),
            table("thread_messages", [("id", .int), ("appointment_id", .int), ("author", .text), ("staff_id", .int),
                                      ("body", .blob), ("attachment_id", .int), ("created_at", .instant)]),
        ]
    }()

    /// Bound values per SQLite statement: SQLite takes at least 32,766 (3.32 on).
    static let sqliteBindsPerStatement = 30_000

    // MARK: SQLite → PostgreSQL

    /// Copies the SQLite database `source` into `target`, which must be at the latest of
    /// `migrations` and empty. Returns the rows per table.
    public static func sqliteToPostgres(source: SQLiteStore, target: PostgresStore,
                                        migrations: [Migration]) async throws -> [TableCount] {
        let snapshot = try await PostgresStore.offCooperativePool { try StoreCopy.readSQLite(source) }
        let (current, latest) = try await target.schemaStatus(migrations)
        guard current == latest else {
            throw ClinicError(.storage, .copyTargetNotMigrated, target.url.redacted, String(current), String(latest))
        }
        let description = target.url.redacted
        return try await target.transaction(attempts: 1) { connection, logger in
            try await StoreCopy.writePostgres(snapshot, connection: connection, logger: logger, target: description)
        }
    }

    /// Every table in one read transaction of `source` (at the latest SQLite schema).
    static func readSQLite(_ source: SQLiteStore) throws -> Snapshot {
        let (current, latest) = try source.schemaStatus()
        guard current == latest else {
            throw ClinicError(.storage, .copySourceNotMigrated, source.path ?? "memory", String(current), String(latest))
        }
        return try source.read { db in
            var snapshot = Snapshot()
            for table in tables {
                let present = try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table.name])
                    .compactMap { $0[0] as String? }
                try checkColumns(table, present, store: "SQLite")
                let sql = "SELECT " + table.columns.map(\.name).joined(separator: ", ") + " FROM " + table.name
                    + " ORDER BY " + table.orderBy
                var rows: [[Value]] = []
                let cursor = try Row.fetchCursor(db, sql: sql)
                while let row = try cursor.next() {
                    var values: [Value] = []
                    values.reserveCapacity(table.columns.count)
                    for (index, column) in table.columns.enumerated() {
                        values.append(try value(row[index] as DatabaseValue, column, table, rowNumber: rows.count + 1))
                    }
                    rows.append(values)
                }
                snapshot.tables.append(TableRows(table: table, rows: rows))
            }
            snapshot.directoryVersion = try Int64.fetchOne(db, sql: "SELECT version FROM directory_version WHERE id = 1") ?? 0
            for row in try Row.fetchAll(db, sql: "SELECT name, seq FROM sqlite_sequence") {
                if let name: String = row[0], let seq: Int64 = row[1] { snapshot.sequences[name] = seq }
            }
            for rows in snapshot.tables where rows.table.identity {
                let highest = rows.rows.compactMap(StoreCopy.id).max() ?? 0
                snapshot.sequences[rows.table.name] = max(snapshot.sequences[rows.table.name] ?? 0, highest)
            }
            return snapshot
        }
    }

    /// A PostgreSQL cell (the select casts each kind to bigint, double precision, text or
    /// bytea). The binary forms are read directly: postgres-nio's generic decoding per cell was
    /// most of a copy's time; any other form goes through it.
    static func value(_ cell: PostgresCell, _ kind: Kind) throws -> Value {
        guard var bytes = cell.bytes else { return .null }
        if cell.format == .binary {
            switch (kind, cell.dataType) {
            case (.int, .int8), (.bool, .int8), (.instant, .int8):
                if bytes.readableBytes == 8, let number = bytes.readInteger(as: Int64.self) { return .int(number) }
            case (.real, .float8):
                if bytes.readableBytes == 8, let bits = bytes.readInteger(as: UInt64.self) { return .real(Double(bitPattern: bits)) }
            case (.text, .text), (.day, .text):
                if let text = bytes.readString(length: bytes.readableBytes) { return .text(text) }
            case (.blob, .bytea):
                return .blob(Data(bytes.readableBytesView))
            default:
                break
            }
        }
        switch kind {
        case .int, .bool, .instant: return try cell.decode(Int64?.self).map(Value.int) ?? .null
        case .real: return try cell.decode(Double?.self).map(Value.real) ?? .null
        case .text, .day: return try cell.decode(String?.self).map(Value.text) ?? .null
        case .blob: return try cell.decode(ByteBuffer?.self).map { Value.blob(Data($0.readableBytesView)) } ?? .null
        }
    }

    /// A row's id (its first column), when it is one.
    static func id(_ row: [Value]) -> Int64? {
        if case .int(let id)? = row.first { return id }
        return nil
    }

    /// A SQLite value checked against its column's kind.
    static func value(_ stored: DatabaseValue, _ column: Column, _ table: Table, rowNumber: Int) throws -> Value {
        switch (stored.storage, column.kind) {
        case (.null, _): return .null
        case (.int64(let number), .int), (.int64(let number), .instant): return .int(number)
        case (.int64(let number), .bool) where number == 0 || number == 1: return .int(number)
        case (.double(let number), .real): return .real(number)
        case (.int64(let number), .real): return .real(Double(number))
        case (.string(let text), .text): return .text(text)
        case (.string(let text), .day) where isDay(text): return .text(text)
        case (.blob(let data), .blob): return .blob(data)
        default:
            throw ClinicError(.storage, .storedValueUnreadable, table.name + "." + column.name, String(rowNumber))
        }
    }

    /// A real day 'YYYY-MM-DD' (not 2026-02-30), as PostgreSQL's date reads it back.
    static func isDay(_ text: String) -> Bool {
        (try? TimeInput.parseDay(text))?.dayText == text
    }

    /// A store's table has exactly the columns this copy knows, or the copy is refused.
    static func checkColumns(_ table: Table, _ present: [String], store: String) throws {
        guard Set(present) == Set(table.columns.map(\.name)) else {
            throw ClinicError(.storage, .copySchemaDiffers, store, table.name)
        }
    }

    /// Into the target's open transaction: refuse a target with rows, insert every table, move
    /// the sequences and the directory version on, compare the counts.
    static func writePostgres(_ snapshot: Snapshot, connection: PostgresConnection, logger: Logger,
                              target: String) async throws -> [TableCount] {
        // Nobody else writes these tables until COMMIT: the emptiness checked holds.
        let names = tables.map(\.name) + ["directory_version"]
        try await connection.query(PostgresQuery(unsafeSQL: "LOCK TABLE " + names.joined(separator: ", ")
            + " IN SHARE ROW EXCLUSIVE MODE"), logger: logger)
        for table in tables {
            let columns = try await connection.query(
                "SELECT column_name::text FROM information_schema.columns WHERE table_schema = current_schema() AND table_name::text = \(table.name)",
                logger: logger).collect().map { try $0.decode(String.self) }
            try checkColumns(table, columns, store: "PostgreSQL")
            // The empty chain's head row (Migrations/postgres/0002) is the schema's, not a row of data.
            let rowsOfData = table.name == "audit_head" ? "SELECT 1 FROM audit_head WHERE " + notEmptyAuditHead
                                                        : "SELECT 1 FROM \(table.name)"
            let hasRows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT EXISTS (\(rowsOfData))"),
                                                     logger: logger).collect().first?.decode(Bool.self) ?? false
            if hasRows { throw ClinicError(.storeNotEmpty, .copyTargetNotEmpty, target, table.name) }
        }
        // The source's head (if it has one) replaces it; an empty chain's is put back at the end.
        try await connection.query("DELETE FROM audit_head", logger: logger)
        var counts: [TableCount] = []
        for rows in snapshot.tables {
            let table = rows.table
            if !rows.rows.isEmpty {
                do {
                    // COPY FROM STDIN in the text format: the bulk path, one stream per table.
                    // COPY writes the given ids into identity columns (as OVERRIDING SYSTEM VALUE does).
                    try await connection.copyFrom(table: table.name, columns: table.columns.map(\.name), logger: logger) { writer in
                        var buffer = ByteBuffer()
                        buffer.reserveCapacity(copyChunkBytes + 4096)
                        for row in rows.rows {
                            try copyLine(row, table, into: &buffer)
                            if buffer.readableBytes >= copyChunkBytes {
                                try await writer.write(buffer)
                                buffer.clear()
                            }
                        }
                        if buffer.readableBytes > 0 { try await writer.write(buffer) }
                    }
                } catch let error as PSQLError {
                    // Which table, and the SQLSTATE and constraint: never the server's text (it may quote a row).
                    let state = error.serverInfo?[.sqlState] ?? "?"
                    let constraint = error.serverInfo?[.constraintName] ?? "-"
                    throw ClinicError(.storage, .copyRowRefused, table.name, state + " " + constraint)
                }
            }
            counts.append(TableCount(table: table.name, rows: rows.rows.count))
        }
        for table in tables where table.identity {
            let highest = snapshot.sequences[table.name] ?? 0
            // setval(…, 1, false): the next id is 1, as in a new table.
            try await connection.query("""
                SELECT setval(pg_get_serial_sequence(\(table.name), 'id'), \(max(highest, 1)), \(highest > 0))
                """, logger: logger)
        }
        try await connection.query("UPDATE directory_version SET version = GREATEST(version, \(snapshot.directoryVersion)) WHERE id = 1",
                                   logger: logger)
        for count in counts {
            let found = try await connection.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(count.table)"),
                                                   logger: logger).collect().first?.decode(Int64.self) ?? -1
            guard found == Int64(count.rows) else {
                throw ClinicError(.storage, .copyCountMismatch, count.table, String(count.rows), String(found))
            }
        }
        // A source without an audit trail yet: the empty chain's head row, as migration 0002 made it.
        try await connection.query(PostgresQuery(unsafeSQL: """
            INSERT INTO audit_head (id, last_id, hash) SELECT 1, 0, repeat('0', 64) WHERE NOT EXISTS (SELECT 1 FROM audit_events)
            ON CONFLICT (id) DO NOTHING
            """), logger: logger)
        return counts
    }

    /// The condition on `audit_head` of a head that is not the empty chain's (migration 0002's
    /// row: last id 0, the genesis hash), which is no row of data in either direction.
    static let notEmptyAuditHead = "NOT (last_id = 0 AND hash = repeat('0', 64))"

    /// Bytes sent to the server at a time during a COPY.
    static let copyChunkBytes = 1 << 20

    /// One row in COPY's text format: tab between columns, `\N` for NULL, a newline at the end.
    static func copyLine(_ row: [Value], _ table: Table, into buffer: inout ByteBuffer) throws {
        for (index, (value, column)) in zip(row, table.columns).enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
            switch (value, column.kind) {
            case (.null, _):
                buffer.writeStaticString("\\N")
            case (.int(let number), .bool):
                buffer.writeInteger(number != 0 ? UInt8(ascii: "t") : UInt8(ascii: "f"))
            case (.int(let number), .instant):
                guard let text = isoInstant(number) else {
                    throw ClinicError(.storage, .storedValueUnreadable, table.name + "." + column.name, String(number))
                }
                buffer.writeString(text)
            case (.int(let number), _):
                buffer.writeString(String(number))
            case (.real(let number), _):
                guard number.isFinite else {
                    throw ClinicError(.storage, .storedValueUnreadable, table.name + "." + column.name, String(number))
                }
                buffer.writeString(String(number))
            case (.text(let text), _):
                for byte in text.utf8 {
                    switch byte {
                    case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                    case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                    case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                    case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                    default: buffer.writeInteger(byte)
                    }
                }
            case (.blob(let data), _):
                // bytea's hex form, its backslash doubled for COPY.
                buffer.writeStaticString("\\\\x")
                let digits: [UInt8] = Array("0123456789abcdef".utf8)
                for byte in data {
                    buffer.writeInteger(digits[Int(byte >> 4)])
                    buffer.writeInteger(digits[Int(byte & 0x0f)])
                }
            }
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    /// UTC seconds since 1970 as `YYYY-MM-DD HH:MM:SS+00` (years 1 to 9999), computed with
    /// the proleptic Gregorian calendar as PostgreSQL reads it; nil outside those years.
    static func isoInstant(_ seconds: Int64) -> String? {
        let (days, second) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (dayNumber, secondOfDay) = second < 0 ? (days - 1, second + 86_400) : (days, second)
        let date = LocalDateTime(daysSinceEpoch: dayNumber, minuteOfDay: 0)
        guard (1...9999).contains(date.year) else { return nil }
        func two(_ value: Int64) -> String { value < 10 ? "0" + String(value) : String(value) }
        return date.dayText + " " + two(secondOfDay / 3600) + ":" + two(secondOfDay / 60 % 60) + ":" + two(secondOfDay % 60) + "+00"
    }

}
