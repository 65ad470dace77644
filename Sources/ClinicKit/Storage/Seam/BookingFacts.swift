import Foundation

// A booking's storage work as a gather, a decision and one write (issue 44): the store reads
// what the rules need at once (`StoreWriting.bookingFacts`), ClinicKit decides over those facts
// alone (`BookingRules.book`, a pure function: issue 56), and the store writes the appointment, its
// history entry and the patient's message (with its e-mail delivery) at once
// (`StoreWriting.insertBooking`). The defaults below are the seam's reads and writes one by
// one, what a store in this process does (no round trips to save); PostgreSQL gathers in one
// statement after the locks that keep the facts true until COMMIT, and writes in one.

/// What a booking (or a move) asks the store to gather.
public struct BookingFactsRequest: Sendable, Equatable {
    /// The patient booking; nil for an appointment without one (a walk-in's, moved by staff).
    public var clientId: Int64?
    public var departmentId: Int64
    public var visitTypeId: Int64?
    /// Only this doctor may be chosen; nil: any active doctor of the department.
    public var onlyDoctorId: Int64?
    /// The local dates (keys "YYYY-MM-DD") whose exceptions may apply to the start.
    public var days: ClosedRange<String>
    /// The instants any slot starting at the time asked for lies within, whatever the clinic's zone.
    public var span: Range<Date>
    /// The appointment being moved: it does not take its own time.
    public var exceptAppointment: Int64?
    /// The patient's hold being booked: it does not stand in its own booking's way.
    public var exceptHold: Int64?
    public var now: Date
    /// Whether the candidate doctors' live holds within the span are gathered too (`BookingFacts.holds`).
    public var holds: Bool

    /// The instants within which the patient's other visits in the department are gathered
    /// (`BookingFacts.departmentVisits`): the span widened by a year and a day each way, more
    /// than `booking.department_days_between` can ask for.
    public var departmentSpan: Range<Date> {
        span.lowerBound.addingTimeInterval(-Self.departmentReach)..<span.upperBound.addingTimeInterval(Self.departmentReach)
    }

    public static let departmentReach: TimeInterval = 367 * 86_400

    public init(clientId: Int64?, departmentId: Int64, visitTypeId: Int64?, onlyDoctorId: Int64?, days: ClosedRange<String>,
                span: Range<Date>, exceptAppointment: Int64?, exceptHold: Int64?, now: Date, holds: Bool = false) {
        self.clientId = clientId; self.departmentId = departmentId; self.visitTypeId = visitTypeId
        self.onlyDoctorId = onlyDoctorId; self.days = days; self.span = span; self.exceptAppointment = exceptAppointment
        self.exceptHold = exceptHold; self.now = now; self.holds = holds
    }
}

/// An active appointment of the patient: its id and its time.
public struct PatientSpan: Sendable, Equatable {
    public var appointmentId: Int64
    public var span: Range<Date>

    public init(appointmentId: Int64, span: Range<Date>) { self.appointmentId = appointmentId; self.span = span }
}

/// What a booking is decided on: the patient, the department, its clinic, the visit type asked
/// for, the candidate doctors (active, by id) with their weekly hours, their exceptions of the
/// days and the times taken within the span (active appointments and live holds, less the
/// request's own), the patient's active appointments within the span and how many they hold
/// from now, the `booking.` settings, what the patient's message is written from, and, where
/// the store gives ids before it writes, the new appointment's id.
public struct BookingFacts: Sendable, Equatable {
    public var clientExists: Bool
    public var department: Department?
    /// Nil only if the department's clinic is gone (the schema's foreign key forbids it).
    public var clinic: Clinic?
    /// The visit type asked for, whatever department it is of (`VisitType.offered` decides).
    public var visitType: VisitType?
    public var doctors: [Doctor]
    public var hours: [Int64: [WorkingHours]]
    public var exceptions: [Int64: [WorkingException]]
    public var taken: [Int64: [Range<Date>]]
    public var patientAppointments: [PatientSpan]
    /// The patient's active appointments starting at or after `now`.
    public var activeCount: Int
    public var bookingSettings: [String: String]
    /// Nil when the patient gets no message (no patient, or a schema before inboxes).
    public var messageContext: AppointmentMessageContext?
    /// The id the new appointment will have, when the store gives it before the write.
    public var appointmentId: Int64?
    /// The stored personal-data key check (what notes are sealed under), when the store
    /// gathered it; nil: not gathered, or none stored yet (sealing then reads or stores it).
    public var personalDataKeyCheck: String?
    /// The candidate doctors' live holds within the span, by doctor, then start (when asked
    /// for, `BookingFactsRequest.holds`; empty otherwise).
    public var holds: [SlotHold]
    /// The patient's active appointments in the department within `departmentSpan`, by
    /// start, when `booking.department_days_between` is set (empty otherwise): the department
    /// spacing rule's facts.
    public var departmentVisits: [PatientSpan]

