import Foundation

public struct Department: Hashable, Sendable {

    public var id: Int64?
    public var clinicId: Int64
    /// Specialization key, lower-case English ("cardiology"); see `Specialization`.
    public var specialization: String
    /// Generated demo data rather than a real directory entry.
    public var isDemo: Bool


}

public struct Doctor: Hashable, Sendable {

    public var id: Int64?
    public var departmentId: Int64
    public var name: String
    public var isDemo: Bool
    /// False once deactivated by a clinic admin (migration 12).
    public var isActive = true


}

/// One working interval of a doctor on one weekday, in the clinic's local time.
public struct WorkingHours: Hashable, Sendable {

    public var id: Int64?
    public var doctorId: Int64
    /// ISO weekday: 1 = Monday … 7 = Sunday.
    public var weekday: Int
    /// Minutes after local midnight.
    public var startMinute: Int
    public var endMinute: Int
    public var slotMinutes: Int

    public init(id: Int64? = nil, doctorId: Int64, weekday: Int, startMinute: Int, endMinute: Int, slotMinutes: Int) {
        self.id = id; self.doctorId = doctorId; self.weekday = weekday
        self.startMinute = startMinute; self.endMinute = endMinute; self.slotMinutes = slotMinutes
    }
}
