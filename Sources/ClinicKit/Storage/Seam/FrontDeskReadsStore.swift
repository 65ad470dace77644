import Foundation

// The front desk's other reads awaited (issue 56): one appointment with its clinic (what the
// member may do to it, whether its patient hears of a change) and a clinic's month (the clinic
// admin's report). Each is one snapshot of the store with no thread waiting for it; whether
// what was read is the member's to see, and what it adds up to, is `StaffController`'s.

/// The awaited front-desk reads a `ClinicStore` offers.
public protocol FrontDeskReadsStore: Sendable {
    /// One transaction: the appointment, its conversation (its row locked), `look.decide` (a
    /// refusal reads no message), the messages it asks for with the names of the staff who
    /// wrote them; the conversation saved with the reader's unread count cleared when it had
    /// one, and the reader's audit row.
    func readConversation(_ look: ConversationLook) async throws -> ConversationFacts
    /// One transaction: the appointment (its row locked for share), its conversation when the
    /// look reads one, `look.decide` (a refusal reads nothing more), the files' rows, the
    /// conversation's page with its writers' names (`readConversation`'s), the patient (the
    /// clinic's side), the clinic's time zone and the key check; the conversation saved when its
    /// reader's unread count is cleared, and the decision's audit rows.
    func readFolder(_ look: FolderLook) async throws -> FolderFacts
    /// One transaction: the appointment, the file's row, `opening.decide`, the key check, and the
    /// clinic's audit row (committed before the caller reads a byte).
    func openFile(_ opening: FileOpening) async throws -> (file: StoredAttachment, keyCheck: String?)
    /// One chunk of a file's part as stored (sealed; nil when there is none); with `withKeys`, in
    /// one snapshot with it, the file's row and the key check (a file of the scheme before opens
    /// under the key its row names at the time of reading).
    func fileChunk(attachmentId: Int64, part: AttachmentPart, index: Int, withKeys: Bool) async throws -> FileChunk?
    /// `ThreadListFacts` for `ask` in one snapshot; with audit rows (`audit` of the facts, for a
    /// named list) in one transaction with them.
    func deskThreads(_ ask: ThreadListAsk, audit: @escaping @Sendable (ThreadListFacts) -> [AuditAsk]) async throws -> ThreadListFacts
    /// The appointment (its notes as stored), its clinic, and with `withPatient` its patient
    /// (personal fields opened); nil when there is no such appointment.
    func deskAppointment(id: Int64, withPatient: Bool) async throws -> DeskAppointment?
    /// The holds of `doctorIds` live at `now` overlapping `span`, by start, then id: what the
    /// calendar shows taken until they expire (`AppointmentStorage.liveSlotHolds` for many).
    func liveHolds(doctorIds: [Int64], overlapping span: Range<Date>, at now: Date) async throws -> [SlotHold]
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

/// A look at an appointment's conversation, by its patient or the front desk; the messages of
/// the look are read by it (its side's unread count is cleared).
public struct ConversationLook: Sendable {
    public enum Reader: Sendable {
        case patient(Int64)
        case staff(StaffMember, requestId: String?)
    }

    public let appointmentId: Int64
    public let reader: Reader
    /// How many messages to read, the latest first (one more than the page, to know if there is
    /// another); nil: all of them, in the order written.
    public let fetch: Int?
    /// Only messages before this id (a cursor's); nil: the latest.
    public let before: Int64?
    let limit: Int?
    let now: Date

    /// The page's limit and cursor are checked first (`invalid_input`).
    init(_ reader: Reader, appointmentId: Int64, limit: Int?, cursor: String?, now: Date) throws {
        self.reader = reader; self.appointmentId = appointmentId; self.now = now
        if limit == nil && cursor == nil {
            self.limit = nil; fetch = nil; before = nil
            return
        }
        let limit = limit ?? ThreadLimits.pageDefault
        try Page<ThreadMessage>.checkLimit(limit)
        self.limit = limit; fetch = limit + 1
        before = try cursor.map { text -> Int64 in
            let position = try PagePosition(cursor: text)
            guard position.key == AttachmentController.threadCursorKey else { throw ClinicError.invalid(.cursorInvalid) }
            return position.id
        }
    }

    /// Whose unread count the look clears.
    public var side: AttachmentAuthor {
        if case .patient = reader { return .patient }
        return .staff
    }

