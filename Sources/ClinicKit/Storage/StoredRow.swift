import Foundation

// Rows of ClinicKit's own (issue 43): what every store hands the domain, whatever its driver.
// A store turns its driver's row into a `StoredRow` (SQLite: a GRDB row read in place;
// PostgreSQL: its cells decoded into `StoredRowValues`), and each model's mapping from a row is
// written once, here in ClinicKit, against it (`Model/StoredRecord.swift`).
//
// Values come in SQLite's form, which is the seam's contract for every store: instants whole UTC
// seconds since 1970, flags integers, days 'YYYY-MM-DD' text, bytes a blob.

/// One stored value.
public enum StoredCell: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    public var isNull: Bool { if case .null = self { true } else { false } }

    /// How the value names a row in a message: a number as it is, text quoted (`12`, `"x"`).
    var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): String(reflecting: value)
        case .blob(let value): "Data(\(value.count) bytes)"
        }
    }
}

/// A row as a store gives it: its cells by column name.
public protocol StoredRow {
    /// The cell of `column`; nil when the row has no such column.
    func cell(_ column: String) -> StoredCell?
}

/// A row held as its cells (what the PostgreSQL store decodes its rows into; tests make them too).
public struct StoredRowValues: StoredRow, Sendable, Equatable {
    public var cells: [String: StoredCell]

    public init(_ cells: [String: StoredCell] = [:]) { self.cells = cells }

    public func cell(_ column: String) -> StoredCell? { cells[column] }
}

/// A Swift type a stored value reads as. The conversions are SQLite's (and GRDB's, which the
/// SQLite store used to read through): an integer column may hold a whole real, text and blob
/// convert into each other as UTF-8, a flag is any non-zero number.
public protocol StoredCellValue {
    /// The value of a cell; nil when the cell cannot be read as this type (NULL included).
    init?(storedCell cell: StoredCell)
    /// Whether NULL reads as a value of the type (an optional's nil).
    static var nullValue: Self? { get }
}

extension StoredCellValue {
    public static var nullValue: Self? { nil }
}

extension Int64: StoredCellValue {
    public init?(storedCell cell: StoredCell) {
        switch cell {
        case .integer(let value): self = value
        case .real(let value): guard let value = Int64(exactly: value) else { return nil }; self = value
        default: return nil
        }
    }
}

extension Int: StoredCellValue {
    public init?(storedCell cell: StoredCell) {
        guard let value = Int64(storedCell: cell), let int = Int(exactly: value) else { return nil }
        self = int
    }
}

extension Int32: StoredCellValue {
    public init?(storedCell cell: StoredCell) {
        guard let value = Int64(storedCell: cell), let int = Int32(exactly: value) else { return nil }
        self = int
    }
}

extension Double: StoredCellValue {
    public init?(storedCell cell: StoredCell) {
        switch cell {
        case .integer(let value): self = Double(value)
        case .real(let value): self = value
        default: return nil
        }
    }
}

extension Bool: StoredCellValue {
    public init?(storedCell cell: StoredCell) {
        switch cell {
        case .integer(let value): self = value != 0
        case .real(let value): self = value != 0
        default: return nil
        }
    }
}

extension String: StoredCellValue {
    public init?(storedCell cell: StoredCell) {
        switch cell {
        case .text(let value): self = value
        case .blob(let value): guard let text = String(data: value, encoding: .utf8) else { return nil }; self = text
        default: return nil
        }
    }
}

extension Data: StoredCellValue {
    public init?(storedCell cell: StoredCell) {
        switch cell {
        case .blob(let value): self = value
        case .text(let value): self = Data(value.utf8)
        default: return nil
        }
    }
}

extension Optional: StoredCellValue where Wrapped: StoredCellValue {
    public init?(storedCell cell: StoredCell) {
        if cell.isNull { self = .none; return }
        guard let value = Wrapped(storedCell: cell) else { return nil }
        self = .some(value)
    }

    public static var nullValue: Self? { .some(.none) }
}

/// Throwing reads of stored values: a value of another type than the schema says (text where a
/// number belongs: a file edited by hand, damaged, or written by something else) is a
/// `ClinicError` (`stored_value_unreadable`) naming the table, the column and the row, so that a
/// command reports it and the server answers 500 and goes on. A missing column reads as nil for
/// an optional.
extension StoredRow {
    public func hasColumn(_ column: String) -> Bool { cell(column) != nil }

    /// The value of `column` of a row of `table`; `key` names the column that identifies the row
    /// in the message (`id` unless the table is keyed otherwise).
    public func value<Value: StoredCellValue>(_ column: String, in table: String, key: String = "id") throws -> Value {
        guard let cell = cell(column) else {
            if let null = Value.nullValue { return null }
            throw unreadable(column, in: table, key: key)
        }
        if cell.isNull, let null = Value.nullValue { return null }
        guard let value = Value(storedCell: cell) else { throw unreadable(column, in: table, key: key) }
        return value
    }

    /// The value of `column` of a row that is no table's (a count, a join's column): one that
    /// cannot be read as `type` names the column.
    public func decode<Value: StoredCellValue>(_ type: Value.Type, forColumn column: String) throws -> Value {
        try value(column, in: "row", key: "id")
    }

    /// An instant stored as whole UTC seconds since 1970.
    public func instant(_ column: String, in table: String, key: String = "id") throws -> Date {
        Date(seconds: try value(column, in: table, key: key) as Int64)
    }

    /// An instant stored as whole UTC seconds since 1970, or NULL.
    public func optionalInstant(_ column: String, in table: String, key: String = "id") throws -> Date? {
        (try value(column, in: table, key: key) as Int64?).map(Date.init(seconds:))
    }

    /// The error for a value of `column` that cannot be read. The row is named by its key as the
    /// store holds it (`12`, `"x"`), never by the unreadable value (it may be personal).
    public func unreadable(_ column: String, in table: String, key: String = "id") -> ClinicError {
        let row = cell(key).map { "\(key) \($0.description)" } ?? "?"
        return ClinicError(.storage, .storedValueUnreadable, "\(table).\(column)", row)
    }
}

extension Date {
    /// An instant from whole UTC seconds since 1970 (how every store keeps one).
    public init(seconds: Int64) { self.init(timeIntervalSince1970: TimeInterval(seconds)) }
    /// Whole UTC seconds since 1970, rounded down.
    public var seconds: Int64 { Int64(timeIntervalSince1970.rounded(.down)) }
}
