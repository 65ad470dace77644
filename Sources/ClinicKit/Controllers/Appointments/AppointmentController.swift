import Foundation

public enum AppointmentScope: String, Sendable, CaseIterable {
    case upcoming, past, all

    /// `upcoming`: active and not started yet; `past`: started already, any status; `all`.
    public func contains(_ appointment: Appointment, now: Date) -> Bool {
        switch self {
        case .all: true
        case .upcoming: appointment.startsAt >= now && appointment.status.isActive
        case .past: appointment.startsAt < now
        }
    }
}

/// Who changed an appointment (its history's `actor` column): the patient or staff. Named so as not
/// to shadow Swift's `Actor`.
public enum ChangedBy: String, Sendable {
    case patient, staff
}

/// One entry of an appointment's history.
extension AppointmentEvent {
    /// For each entry of a history (oldest first), the time the appointment had before it: a
    /// `rescheduled` entry moved it from there to its own `startsAt`.
    public static func previousStarts(_ history: [AppointmentEvent]) -> [Date?] {
        var last: Date?
        return history.map { event in
            defer { if let start = event.startsAt { last = start } }
            return last
        }
    }

    /// What happened, in words: "booked", "rescheduled", or the status it moved to.
    public func text(_ language: Language) -> String {
        switch event {
        case "booked": Strings.text(.eventBooked, language)
        case "rescheduled": Strings.text(.eventRescheduled, language)
        default: AppointmentStatus(rawValue: event)?.text(language) ?? event
        }
    }
}

public struct AppointmentEvent: Hashable, Sendable {

    public var id: Int64?
    public var appointmentId: Int64
    /// `booked`, `rescheduled`, or the status the appointment moved to.
    public var event: String
    public var actor: String
    public var at: Date
    /// The slot, for `booked` and `rescheduled`.
    public var startsAt: Date?
    public var doctorId: Int64?
    /// Why, when the change has a reason to give ("account deleted").
    public var reason: String? = nil
    /// The staff account that made the change (migration 11), nil for a patient's or the operator's.
    public var staffId: Int64? = nil

}

/// A slot of a doctor and whether it can be booked now.
public struct Slot: Sendable, Equatable {
    public let doctorId: Int64
    public let doctorName: String
    public let start: Date
    public let end: Date
    public let isAvailable: Bool
    /// Held by an active appointment (an unavailable slot that is not taken is past or too soon).
    public let isTaken: Bool
}

/// The UML's `AppointmentController`: slots, booking, rescheduling, cancelling and the
/// appointment lifecycle. Every change is one IMMEDIATE transaction whose checks hold until it
/// commits, and is written to the appointment's history. Only the patient who owns an
/// appointment may see or change it; clinic staff change statuses through `setStatus`.
public final class AppointmentController: Sendable {
    let database: any ClinicStore
    let now: @Sendable () -> Date
    /// Every change this controller and the staff's make, for the metrics.
    public let changes: AppointmentChanges

    public init(database: any ClinicStore, now: @escaping @Sendable () -> Date = { Date() },
                changes: AppointmentChanges = AppointmentChanges()) {
        self.database = database
        self.now = now
        self.changes = changes
    }

    // MARK: Booking

    /// Books a slot in a department: with the chosen doctor, or the first doctor (by id) who
    /// has a free slot then. The start must be a slot of that doctor (weekly hours and
    /// exceptions, in the clinic's time zone), at least the lead time ahead, and free; the
    /// patient must have room under the limit and no overlapping appointment.
    public func createAppointment(clientId: Int64, departmentId: Int64, at time: TimeInput.Parsed,
                                  doctorId: Int64? = nil, notes: String = "", staffId: Int64? = nil,
                                  visitTypeId: Int64? = nil) throws -> Appointment {
        try changes.count("book") {
            try book(clientId: clientId, departmentId: departmentId, at: time, doctorId: doctorId, notes: notes, staffId: staffId,
                     visitTypeId: visitTypeId)
        }
    }

