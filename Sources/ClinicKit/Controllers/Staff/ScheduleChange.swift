import Foundation

// A clinic admin's change of a doctor's working time (issue 56): new weekly hours, an exception
// added or removed, the doctor deactivated. One transaction: the store locks the doctor (a
// booking in flight with them is waited for), reads `ScheduleFacts`, `ScheduleChange.decide`
// compares the schedule before and after the change in memory, the store writes the change and
// its audit row, cancels what the new schedule no longer holds (each decided on its own
// `AppointmentChangeFacts` by `cancellation`, the patient told in their language) and queues
// the new times for the waitlist.

/// What a change of a doctor's working time is decided on, read in its transaction.
public struct ScheduleFacts: Sendable {
    /// The doctor's department and its clinic, with the clinic's zone (its identifier).
    public var departmentId: Int64
    public var clinicId: Int64
    public var timeZone: String
    public var weekly: [WorkingHours]
    /// The doctor's exceptions from two days before the change on (the clinic's today is within).
    public var exceptions: [WorkingException]
    /// The doctor's active appointments starting from now, with their visit type's minutes.
    public var future: [ScheduledVisit]
    /// The entries waiting or offered a time at the doctor's department.
    public var waiting: [WaitlistEntry]
    public var bookingSettings: [String: String]

    public init(departmentId: Int64, clinicId: Int64, timeZone: String, weekly: [WorkingHours], exceptions: [WorkingException],
                future: [ScheduledVisit], waiting: [WaitlistEntry], bookingSettings: [String: String]) {
        self.departmentId = departmentId; self.clinicId = clinicId; self.timeZone = timeZone; self.weekly = weekly
        self.exceptions = exceptions; self.future = future; self.waiting = waiting; self.bookingSettings = bookingSettings
    }

    /// The first day whose exceptions are read: two days before `now` by UTC's calendar, so that
    /// the clinic's today is within in any zone.
    public static func firstExceptionDay(_ now: Date) -> String {
        LocalDateTime.of(now.addingTimeInterval(-2 * 86_400), in: TimeZone(identifier: "UTC") ?? .current).dayText
    }
}

/// A booked visit as a change of hours looks at it: the appointment and its visit type's length.
public struct ScheduledVisit: Sendable {
    public var id: Int64
    public var startsAt: Date
    public var endsAt: Date
    public var status: AppointmentStatus
    public var durationMinutes: Int?

    public init(id: Int64, startsAt: Date, endsAt: Date, status: AppointmentStatus, durationMinutes: Int?) {
        self.id = id; self.startsAt = startsAt; self.endsAt = endsAt; self.status = status; self.durationMinutes = durationMinutes
    }
}

/// What the store writes for a change of working time, in this order: `write`, `audit`, the
/// cancellations of `cancelling` (each decided again on its own facts), `newTimes` queued.
public struct ScheduleDecision: Sendable {
    public enum Write: Sendable {
        case hours(doctorId: Int64, weekday: Int, [DoctorSchedule.Interval])
        case addException(WorkingException)
        case removeException(id: Int64)
        case deactivate(doctorId: Int64)
    }

    public let write: Write
    /// The change's audit row; for an exception added, `exception(id:)`'s detail is its own.
    public let audit: AuditAsk
    public let cancelling: [Int64]
    public let departmentId: Int64
    public let doctorId: Int64
    /// Times the schedule has now and did not have, for the waitlist.
    public let newTimes: [Range<Date>]
}

/// What a change of working time did: the exception added (for that change) and the
/// appointments it cancelled.
public struct ScheduleOutcome: Sendable {
    public var exception: WorkingException?
    public var cancelled: [Appointment]

    public init(exception: WorkingException?, cancelled: [Appointment]) { self.exception = exception; self.cancelled = cancelled }
}

/// A clinic admin's change of a doctor's working time, decided on `ScheduleFacts`.
public struct ScheduleChange: Sendable {
    public enum Kind: Sendable {
        /// The doctor's hours on one weekday (empty: not working that day).
        case hours(doctorId: Int64, weekday: Int, [DoctorSchedule.Interval])
        /// A day off (nil) or other hours on one date.
        case addException(doctorId: Int64, day: LocalDateTime, DoctorSchedule.Interval?)
        case removeException(id: Int64)
        /// No longer offered, booked or listed: every upcoming visit is outside.
        case deactivate(doctorId: Int64)
    }

