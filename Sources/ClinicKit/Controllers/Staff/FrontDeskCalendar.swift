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

/// A calendar asked for: the days checked (1 to `FrontDeskCalendar.maximumDays`), the columns
/// chosen on the clinic's doctors, and the calendar assembled from the days read, the slots and
/// the holds. The rule of both paths (`ClinicSystem.frontDeskCalendar`, the CLI's and the server's).
struct CalendarAsk {
    let member: StaffMember, departmentId: Int64?, doctorId: Int64?, days: Int

    init(_ member: StaffMember, days: Int, departmentId: Int64?, doctorId: Int64?) throws {
        guard (1...FrontDeskCalendar.maximumDays).contains(days) else {
            throw ClinicError.invalid(.settingRange, "days", "1", String(FrontDeskCalendar.maximumDays))
        }
        self.member = member; self.days = days; self.departmentId = departmentId; self.doctorId = doctorId
    }

    /// The doctor whose column alone is shown: a doctor's own, else the one asked for.
    var doctor: Int64? { member.role == .doctor ? member.doctorId : doctorId }

    /// The columns: the clinic's active doctors of the department and doctor asked for.
    func listed(_ place: DeskDayPlace) -> [(doctor: Doctor, department: Department)] {
        place.doctors.filter { pair in
            (departmentId == nil || pair.department.id == departmentId) && (doctor == nil || pair.doctor.id == doctor)
        }
    }

    /// The departments whose slots are read, each once.
    func departments(_ listed: [(doctor: Doctor, department: Department)]) -> [Int64] {
        Set(listed.compactMap(\.department.id)).sorted()
    }

    /// The instants of the days shown, from the first day's start in the clinic's zone.
    func span(_ first: DeskDayPlan) -> Range<Date> {
        let start = first.day.at(minuteOfDay: 0).firstInstant(in: first.zone) ?? first.now
        let end = first.day.adding(days: days).at(minuteOfDay: 0).firstInstant(in: first.zone)
            ?? start.addingTimeInterval(Double(days) * 86_400)
        return start..<max(start, end)
    }

    func calendar(_ read: [DeskDayFacts], slots: [Slot], holds: [SlotHold]) throws -> FrontDeskCalendar {
        guard let first = read.first, let clinic = first.place.clinic else {
            throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId))
        }
        let entries = read.flatMap { StaffController.dayEntries($0, member) }
        let slotsByDoctor = Dictionary(grouping: slots, by: \.doctorId)
        let holdsByDoctor = Dictionary(grouping: holds, by: \.doctorId)
        let columns = listed(first.place).map { pair in
            let id = pair.doctor.id ?? 0
            return CalendarColumn(doctor: pair.doctor, department: pair.department, slots: slotsByDoctor[id] ?? [],
                                  entries: entries.filter { $0.appointment.doctorId == id }, holds: holdsByDoctor[id] ?? [])
        }
        return FrontDeskCalendar(from: first.plan.day, days: days, zone: first.plan.zone, clinic: clinic,
                                 departments: first.place.departments, columns: columns)
    }
}

extension ClinicSystem {
    /// The member's clinic's calendar from `from` (default: today in the clinic's zone) for
    /// `days` days, optionally of one department or doctor; a doctor sees their own column.
    /// Each patient shown is a `patient.read` row of the audit trail (`StaffController.schedule`).
    public func frontDeskCalendar(_ member: StaffMember, from: LocalDateTime? = nil, days: Int = 1, departmentId: Int64? = nil,
                                  doctorId: Int64? = nil, requestId: String? = nil) throws -> FrontDeskCalendar {
        let ask = try CalendarAsk(member, days: days, departmentId: departmentId, doctorId: doctorId)
        let first = try staff.dayFacts(member, day: from, departmentId: departmentId, doctorId: doctorId, requestId: requestId)
        var read = [first]
        for offset in 1..<days {
            read.append(try staff.dayFacts(member, day: first.plan.day.adding(days: offset), departmentId: departmentId,
                                           doctorId: doctorId, requestId: requestId))
        }
        let listed = ask.listed(first.place)
        let slots = try ask.departments(listed).flatMap { departmentId in
            try appointments.slots(departmentId: departmentId, doctorId: ask.doctor, from: first.plan.day, days: days)
        }
        let span = ask.span(first.plan), now = appointments.now()
        let holds = try database.reading { tx in
            try listed.flatMap { pair in try tx.liveSlotHolds(doctorId: pair.doctor.id ?? 0, overlapping: span, at: now) }
        }
        return try ask.calendar(read, slots: slots, holds: holds)
    }

    /// `frontDeskCalendar` awaited (issue 56): each day one awaited transaction
    /// (`FrontDeskStore.deskDay`, with its audit rows), the slots gathered awaited and computed by
    /// `runner`, the holds in one read (`FrontDeskReadsStore.liveHolds`).
    public func frontDeskCalendar(_ member: StaffMember, from: LocalDateTime? = nil, days: Int = 1, departmentId: Int64? = nil,
                                  doctorId: Int64? = nil, requestId: String? = nil,
                                  computing runner: some PasswordRunner) async throws -> FrontDeskCalendar {
        let ask = try CalendarAsk(member, days: days, departmentId: departmentId, doctorId: doctorId)
        let first = try await staff.deskDay(member, day: from, departmentId: departmentId, doctorId: doctorId, requestId: requestId)
        var read = [first]
        for offset in 1..<days {
            read.append(try await staff.deskDay(member, day: first.plan.day.adding(days: offset), departmentId: departmentId,
                                                doctorId: doctorId, requestId: requestId))
        }
        let listed = ask.listed(first.place)
        var slots: [Slot] = []
        for departmentId in ask.departments(listed) {
            slots += try await appointments.slotsWithClinic(departmentId: departmentId, doctorId: ask.doctor, from: first.plan.day,
                                                            days: days, computing: runner).slots
        }
        let holds = try await database.liveHolds(doctorIds: listed.compactMap(\.doctor.id), overlapping: ask.span(first.plan),
                                                 at: appointments.now())
        return try ask.calendar(read, slots: slots, holds: holds)
    }
}