    /// `createAppointment` as the store's one async operation (issue 56): the store gathers the
    /// facts, `BookingRules.book` decides, the store writes, in one transaction the caller
    /// awaits (on SQLite in the next group-committed batch; on PostgreSQL with no thread
    /// blocked). What a server's request does.
    public func book(clientId: Int64, departmentId: Int64, at time: TimeInput.Parsed, doctorId: Int64? = nil, notes: String = "",
                     staffId: Int64? = nil, visitTypeId: Int64? = nil) async throws -> Appointment {
        let change = try booking(clientId: clientId, departmentId: departmentId, at: time, doctorId: doctorId, notes: notes,
                                 staffId: staffId, visitTypeId: visitTypeId)
        return try await changes.count("book") { try await database.run(change) }
    }

    /// `book` with the answer to its `Idempotency-Key` kept in the booking's own transaction
    /// (`ClinicStore.perform(_:keeping:answer:)`): the kept answer when there is one, else the
    /// booking's, made by `keeping.answer`.
    public func book(clientId: Int64, departmentId: Int64, at time: TimeInput.Parsed, doctorId: Int64? = nil, notes: String = "",
                     visitTypeId: Int64? = nil, keeping: AnswerKeeping<Appointment>) async throws -> IdempotencyStore.Response {
        let change = try booking(clientId: clientId, departmentId: departmentId, at: time, doctorId: doctorId, notes: notes,
                                 staffId: nil, visitTypeId: visitTypeId)
        return try await perform("book", change, clientId: clientId, keeping: keeping)
    }

    /// `cancelAppointment` as the store's one awaited operation (issue 56).
    public func cancel(_ id: Int64, clientId: Int64) async throws -> Appointment {
        let change = cancellation(id, clientId: clientId)
        return try await changes.count("cancel") { try await database.run(change) }
    }

    /// `confirmAppointment` as the store's one awaited operation (issue 56): no change (one
    /// confirmed already) answers the appointment as it is.
    public func confirm(_ id: Int64, clientId: Int64) async throws -> Appointment {
        let now = self.now()
        return try await database.run(.change(id: id) { facts in
            try BookingRules.confirm(try BookingRules.owned(facts, id, clientId).appointment, now: now)
        })
    }

    /// `cancel` with the answer to its `Idempotency-Key` kept in the same transaction.
    public func cancel(_ id: Int64, clientId: Int64, keeping: AnswerKeeping<Appointment>) async throws -> IdempotencyStore.Response {
        try await perform("cancel", cancellation(id, clientId: clientId), clientId: clientId, keeping: keeping)
    }

    /// `rescheduleAppointment` as the store's one awaited operation (issue 56): the patient's
    /// checks on the appointment's facts, then the move's on the new time's.
    public func reschedule(_ id: Int64, clientId: Int64, to time: TimeInput.Parsed) async throws -> Appointment {
        let change = move(id, clientId: clientId, to: time)
        return try await changes.count("reschedule") { try await database.run(change) }
    }

    /// `reschedule` with the answer to its `Idempotency-Key` kept in the same transaction.
    public func reschedule(_ id: Int64, clientId: Int64, to time: TimeInput.Parsed, keeping: AnswerKeeping<Appointment>) async throws -> IdempotencyStore.Response {
        try await perform("reschedule", move(id, clientId: clientId, to: time), clientId: clientId, keeping: keeping)
    }

    // The patient's three changes as the store runs them: the facts asked for and the rules
    // that decide on them (`BookingRules`).

    func booking(clientId: Int64, departmentId: Int64, at time: TimeInput.Parsed, doctorId: Int64?, notes: String,
                         staffId: Int64?, visitTypeId: Int64?) throws -> AwaitedChange {
        let notes = try Self.checkedNotes(notes)
        let now = self.now()
        let request = Self.factsRequest(clientId: clientId, departmentId: departmentId, visitTypeId: visitTypeId, onlyDoctorId: doctorId,
                                        at: time, exceptAppointment: nil, exceptHold: nil, now: now)
        let ask = BookingAsk(clientId: clientId, departmentId: departmentId, time: time, doctorId: doctorId, notes: notes,
                             staffId: staffId, visitTypeId: visitTypeId)
        return .book(request) { facts in try BookingRules.book(facts, ask, now: now) }
    }