    public let kind: Kind
    /// The clinic admin making the change; nil: the operator (any clinic's doctor).
    let member: StaffMember?
    let force: Bool
    let reason: String?
    let requestId: String?
    public let now: Date

    /// New weekly hours are checked first (`working_hours_invalid`): a weekday 1…7, each
    /// interval valid, none overlapping another.
    init(_ kind: Kind, by member: StaffMember?, force: Bool, reason: String?, requestId: String?, now: Date) throws {
        if case .hours(_, let weekday, let intervals) = kind {
            guard (1...7).contains(weekday) else { throw ClinicError.invalid(.workingHoursInvalid) }
            for (index, interval) in intervals.enumerated() {
                guard interval.isValid, !intervals[..<index].contains(where: { $0.overlaps(interval) }) else {
                    throw ClinicError.invalid(.workingHoursInvalid)
                }
            }
        }
        self.kind = kind; self.member = member; self.force = force; self.reason = reason; self.requestId = requestId; self.now = now
    }

    /// The doctor changed; nil for an exception's removal (the exception's doctor).
    public var doctorId: Int64? {
        switch kind {
        case .hours(let id, _, _), .addException(let id, _, _), .deactivate(let id): id
        case .removeException: nil
        }
    }

    /// The exception removed; nil for the other changes.
    public var exceptionId: Int64? {
        if case .removeException(let id) = kind { return id }
        return nil
    }

