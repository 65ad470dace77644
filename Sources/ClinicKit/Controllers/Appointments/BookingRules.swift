import Foundation

// The rules of booking, moving, cancelling and holding, as pure functions of plain values
// (issue 56): each takes the facts a store gathered (`BookingFacts`, `AppointmentChangeFacts`,
// `HoldFacts`) and what was asked, and returns what to write or throws the refusal. No store,
// no clock, no file: `Tests/ClinicRulesTests` builds facts by hand and calls them. The
// controllers gather, call one of these, and hand the decision to the store's write.

/// A booking asked for, in plain values (its notes already checked, `AppointmentController.checkedNotes`).
public struct BookingAsk: Sendable, Equatable {
    public var clientId: Int64
    public var departmentId: Int64
    public var time: TimeInput.Parsed
    /// Only this doctor; nil: the first free doctor of the department.
    public var doctorId: Int64?
    public var notes: String
    /// The staff member booking for the patient; nil: the patient themselves.
    public var staffId: Int64?
    public var visitTypeId: Int64?

    public init(clientId: Int64, departmentId: Int64, time: TimeInput.Parsed, doctorId: Int64? = nil, notes: String = "",
                staffId: Int64? = nil, visitTypeId: Int64? = nil) {
        self.clientId = clientId; self.departmentId = departmentId; self.time = time; self.doctorId = doctorId
        self.notes = notes; self.staffId = staffId; self.visitTypeId = visitTypeId
    }
}

/// A move asked for: the appointment as it is (its notes opened), the new time and, with
/// `doctorId`, the doctor it must be with; who moves it and why.
public struct MoveAsk: Sendable, Equatable {
    public var appointment: Appointment
    public var time: TimeInput.Parsed
    public var doctorId: Int64?
    public var staffId: Int64?
    public var reason: String?

    public init(appointment: Appointment, time: TimeInput.Parsed, doctorId: Int64? = nil, staffId: Int64? = nil, reason: String? = nil) {
        self.appointment = appointment; self.time = time; self.doctorId = doctorId; self.staffId = staffId; self.reason = reason
    }
}

/// What a booking, a move or a cancellation decided: the appointment as it is to be written
/// (notes in clear; for a booking, the id the facts gave, or nil where the store gives one as
/// it writes), its history entry, and the patient's message (nil when the patient gets none,
/// or, for a booking, when the id is not known yet: the message names it).
public struct BookingDecision: Sendable, Equatable {
    public var appointment: Appointment
    public var event: AppointmentEvent
    public var message: NewInboxMessage?
    /// The audit trail's row, for a change the staff make (written in the same transaction).
    public var audit: AuditAsk?
    /// The text about the message (a clinic's cancellation), for a patient who takes them.
    public var text: TextAsk?

    public init(appointment: Appointment, event: AppointmentEvent, message: NewInboxMessage?, audit: AuditAsk? = nil,
                text: TextAsk? = nil) {
        self.appointment = appointment; self.event = event; self.message = message; self.audit = audit; self.text = text
    }

    /// The rest of a change's write after the appointment's, in the caller's transaction: the
    /// text about the message written with it (`messageId`), then the audit row.
    package func writeFollowing(_ tx: any StoreWriting, messageId: Int64?) throws {
        if let text, let messageId {
            try Texts.queue(tx, clientId: text.clientId, topic: text.topic, body: text.body, messageId: messageId, now: event.at)
        }
        if let audit { try AuditLog.append(tx, audit) }
    }
}

extension BookingDecision {
    /// What tells the patient of a visit the clinic cancelled (`moved`, already cancelled): the
    /// message, in their language, with `reason` (else `defaultReason`), and its text for a
    /// patient who takes texts. Nothing without the message's context (no patient, or none
    /// gathered). A staff member's cancellation, the operator's, and a schedule change's.
    static func clinicCancellation(_ moved: Appointment, context: AppointmentMessageContext?, reason: String?,
                                   defaultReason: MessageKey? = nil, staffId: Int64?) -> (message: NewInboxMessage?, text: TextAsk?) {
        guard let context else { return (nil, nil) }
        let message = Inbox.message(about: moved, kind: .clinicCancelled, context: context, reason: reason, defaultReason: defaultReason,
                                    staffId: staffId)
        guard let clientId = moved.clientId, let (body, topic) = Texts.body(about: moved, kind: .clinicCancelled, context: context) else {
            return (message, nil)
        }
        return (message, TextAsk(clientId: clientId, topic: topic, body: body))
    }