    private func cancellation(_ id: Int64, clientId: Int64) -> AwaitedChange {
        let now = self.now()
        return .change(id: id) { facts in try BookingRules.cancel(facts, id: id, clientId: clientId, now: now) }
    }

    private func move(_ id: Int64, clientId: Int64, to time: TimeInput.Parsed) -> AwaitedChange {
        let now = self.now()
        return .move(id: id, plan: { facts in
            let appointment = try BookingRules.patientMayChange(facts, id: id, clientId: clientId, refusal: .cannotReschedule,
                                                                now: now).0.appointment
            return Self.factsRequest(clientId: appointment.clientId, departmentId: appointment.departmentId,
                                     visitTypeId: appointment.visitTypeId, onlyDoctorId: nil, at: time,
                                     exceptAppointment: appointment.id, exceptHold: nil, now: now)
        }, decide: { change, facts in
            try BookingRules.move(facts, MoveAsk(appointment: change.appointment, time: time),
                                  policy: BookingPolicy(settings: change.bookingSettings), now: now)
        })
    }

    /// A change with its answer kept; its outcome is counted when it is made, not when a kept
    /// answer is replayed.
    func perform(_ operation: String, _ change: AwaitedChange, clientId: Int64,
                         keeping: AnswerKeeping<Appointment>) async throws -> IdempotencyStore.Response {
        let changes = self.changes
        return try await keeping.store.perform(change, clientId: clientId, key: keeping.key, fingerprint: keeping.fingerprint) { outcome in
            changes.tell(operation, outcome)
            return try keeping.answer(outcome)
        }
    }

    private func book(clientId: Int64, departmentId: Int64, at time: TimeInput.Parsed, doctorId: Int64?, notes: String,
                      staffId: Int64?, visitTypeId: Int64?) throws -> Appointment {
        let notes = try Self.checkedNotes(notes)
        let now = self.now()
        return try database.writing { tx in
            try book(tx, clientId: clientId, departmentId: departmentId, at: time, doctorId: doctorId, notes: notes,
                     staffId: staffId, visitTypeId: visitTypeId, now: now)
        }
    }

    /// A booking in the caller's transaction. The store gathers the facts (`bookingFacts`), the
    /// rules decide over them alone, and the store writes the appointment, its history and the
    /// patient's message at once (`insertBooking`).
    func book(_ tx: any StoreWriting, clientId: Int64, departmentId: Int64, at time: TimeInput.Parsed, doctorId: Int64?,
              notes: String, staffId: Int64?, visitTypeId: Int64?, now: Date) throws -> Appointment {
        let ask = BookingAsk(clientId: clientId, departmentId: departmentId, time: time, doctorId: doctorId, notes: notes,
                             staffId: staffId, visitTypeId: visitTypeId)
        return try BookingDecision.book(tx, Self.factsRequest(clientId: clientId, departmentId: departmentId, visitTypeId: visitTypeId,
                                                              onlyDoctorId: doctorId, at: time, exceptAppointment: nil,
                                                              exceptHold: nil, now: now)) { facts in
            try BookingRules.book(facts, ask, now: now)
        }
    }

    /// What `bookingFacts` is asked for a start given as `time`, before the clinic's zone is
    /// known: the local dates and the instants a start of any zone (UTC−12 to UTC+14) can be on.
    static func factsRequest(clientId: Int64?, departmentId: Int64, visitTypeId: Int64?, onlyDoctorId: Int64?,
                             at time: TimeInput.Parsed, exceptAppointment: Int64?, exceptHold: Int64?, now: Date) -> BookingFactsRequest {
        let local: LocalDateTime = switch time {
        case .instant(let date): LocalDateTime.of(date, in: utc)
        case .local(let local): local
        }
        let day = local.at(minuteOfDay: 0)
        // Only the days of years 1 to 9999, which a time can name: a day of year 0 or 10000 is
        // one no store need read (PostgreSQL has no year 0), and whose key would not sort.
        let before = day.adding(days: -1), after = day.adding(days: 1)
        let first = DoctorSchedule.dayKey(before.year >= 1 ? before : day), last = DoctorSchedule.dayKey(after.year <= 9999 ? after : day)
        return BookingFactsRequest(clientId: clientId, departmentId: departmentId, visitTypeId: visitTypeId, onlyDoctorId: onlyDoctorId,
                                   days: first...last,
                                   span: takenSpan(first: day, last: day), exceptAppointment: exceptAppointment,
                                   exceptHold: exceptHold, now: now)
    }

