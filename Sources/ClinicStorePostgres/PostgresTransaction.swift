import ClinicKit
import Foundation
import NIOCore
import PostgresNIO

/// The PostgreSQL store's transaction: the storage seam's operations (docs/ARCHITECTURE.md,
/// "The storage seam") as SQL on one leased connection, one file per area
/// (`PostgresTransaction+Area.swift`). Made only by `PostgresStore.reading` / `writing`, on the
/// caller's thread (never an event loop: `blockingTransaction` refuses one).
///
/// Rows come back as ClinicKit's own rows (`StoredRowValues`) in the form SQLite stores them (instants as whole UTC
/// seconds, flags as integers, days as 'YYYY-MM-DD' text), so each model decodes through the
/// one `init(row:)` it has, whatever the store: the mapping of a table to its model is written
/// once.
///
/// Isolation: a read transaction is `REPEATABLE READ READ ONLY` (one snapshot, as SQLite's
/// reads). A write transaction is `READ COMMITTED`; what must hold across servers holds by the
/// constraints and locks each operation documents (exclusion constraints against double
/// booking, `FOR UPDATE` on the audit head, an atomic upsert per log-in attempt, advisory locks
/// for idempotency keys and a patient's active-appointment count, `SKIP LOCKED` claims of mail).
struct PostgresTransaction {
    let connection: BlockingConnection
    let store: PostgresStore
    /// Whether this is a write transaction (locks are taken only in one).
    let isWrite: Bool
    /// Set by a write that ends or changes a signed-in session (`noteSessionsChanged`).
    var sessionsChanged: Flag? = nil
    /// Set by a write to the directory's tables (`send`).
    var directoryChanged: Flag? = nil
    /// The stored personal-data key check once this transaction has read it (`personalDataKeyCheck`).
    let keyCheck = LockedBox<String??>(nil)

    var personalDataKey: PersonalDataKey? { store.personalDataKey }

    /// A write of this transaction ends or changes a signed-in session: the sessions this
    /// store keeps are forgotten now and once it has committed (PostgresStore+KeptLookups.swift;
    /// other servers hear the database's notice).
    func noteSessionsChanged() {
        sessionsChanged?.set()
        store.keptLookups.forgetSessions()
    }

    // MARK: Statements

    /// Runs one statement; returns the rows it changed (or returned).
    @discardableResult
    func execute(_ sql: String, _ binds: [any PostgresBindable] = []) throws -> Int {
        let result = try send(sql, binds)
        return result.metadata.rows ?? result.rows.count
    }

    /// Every row, each as ClinicKit's row keyed by column name (see the type).
    func rows(_ sql: String, _ binds: [any PostgresBindable] = []) throws -> [StoredRowValues] {
        try send(sql, binds).rows.map(Self.row)
    }

    /// The first row, if any.
    func row(_ sql: String, _ binds: [any PostgresBindable] = []) throws -> StoredRowValues? {
        try send(sql, binds).rows.first.map(Self.row)
    }

    /// The first column of the first row (nil for no row or NULL).
    func value<T: StoredCellValue>(_ type: T.Type, _ sql: String, _ binds: [any PostgresBindable] = []) throws -> T? {
        guard let first = try send(sql, binds).rows.first else { return nil }
        return try Self.first(first, as: T.self)
    }

    /// The first column of every row (NULLs left out).
    func values<T: StoredCellValue>(_ type: T.Type, _ sql: String, _ binds: [any PostgresBindable] = []) throws -> [T] {
        try send(sql, binds).rows.compactMap { try Self.first($0, as: T.self) }
    }

    /// One statement on the connection. A write to the tables a nearest search's kept facts
    /// come from is noted (`directoryChanged`): this store forgets them when it commits,
    /// without waiting for the database's notice.
    private func send(_ sql: String, _ binds: [any PostgresBindable]) throws -> PostgresQueryResult {
        if isWrite, let directoryChanged, Self.writesDirectory(sql) {
            directoryChanged.set()
            store.keptLookups.heard(notice: "d")
        }
        return try connection.query(Self.query(sql, binds))
    }

    /// Whether a statement writes clinics, departments, doctors or weekly hours.
    static func writesDirectory(_ sql: String) -> Bool {
        ["clinics", "departments", "doctors", "working_hours"].contains { table in
            sql.contains("INSERT INTO " + table) || sql.contains("UPDATE " + table) || sql.contains("DELETE FROM " + table)
        }
    }