    /// A booking's decision written in the caller's transaction: in one write where the facts
    /// gave the id (the notes sealed to it, the message about it, `StoreWriting.insertBooking`),
    /// else the seam's writes one by one. The appointment as written, its notes in clear.
    public func write(_ tx: any StoreWriting, facts: BookingFacts) throws -> Appointment {
        guard facts.appointmentId != nil else {
            // A store that gives the id as it writes.
            let booked = try tx.insertAppointment(appointment)
            var entry = event
            entry.appointmentId = booked.id ?? 0
            try tx.insertAppointmentEvent(entry)
            try Inbox.about(tx, booked, kind: .booked, staffId: event.staffId, now: event.at, context: facts.messageContext)
            return booked
        }
        let cipher = appointment.notes.isEmpty ? nil : try AppointmentNotes.sealingCipher(tx, keyCheck: facts.personalDataKeyCheck)
        var booked = try tx.insertBooking(try sealed(cipher), event: event, message: message)
        booked.notes = appointment.notes
        return booked
    }

    /// The appointment as stored: its notes sealed under `cipher` to its id (nil: no notes to seal).
    package func sealed(_ cipher: FieldCipher?) throws -> Appointment {
        var stored = appointment
        if let cipher, let id = appointment.id, !appointment.notes.isEmpty {
            stored.notes = try AppointmentNotes.seal(appointment.notes, appointmentId: id, cipher: cipher)
        }
        return stored
    }

    /// A whole change of one appointment's status in the caller's write transaction (what a
    /// store whose transactions run synchronously does for `ClinicStore.changeAppointment`).
    package static func change(_ tx: any StoreWriting, id: Int64,
                               decide: (AppointmentChangeFacts?) throws -> BookingDecision?) throws -> Appointment {
        let facts = try tx.appointmentChangeFacts(id: id)
        guard let decision = try decide(facts) else {
            guard let facts else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
            return try AppointmentNotes.opened(facts.appointment, tx, keyCheck: facts.personalDataKeyCheck)
        }
        let messageId = try tx.changeAppointment(decision.appointment, event: decision.event, message: decision.message)
        try decision.writeFollowing(tx, messageId: messageId)
        return try AppointmentNotes.opened(decision.appointment, tx, keyCheck: facts?.personalDataKeyCheck)
    }

    /// A whole move in the caller's write transaction (`ClinicStore.moveAppointment` on a
    /// store whose transactions run synchronously).
    package static func move(_ tx: any StoreWriting, id: Int64, plan: (AppointmentChangeFacts?) throws -> BookingFactsRequest,
                             decide: (AppointmentChangeFacts, BookingFacts) throws -> BookingDecision?) throws -> Appointment {
        let change = try tx.appointmentChangeFacts(id: id)
        let ask = try plan(change)
        guard let change else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
        let facts = try tx.bookingFacts(ask)
        guard let decision = try decide(change, facts) else {
            return try AppointmentNotes.opened(change.appointment, tx, keyCheck: change.personalDataKeyCheck)
        }
        let messageId = try tx.changeAppointment(decision.appointment, event: decision.event, message: decision.message)
        try decision.writeFollowing(tx, messageId: messageId)
        return try AppointmentNotes.opened(decision.appointment, tx, keyCheck: change.personalDataKeyCheck)
    }

