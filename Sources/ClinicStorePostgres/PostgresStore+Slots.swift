import ClinicKit
import Foundation
import PostgresNIO

// A department's slots on PostgreSQL in one round trip (issue 44; twelve for two doctors
// before): what changes with every booking (the days' exceptions, the taken times, the
// `booking.` settings, the visit type asked for) is read in one statement with the schedule's
// version (`schedule_version`, Migrations/postgres/0010); what changes a few times a day (the
// department, its clinic, its active doctors and their weekly hours) is kept by the store,
// per department, with the version it was read at. A kept schedule of another version is read
// again (a second round trip), so a change made by any server or the CLI is seen at once:
// nothing waits for a notice.

/// A department's schedule as kept between requests, with the version it was read at.
struct KeptSchedule: Sendable {
    let version: Int64
    let department: Department
    let clinic: Clinic?
    let doctors: [Doctor]
    let hours: [Int64: [WorkingHours]]
}

/// The kept schedules of one store, by department. Bounded: past `limit` departments the
/// whole set is dropped and refilled by use (a server's working set is the departments people
/// look at; the directory has tens of thousands).
final class KeptSchedules: Sendable {
    static let limit = 4096
    private let kept = LockedBox<[Int64: KeptSchedule]>([:])

    func schedule(of departmentId: Int64, at version: Int64) -> KeptSchedule? {
        kept.withLock { $0[departmentId] }.flatMap { $0.version == version ? $0 : nil }
    }

    func keep(_ schedule: KeptSchedule) {
        kept.withLock { kept in
            if kept.count >= Self.limit, kept[schedule.department.id ?? 0] == nil { kept.removeAll(keepingCapacity: true) }
            kept[schedule.department.id ?? 0] = schedule
        }
    }
}

extension PostgresStore {
    public func slotFacts(departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>, takenSpan: Range<Date>,
                          at now: Date) throws -> SlotFacts? {
        let joined = JoinedPostgresTransaction.current(self) != nil
        let day = try oneStatement { tx in
            try tx.slotDayFacts(departmentId: departmentId, visitTypeId: visitTypeId, days: days, takenSpan: takenSpan, at: now)
        }
        let schedule: KeptSchedule
        if let kept = keptSchedules.schedule(of: departmentId, at: day.version) {
            schedule = kept
        } else {
            guard let read = try oneStatement({ tx in try tx.departmentSchedule(departmentId: departmentId) }) else { return nil }
            // Never what a write running here has changed and may yet roll back.
            if !joined { keptSchedules.keep(read) }
            schedule = read
        }
        return Self.slotFacts(day, schedule)
    }

    /// `slotFacts` awaited (issue 56): the same statements, each sent and awaited on a
    /// connection the calling task leases.
    public func gatherSlotFacts(departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>, takenSpan: Range<Date>,
                                at now: Date) async throws -> SlotFacts? {
        guard let dayRow = try await awaitedStatement(SlotDayStatement(PostgresTransaction.slotDayBinds(departmentId, visitTypeId, days,
                                                                                                           takenSpan, now)))
        else { throw ClinicError(.storage, .storageFailure, "the slots' gather returned no row") }
        let day = try PostgresTransaction.slotDayFacts(dayRow)
        let schedule: KeptSchedule
        if let kept = keptSchedules.schedule(of: departmentId, at: day.version) {
            schedule = kept
        } else {
            guard let row = try await awaitedStatement(DepartmentScheduleStatement([departmentId])) else { return nil }
            let read = try PostgresTransaction.departmentSchedule(row)
            keptSchedules.keep(read)
            schedule = read
        }
        return Self.slotFacts(day, schedule)
    }

    /// The facts from the day's statement and the department's schedule, every doctor's entry
    /// there (an empty one included), as the seam's reads give them.
    static func slotFacts(_ day: SlotDayFacts, _ schedule: KeptSchedule) -> SlotFacts {
        func ofEachDoctor<T>(_ entries: [Int64: [T]]) -> [Int64: [T]] {
            Dictionary(schedule.doctors.map { ($0.id ?? 0, entries[$0.id ?? 0] ?? []) }, uniquingKeysWith: { first, _ in first })
        }
        return SlotFacts(department: schedule.department, clinic: schedule.clinic, doctors: schedule.doctors,
                         hours: ofEachDoctor(schedule.hours), exceptions: ofEachDoctor(day.exceptions), taken: ofEachDoctor(day.taken),
                         bookingSettings: day.bookingSettings, visitType: day.visitType)
    }
}

/// What a slots request reads every time (`PostgresTransaction.slotDayFacts`).
struct SlotDayFacts {
    let version: Int64
    let exceptions: [Int64: [WorkingException]]
    let taken: [Int64: [Range<Date>]]
    let bookingSettings: [String: String]
    let visitType: VisitType?
}

extension PostgresTransaction {
    /// One statement: the schedule's version, the department's active doctors' exceptions of
    /// `days` and their times taken overlapping `takenSpan` at `now`, the `booking.` settings and
    /// the visit type `visitTypeId` (whatever department it is of, as `SlotFacts` says).
    func slotDayFacts(departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>, takenSpan: Range<Date>,
                      at now: Date) throws -> SlotDayFacts {
        guard let row = try row(SlotDayStatement(Self.slotDayBinds(departmentId, visitTypeId, days, takenSpan, now)))
        else { throw ClinicError(.storage, .storageFailure, "the slots' gather returned no row") }
        return try Self.slotDayFacts(row)
    }

    static func slotDayBinds(_ departmentId: Int64, _ visitTypeId: Int64?, _ days: ClosedRange<String>, _ takenSpan: Range<Date>,
                             _ now: Date) -> [any PostgresBindable] {
        [departmentId, days.lowerBound, days.upperBound, takenSpan.lowerBound, takenSpan.upperBound, now, visitTypeId]
    }

    /// `SlotDayStatement`'s row.
    static func slotDayFacts(_ row: StoredRowValues) throws -> SlotDayFacts {
        func text(_ column: String) throws -> String { try row.value(column, in: "slot facts") }
        let visitType: String? = try row.value("visit_type", in: "slot facts")
        return SlotDayFacts(
            version: try row.value("version", in: "schedule_version"), exceptions: try Self.byDoctor(try text("exceptions")),
            taken: try Self.takenByDoctor(try text("taken")),
            bookingSettings: try JSONRows.decode([String: String].self, try text("settings")),
            visitType: try visitType.map { try VisitType(row: try JSONRows.row($0)) })
    }

    /// One statement: the department's schedule with the version it is of; nil when there is
    /// no such department.
    func departmentSchedule(departmentId: Int64) throws -> KeptSchedule? {
        try row(DepartmentScheduleStatement([departmentId])).map(Self.departmentSchedule)
    }

    /// `DepartmentScheduleStatement`'s row.
    static func departmentSchedule(_ row: StoredRowValues) throws -> KeptSchedule {
        func text(_ column: String) throws -> String { try row.value(column, in: "department schedule") }
        let clinic: String? = try row.value("clinic", in: "department schedule")
        return KeptSchedule(
            version: try row.value("version", in: "schedule_version"), department: try Department(row: try JSONRows.row(try text("department"))),
            clinic: try clinic.map { try Clinic(row: try JSONRows.row($0)) },
            doctors: try JSONRows.rows(try text("doctors")).map(Doctor.init(row:)), hours: try Self.hoursByDoctor(try text("hours")))
    }
}
