import Foundation

// The front desk's other reads awaited (issue 56): one appointment with its clinic (what the
// member may do to it, whether its patient hears of a change) and a clinic's month (the clinic
// admin's report). Each is one snapshot of the store with no thread waiting for it; whether
// what was read is the member's to see, and what it adds up to, is `StaffController`'s.

/// The awaited front-desk reads a `ClinicStore` offers.
public protocol FrontDeskReadsStore: Sendable {
    /// `ThreadListFacts` for `ask` in one snapshot; with audit rows (`audit` of the facts, for a
    /// named list) in one transaction with them.
    func deskThreads(_ ask: ThreadListAsk, audit: @escaping @Sendable (ThreadListFacts) -> [AuditAsk]) async throws -> ThreadListFacts
    /// The appointment (its notes as stored), its clinic, and with `withPatient` its patient
    /// (personal fields opened); nil when there is no such appointment.
    func deskAppointment(id: Int64, withPatient: Bool) async throws -> DeskAppointment?
    /// The clinic, `plan` made on it, its departments, and the visits of the plan's span with
    /// their history; nil when there is no such clinic.
    func monthFacts(clinicId: Int64, plan: @escaping @Sendable (Clinic) throws -> MonthPlan) async throws -> MonthFacts?
    /// One transaction: whether `id` is a patient of the clinic (`StaffStorage.isPatient`), the
    /// patient opened, `audit`'s row for them appended, their visits at the clinic (notes opened)
    /// with their history, and the clinic; nil (nothing written) when they are not its patient.
    func deskPatient(id: Int64, clinicId: Int64, audit: @escaping @Sendable (Int64) -> AuditAsk) async throws -> DeskPatient?
}

/// A patient as the front desk's page shows them.
public struct DeskPatient: Sendable {
    public let patient: Client
    /// The member's clinic (nil when gone).
    public let clinic: Clinic?
    /// Their visits at the clinic in the order (start, id), each with its history, oldest first.
    public let visits: [(appointment: Appointment, history: [AppointmentEvent])]

    public init(patient: Client, clinic: Clinic?, visits: [(appointment: Appointment, history: [AppointmentEvent])]) {
        self.patient = patient; self.clinic = clinic; self.visits = visits
    }

    /// The page in the caller's write transaction (the seam's path, and SQLite's).
    package static func read(_ tx: any StoreWriting, store: any ClinicStore, id: Int64, clinicId: Int64,
                             audit: (Int64) -> AuditAsk) throws -> DeskPatient? {
        guard id > 0, try tx.isPatient(id, ofClinic: clinicId), let patient = try store.client(tx, id: id) else { return nil }
        try AuditLog.append(tx, audit(id))
        let visits = try tx.appointments(ofClient: id).filter { $0.clinicId == clinicId }
        let events = Dictionary(grouping: try tx.appointmentEvents(of: visits.compactMap(\.id)), by: \.appointmentId)
        return DeskPatient(patient: patient, clinic: try tx.clinic(id: clinicId), visits: visits.map { ($0, events[$0.id ?? 0] ?? []) })
    }
}

/// An appointment as the front desk decides on it.
public struct DeskAppointment: Sendable {
    /// Its notes as stored (sealed): nothing here shows them.
    public let appointment: Appointment
    /// Nil when the clinic is gone.
    public let clinic: Clinic?
    /// Nil when not asked for, or when the patient's account is gone.
    public let patient: Client?

    public init(appointment: Appointment, clinic: Clinic?, patient: Client?) {
        self.appointment = appointment; self.clinic = clinic; self.patient = patient
    }

    /// The read in the caller's snapshot (the seam's path, and SQLite's).
    package static func read(_ tx: any StoreReading, store: any ClinicStore, id: Int64, withPatient: Bool) throws -> DeskAppointment? {
        guard let appointment = try tx.storedAppointment(id: id) else { return nil }
        let patient = try withPatient ? appointment.clientId.flatMap { try store.client(tx, id: $0) } : nil
        return DeskAppointment(appointment: appointment, clinic: try tx.clinic(id: appointment.clinicId), patient: patient)
    }
}

/// The month a report covers: its year and month, and their instants in the clinic's zone.
public struct MonthPlan: Sendable, Equatable {
    public let year: Int
    public let month: Int
    public let span: Range<Date>

    public init(year: Int, month: Int, span: Range<Date>) {
        self.year = year; self.month = month; self.span = span
    }
}

