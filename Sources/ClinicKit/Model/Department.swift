import Foundation
import GRDB

public struct Department: Hashable, Sendable, StoredRecord {
    public static let databaseTableName = "departments"

    public var id: Int64?
    public var clinicId: Int64
    /// Specialization key, lower-case English ("cardiology"); see `Specialization`.
    public var specialization: String
    /// Generated demo data rather than a real directory entry.
    public var isDemo: Bool

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

}

public struct Doctor: Hashable, Sendable, StoredRecord {
    public static let databaseTableName = "doctors"

    public var id: Int64?
    public var departmentId: Int64
    public var name: String
    public var isDemo: Bool
    /// False once deactivated by a clinic admin (migration 12).
    public var isActive = true

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

}

/// One working interval of a doctor on one weekday, in the clinic's local time.
public struct WorkingHours: Hashable, Sendable, StoredRecord {
    public static let databaseTableName = "working_hours"

    public var id: Int64?
    public var doctorId: Int64
    /// ISO weekday: 1 = Monday … 7 = Sunday.
    public var weekday: Int
    /// Minutes after local midnight.
    public var startMinute: Int
    public var endMinute: Int
    public var slotMinutes: Int

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
