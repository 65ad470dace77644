import ClinicKit
import Foundation
import GRDB

/// A GRDB row as a row of ClinicKit's own (`StoredRow`), read in place: each cell is converted
/// when asked for, so a model reads its columns straight from GRDB's statement row.
struct SQLiteRow: StoredRow {
    let row: GRDB.Row

    init(_ row: GRDB.Row) { self.row = row }

    func cell(_ column: String) -> StoredCell? {
        guard row.hasColumn(column) else { return nil }
        return Self.cell((try? row.decode(DatabaseValue.self, forColumn: column)) ?? .null)
    }

    static func cell(_ value: DatabaseValue) -> StoredCell {
        switch value.storage {
        case .null: .null
        case .int64(let number): .integer(number)
        case .double(let number): .real(number)
        case .string(let text): .text(text)
        case .blob(let data): .blob(data)
        }
    }
}

/// A GRDB row is a row of ClinicKit's own too: this store's reads of rows that are no model
/// (sessions, settings, the audit trail …) use the same throwing reads as the models
/// (`StoredRow.value(_:in:)`: GRDB's subscripts trap the whole process on a value of another
/// type than the schema says; these answer `stored_value_unreadable`).
extension GRDB.Row: StoredRow {
    public func cell(_ column: String) -> StoredCell? { SQLiteRow(self).cell(column) }

    /// The value at `index` of a row whose columns are read by position; `column` names it in the message.
    func value<Value: StoredCellValue>(atIndex index: Int, _ column: String, in table: String, key: String = "id") throws -> Value {
        let cell = SQLiteRow.cell((try? decode(DatabaseValue.self, atIndex: index)) ?? .null)
        if cell.isNull, let null = Value.nullValue { return null }
        guard let value = Value(storedCell: cell) else { throw unreadable(column, in: table, key: key) }
        return value
    }
}