    /// A hold booked in the caller's write transaction (`ClinicStore.bookHold` on a store whose
    /// transactions run synchronously): the hold, `plan`, the booking's facts, `decide`, the
    /// booking written and the hold ended.
    package static func bookHold(_ tx: any StoreWriting, id: Int64, plan: (SlotHold?) throws -> BookingFactsRequest,
                                 decide: (SlotHold, BookingFacts) throws -> BookingDecision) throws -> Appointment {
        let hold = try tx.slotHold(id: id)
        let ask = try plan(hold)
        guard let hold else { throw ClinicError(.notFound, .holdNotFound, String(id)) }
        let facts = try tx.bookingFacts(ask)
        let booked = try decide(hold, facts).write(tx, facts: facts)
        try tx.deleteSlotHold(id: id)
        return booked
    }

    /// A hold in the caller's write transaction (`ClinicStore.hold` on a store whose
    /// transactions run synchronously): the holds released and the facts gathered, `decide`,
    /// the hold inserted.
    package static func hold(_ tx: any StoreWriting, _ ask: BookingFactsRequest,
                             decide: (HoldFacts) throws -> SlotHold) throws -> SlotHold {
        try tx.insertSlotHold(try decide(try tx.holdFacts(ask)))
    }

    /// A whole booking in the caller's write transaction: gather, decide, write (what a store
    /// whose transactions run synchronously does for `ClinicStore.book`).
    package static func book(_ tx: any StoreWriting, _ ask: BookingFactsRequest,
                             decide: (BookingFacts) throws -> BookingDecision) throws -> Appointment {
        let facts = try tx.bookingFacts(ask)
        return try decide(facts).write(tx, facts: facts)
    }
}

public enum BookingRules {
    // MARK: Decisions

    /// A new booking: the patient exists, the department and its clinic, the visit type
    /// offered there, a doctor with the slot free (`chooseDoctor`), the patient's own rules
    /// (`checkPatient`).
    public static func book(_ facts: BookingFacts, _ ask: BookingAsk, now: Date) throws -> BookingDecision {
        guard facts.clientExists else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        let policy = BookingPolicy(settings: facts.bookingSettings)
        let (department, clinic) = try departmentAndClinic(facts, ask.departmentId)
        let start = try TimeInput.resolve(ask.time, in: clinic.zone)
        let visit = try ask.visitTypeId.map { try VisitType.offered(facts.visitType, id: $0, departmentId: ask.departmentId) }
        let choice = try chooseDoctor(facts, department: department, clinic: clinic, start: start, preferred: ask.doctorId,
                                      strict: ask.doctorId != nil, now: now, policy: policy, duration: visit?.durationMinutes)
        try checkPatient(facts, start: start, end: choice.end, excluding: nil, policy: policy, zone: clinic.zone)
        let appointment = Appointment(
            id: facts.appointmentId, clientId: ask.clientId, clinicId: clinic.id ?? 0, departmentId: ask.departmentId,
            doctorId: choice.doctor.id ?? 0, doctorName: choice.doctor.name, startsAt: start, endsAt: choice.end,
            status: .scheduled, notes: ask.notes, createdAt: now, updatedAt: now, visitTypeId: visit?.id)
        let message = facts.appointmentId == nil ? nil : facts.messageContext.flatMap {
            Inbox.message(about: appointment, kind: .booked, context: $0, staffId: ask.staffId)
        }
        return BookingDecision(appointment: appointment,
                               event: event(appointment, "booked", ask.staffId == nil ? .patient : .staff, now, staffId: ask.staffId),
                               message: message)
    }