    public init(clientExists: Bool, department: Department?, clinic: Clinic?, visitType: VisitType?, doctors: [Doctor],
                hours: [Int64: [WorkingHours]], exceptions: [Int64: [WorkingException]], taken: [Int64: [Range<Date>]],
                patientAppointments: [PatientSpan], activeCount: Int, bookingSettings: [String: String],
                messageContext: AppointmentMessageContext?, appointmentId: Int64?, personalDataKeyCheck: String? = nil,
                holds: [SlotHold] = [], departmentVisits: [PatientSpan] = []) {
        self.clientExists = clientExists; self.department = department; self.clinic = clinic; self.visitType = visitType
        self.doctors = doctors; self.hours = hours; self.exceptions = exceptions; self.taken = taken
        self.patientAppointments = patientAppointments; self.activeCount = activeCount; self.bookingSettings = bookingSettings
        self.messageContext = messageContext; self.appointmentId = appointmentId
        self.personalDataKeyCheck = personalDataKeyCheck; self.holds = holds; self.departmentVisits = departmentVisits
    }
}

/// What a hold is decided on (`StoreWriting.holdFacts`): the booking's facts with the candidate
/// doctors' live holds, gathered after the patient's holds were released, and the patient's
/// holds released (live ones of the doctor asked for, within the span: holding the same time
/// again keeps the first hold's expiry).
public struct HoldFacts: Sendable, Equatable {
    public var facts: BookingFacts
    public var released: [SlotHold]

    public init(facts: BookingFacts, released: [SlotHold]) { self.facts = facts; self.released = released }
}

/// What a patient's change of one appointment (a cancellation, a move) is decided on: the
/// appointment with its notes as stored, the `booking.` settings, what the patient's message is
/// written from, and the stored personal-data key check (the notes are opened under it), when
/// the store gathered it.
public struct AppointmentChangeFacts: Sendable, Equatable {
    public var appointment: Appointment
    public var bookingSettings: [String: String]
    public var messageContext: AppointmentMessageContext?
    public var personalDataKeyCheck: String?
    /// The appointment's clinic's time zone (its identifier); nil when the clinic is gone.
    public var clinicTimeZone: String?

    public init(appointment: Appointment, bookingSettings: [String: String], messageContext: AppointmentMessageContext?,
                personalDataKeyCheck: String?, clinicTimeZone: String? = nil) {
        self.appointment = appointment; self.bookingSettings = bookingSettings; self.messageContext = messageContext
        self.personalDataKeyCheck = personalDataKeyCheck; self.clinicTimeZone = clinicTimeZone
    }

    /// The gather as the seam's reads, in the caller's transaction (the default of
    /// `StoreWriting.appointmentChangeFacts`; no key check gathered).
    public static func read(_ tx: any StoreWriting, id: Int64) throws -> AppointmentChangeFacts? {
        guard let appointment = try tx.storedAppointment(id: id) else { return nil }
        var context: AppointmentMessageContext?
        if let clientId = appointment.clientId, try tx.keepsInboxes() {
            context = try tx.messageContext(client: clientId, clinic: appointment.clinicId, department: appointment.departmentId)
        }
        return AppointmentChangeFacts(appointment: appointment, bookingSettings: try tx.settings(prefix: "booking."),
                                      messageContext: context, personalDataKeyCheck: nil,
                                      clinicTimeZone: try tx.clinic(id: appointment.clinicId)?.timeZone)
    }
}