    // The hot paths' statements, prepared once per connection (PostgresHotStatements.swift).

    /// `rows`, of a prepared statement.
    func rows(_ statement: some HotStatement) throws -> [StoredRowValues] {
        try connection.prepared(statement).map(Self.row)
    }

    /// `row`, of a prepared statement.
    func row(_ statement: some HotStatement) throws -> StoredRowValues? {
        try connection.prepared(statement).first.map(Self.row)
    }

    /// `value`, of a prepared statement.
    func value<T: StoredCellValue>(_ type: T.Type, _ statement: some HotStatement) throws -> T? {
        guard let first = try connection.prepared(statement).first else { return nil }
        return try Self.first(first, as: T.self)
    }

    static func query(_ sql: String, _ binds: [any PostgresBindable]) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds { bind.bind(into: &bindings) }
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    static func first<T: StoredCellValue>(_ row: PostgresRow, as type: T.Type) throws -> T? {
        var cells = row.makeIterator()
        guard let cell = cells.next() else { return nil }
        let value = try storedCell(cell)
        if value.isNull { return nil }
        guard let converted = T(storedCell: value) else {
            throw ClinicError(.storage, .storedValueUnreadable, cell.columnName, "?")
        }
        return converted
    }

    // MARK: Rows in SQLite's form

    /// Seconds from 1970 to PostgreSQL's epoch, 2000-01-01 00:00 UTC.
    static let postgresEpoch: Int64 = 946_684_800

    static func row(_ row: PostgresRow) throws -> StoredRowValues {
        var cells: [String: StoredCell] = [:]
        for cell in row { cells[cell.columnName] = try storedCell(cell) }
        return StoredRowValues(cells)
    }

    /// A cell as SQLite would hold it: integers and flags Int64, instants whole seconds since
    /// 1970 (rounded down), days 'YYYY-MM-DD', bytea a blob.
    static func storedCell(_ cell: PostgresCell) throws -> StoredCell {
        guard var bytes = cell.bytes else { return .null }
        if cell.format == .binary {
            switch cell.dataType {
            case .int8 where bytes.readableBytes == 8:
                if let number = bytes.readInteger(as: Int64.self) { return .integer(number) }
            case .int4 where bytes.readableBytes == 4:
                if let number = bytes.readInteger(as: Int32.self) { return .integer(Int64(number)) }
            case .int2 where bytes.readableBytes == 2:
                if let number = bytes.readInteger(as: Int16.self) { return .integer(Int64(number)) }
            case .bool where bytes.readableBytes == 1:
                if let flag = bytes.readInteger(as: UInt8.self) { return .integer(Int64(flag == 0 ? 0 : 1)) }
            case .float8 where bytes.readableBytes == 8:
                if let bits = bytes.readInteger(as: UInt64.self) { return .real(Double(bitPattern: bits)) }
            case .float4 where bytes.readableBytes == 4:
                if let bits = bytes.readInteger(as: UInt32.self) { return .real(Double(Float(bitPattern: bits))) }
            case .text, .varchar, .name, .bpchar:
                if let text = bytes.readString(length: bytes.readableBytes) { return .text(text) }
            case .bytea:
                return .blob(Data(bytes.readableBytesView))
            case .timestamptz where bytes.readableBytes == 8, .timestamp where bytes.readableBytes == 8:
                if let micros = bytes.readInteger(as: Int64.self) {
                    // ±infinity (an operator's UPDATE): PostgreSQL's word, which no instant reader
                    // takes (`stored_value_unreadable`), never an overflow.
                    if micros == .max || micros == .min { return .text(micros == .max ? "infinity" : "-infinity") }
                    let (quotient, remainder) = micros.quotientAndRemainder(dividingBy: 1_000_000)
                    return .integer(quotient - (remainder < 0 ? 1 : 0) + postgresEpoch)
                }
            case .date where bytes.readableBytes == 4:
                if let days = bytes.readInteger(as: Int32.self) {
                    if days == .max || days == .min { return .text(days == .max ? "infinity" : "-infinity") }
                    return .text(day(daysSince2000: Int64(days)))
                }
            default:
                break
            }
        }
        // Any other type or form: as PostgreSQL's text for it.
        return .text(try cell.decode(String.self))
    }