    /// Moves an appointment to a new start in the same department, atomically: the old slot
    /// is given up only if the new one is taken. The same doctor is kept when free then, else
    /// the first free doctor of the department. Refused within the cutoff before the start.
    public func rescheduleAppointment(_ id: Int64, clientId: Int64, to time: TimeInput.Parsed) throws -> Appointment {
        let now = self.now()
        return try changes.count("reschedule") { try database.writing { tx in
            let (facts, policy) = try BookingRules.patientMayChange(try tx.appointmentChangeFacts(id: id), id: id, clientId: clientId,
                                                                     refusal: .cannotReschedule, now: now)
            let appointment = try AppointmentNotes.opened(facts.appointment, tx, keyCheck: facts.personalDataKeyCheck)
            return try relocate(tx, appointment, to: time, doctorId: nil, policy: policy, now: now, staffId: nil, reason: nil)
        } }
    }

    /// Moves an appointment to another time (and, with `doctorId`, to that doctor) in one
    /// change (`BookingRules.move`); the history says who moved it (`staffId`) and why, and the
    /// patient is told in the inbox. The same time with the same doctor changes nothing.
    /// `hold`: a hold of the new time for this patient (a waitlist offer's), which does not
    /// stand in the move's way.
    func relocate(_ tx: any StoreWriting, _ appointment: Appointment, to time: TimeInput.Parsed, doctorId: Int64?,
                  policy: BookingPolicy, now: Date, staffId: Int64?, reason: String?, hold: Int64? = nil) throws -> Appointment {
        let facts = try tx.bookingFacts(Self.factsRequest(clientId: appointment.clientId, departmentId: appointment.departmentId,
                                                          visitTypeId: appointment.visitTypeId, onlyDoctorId: doctorId, at: time,
                                                          exceptAppointment: appointment.id, exceptHold: hold, now: now))
        guard let decision = try BookingRules.move(facts, MoveAsk(appointment: appointment, time: time, doctorId: doctorId,
                                                                  staffId: staffId, reason: reason), policy: policy, now: now)
        else { return appointment }
        try tx.changeAppointment(decision.appointment, event: decision.event, message: decision.message)
        return decision.appointment
    }

    /// A patient cancels: the status becomes `cancelled` (the row stays) and the slot is free.
    /// Refused within the cutoff before the start.
    public func cancelAppointment(_ id: Int64, clientId: Int64) throws -> Appointment {
        let now = self.now()
        return try changes.count("cancel") { try database.writing { tx in
            let facts = try tx.appointmentChangeFacts(id: id)
            let decision = try BookingRules.cancel(facts, id: id, clientId: clientId, now: now)
            try tx.changeAppointment(decision.appointment, event: decision.event, message: decision.message)
            return try AppointmentNotes.opened(decision.appointment, tx, keyCheck: facts?.personalDataKeyCheck)
        } }
    }

    /// The patient confirms they will come (a reply C to a reminder): scheduled becomes
    /// confirmed, in the history staff see; one confirmed already stays as it is.
    public func confirmAppointment(_ id: Int64, clientId: Int64) throws -> Appointment {
        let now = self.now()
        return try database.writing { tx in
            let facts = try BookingRules.owned(try tx.appointmentChangeFacts(id: id), id, clientId)
            guard let decision = try BookingRules.confirm(facts.appointment, now: now) else {
                return try AppointmentNotes.opened(facts.appointment, tx, keyCheck: facts.personalDataKeyCheck)
            }
            try tx.changeAppointment(decision.appointment, event: decision.event, message: nil)
            return try AppointmentNotes.opened(decision.appointment, tx, keyCheck: facts.personalDataKeyCheck)
        }
    }