/// The patient's message about a booking, written with it (`StoreWriting.insertBooking`).
public struct NewInboxMessage: Sendable, Equatable {
    public var clientId: Int64
    public var kind: MessageKind
    public var subject: String
    public var body: String
    public var clinicId: Int64?
    public var staffId: Int64?
    /// E-mailed too (a delivery queued with it).
    public var emailed: Bool

    public init(clientId: Int64, kind: MessageKind, subject: String, body: String, clinicId: Int64?, staffId: Int64?, emailed: Bool) {
        self.clientId = clientId; self.kind = kind; self.subject = subject; self.body = body; self.clinicId = clinicId
        self.staffId = staffId; self.emailed = emailed
    }
}

extension BookingFacts {
    /// The gather as the seam's reads, in the caller's transaction (the default of
    /// `StoreWriting.bookingFacts`; no id reserved, no key check gathered).
    public static func read(_ tx: any StoreWriting, _ ask: BookingFactsRequest) throws -> BookingFacts {
        let clientExists = try ask.clientId.map { try tx.clientExists(id: $0) } ?? false
        let department = try tx.department(id: ask.departmentId)
        let clinic = try department.map { try tx.clinic(id: $0.clinicId) } ?? nil
        var doctors = try tx.activeDoctors(inDepartment: ask.departmentId)
        if let only = ask.onlyDoctorId { doctors = doctors.filter { $0.id == only } }
        var hours: [Int64: [WorkingHours]] = [:], exceptions: [Int64: [WorkingException]] = [:], taken: [Int64: [Range<Date>]] = [:]
        var holds: [SlotHold] = []
        for doctor in doctors {
            let id = doctor.id ?? 0
            // A doctor with none has no entry (as a gather of rows grouped by doctor gives).
            let weekly = try tx.workingHours(ofDoctor: id)
            if !weekly.isEmpty { hours[id] = weekly }
            let days = try tx.workingExceptions(ofDoctor: id, from: ask.days.lowerBound, through: ask.days.upperBound)
            if !days.isEmpty { exceptions[id] = days }
            var spans = try tx.takenSpans(doctorId: id, overlapping: ask.span, at: ask.now, exceptAppointment: ask.exceptAppointment,
                                          exceptHold: ask.exceptHold)
            // The doctor's live holds, read once: the patient's own do not stand in their way
            // (issue 55), each taking one span off the list, as the one statement of a shared
            // store leaves them out; a hold's gather reports them all.
            let live = ask.clientId != nil || ask.holds ? try tx.liveSlotHolds(doctorId: id, overlapping: ask.span, at: ask.now) : []
            for own in live where own.clientId == ask.clientId && own.id != ask.exceptHold {
                if let index = spans.firstIndex(of: own.startsAt..<own.endsAt) { spans.remove(at: index) }
            }
            if !spans.isEmpty { taken[id] = spans }
            if ask.holds { holds += live }
        }
        let settings = try tx.settings(prefix: "booking.")
        var patient: [PatientSpan] = [], visits: [PatientSpan] = [], count = 0, context: AppointmentMessageContext?
        if let clientId = ask.clientId, clientExists {
            patient = try tx.activeAppointmentSpans(ofClient: clientId, inDepartment: nil, overlapping: ask.span)
            if BookingPolicy(settings: settings).departmentDaysBetween > 0 {
                visits = try tx.activeAppointmentSpans(ofClient: clientId, inDepartment: ask.departmentId, overlapping: ask.departmentSpan)
            }
            count = try tx.activeAppointmentCount(ofClient: clientId, startingFrom: ask.now)
            if let department, try tx.keepsInboxes() {
                context = try tx.messageContext(client: clientId, clinic: department.clinicId, department: ask.departmentId)
            }
        }
        return BookingFacts(clientExists: clientExists, department: department, clinic: clinic,
                            visitType: try ask.visitTypeId.map { try tx.visitType(id: $0) } ?? nil,
                            doctors: doctors, hours: hours, exceptions: exceptions, taken: taken, patientAppointments: patient,
                            activeCount: count, bookingSettings: settings, messageContext: context,
                            appointmentId: nil, holds: holds, departmentVisits: visits)
    }
}

