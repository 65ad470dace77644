import Foundation

// A department's slots: from the facts a store gathers (`ClinicStore.slotFacts`, awaited
// `gatherSlotFacts`), computed here.

extension AppointmentController {
    // MARK: Slots

    /// The times an appointment can move to on `days` days from `from`: each start once, with
    /// the doctor a move to it would get (`rescheduleAppointment` keeps the appointment's doctor
    /// when they are free, else takes the first free one, as `chooseDoctor` does).
    public func rescheduleTimes(_ appointment: Appointment, from: LocalDateTime, days: Int = 1) throws -> [Slot] {
        Self.moveTimes(try slots(departmentId: appointment.departmentId, from: from, days: days, visitTypeId: appointment.visitTypeId),
                       of: appointment)
    }

    /// `rescheduleTimes` with the facts gathered awaited and the slots computed by `runner`
    /// (`slotsWithClinic(…computing:)`).
    public func rescheduleTimes(_ appointment: Appointment, from: LocalDateTime, days: Int = 1,
                                computing runner: some PasswordRunner) async throws -> [Slot] {
        Self.moveTimes(try await slotsWithClinic(departmentId: appointment.departmentId, from: from, days: days,
                                                 visitTypeId: appointment.visitTypeId, computing: runner).slots, of: appointment)
    }

    /// The free times among `slots` an appointment can move to: each start once, with the
    /// doctor a move to it would get.
    static func moveTimes(_ slots: [Slot], of appointment: Appointment) -> [Slot] {
        let free = slots.filter { $0.isAvailable && $0.start != appointment.startsAt }
        var chosen: [Date: Slot] = [:]
        for slot in free {
            guard let current = chosen[slot.start] else { chosen[slot.start] = slot; continue }
            if current.doctorId == appointment.doctorId { continue }
            if slot.doctorId == appointment.doctorId || slot.doctorId < current.doctorId { chosen[slot.start] = slot }
        }
        return chosen.values.sorted { $0.start < $1.start }
    }

    /// How many local dates `slots` covers when not told.
    public static let defaultSlotDays = 7

    /// The slots of a department (or one of its doctors) for `days` local dates (default
    /// `defaultSlotDays`) from `from` (default: today in the clinic's zone), with whether each
    /// can be booked now: not past, not within the lead time, not taken.
    public func slots(departmentId: Int64, doctorId: Int64? = nil, from: LocalDateTime? = nil, days: Int? = nil,
                      visitTypeId: Int64? = nil) throws -> [Slot] {
        try slotsWithClinic(departmentId: departmentId, doctorId: doctorId, from: from, days: days, visitTypeId: visitTypeId).slots
    }

    /// `slots` with the department's clinic (its zone says what the times are), from one gather
    /// of the store (`ClinicStore.slotFacts`: one round trip on PostgreSQL).
    public func slotsWithClinic(departmentId: Int64, doctorId: Int64? = nil, from: LocalDateTime? = nil, days: Int? = nil,
                                visitTypeId: Int64? = nil) throws -> (clinic: Clinic, slots: [Slot]) {
        let ask = try SlotsAsk(departmentId: departmentId, doctorId: doctorId, from: from, days: days, visitTypeId: visitTypeId, now: now())
        return try ask.slots(try database.slotFacts(departmentId: departmentId, visitTypeId: visitTypeId, days: ask.factDays,
                                                    takenSpan: ask.takenSpan, at: ask.now))
    }

    /// `slotsWithClinic` with the facts gathered awaited (issue 56, `ClinicStore.gatherSlotFacts`):
    /// what a server's request does, with no thread waiting for the store.
    public func slotsAwaited(departmentId: Int64, doctorId: Int64? = nil, from: LocalDateTime? = nil, days: Int? = nil,
                             visitTypeId: Int64? = nil) async throws -> (clinic: Clinic, slots: [Slot]) {
        try await slotsWithClinic(departmentId: departmentId, doctorId: doctorId, from: from, days: days, visitTypeId: visitTypeId,
                                  computing: InlinePasswordRunner())
    }

    /// `slotsAwaited` computed by `runner` (the server's pool: days of slots computed on a
    /// cooperative thread cost the other requests, as `DepartmentsController.slots` measured).
    public func slotsWithClinic(departmentId: Int64, doctorId: Int64? = nil, from: LocalDateTime? = nil, days: Int? = nil,
                                visitTypeId: Int64? = nil, computing runner: some PasswordRunner) async throws
        -> (clinic: Clinic, slots: [Slot]) {
        let ask = try SlotsAsk(departmentId: departmentId, doctorId: doctorId, from: from, days: days, visitTypeId: visitTypeId, now: now())
        let facts = try await database.gatherSlotFacts(departmentId: departmentId, visitTypeId: visitTypeId,
                                                       days: ask.factDays, takenSpan: ask.takenSpan, at: ask.now)
        return try await runner.run { try ask.slots(facts) }
    }

    /// A request for slots checked, with the facts it needs; `slots` computes them from those.
    struct SlotsAsk: Sendable {
        let departmentId: Int64, doctorId: Int64?, from: LocalDateTime?, days: Int, visitTypeId: Int64?, now: Date
        /// A visit of this length without a visit type (`searchFreeSlots`).
        var minutes: Int?
        /// The days asked of the store: those today can be anywhere on Earth (UTC's day ± 1),
        /// since the clinic's zone comes with the facts.
        let factDays: ClosedRange<String>
        let takenSpan: Range<Date>