    /// The operator changes an appointment's status along `AppointmentStatus.transitions`;
    /// `completed` and `no_show` only once the appointment has started; no cutoff applies. One
    /// awaited change of the store (issue 56, `changeAppointment`): the appointment gathered,
    /// `statusDecision` decides, the store writes it with the patient's message and text of a
    /// cancellation and the audit row (by `actor`).
    public func setStatus(_ id: Int64, to status: AppointmentStatus, by actor: AuditActor = .operator,
                          requestId: String? = nil) async throws -> Appointment {
        let now = self.now()
        return try await database.run(.change(id: id) { facts in
            try Self.statusDecision(facts, id: id, to: status, by: actor, requestId: requestId, now: now)
        })
    }

    /// An operator's change of status, decided on the appointment's facts: along
    /// `AppointmentStatus.transitions`, `completed` and `no_show` only once it has started; a
    /// cancellation tells the patient (no reason given: the clinic's) by message and text.
    static func statusDecision(_ facts: AppointmentChangeFacts?, id: Int64, to status: AppointmentStatus, by actor: AuditActor,
                               requestId: String?, now: Date) throws -> BookingDecision {
        guard let appointment = facts?.appointment else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
        guard appointment.status.canMove(to: status) else {
            throw ClinicError(.invalidTransition, .transitionRefused, appointment.status.rawValue, status.rawValue)
        }
        if (status == .completed || status == .noShow) && now < appointment.startsAt {
            throw ClinicError(.invalidTransition, .notStartedYet, status.rawValue)
        }
        var moved = appointment
        moved.status = status
        moved.updatedAt = now
        let (message, text) = status == .cancelled
            ? BookingDecision.clinicCancellation(moved, context: facts?.messageContext, reason: nil, defaultReason: .staffNoReason,
                                                 staffId: nil)
            : (nil, nil)
        return BookingDecision(
            appointment: moved, event: BookingRules.event(moved, status.rawValue, .staff, now), message: message,
            audit: AuditAsk(by: actor, action: .appointmentStatus, clientId: appointment.clientId, appointmentId: id,
                            clinicId: appointment.clinicId, requestId: requestId,
                            detail: "\(appointment.status.rawValue) -> \(status.rawValue)", now: now),
            text: text)
    }

    public func getAppointmentById(_ id: Int64, clientId: Int64) throws -> Appointment {
        try database.reading { tx in try Self.owned(tx, id, clientId) }
    }

    /// An appointment's history, oldest first (owner only).
    public func history(_ id: Int64, clientId: Int64) throws -> [AppointmentEvent] {
        try appointmentWithHistory(id, clientId: clientId).history
    }

    /// An appointment and its history, oldest first, read and checked once (owner only).
    public func appointmentWithHistory(_ id: Int64, clientId: Int64) throws -> (appointment: Appointment, history: [AppointmentEvent]) {
        try database.reading { tx in
            let appointment = try Self.owned(tx, id, clientId)
            return (appointment, try Self.events(tx, of: [id])[id] ?? [])
        }
    }

    /// The histories of some appointments, each oldest first, in one query.
    static func events(_ tx: any StoreReading, of ids: [Int64]) throws -> [Int64: [AppointmentEvent]] {
        Dictionary(grouping: try tx.appointmentEvents(of: ids), by: \.appointmentId)
    }

    /// A patient's appointments, soonest first: `upcoming` are the active ones not yet
    /// started, `past` those that started already (any status), `all` everything.
    public func getAppointmentsByClientId(_ clientId: Int64, scope: AppointmentScope = .upcoming) throws -> [Appointment] {
        let now = self.now()
        let all = try database.reading { tx in try tx.appointments(ofClient: clientId) }
        return all.filter { scope.contains($0, now: now) }
    }

