import Foundation

/// One doctor's column of the front desk's calendar: their slots (free or taken) and the
/// appointments of the days shown.
public struct CalendarColumn: Sendable {
    public let doctor: Doctor
    public let department: Department
    public let slots: [Slot]
    public let entries: [DayEntry]
    /// The doctor's holds live now in the days shown (`$hold`): their times are taken until
    /// they expire, and the front desk may release one (`StaffController.releaseHold`).
    public let holds: [SlotHold]

    /// The appointments that hold their time in the grid: a cancelled one gave its time back
    /// (its slot is free to book again), so it is shown aside, never over the free time.
    public var occupying: [DayEntry] { entries.filter { $0.appointment.status != .cancelled } }
    public var cancelled: [DayEntry] { entries.filter { $0.appointment.status == .cancelled } }
}

/// The front desk's calendar (issue 29): the clinic's doctors side by side for 1 to 7 local
/// days in the clinic's zone.
public struct FrontDeskCalendar: Sendable {
    public let from: LocalDateTime
    public let days: Int
    public let zone: TimeZone
    public let clinic: Clinic
    public let departments: [Department]
    public let columns: [CalendarColumn]

    /// The largest number of days a calendar shows: a week.
    public static let maximumDays = 7
}

extension ClinicSystem {
    /// The member's clinic's calendar from `from` (default: today in the clinic's zone) for
    /// `days` days, optionally of one department or doctor; a doctor sees their own column.
    /// Each patient shown is a `patient.read` row of the audit trail (`StaffController.schedule`).
    public func frontDeskCalendar(_ member: StaffMember, from: LocalDateTime? = nil, days: Int = 1, departmentId: Int64? = nil,
                                  doctorId: Int64? = nil, requestId: String? = nil) throws -> FrontDeskCalendar {
        guard (1...FrontDeskCalendar.maximumDays).contains(days) else {
            throw ClinicError.invalid(.settingRange, "days", "1", String(FrontDeskCalendar.maximumDays))
        }
        let first = try staff.schedule(member, day: from, departmentId: departmentId, doctorId: doctorId, requestId: requestId)
        var entries = first.entries
        for offset in 1..<days {
            entries += try staff.schedule(member, day: first.day.adding(days: offset), departmentId: departmentId, doctorId: doctorId,
                                          requestId: requestId).entries
        }
        let doctor = member.role == .doctor ? member.doctorId : doctorId
        let listed = try staff.doctors(member).filter { pair in
            (departmentId == nil || pair.department.id == departmentId) && (doctor == nil || pair.doctor.id == doctor)
        }
        var slotsByDoctor: [Int64: [Slot]] = [:]
        for departmentId in Set(listed.compactMap(\.department.id)).sorted() {
            for slot in try appointments.slots(departmentId: departmentId, doctorId: doctor, from: first.day, days: days) {
                slotsByDoctor[slot.doctorId, default: []].append(slot)
            }
        }
        let now = appointments.now()
        let start = first.day.at(minuteOfDay: 0).firstInstant(in: first.zone) ?? now
        let end = first.day.adding(days: days).at(minuteOfDay: 0).firstInstant(in: first.zone) ?? start.addingTimeInterval(Double(days) * 86_400)
        let holds = try database.reading { tx in
            try listed.map { pair in try tx.liveSlotHolds(doctorId: pair.doctor.id ?? 0, overlapping: start..<max(start, end), at: now) }
        }
        let columns = zip(listed, holds).map { pair, holds in
            CalendarColumn(doctor: pair.doctor, department: pair.department, slots: slotsByDoctor[pair.doctor.id ?? 0] ?? [],
                           entries: entries.filter { $0.appointment.doctorId == pair.doctor.id }, holds: holds)
        }
        return FrontDeskCalendar(from: first.day, days: days, zone: first.zone, clinic: try clinics.getClinicById(member.clinicId),
                                 departments: try departments.getDepartmentsByClinicId(member.clinicId), columns: columns)
    }
}