extension HoldFacts {
    /// The patient's released holds that `holdFacts` reports: live at `ask.now`, of the doctor
    /// asked for, within the span.
    public static func reported(_ released: [SlotHold], _ ask: BookingFactsRequest) -> [SlotHold] {
        released.filter { hold in
            hold.clientId == ask.clientId && hold.doctorId == ask.onlyDoctorId && hold.expiresAt > ask.now
                && hold.startsAt < ask.span.upperBound && hold.endsAt > ask.span.lowerBound
        }.sorted { ($0.startsAt, $0.id ?? 0) < ($1.startsAt, $1.id ?? 0) }
    }
}

extension StoreWriting {
    /// The gather as the seam's reads, in this transaction (what a store in this process does).
    public func bookingFacts(_ ask: BookingFactsRequest) throws -> BookingFacts {
        try BookingFacts.read(self, ask)
    }

    /// The release and the gather as the seam's reads and writes, in this transaction (what a
    /// store in this process does).
    public func holdFacts(_ ask: BookingFactsRequest) throws -> HoldFacts {
        try deleteExpiredSlotHolds(at: ask.now)
        var released: [SlotHold] = []
        if let clientId = ask.clientId {
            if let doctorId = ask.onlyDoctorId {
                released = try liveSlotHolds(doctorId: doctorId, overlapping: ask.span, at: ask.now)
            }
            released = HoldFacts.reported(released, ask)
            try deleteSlotHolds(ofClient: clientId)
        }
        var ask = ask
        ask.holds = true
        return HoldFacts(facts: try bookingFacts(ask), released: released)
    }

    /// The gather as the seam's reads, in this transaction (what a store in this process does).
    public func appointmentChangeFacts(id: Int64) throws -> AppointmentChangeFacts? {
        try AppointmentChangeFacts.read(self, id: id)
    }

    /// The write as the seam's writes, one by one: the appointment rewritten (its notes sealed
    /// if they are in clear), its history entry, the message and its delivery.
    @discardableResult
    public func changeAppointment(_ appointment: Appointment, event: AppointmentEvent, message: NewInboxMessage?) throws -> Int64? {
        try updateAppointment(appointment)
        try insertAppointmentEvent(event)
        return try insert(message, appointmentId: appointment.id, at: event.at)
    }

    /// The message and, when it is e-mailed, its delivery; the message's id.
    @discardableResult
    func insert(_ message: NewInboxMessage?, appointmentId: Int64?, at now: Date) throws -> Int64? {
        guard let message else { return nil }
        return try Inbox.post(self, clientId: message.clientId, kind: message.kind, subject: message.subject, body: message.body,
                              appointmentId: appointmentId, clinicId: message.clinicId, staffId: message.staffId,
                              emailConfirmed: message.emailed, now: now)
    }

    /// The write as the seam's writes, one by one: the appointment (with the id the facts
    /// gave), its history entry, the message and its delivery.
    public func insertBooking(_ appointment: Appointment, event: AppointmentEvent, message: NewInboxMessage?) throws -> Appointment {
        try insertBookingOneByOne(appointment, event: event, message: message)
    }

    /// `insertBooking`'s default, for a store's own implementation to fall back on.
    public func insertBookingOneByOne(_ appointment: Appointment, event: AppointmentEvent, message: NewInboxMessage?) throws -> Appointment {
        let stored = try insertStoredAppointment(appointment)
        var entry = event
        entry.appointmentId = stored.id ?? 0
        try insertAppointmentEvent(entry)
        try insert(message, appointmentId: stored.id, at: event.at)
        return stored
    }
}