    /// One page of the patient's appointments in the order (start, id), `limit` long (1 to 100).
    public func appointmentsPage(_ clientId: Int64, scope: AppointmentScope, limit: Int, cursor: String?) throws -> Page<Appointment> {
        try Page<Appointment>.checkLimit(limit)
        let after = try cursor.map(PagePosition.init(cursor:))
        return Self.page(try getAppointmentsByClientId(clientId, scope: scope), limit: limit, after: after)
    }

    /// The page of `list` (in the order (start, id)) after `after`, `limit` long.
    static func page(_ list: [Appointment], limit: Int, after: PagePosition?) -> Page<Appointment> {
        func position(_ appointment: Appointment) -> (Int64, Int64) { (appointment.startsAt.seconds, appointment.id ?? 0) }
        let rest = list.filter { appointment in
            guard let after else { return true }
            return position(appointment) > (Int64(after.key) ?? .min, after.id)
        }
        let items = Array(rest.prefix(limit))
        let next = rest.count > limit ? items.last.map { PagePosition(key: String($0.startsAt.seconds), id: $0.id ?? 0).cursor } : nil
        return Page(items: items, nextCursor: next)
    }

    // MARK: Rules

    static let maximumNotesLength = 1000

    static func checkedNotes(_ notes: String) throws -> String {
        let trimmed = notes.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= maximumNotesLength else {
            throw ClinicError.invalid(.notesTooLong, String(maximumNotesLength))
        }
        guard !Text.hasForbiddenControl(trimmed, allowing: ["\n"])
        else { throw ClinicError.invalid(.notesControl) }
        return trimmed
    }

    func departmentAndClinic(_ tx: any StoreReading, _ departmentId: Int64) throws -> (Department, Clinic) {
        guard let department = try tx.department(id: departmentId) else {
            throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
        }
        guard let clinic = try tx.clinic(id: department.clinicId) else {
            throw ClinicError(.notFound, .clinicNotFound, String(department.clinicId))
        }
        return (department, clinic)
    }

    /// The appointment, if it exists and belongs to the patient.
    static func owned(_ tx: any StoreReading, _ id: Int64, _ clientId: Int64) throws -> Appointment {
        try owned(try tx.appointment(id: id), id, clientId)
    }

    /// The appointment `id` as read (nil: none), if it is the patient's.
    static func owned(_ appointment: Appointment?, _ id: Int64, _ clientId: Int64) throws -> Appointment {
        guard let appointment else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
        guard appointment.clientId == clientId else { throw ClinicError(.forbidden, .notYourAppointment, String(id)) }
        return appointment
    }

    func move(_ tx: any StoreWriting, _ appointment: Appointment, to status: AppointmentStatus, by actor: ChangedBy, now: Date,
              reason: String? = nil) throws -> Appointment {
        try Self.move(tx, appointment, to: status, by: actor, now: now, reason: reason)
    }

    /// Moves an appointment to a status and writes that to its history, in the caller's
    /// transaction; what every status change goes through (the profile's account deletion too).
    static func move(_ tx: any StoreWriting, _ appointment: Appointment, to status: AppointmentStatus,
                     by actor: ChangedBy, now: Date, reason: String? = nil, staffId: Int64? = nil) throws -> Appointment {
        var appointment = appointment
        appointment.status = status
        appointment.updatedAt = now
        try tx.updateAppointment(appointment)
        try record(tx, appointment, status.rawValue, actor, now, reason: reason, staffId: staffId)
        return appointment
    }

    func record(_ tx: any StoreWriting, _ appointment: Appointment, _ event: String, _ actor: ChangedBy, _ now: Date) throws {
        try Self.record(tx, appointment, event, actor, now)
    }

    static func record(_ tx: any StoreWriting, _ appointment: Appointment, _ event: String, _ actor: ChangedBy, _ now: Date,
                       reason: String? = nil, staffId: Int64? = nil) throws {
        try tx.insertAppointmentEvent(BookingRules.event(appointment, event, actor, now, reason: reason, staffId: staffId))
    }

}