    /// 'YYYY-MM-DD' of a day counted from 2000-01-01 (PostgreSQL's binary date).
    static func day(daysSince2000 days: Int64) -> String {
        LocalDateTime(daysSinceEpoch: days + postgresEpoch / 86_400, minuteOfDay: 0).dayText
    }
}

// MARK: Binding values

/// A LIMIT's bind: SQLite reads a negative LIMIT as none, PostgreSQL refuses it; NULL is none.
func limitBind(_ limit: Int) -> Int? {
    limit < 0 ? nil : limit
}

/// A value a statement's `$n` takes. Instants are bound rounded down to the whole second (the
/// seam's contract: a store keeps whole UTC seconds). A day ('YYYY-MM-DD') is bound as text:
/// write `$n::date` in SQL. `dataType` is the PostgreSQL type the value is bound as (a prepared
/// statement declares its parameters with it, `HotStatement`).
protocol PostgresBindable: Sendable {
    func bind(into bindings: inout PostgresBindings)
    static var dataType: PostgresDataType { get }
}

extension Int64: PostgresBindable {
    func bind(into bindings: inout PostgresBindings) { bindings.append(self) }
    static var dataType: PostgresDataType { .int8 }
}

extension Int: PostgresBindable {
    func bind(into bindings: inout PostgresBindings) { bindings.append(Int64(self)) }
    static var dataType: PostgresDataType { .int8 }
}

extension String: PostgresBindable {
    func bind(into bindings: inout PostgresBindings) { bindings.append(self) }
    static var dataType: PostgresDataType { .text }
}

extension Double: PostgresBindable {
    func bind(into bindings: inout PostgresBindings) { bindings.append(self) }
    static var dataType: PostgresDataType { .float8 }
}

extension Bool: PostgresBindable {
    func bind(into bindings: inout PostgresBindings) { bindings.append(self) }
    static var dataType: PostgresDataType { .bool }
}

extension Data: PostgresBindable {
    // As a ByteBuffer (bytea): postgres-nio's own encoding of Data is declared throwing.
    func bind(into bindings: inout PostgresBindings) { bindings.append(ByteBuffer(bytes: self)) }
    static var dataType: PostgresDataType { .bytea }
}

extension Date: PostgresBindable {
    func bind(into bindings: inout PostgresBindings) {
        bindings.append(Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)))
    }
    static var dataType: PostgresDataType { .timestamptz }
}

extension Array: PostgresBindable where Element == String {
    func bind(into bindings: inout PostgresBindings) { bindings.append(self) }
    static var dataType: PostgresDataType { .textArray }
}

extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    func bind(into bindings: inout PostgresBindings) {
        switch self {
        case .some(let value): value.bind(into: &bindings)
        case .none: bindings.appendNull()
        }
    }
    static var dataType: PostgresDataType { Wrapped.dataType }
}

// MARK: The store's transactions

extension PostgresStore {
    /// A read transaction on this thread (see the type for its isolation).
    func readTransaction<T>(_ body: (PostgresTransaction) throws -> T) throws -> T {
        try blockingTransaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
            try body(PostgresTransaction(connection: connection, store: self, isWrite: false))
        }
    }

    /// A write transaction on this thread.
    func writeTransaction<T>(_ body: (PostgresTransaction) throws -> T) throws -> T {
        let sessionsChanged = Flag(), directoryChanged = Flag()
        // Forgotten after the commit too: a look-up here may have read (and kept) the row
        // between the write and the commit.
        defer {
            if sessionsChanged.isSet { keptLookups.forgetSessions() }
            if directoryChanged.isSet { keptLookups.heard(notice: "d") }
        }
        return try blockingTransaction(begin: "BEGIN ISOLATION LEVEL READ COMMITTED") { connection in
            try body(PostgresTransaction(connection: connection, store: self, isWrite: true, sessionsChanged: sessionsChanged,
                                         directoryChanged: directoryChanged))
        }
    }
}

// MARK: Keys

extension PostgresStore {
    /// The audit key for appending (the seam's `auditKeyForAppending`): the shared key file
    /// (`PostgresStoreKeys`), made on the trail's first row.
    func auditKeyForAppending(_ tx: PostgresTransaction) throws -> AuditKey {
        try auditKeys.forAppending(tx)
    }
}