    /// Decided on `facts` (nil: no such doctor) and, for a removal, `removed` (the exception,
    /// nil for none): refused for anyone but a clinic admin (`forbidden`) and for a doctor or an
    /// exception of another clinic, or none (`not_found`); an exception that is not valid hours
    /// or meets another of its date is `invalid_input`; upcoming visits the new schedule no
    /// longer holds refuse the change (`hours_conflict`, with their ids) unless `force`, and
    /// then the reason is checked (`invalid_input`). A visit under way is left alone.
    public func decide(_ facts: ScheduleFacts?, removed: WorkingException? = nil) throws -> ScheduleDecision {
        let clinicId = member?.clinicId ?? facts?.clinicId
        if let exceptionId, removed == nil || facts?.clinicId != clinicId {
            throw ClinicError(.notFound, .exceptionNotFound, String(exceptionId))
        }
        if let member, member.role != .clinicAdmin { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        let doctorId = self.doctorId ?? removed?.doctorId ?? 0
        guard let facts, facts.clinicId == clinicId else { throw ClinicError(.notFound, .doctorNotFound, String(doctorId)) }
        let actor = member?.auditActor ?? .operator
        let zone = Clinic.zone(named: facts.timeZone)
        var weekly = facts.weekly, exceptions = facts.exceptions
        let write: ScheduleDecision.Write, audit: AuditAsk
        switch kind {
        case .hours(_, let weekday, let intervals):
            weekly.removeAll { $0.weekday == weekday }
            weekly += intervals.map { WorkingHours(id: nil, doctorId: doctorId, weekday: weekday, startMinute: $0.startMinute,
                                                   endMinute: $0.endMinute, slotMinutes: $0.slotMinutes) }
            write = .hours(doctorId: doctorId, weekday: weekday, intervals)
            let text = intervals.map { "\($0.startMinute)-\($0.endMinute)/\($0.slotMinutes)" }.joined(separator: ",")
            audit = AuditAsk(by: actor, action: .hoursSet, requestId: requestId,
                             detail: "doctor \(doctorId) weekday \(weekday) " + (text.isEmpty ? "off" : text), now: now)
        case .addException(_, let day, let hours):
            if let hours, !hours.isValid { throw ClinicError.invalid(.exceptionInvalid) }
            let key = DoctorSchedule.dayKey(day)
            let clash = exceptions.contains { other in
                guard other.day == key else { return false }
                guard let hours, let start = other.startMinute, let end = other.endMinute else { return true } // a day off
                return hours.overlaps(DoctorSchedule.Interval(startMinute: start, endMinute: end, slotMinutes: other.slotMinutes ?? 0))
            }
            if clash { throw ClinicError.invalid(.exceptionOverlaps, key) }
            let exception = WorkingException(id: nil, doctorId: doctorId, day: key, startMinute: hours?.startMinute,
                                             endMinute: hours?.endMinute, slotMinutes: hours?.slotMinutes)
            exceptions.append(exception)
            write = .addException(exception)
            audit = AuditAsk(by: actor, action: .exceptionAdd, clinicId: facts.clinicId,
                             detail: "doctor \(doctorId) \(key) " + (hours.map { "\($0.startMinute)-\($0.endMinute)" } ?? "off"), now: now)
        case .removeException(let id):
            exceptions.removeAll { $0.id == id }
            write = .removeException(id: id)
            audit = AuditAsk(by: actor, action: .exceptionRemove, clinicId: facts.clinicId,
                             detail: "doctor \(doctorId) \(removed?.day ?? "")", now: now)
        case .deactivate:
            write = .deactivate(doctorId: doctorId)
            audit = AuditAsk(by: actor, action: .doctorDeactivate, requestId: requestId, detail: "doctor \(doctorId)", now: now)
        }
        let before = DoctorSchedule(weekly: facts.weekly, exceptions: facts.exceptions)
        let after = DoctorSchedule(weekly: weekly, exceptions: exceptions)
        var deactivating = false
        if case .deactivate = kind { deactivating = true }
        let outside = facts.future.filter { visit in
            visit.status.canMove(to: .cancelled)
                && (deactivating || after.slotEnd(startingAt: visit.startsAt, zone: zone, duration: visit.durationMinutes) != visit.endsAt)
        }
        if !outside.isEmpty {
            guard force else { throw ClinicError(.hoursConflict, .staffHoursConflict, outside.map { String($0.id) }.joined(separator: ", ")) }
            _ = try StaffController.checkedReason(reason)
        }
        return ScheduleDecision(write: write, audit: audit, cancelling: outside.map(\.id), departmentId: facts.departmentId,
                                doctorId: doctorId,
                                newTimes: deactivating ? [] : newTimes(facts, before: before, after: after, doctorId: doctorId, zone: zone))
    }

    /// The slots `after` has and `before` had not, starting later than now, within the days
    /// someone waiting for the doctor's department (or this doctor) asks for, at most
    /// `WaitlistController.newTimesDays` ahead and within the booking horizon.
    func newTimes(_ facts: ScheduleFacts, before: DoctorSchedule, after: DoctorSchedule, doctorId: Int64, zone: TimeZone) -> [Range<Date>] {
        let waiting = facts.waiting.filter { $0.status == .waiting && ($0.doctorId == nil || $0.doctorId == doctorId) }
        guard let lastAsked = waiting.map(\.lastDay).max(), let asked = try? TimeInput.parseDay(lastAsked) else { return [] }
        let policy = BookingPolicy(settings: facts.bookingSettings)
        let today = LocalDateTime.of(now, in: zone)
        let bound = today.adding(days: min(WaitlistController.newTimesDays, policy.horizonDays))
        let last = asked.dayText < bound.dayText ? asked : bound
        var times: [Range<Date>] = []
        var day = today
        while day.dayText <= last.dayText {
            let had = Set(before.slots(on: day, zone: zone).map(\.start))
            for slot in after.slots(on: day, zone: zone) where slot.start > now && !had.contains(slot.start) {
                times.append(slot.start..<slot.end)
            }
            day = day.adding(days: 1)
        }
        return times
    }

    /// One appointment the change cancels, decided on its own facts (read after the change's
    /// write, its row locked): nil when it is gone or can no longer be cancelled (its patient
    /// cancelled it meanwhile). Cancelled for the clinic: the history names the staff account
    /// and the reason (the clinic's, else "the doctor's hours changed"), the patient's message
    /// (in their language) and text carry it, the audit trail has the cancellation.
    public func cancellation(_ facts: AppointmentChangeFacts?) throws -> BookingDecision? {
        guard let facts, facts.appointment.status.canMove(to: .cancelled) else { return nil }
        let given = try StaffController.checkedReason(reason)
        let why = given ?? Strings.text(.staffHoursChanged, .en, [])
        var moved = facts.appointment
        moved.status = .cancelled
        moved.updatedAt = now
        let (message, text) = BookingDecision.clinicCancellation(moved, context: facts.messageContext, reason: given,
                                                                 defaultReason: .staffHoursChanged, staffId: member?.id)
        return BookingDecision(
            appointment: moved,
            event: BookingRules.event(moved, AppointmentStatus.cancelled.rawValue, .staff, now, reason: why, staffId: member?.id),
            message: message,
            audit: AuditAsk(by: member?.auditActor ?? .operator, action: .appointmentCancel, clientId: moved.clientId, appointmentId: moved.id,
                            requestId: requestId, detail: "hours changed: \(why)", now: now),
            text: text)
    }

    /// The change in the caller's write transaction (the blocking path, and SQLite's): the
    /// seam's reads, `decide`, the seam's writes, each cancellation as `BookingDecision.change`.
    package func apply(_ tx: any StoreWriting) throws -> ScheduleOutcome {
        let removed = try exceptionId.flatMap { try tx.workingException(id: $0) }
        let facts = try (doctorId ?? removed?.doctorId).flatMap { try ScheduleFacts.read(tx, doctorId: $0, now: now) }
        let decision = try decide(facts, removed: removed)
        var exception: WorkingException?
        switch decision.write {
        case .hours(let doctorId, let weekday, let intervals): try tx.replaceWorkingHours(ofDoctor: doctorId, weekday: weekday, with: intervals)
        case .addException(let new): exception = try tx.insertWorkingException(new)
        case .removeException(let id): try tx.deleteWorkingException(id: id)
        case .deactivate(let doctorId): try tx.deactivateDoctor(id: doctorId)
        }
        try AuditLog.append(tx, decision.audit)
        var cancelled: [Appointment] = []
        for id in decision.cancelling {
            var changed: BookingDecision?
            let appointment = try BookingDecision.change(tx, id: id) { facts in
                changed = try cancellation(facts)
                return changed
            }
            if changed != nil { cancelled.append(appointment) }
        }
        for span in decision.newTimes {
            try tx.queueFreedTime(departmentId: decision.departmentId, doctorId: decision.doctorId, span: span, at: now)
        }
        return ScheduleOutcome(exception: exception, cancelled: cancelled)
    }
}

extension ScheduleFacts {
    /// The facts through the seam's reads (nil: no such doctor, or no department or clinic).
    static func read(_ tx: any StoreReading, doctorId: Int64, now: Date) throws -> ScheduleFacts? {
        guard let doctor = try tx.doctor(id: doctorId), let department = try tx.department(id: doctor.departmentId),
              let clinic = try tx.clinic(id: department.clinicId) else { return nil }
        // As stored: only times, statuses and visit types are looked at (no notes opened).
        var durations: [Int64: Int?] = [:]
        let future = try tx.storedFutureActiveAppointments(ofDoctor: doctorId, from: now).map { appointment in
            var duration: Int?
            if let typeId = appointment.visitTypeId {
                if let known = durations[typeId] { duration = known } else {
                    duration = try tx.visitType(id: typeId)?.durationMinutes
                    durations[typeId] = duration
                }
            }
            return ScheduledVisit(id: appointment.id ?? 0, startsAt: appointment.startsAt, endsAt: appointment.endsAt,
                                  status: appointment.status, durationMinutes: duration)
        }
        return ScheduleFacts(departmentId: doctor.departmentId, clinicId: department.clinicId, timeZone: clinic.timeZone,
                             weekly: try tx.workingHours(ofDoctor: doctorId),
                             exceptions: try tx.workingExceptions(ofDoctor: doctorId, from: firstExceptionDay(now), through: "9999-12-31"),
                             future: future, waiting: try tx.waitlistEntries(ofClinic: department.clinicId, departmentId: doctor.departmentId),
                             bookingSettings: try tx.settings(prefix: "booking."))
    }
}
