import Foundation
import GRDB

/// Throwing reads of stored values. GRDB's subscripts (`row["at"] as Int64`) trap the whole
/// process when a stored value has another type than the schema says (text where a number
/// belongs: a file edited by hand, damaged, or written by something else). These read through
/// `Row.decode(_:forColumn:)` instead and turn a value that cannot be read into a
/// `ClinicError` (`storage_error`) naming the table, the column and the row, so that a
/// command reports it and the server answers 500 and goes on. Good values read exactly as
/// through the subscripts (a missing column is nil for an optional, as there).
extension Row {
    /// The value of `column` of a row of `table`; `key` names the column that identifies the row
    /// in the message (`id` unless the table is keyed otherwise).
    public func value<Value: DatabaseValueConvertible>(_ column: String, in table: String, key: String = "id") throws -> Value {
        do {
            return try decode(Value.self, forColumn: column)
        } catch {
            throw unreadable(column, in: table, key: key)
        }
    }

    /// The value at `index` of a row whose columns are read by position; `column` names it in the message.
    func value<Value: DatabaseValueConvertible>(atIndex index: Int, _ column: String, in table: String,
                                                key: String = "id") throws -> Value {
        do {
            return try decode(Value.self, atIndex: index)
        } catch {
            throw unreadable(column, in: table, key: key)
        }
    }

    /// An instant stored as whole UTC seconds since 1970.
    public func instant(_ column: String, in table: String, key: String = "id") throws -> Date {
        Date(seconds: try value(column, in: table, key: key) as Int64)
    }

    /// An instant stored as whole UTC seconds since 1970, or NULL.
    public func optionalInstant(_ column: String, in table: String, key: String = "id") throws -> Date? {
        (try value(column, in: table, key: key) as Int64?).map(Date.init(seconds:))
    }

    /// The error for a value of `column` that cannot be read. The row is named by its key as
    /// SQLite holds it (`12`, `"x"`), never by the unreadable value (it may be personal).
    func unreadable(_ column: String, in table: String, key: String = "id") -> ClinicError {
        let row = hasColumn(key) ? "\(key) \((self[key] as DatabaseValue).description)" : "?"
        return ClinicError(.storage, .storedValueUnreadable, "\(table).\(column)", row)
    }
}
