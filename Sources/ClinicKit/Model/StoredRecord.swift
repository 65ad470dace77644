import Foundation
import GRDB

/// How every model maps to its table: snake_case columns, and instants as whole UTC seconds
/// since 1970 (INTEGER), so that the unique indexes and range queries on them compare numbers.
public protocol StoredRecord: Codable, FetchableRecord, MutablePersistableRecord {}

extension StoredRecord {
    public static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { .convertToSnakeCase }

    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .secondsSince1970
    }

    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSince1970
    }
}