        init(departmentId: Int64, doctorId: Int64?, from: LocalDateTime?, days: Int?, visitTypeId: Int64?, now: Date,
             minutes: Int? = nil) throws {
            let days = days ?? AppointmentController.defaultSlotDays
            guard (1...31).contains(days) else { throw ClinicError.invalid(.daysRange, String(days)) }
            // Instants are written with four-digit years: a day past 9999-11-30 has slots no one can write.
            if let from, from.year > 9999 || (from.year == 9999 && from.month > 11) {
                throw ClinicError.invalid(.invalidDay, String(format: "%04d-%02d-%02d", from.year, from.month, from.day))
            }
            let earliest = (from ?? LocalDateTime.of(now, in: AppointmentController.utc).adding(days: -1)).at(minuteOfDay: 0)
            let latest = (from.map { $0.at(minuteOfDay: 0) } ?? earliest.adding(days: 2)).adding(days: days - 1)
            self.departmentId = departmentId; self.doctorId = doctorId; self.from = from; self.days = days
            self.visitTypeId = visitTypeId; self.now = now; self.minutes = minutes
            factDays = DoctorSchedule.dayKey(earliest)...DoctorSchedule.dayKey(latest)
            takenSpan = AppointmentController.takenSpan(first: earliest, last: latest)
        }

        /// The slots from the gathered facts (nil: no such department): the first day is today
        /// in the clinic's zone unless given.
        func slots(_ gathered: SlotFacts?) throws -> (clinic: Clinic, slots: [Slot]) {
            guard let facts = gathered else { throw ClinicError(.notFound, .departmentNotFound, String(departmentId)) }
            guard let clinic = facts.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(facts.department.clinicId)) }
            var doctors = facts.doctors
            if let doctorId {
                doctors = doctors.filter { $0.id == doctorId }
                guard !doctors.isEmpty else { throw ClinicError(.notFound, .doctorNotFound, String(doctorId)) }
            }
            let visit = try visitTypeId.map { try VisitType.offered(facts.visitType, id: $0, departmentId: departmentId) }
            let first = (from ?? LocalDateTime.of(now, in: clinic.zone)).at(minuteOfDay: 0)
            let doctorFacts = doctors.map { doctor in
                let id = doctor.id ?? 0
                return (doctor, DoctorSchedule(weekly: facts.hours[id] ?? [], exceptions: facts.exceptions[id] ?? []),
                        (facts.taken[id] ?? []).map { ($0.lowerBound.seconds, $0.upperBound.seconds) })
            }
            return (clinic, AppointmentController.slots(doctorFacts, zone: clinic.zone, first: first, days: days, now: now,
                                                        policy: BookingPolicy(settings: facts.bookingSettings),
                                                        duration: visit?.durationMinutes ?? minutes))
        }
    }

    static let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current

    /// The instants that bound the local dates `first` through `last`, with a day's margin for
    /// any zone's offset: the taken spans a slot of those dates may overlap.
    static func takenSpan(first: LocalDateTime, last: LocalDateTime) -> Range<Date> {
        Date(seconds: Int64(first.adding(days: -1).daysSinceEpoch * 86_400))..<Date(seconds: Int64(last.adding(days: 2).daysSinceEpoch * 86_400))
    }

    static func slots(_ tx: any StoreReading, doctors: [Doctor], zone: TimeZone, first: LocalDateTime, days: Int, now: Date,
                      policy: BookingPolicy, duration: Int? = nil) throws -> [Slot] {
        let last = first.adding(days: days - 1)
        let span = takenSpan(first: first, last: last)
        let facts = try doctors.map { doctor in
            (doctor, try DoctorSchedule.load(tx, doctorId: doctor.id ?? 0, from: first, through: last),
             // Held slots are taken as booked ones are, while the hold lasts.
             try tx.takenSpans(doctorId: doctor.id ?? 0, overlapping: span, at: now, exceptAppointment: nil, exceptHold: nil).map { ($0.lowerBound.seconds, $0.upperBound.seconds) })
        }
        return slots(facts, zone: zone, first: first, days: days, now: now, policy: policy, duration: duration)
    }

    /// The rule: each doctor's slots of the dates from their schedule, each marked taken when a
    /// taken span (seconds) overlaps it, and bookable when free, in the future, at least the lead
    /// time ahead and within the horizon. By start, then doctor.
    static func slots(_ doctors: [(Doctor, DoctorSchedule, [(Int64, Int64)])], zone: TimeZone, first: LocalDateTime, days: Int,
                      now: Date, policy: BookingPolicy, duration: Int? = nil) -> [Slot] {
        let earliest = now.addingTimeInterval(TimeInterval(policy.leadMinutes * 60))
        let latest = now.addingTimeInterval(policy.horizon)
        var result: [Slot] = []
        for (doctor, schedule, taken) in doctors {
            // Overlapping intervals (hours written before they were refused) must not offer a start twice.
            var seen = Set<Date>()
            for offset in 0..<days {
                for slot in schedule.slots(on: first.adding(days: offset), zone: zone, duration: duration)
                where seen.insert(slot.start).inserted {
                    let start = Int64(slot.start.timeIntervalSince1970), end = Int64(slot.end.timeIntervalSince1970)
                    let busy = taken.contains { $0.0 < end && $0.1 > start }
                    // The same rules as booking: in the future and at least the lead time ahead.
                    let bookable = slot.start > now && slot.start >= earliest && slot.start <= latest
                    result.append(Slot(doctorId: doctor.id ?? 0, doctorName: doctor.name, start: slot.start, end: slot.end,
                                       isAvailable: !busy && bookable, isTaken: busy))
                }
            }
        }
        return result.sorted { ($0.start, $0.doctorId) < ($1.start, $1.doctorId) }
    }
}
