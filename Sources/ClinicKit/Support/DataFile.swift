import CSQLite
import Foundation

/// A read-only SQLite file of Data/ (the gazetteer, the zone boundaries), read through SQLite's
/// C library. These files are not a store: they ship with the program, are never written, and
/// are read by ClinicKit's own geography (`Gazetteer`, `ZoneFinder`), so they need none of a
/// store's machinery (transactions, migrations, the seam), only statements and rows of
/// ClinicKit's own (`StoredRowValues`). One connection per file, one statement at a time (a
/// lock), each statement prepared once and kept.
final class DataFile: @unchecked Sendable {
    let path: String
    private let connection: OpaquePointer
    private let lock = NSLock()
    private var statements: [String: OpaquePointer] = [:]

    /// Opens the file read-only; a file that is missing or is not SQLite's is `gazetteerMissing`.
    init(path: String) throws {
        self.path = path
        guard FileManager.default.isReadableFile(atPath: path) else { throw ClinicError(.storage, .gazetteerMissing, path) }
        var handle: OpaquePointer?
        let status = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close_v2(handle)
            throw ClinicError(.storage, .gazetteerMissing, path + " (" + message + ")")
        }
        connection = handle
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(connection)
    }

    /// Every row of a statement, with `arguments` bound to its `?` in order.
    func rows(_ sql: String, _ arguments: [any DataFileArgument] = []) throws -> [StoredRowValues] {
        lock.lock()
        defer { lock.unlock() }
        let statement = try prepared(sql)
        defer { sqlite3_reset(statement); sqlite3_clear_bindings(statement) }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let status: Int32
            switch argument.storedCell {
            case .null: status = sqlite3_bind_null(statement, position)
            case .integer(let value): status = sqlite3_bind_int64(statement, position, value)
            case .real(let value): status = sqlite3_bind_double(statement, position, value)
            case .text(let value): status = sqlite3_bind_text(statement, position, value, -1, Self.transient)
            case .blob(let value):
                status = value.withUnsafeBytes { bytes in
                    sqlite3_bind_blob(statement, position, bytes.baseAddress, Int32(bytes.count), Self.transient)
                }
            }
            guard status == SQLITE_OK else { throw failure() }
        }
        let columns = (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
        var rows: [StoredRowValues] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw failure() }
            var cells: [String: StoredCell] = [:]
            cells.reserveCapacity(columns.count)
            for (index, name) in columns.enumerated() {
                cells[name] = Self.cell(statement, Int32(index))
            }
            rows.append(StoredRowValues(cells))
        }
        return rows
    }

    /// The first row, if any.
    func row(_ sql: String, _ arguments: [any DataFileArgument] = []) throws -> StoredRowValues? {
        try rows(sql, arguments).first
    }

    /// Runs `body` with this file (the shape GRDB's `read` had: the statements inside are the
    /// file's).
    func read<T>(_ body: (DataFile) throws -> T) rethrows -> T { try body(self) }

    /// The first column of the first row, as `type`: nil for no row or NULL.
    func value<Value: StoredCellValue>(_ type: Value.Type, _ sql: String, _ arguments: [any DataFileArgument] = []) throws -> Value? {
        try values(type, sql, arguments).first
    }

    /// The first column of every row, as `type` (NULLs left out).
    func values<Value: StoredCellValue>(_ type: Value.Type, _ sql: String, _ arguments: [any DataFileArgument] = []) throws -> [Value] {
        try rows(sql, arguments).compactMap { row in
            guard let cell = row.cells.count == 1 ? row.cells.values.first : nil else { throw failure("one column expected") }
            if cell.isNull { return nil }
            guard let value = Value(storedCell: cell) else { throw failure("a value of another type than expected") }
            return value
        }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw failure() }
        statements[sql] = statement
        return statement
    }

    private static func cell(_ statement: OpaquePointer, _ index: Int32) -> StoredCell {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            return .text(String(cString: text))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }

    /// SQLite copies a bound value at once (SQLITE_TRANSIENT).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func failure(_ message: String? = nil) -> ClinicError {
        ClinicError(.storage, .gazetteerMissing, path + " (" + (message ?? String(cString: sqlite3_errmsg(connection))) + ")")
    }

    /// The value made from the file at `path`, made once per process.
    static func shared<T>(_ cache: LockedBox<[String: T]>, _ path: String, _ make: (String) throws -> T) throws -> T {
        try cache.withLock { values in
            if let value = values[path] { return value }
            guard FileManager.default.isReadableFile(atPath: path) else { throw ClinicError(.storage, .gazetteerMissing, path) }
            let value = try make(path)
            values[path] = value
            return value
        }
    }
}

/// A value bound to a data file's statement.
protocol DataFileArgument {
    var storedCell: StoredCell { get }
}

extension String: DataFileArgument { var storedCell: StoredCell { .text(self) } }
extension Int64: DataFileArgument { var storedCell: StoredCell { .integer(self) } }
extension Double: DataFileArgument { var storedCell: StoredCell { .real(self) } }
extension Optional: DataFileArgument where Wrapped: DataFileArgument {
    var storedCell: StoredCell { map(\.storedCell) ?? .null }
}