    /// A move to another time (and, with `doctorId`, to that doctor): the slot's rules as for a
    /// booking, the patient's other appointments, the visit's length kept (its visit type's,
    /// even one no longer offered). Nil: the same time with the same doctor, nothing to change.
    public static func move(_ facts: BookingFacts, _ ask: MoveAsk, policy: BookingPolicy, now: Date) throws -> BookingDecision? {
        var appointment = ask.appointment
        let (department, clinic) = try departmentAndClinic(facts, appointment.departmentId)
        let start = try TimeInput.resolve(ask.time, in: clinic.zone)
        guard start != appointment.startsAt || (ask.doctorId != nil && ask.doctorId != appointment.doctorId) else { return nil }
        let choice = try chooseDoctor(facts, department: department, clinic: clinic, start: start,
                                      preferred: ask.doctorId ?? appointment.doctorId, strict: ask.doctorId != nil, now: now,
                                      policy: policy, duration: facts.visitType?.durationMinutes)
        if appointment.clientId != nil {
            try checkPatient(facts, start: start, end: choice.end, excluding: appointment.id, policy: policy, zone: clinic.zone)
        }
        appointment.doctorId = choice.doctor.id ?? 0
        appointment.doctorName = choice.doctor.name
        appointment.startsAt = start
        appointment.endsAt = choice.end
        appointment.updatedAt = now
        let moved = appointment
        let message = facts.messageContext.flatMap {
            Inbox.message(about: moved, kind: .rescheduled, context: $0, reason: ask.reason, staffId: ask.staffId)
        }
        return BookingDecision(appointment: moved,
                               event: event(moved, "rescheduled", ask.staffId == nil ? .patient : .staff, now, reason: ask.reason,
                                            staffId: ask.staffId),
                               message: message)
    }

    /// Whether the patient may change the appointment now (a move or a cancellation): it is
    /// theirs, not checked in or over, and not within the cutoff. The policy it was decided under.
    public static func patientMayChange(_ facts: AppointmentChangeFacts?, id: Int64, clientId: Int64, refusal: MessageKey,
                                        now: Date) throws -> (AppointmentChangeFacts, BookingPolicy) {
        let facts = try owned(facts, id, clientId)
        let policy = BookingPolicy(settings: facts.bookingSettings)
        // Once checked in, the visit is the clinic's to change.
        guard facts.appointment.status.isPatientChangeable else {
            throw ClinicError(.invalidTransition, refusal, facts.appointment.status.rawValue)
        }
        try checkCutoff(facts.appointment, now: now, policy: policy)
        return (facts, policy)
    }

    /// A patient's cancellation: the status becomes `cancelled` (the row stays) and the slot is free.
    public static func cancel(_ facts: AppointmentChangeFacts?, id: Int64, clientId: Int64, now: Date) throws -> BookingDecision {
        var cancelled = try patientMayChange(facts, id: id, clientId: clientId, refusal: .cannotCancel, now: now).0.appointment
        cancelled.status = .cancelled
        cancelled.updatedAt = now
        let context = facts?.messageContext
        return BookingDecision(appointment: cancelled, event: event(cancelled, AppointmentStatus.cancelled.rawValue, .patient, now),
                               message: context.flatMap { Inbox.message(about: cancelled, kind: .cancelled, context: $0) })
    }

    /// The patient confirms they will come: scheduled becomes confirmed; nil for one
    /// confirmed already (nothing to change); any other status is refused.
    public static func confirm(_ appointment: Appointment, now: Date) throws -> BookingDecision? {
        guard appointment.status != .confirmed else { return nil }
        guard appointment.status == .scheduled else { throw ClinicError(.invalidTransition, .cannotConfirm, appointment.status.rawValue) }
        var confirmed = appointment
        confirmed.status = .confirmed
        confirmed.updatedAt = now
        return BookingDecision(appointment: confirmed, event: event(confirmed, AppointmentStatus.confirmed.rawValue, .patient, now),
                               message: nil)
    }

