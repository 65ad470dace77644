import Foundation

/// What a patient's data export reads, as stored, in one snapshot (issue 56): their record,
/// appointments (notes sealed) with their history, sessions, inbox, files' rows, conversations
/// with their messages and the names of the staff who wrote them, phone, and the key check. The
/// export is made of them under the database's key (`export(key:)`).
public struct PersonalExportFacts: Sendable {
    public var client: StoredClient?
    /// In the order (start, id).
    public var appointments: [Appointment]
    public var events: [AppointmentEvent]
    public var sessions: [StoredSession]
    /// Newest first; empty where the store keeps no inboxes.
    public var messages: [InboxMessage]
    /// By appointment, then id.
    public var attachments: [StoredAttachment]
    /// The latest first.
    public var threads: [StoredThread]
    /// Each conversation's messages in the order written, by appointment.
    public var threadMessages: [Int64: [StoredThreadMessage]]
    public var staffNames: [Int64: String]
    public var phone: StoredPhone?
    public var personalDataKeyCheck: String?

    public init(client: StoredClient?, appointments: [Appointment], events: [AppointmentEvent], sessions: [StoredSession],
                messages: [InboxMessage], attachments: [StoredAttachment], threads: [StoredThread],
                threadMessages: [Int64: [StoredThreadMessage]], staffNames: [Int64: String], phone: StoredPhone?,
                personalDataKeyCheck: String?) {
        self.client = client; self.appointments = appointments; self.events = events; self.sessions = sessions
        self.messages = messages; self.attachments = attachments; self.threads = threads; self.threadMessages = threadMessages
        self.staffNames = staffNames; self.phone = phone; self.personalDataKeyCheck = personalDataKeyCheck
    }

    /// How many inbox messages an export carries at most.
    public static let messageLimit = 100_000

    /// The facts through the seam's reads, in the caller's (read) transaction.
    package static func read(_ tx: any StoreReading, clientId: Int64) throws -> PersonalExportFacts {
        let appointments = try tx.storedAppointments(ofClient: clientId)
        let threads = try tx.threads(ofClient: clientId)
        var threadMessages: [Int64: [StoredThreadMessage]] = [:]
        for thread in threads { threadMessages[thread.appointmentId] = try tx.threadMessages(ofAppointment: thread.appointmentId) }
        var names: [Int64: String] = [:]
        for staffId in Set(threadMessages.values.joined().compactMap(\.staffId)) {
            if let member = try tx.staffMember(id: staffId) { names[staffId] = "\(member.name) \(member.surname)" }
        }
        return PersonalExportFacts(
            client: try tx.storedClient(id: clientId), appointments: appointments,
            events: try tx.appointmentEvents(of: appointments.compactMap(\.id)),
            sessions: try tx.sessions(ofClient: clientId, lastUsedSince: .distantPast),
            messages: try tx.keepsInboxes() ? Inbox.messages(tx, clientId: clientId, limit: messageLimit) : [],
            attachments: try tx.attachments(ofClient: clientId), threads: threads, threadMessages: threadMessages,
            staffNames: names, phone: try tx.phone(ofClient: clientId), personalDataKeyCheck: try tx.personalDataKeyCheck())
    }

    /// The export, opened under `key`; `not_logged_in` when the patient is gone.
    func export(key: PersonalDataKey) throws -> PersonalExport {
        guard let stored = client else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        let cipher = key.lazyCipher(keyCheck: personalDataKeyCheck)
        let patient = stored.personal == nil ? stored.client : try stored.opened(with: try cipher())
        let history = Dictionary(grouping: events, by: \.appointmentId)
        let appointments = try self.appointments.map { appointment in
            (try AppointmentNotes.opened(appointment, cipher: cipher), history[appointment.id ?? 0] ?? [])
        }
        var export = PersonalExport(client: patient, appointments: appointments,
                                    sessions: sessions.map { (createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt) }, messages: messages)
        export.attachments = try attachments.map { try AttachmentController.info($0, try cipher()) }
        export.conversations = try threads.map { thread in
            let messages = try (threadMessages[thread.appointmentId] ?? []).map { message in
                let plain = try cipher().open(bytes: message.body, context: AttachmentController.threadContext(thread.appointmentId))
                return ThreadMessage(id: message.id, author: message.author, staffName: message.staffId.flatMap { staffNames[$0] },
                                     text: String(decoding: plain, as: UTF8.self), attachmentId: message.attachmentId,
                                     createdAt: message.createdAt)
            }
            return Conversation(appointmentId: thread.appointmentId, state: thread.state, unread: thread.patientUnread, messages: messages)
        }
        if let phone { export.phone = ClientController.status(phone, number: try Texts.number(phone, cipher: try cipher())) }
        return export
    }
}

extension ClientController {
    /// Everything the system keeps about the patient, in one snapshot (the data export): the
    /// record, appointments with their history, sessions, inbox, files, conversations (read, not
    /// marked read), phone.
    public func export(clientId: Int64) throws -> PersonalExport {
        try database.reading { tx in try PersonalExportFacts.read(tx, clientId: clientId) }.export(key: database.personalDataKey)
    }

    /// `export` awaited (issue 56: `ProfileReadsStore.exportFacts`).
    public func export(clientId: Int64) async throws -> PersonalExport {
        try await database.exportFacts(clientId: clientId).export(key: database.personalDataKey)
    }
}