    /// Decided on the appointment (nil: none) and its conversation (nil: none yet): the
    /// patient's own appointment (another's is `forbidden`), or one the member may see (else
    /// `not_found`). The conversation to save (the reader's unread count cleared; nil: nothing
    /// to save) and the audit row (the front desk's read).
    public func decide(appointment: Appointment?, thread: StoredThread?) throws -> (save: StoredThread?, audit: AuditAsk?) {
        let seen: Appointment
        var audit: AuditAsk?
        switch reader {
        case .patient(let clientId):
            seen = try AppointmentController.owned(appointment, appointmentId, clientId)
        case .staff(let member, let requestId):
            seen = try AttachmentController.visible(appointment, appointmentId, to: member)
            audit = AuditAsk(by: member.auditActor, action: .threadRead, clientId: seen.clientId, appointmentId: appointmentId,
                             requestId: requestId, detail: "", now: now)
        }
        return (thread.flatMap { Self.cleared($0, side: side) }, audit)
    }

    /// The conversation as `side` leaves it once read: its unread count cleared; nil when it had none.
    static func cleared(_ thread: StoredThread, side: AttachmentAuthor) -> StoredThread? {
        var thread = thread
        switch side {
        case .patient:
            guard thread.patientUnread > 0 else { return nil }
            thread.patientUnread = 0
        case .staff:
            guard thread.staffUnread > 0 else { return nil }
            thread.staffUnread = 0
        }
        return thread
    }

    func unread(_ thread: StoredThread) -> Int { side == .patient ? thread.patientUnread : thread.staffUnread }

    /// The conversation of the look, its messages opened under the database's key.
    func conversation(_ facts: ConversationFacts, key: PersonalDataKey) throws -> Conversation {
        guard let thread = facts.thread else { return Conversation(appointmentId: appointmentId, state: .open, unread: 0, messages: []) }
        var stored = facts.messages, next: String?
        if let limit {
            stored = Array(stored.prefix(limit))
            next = facts.messages.count > limit ? stored.last.map { PagePosition(key: AttachmentController.threadCursorKey, id: $0.id).cursor } : nil
            stored.reverse()
        }
        let cipher = stored.isEmpty ? nil : try key.cipher(keyCheck: facts.personalDataKeyCheck)
        let messages = try stored.map { message in
            let plain = try cipher?.open(bytes: message.body, context: AttachmentController.threadContext(appointmentId)) ?? Data()
            return ThreadMessage(id: message.id, author: message.author, staffName: message.staffId.flatMap { facts.staffNames[$0] },
                                 text: String(decoding: plain, as: UTF8.self), attachmentId: message.attachmentId,
                                 createdAt: message.createdAt)
        }
        return Conversation(appointmentId: appointmentId, state: thread.state, unread: unread(thread), messages: messages, nextCursor: next)
    }

    /// The look in the caller's write transaction (SQLite's).
    package func read(_ tx: any StoreWriting) throws -> ConversationFacts {
        let appointment = try tx.appointment(id: appointmentId), thread = try tx.thread(ofAppointment: appointmentId)
        let (save, audit) = try decide(appointment: appointment, thread: thread)
        let facts = try stored(tx, thread: thread)
        if let save { try tx.saveThread(save) }
        if let audit { try AuditLog.append(tx, audit) }
        return facts
    }

    /// The messages the look asks for of `thread` (none when there is no conversation yet), the
    /// names of the staff who wrote them, and the key check (when any message).
    package func stored(_ tx: any StoreReading, thread: StoredThread?) throws -> ConversationFacts {
        var messages: [StoredThreadMessage] = []
        if thread != nil {
            messages = try fetch.map { try tx.threadMessages(ofAppointment: appointmentId, before: before, limit: $0) }
                ?? tx.threadMessages(ofAppointment: appointmentId)
        }
        var names: [Int64: String] = [:]
        for staffId in Set(messages.compactMap(\.staffId)) {
            if let member = try? tx.staffMember(id: staffId) { names[staffId] = "\(member.name) \(member.surname)" }
        }
        return ConversationFacts(thread: thread, messages: messages, staffNames: names,
                                 personalDataKeyCheck: messages.isEmpty ? nil : try tx.personalDataKeyCheck())
    }
}

/// What a look at a conversation read: the conversation as it was before the look (nil: none
/// yet), the messages asked for as stored, the staff's names by id, the key check.
public struct ConversationFacts: Sendable {
    public var thread: StoredThread?
    public var messages: [StoredThreadMessage]
    public var staffNames: [Int64: String]
    public var personalDataKeyCheck: String?

    public init(thread: StoredThread?, messages: [StoredThreadMessage], staffNames: [Int64: String], personalDataKeyCheck: String?) {
        self.thread = thread; self.messages = messages; self.staffNames = staffNames; self.personalDataKeyCheck = personalDataKeyCheck
    }
}

/// A chunk of a file as the store keeps it, with what opens it when the file has no key of its own.
public struct FileChunk: Sendable {
    public let sealed: Data
    /// The file's row and the key check, when asked for.
    public let file: StoredAttachment?
    public let keyCheck: String?

    public init(sealed: Data, file: StoredAttachment?, keyCheck: String?) {
        self.sealed = sealed; self.file = file; self.keyCheck = keyCheck
    }
}