    /// A hold of the doctor's slot at `start` for the patient, under the booking's rules, and
    /// at most `booking.holds_per_doctor_day` of the doctor's times of that day held by others.
    /// Holding the same time again keeps the first hold's expiry.
    public static func hold(_ gathered: HoldFacts, clientId: Int64, departmentId: Int64, doctorId: Int64, start: Date,
                            visitTypeId: Int64?, now: Date) throws -> SlotHold {
        let facts = gathered.facts
        guard facts.clientExists else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        let policy = BookingPolicy(settings: facts.bookingSettings)
        let (department, clinic) = try departmentAndClinic(facts, departmentId)
        let visit = try visitTypeId.map { try VisitType.offered(facts.visitType, id: $0, departmentId: departmentId) }
        let choice = try chooseDoctor(facts, department: department, clinic: clinic, start: start, preferred: doctorId,
                                      strict: true, now: now, policy: policy, duration: visit?.durationMinutes)
        try checkPatient(facts, start: start, end: choice.end, excluding: nil, policy: policy, zone: clinic.zone)
        // Holding is free: a bound on how many of the doctor's times of the day others hold
        // (gathered under the doctor's lock on PostgreSQL), in the doctor's day in the
        // clinic's zone (within the gather's span, a day either side of the time).
        let day = LocalDateTime.of(start, in: clinic.zone).at(minuteOfDay: 0)
        let dayStart = day.firstInstant(in: clinic.zone) ?? start.addingTimeInterval(-86_400)
        let dayEnd = day.adding(days: 1).firstInstant(in: clinic.zone) ?? start.addingTimeInterval(86_400)
        let others = facts.holds.filter {
            $0.doctorId == doctorId && $0.clientId != clientId && $0.startsAt < dayEnd && $0.endsAt > dayStart
        }
        guard others.count < policy.holdsPerDoctorDay else {
            throw ClinicError(.limitReached, .holdsPerDoctorDay, String(policy.holdsPerDoctorDay))
        }
        var expires = now.addingTimeInterval(TimeInterval(policy.holdSeconds))
        if let earlier = gathered.released.first(where: { $0.startsAt < choice.end && $0.endsAt > start }) {
            expires = min(expires, earlier.expiresAt)
        }
        return SlotHold(clientId: clientId, clinicId: clinic.id ?? 0, departmentId: departmentId, doctorId: doctorId,
                        visitTypeId: visit?.id, startsAt: start, endsAt: choice.end, expiresAt: expires, createdAt: now)
    }

    // MARK: The rules one by one