/// What a month's report is made of. Nothing personal: the visits' notes stay sealed.
public struct MonthFacts: Sendable {
    public let clinic: Clinic
    public let plan: MonthPlan
    /// The clinic's departments (by specialization, then id).
    public let departments: [Department]
    /// The visits starting in the plan's span, any status, by start then id.
    public let visits: [Appointment]
    /// Each visit's history, oldest first.
    public let events: [Int64: [AppointmentEvent]]

    public init(clinic: Clinic, plan: MonthPlan, departments: [Department], visits: [Appointment], events: [Int64: [AppointmentEvent]]) {
        self.clinic = clinic; self.plan = plan; self.departments = departments; self.visits = visits; self.events = events
    }

    /// The read in the caller's snapshot (the seam's path, and SQLite's).
    package static func read(_ tx: any StoreReading, clinicId: Int64, plan: (Clinic) throws -> MonthPlan) throws -> MonthFacts? {
        guard let clinic = try tx.clinic(id: clinicId) else { return nil }
        let planned = try plan(clinic)
        let visits = try tx.storedAppointments(ofClinic: clinicId, startingIn: planned.span, departmentId: nil, doctorId: nil)
        return MonthFacts(clinic: clinic, plan: planned, departments: try tx.departments(ofClinic: clinicId), visits: visits,
                          events: Dictionary(grouping: try tx.appointmentEvents(of: visits.compactMap(\.id)), by: \.appointmentId))
    }
}

/// What the front desk's list of conversations asks for.
public struct ThreadListAsk: Sendable {
    public let clinicId: Int64
    public let state: StoredThread.State
    /// 1…500.
    public let limit: Int
    /// With the patients' names and the latest messages.
    public let named: Bool

    init(clinicId: Int64, state: StoredThread.State, limit: Int, named: Bool) {
        self.clinicId = clinicId; self.state = state; self.limit = max(1, min(limit, 500)); self.named = named
    }
}

/// What the front desk's list of conversations is made of (`AttachmentController.threadList`).
public struct ThreadListFacts: Sendable {
    public struct Item: Sendable {
        public var thread: StoredThread
        /// Its appointment as stored; nil when it is gone.
        public var appointment: Appointment?
        /// For a named list: the patient as stored (nil: none, or the account deleted) and the
        /// latest message as stored (nil: none).
        public var client: StoredClient?
        public var latest: StoredThreadMessage?

        public init(thread: StoredThread, appointment: Appointment?, client: StoredClient?, latest: StoredThreadMessage?) {
            self.thread = thread; self.appointment = appointment; self.client = client; self.latest = latest
        }
    }

    /// The clinic's conversations in the state asked, the latest first, at most the limit.
    public var items: [Item]
    /// For a list of closed ones: the clinic's open conversations' unread counts (at most 500).
    public var openUnread: [Int]
    /// The clinic's zone (its identifier); nil when the clinic is gone.
    public var timeZone: String?
    public var personalDataKeyCheck: String?

    public init(items: [Item], openUnread: [Int], timeZone: String?, personalDataKeyCheck: String?) {
        self.items = items; self.openUnread = openUnread; self.timeZone = timeZone; self.personalDataKeyCheck = personalDataKeyCheck
    }

    /// The patients a named list names.
    public var namedPatients: Set<Int64> {
        Set(items.compactMap { $0.appointment != nil && $0.client != nil ? $0.appointment?.clientId : nil })
    }

    /// The facts through the seam's reads, in the caller's transaction.
    package static func read(_ tx: any StoreReading, _ ask: ThreadListAsk) throws -> ThreadListFacts {
        let items = try tx.threads(ofClinic: ask.clinicId, state: ask.state, limit: ask.limit).map { thread in
            let appointment = try tx.storedAppointment(id: thread.appointmentId)
            guard ask.named, appointment != nil else { return Item(thread: thread, appointment: appointment, client: nil, latest: nil) }
            return Item(thread: thread, appointment: appointment, client: try appointment?.clientId.flatMap { try tx.storedClient(id: $0) },
                        latest: try tx.threadMessages(ofAppointment: thread.appointmentId, before: nil, limit: 1).first)
        }
        let openUnread = ask.state == .open ? [] : try tx.threads(ofClinic: ask.clinicId, state: .open, limit: 500).map(\.staffUnread)
        return ThreadListFacts(items: items, openUnread: openUnread, timeZone: try tx.clinic(id: ask.clinicId)?.timeZone,
                               personalDataKeyCheck: ask.named ? try tx.personalDataKeyCheck() : nil)
    }
}