    /// The department and its clinic, from the gathered facts.
    public static func departmentAndClinic(_ facts: BookingFacts, _ departmentId: Int64) throws -> (Department, Clinic) {
        guard let department = facts.department else { throw ClinicError(.notFound, .departmentNotFound, String(departmentId)) }
        guard let clinic = facts.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(department.clinicId)) }
        return (department, clinic)
    }

    /// The gathered facts of an appointment, if it exists and belongs to the patient.
    public static func owned(_ facts: AppointmentChangeFacts?, _ id: Int64, _ clientId: Int64) throws -> AppointmentChangeFacts {
        guard let facts else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
        guard facts.appointment.clientId == clientId else { throw ClinicError(.forbidden, .notYourAppointment, String(id)) }
        return facts
    }

    /// Patients cannot change an appointment starting within the cutoff.
    public static func checkCutoff(_ appointment: Appointment, now: Date, policy: BookingPolicy) throws {
        if appointment.startsAt.timeIntervalSince(now) < TimeInterval(policy.cutoffMinutes * 60) {
            throw ClinicError(.tooLate, .tooLate, String(policy.cutoffMinutes))
        }
    }

    /// Picks the doctor for a start. `strict`: only `preferred` will do. Otherwise `preferred`
    /// first (if it is in the department), then the others by id. The start must be in the
    /// future, at least the lead time ahead, within the horizon, a slot of the doctor's
    /// (weekly hours and exceptions, in the clinic's zone) and free.
    public static func chooseDoctor(_ facts: BookingFacts, department: Department, clinic: Clinic, start: Date, preferred: Int64?,
                                    strict: Bool, now: Date, policy: BookingPolicy, duration: Int? = nil) throws -> (doctor: Doctor, end: Date) {
        guard start > now else { throw ClinicError(.slotUnavailable, .slotInPast) }
        guard start >= now.addingTimeInterval(TimeInterval(policy.leadMinutes * 60)) else {
            throw ClinicError(.slotUnavailable, .slotTooSoon, String(policy.leadMinutes))
        }
        // The booking horizon: no appointment years ahead (nor in year 9999, whose end is no
        // longer a valid RFC 3339 time).
        guard start <= now.addingTimeInterval(policy.horizon) else {
            throw ClinicError(.slotUnavailable, .slotTooFar, String(policy.horizonDays))
        }
        var doctors = facts.doctors
        if let preferred {
            if strict {
                doctors = doctors.filter { $0.id == preferred }
                guard !doctors.isEmpty else { throw ClinicError(.notFound, .doctorNotFound, String(preferred)) }
            } else if let index = doctors.firstIndex(where: { $0.id == preferred }) {
                doctors.insert(doctors.remove(at: index), at: 0)
            }
        }
        let day = LocalDateTime.of(start, in: clinic.zone)
        var someoneWorks = false
        for doctor in doctors {
            let id = doctor.id ?? 0
            let schedule = DoctorSchedule(weekly: facts.hours[id] ?? [], exceptions: facts.exceptions[id] ?? [])
            guard let end = schedule.slotEnd(startingAt: start, zone: clinic.zone, duration: duration) else { continue }
            someoneWorks = true
            // Any active appointment of the doctor overlapping the slot takes it (hours may have
            // changed since it was booked); a live hold takes it too, unless it is the hold this
            // booking books (left out of the facts). The stores' constraints back this.
            let taken = (facts.taken[id] ?? []).contains { $0.lowerBound < end && $0.upperBound > start }
            if !taken { return (doctor, end) }
        }
        if someoneWorks { throw ClinicError(.slotTaken, .slotTaken) }
        throw ClinicError(.slotUnavailable, .slotOutsideHours, day.description, clinic.timeZone)
    }

    /// The patient's own rules: no overlapping active appointment (other than `excluding`, the
    /// one being moved); for a new one, room under the limit of active future appointments;
    /// and no other active visit in the department fewer than `booking.department_days_between`
    /// days away by the clinic's calendar (`too_close`, naming that visit's date).
    public static func checkPatient(_ facts: BookingFacts, start: Date, end: Date, excluding: Int64?, policy: BookingPolicy,
                                    zone: TimeZone) throws {
        let span = start..<max(start, end)
        if let overlapping = facts.patientAppointments.first(where: {
            $0.appointmentId != excluding && $0.span.lowerBound < span.upperBound && $0.span.upperBound > span.lowerBound }) {
            throw ClinicError(.overlappingAppointment, .overlapping, String(overlapping.appointmentId))
        }
        if excluding == nil, facts.activeCount >= policy.maxActive {
            throw ClinicError(.limitReached, .limitReached, String(policy.maxActive))
        }
        try checkSpacing(facts.departmentVisits, start: start, excluding: excluding, days: policy.departmentDaysBetween, zone: zone)
    }

    /// The department spacing rule: `days` 0 is none; otherwise every other visit's date (in
    /// the clinic's zone) is at least `days` days from the start's.
    public static func checkSpacing(_ visits: [PatientSpan], start: Date, excluding: Int64?, days: Int, zone: TimeZone) throws {
        guard days > 0 else { return }
        let day = LocalDateTime.of(start, in: zone).daysSinceEpoch
        let near = visits.filter { visit in
            visit.appointmentId != excluding && abs(LocalDateTime.of(visit.span.lowerBound, in: zone).daysSinceEpoch - day) < days
        }
        guard let nearest = near.min(by: { abs($0.span.lowerBound.timeIntervalSince(start)) < abs($1.span.lowerBound.timeIntervalSince(start)) })
        else { return }
        throw ClinicError(.tooClose, .tooClose, DoctorSchedule.dayKey(LocalDateTime.of(nearest.span.lowerBound, in: zone)), String(days))
    }

    /// An appointment's history entry: `booked` and `rescheduled` name the slot.
    public static func event(_ appointment: Appointment, _ event: String, _ actor: ChangedBy, _ now: Date, reason: String? = nil,
                             staffId: Int64? = nil) -> AppointmentEvent {
        let withSlot = event == "booked" || event == "rescheduled"
        return AppointmentEvent(id: nil, appointmentId: appointment.id ?? 0, event: event, actor: actor.rawValue, at: now,
                                startsAt: withSlot ? appointment.startsAt : nil,
                                doctorId: withSlot ? appointment.doctorId : nil, reason: reason, staffId: staffId)
    }
}
