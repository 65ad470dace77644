import Foundation

/// A message of an appointment's conversation, opened.
public struct ThreadMessage: Sendable, Equatable {
    public let id: Int64
    public let author: AttachmentAuthor
    /// The staff member who wrote it, by name (nil for the patient's, or an account gone since).
    public let staffName: String?
    public let text: String
    public let attachmentId: Int64?
    public let createdAt: Date
}

/// An appointment's conversation as one side sees it.
public struct Conversation: Sendable, Equatable {
    public let appointmentId: Int64
    public let state: StoredThread.State
    /// The messages the reader had not read before this look (they are read now).
    public let unread: Int
    /// The messages of this look, in the order written: the latest page, or the page before a
    /// cursor (the whole conversation only where no page was asked for: the CLI, the export).
    public let messages: [ThreadMessage]
    /// The cursor of the messages before these (`ThreadLimits`); nil when there are none.
    public var nextCursor: String? = nil
}

/// The limits of a conversation (issue 42: one patient posted 2,000 messages in 5 seconds, and
/// every look returned all of them). Counted in the database, in the transaction that inserts,
/// after the appointment's lock, so that two servers cannot both let one more through.
public enum ThreadLimits {
    /// At most this many messages from the patient in one conversation in `window` …
    public static let messagesPerWindow = 10
    public static let window: TimeInterval = 600
    /// … and at most this many in all (the clinic's answers are not counted).
    public static let messagesPerThread = 200
    /// A look at a conversation returns a page of its latest messages: this many unless the
    /// reader asks for another number (`Page.limits`: 1 to 100).
    public static let pageDefault = 20
}

/// A conversation in the front desk's list: what it is about, without the patient's words.
public struct ThreadSummary: Sendable, Equatable {
    public let appointmentId: Int64
    public let state: StoredThread.State
    public let unread: Int
    public let lastAt: Date
    public let startsAt: Date
    public let doctorName: String
    /// The patient's name and the first words of the latest message (issue 46), for the front
    /// desk's list; nil where the patient deleted their account or nothing was written.
    public var patientName: String? = nil
    public var preview: String? = nil

    /// How much of the latest message the list shows.
    public static let previewLength = 80
}

/// The front desk's list of conversations.
public struct ThreadList: Sendable, Equatable {
    public let items: [ThreadSummary]
    /// Unread messages in the clinic's open conversations.
    public let unread: Int
    /// The clinic's time zone, in which its pages show the times.
    public let zone: TimeZone
}

extension AttachmentController {
    /// The patient writes to the clinic of their appointment (the conversation is opened, or
    /// opened again if it was closed), optionally pointing at one of the appointment's files.
    /// Refused (nothing stored): more than `ThreadLimits` allow (`rate_limited` with the seconds
    /// to wait, `limit_reached`), or an appointment cancelled more than
    /// `booking.thread_days_after_cancel` days ago (`too_late`).
    public func write(clientId: Int64, appointmentId: Int64, text: String, attachmentId: Int64? = nil) throws -> ThreadMessage {
        let post = try ThreadPost(.patient(clientId), appointmentId: appointmentId, text: text, attachmentId: attachmentId, now: now())
        return try database.writing { tx in try post.apply(tx, key: database.personalDataKey) }
    }

    /// `write` awaited (issue 56: `FrontDeskChangesStore.postInThread`).
    public func write(clientId: Int64, appointmentId: Int64, text: String, attachmentId: Int64? = nil) async throws -> ThreadMessage {
        try await database.postInThread(
            try ThreadPost(.patient(clientId), appointmentId: appointmentId, text: text, attachmentId: attachmentId, now: now()))
    }

    /// The patient's conversation about their appointment; its messages are read now. With a
    /// `limit` or a `cursor`, one page (`ThreadLimits.pageDefault` by default), the latest first;
    /// with neither, all of it.
    public func conversation(clientId: Int64, appointmentId: Int64, limit: Int? = nil, cursor: String? = nil) throws -> Conversation {
        let look = try ConversationLook(.patient(clientId), appointmentId: appointmentId, limit: limit, cursor: cursor, now: now())
        return try look.conversation(try database.writing { tx in try look.read(tx) }, key: database.personalDataKey)
    }

    /// The patient's `conversation` awaited (issue 56: `FrontDeskReadsStore.readConversation`).
    public func conversation(clientId: Int64, appointmentId: Int64, limit: Int? = nil, cursor: String? = nil) async throws -> Conversation {
        let look = try ConversationLook(.patient(clientId), appointmentId: appointmentId, limit: limit, cursor: cursor, now: now())
        return try look.conversation(try await database.readConversation(look), key: database.personalDataKey)
    }

    /// The front desk's `conversation` awaited (issue 56: `FrontDeskReadsStore.readConversation`,
    /// the audit row in its transaction).
    public func conversation(_ member: StaffMember, appointmentId: Int64, requestId: String? = nil, limit: Int? = nil,
                             cursor: String? = nil) async throws -> Conversation {
        try member.checkFrontDesk()
        let look = try ConversationLook(.staff(member, requestId: requestId), appointmentId: appointmentId, limit: limit, cursor: cursor,
                                        now: now())
        return try look.conversation(try await database.readConversation(look), key: database.personalDataKey)
    }

    /// The patient's unread answers, over all their conversations.
    public func unreadAnswers(clientId: Int64) throws -> Int {
        try database.reading { tx in try tx.threads(ofClient: clientId).reduce(0) { $0 + $1.patientUnread } }
    }

    /// `unreadAnswers` awaited (issue 56: `InboxStore.unreadAnswers`).
    public func unreadAnswers(clientId: Int64) async throws -> Int {
        try await database.unreadAnswers(clientId: clientId)
    }

    /// The front desk's conversations of its clinic in a state, the latest first.
    /// With `named`, each conversation carries its patient's name and the first words of its
    /// latest message (the web's inbox), and each patient named is a read in the audit trail they
    /// see; without, neither is read (the API's and the CLI's lists).
    public func threads(_ member: StaffMember, state: StoredThread.State, limit: Int = 200, named: Bool = false,
                        requestId: String? = nil) throws -> ThreadList {
        try member.checkFrontDesk()
        let ask = ThreadListAsk(clinicId: member.clinicId, state: state, limit: limit, named: named)
        let facts: ThreadListFacts
        if named {
            let audits = Self.threadListAudits(member, requestId: requestId, now: now())
            facts = try database.writing { tx in
                let facts = try ThreadListFacts.read(tx, ask)
                for audit in audits(facts) { try AuditLog.append(tx, audit) }
                return facts
            }
        } else {
            facts = try database.reading { tx in try ThreadListFacts.read(tx, ask) }
        }
        return try Self.threadList(facts, ask, key: database.personalDataKey)
    }

    /// `threads` awaited (issue 56: `FrontDeskReadsStore.deskThreads`, one transaction with the
    /// audit rows of the patients named).
    public func threads(_ member: StaffMember, state: StoredThread.State, limit: Int = 200, named: Bool = false,
                        requestId: String? = nil) async throws -> ThreadList {
        try member.checkFrontDesk()
        let ask = ThreadListAsk(clinicId: member.clinicId, state: state, limit: limit, named: named)
        let facts = try await database.deskThreads(ask, audit: Self.threadListAudits(member, requestId: requestId, now: now()))
        return try Self.threadList(facts, ask, key: database.personalDataKey)
    }

    /// The audit rows of a named list: a read of each patient it names.
    static func threadListAudits(_ member: StaffMember, requestId: String?, now: Date) -> @Sendable (ThreadListFacts) -> [AuditAsk] {
        { facts in
            facts.namedPatients.sorted().map { clientId in
                AuditAsk(by: member.auditActor, action: .patientRead, clientId: clientId, requestId: requestId,
                         detail: "the front desk's inbox", now: now)
            }
        }
    }

    /// The list made of its facts: each conversation with its appointment's time and doctor (one
    /// whose appointment is gone is left out); named, the patient's name and the first line of
    /// the latest message, opened under the database's key; the unread count of the open ones.
    static func threadList(_ facts: ThreadListFacts, _ ask: ThreadListAsk, key: PersonalDataKey) throws -> ThreadList {
        let cipher = key.lazyCipher(keyCheck: facts.personalDataKeyCheck)
        let items = try facts.items.compactMap { fact -> ThreadSummary? in
            guard let appointment = fact.appointment else { return nil }
            let thread = fact.thread
            var item = ThreadSummary(appointmentId: thread.appointmentId, state: thread.state, unread: thread.staffUnread,
                                     lastAt: thread.lastAt, startsAt: appointment.startsAt, doctorName: appointment.doctorName)
            guard ask.named else { return item }
            if let stored = fact.client {
                let client = stored.personal == nil ? stored.client : try stored.opened(with: try cipher())
                item.patientName = "\(client.name) \(client.surname)"
            }
            if let latest = fact.latest {
                let text = String(decoding: try cipher().open(bytes: latest.body, context: Self.threadContext(thread.appointmentId)),
                                  as: UTF8.self)
                let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
                item.preview = line.count > ThreadSummary.previewLength ? String(line.prefix(ThreadSummary.previewLength)) + "…" : line
            }
            return item
        }
        let open = ask.state == .open ? items.map(\.unread) : facts.openUnread
        return ThreadList(items: items, unread: open.reduce(0, +), zone: Clinic.zone(named: facts.timeZone ?? "UTC"))
    }

    /// The front desk reads an appointment's conversation (an audit event, `thread.read`, the
    /// patient sees); its messages are read now.
    public func conversation(_ member: StaffMember, appointmentId: Int64, requestId: String? = nil, limit: Int? = nil,
                             cursor: String? = nil) throws -> Conversation {
        try member.checkFrontDesk()
        let look = try ConversationLook(.staff(member, requestId: requestId), appointmentId: appointmentId, limit: limit, cursor: cursor,
                                        now: now())
        return try look.conversation(try database.writing { tx in try look.read(tx) }, key: database.personalDataKey)
    }

    /// The front desk answers: the patient is told in the inbox (and by e-mail) in their language.
    public func answer(_ member: StaffMember, appointmentId: Int64, text: String, attachmentId: Int64? = nil,
                       requestId: String? = nil) throws -> ThreadMessage {
        let post = try ThreadPost(.desk(member, requestId: requestId), appointmentId: appointmentId, text: text,
                                  attachmentId: attachmentId, now: now())
        return try database.writing { tx in try post.apply(tx, key: database.personalDataKey) }
    }

    /// `answer` awaited (issue 56: `FrontDeskChangesStore.postInThread`).
    public func answer(_ member: StaffMember, appointmentId: Int64, text: String, attachmentId: Int64? = nil,
                       requestId: String? = nil) async throws -> ThreadMessage {
        try await database.postInThread(try ThreadPost(.desk(member, requestId: requestId), appointmentId: appointmentId, text: text,
                                                       attachmentId: attachmentId, now: now()))
    }

    /// The front desk closes a conversation (the patient's next message opens it again).
    public func close(_ member: StaffMember, appointmentId: Int64, requestId: String? = nil) throws {
        let closing = try ThreadClosing(member, appointmentId: appointmentId, requestId: requestId, now: now())
        try database.writing { tx in try closing.apply(tx) }
    }

    /// `close` awaited (issue 56: `FrontDeskChangesStore.deskCloseThread`).
    public func close(_ member: StaffMember, appointmentId: Int64, requestId: String? = nil) async throws {
        try await database.deskCloseThread(try ThreadClosing(member, appointmentId: appointmentId, requestId: requestId, now: now()))
    }

    // MARK: Inside a transaction

    /// A conversation's cursor names the oldest message shown; the next page is the ones before it.
    static let threadCursorKey = "before"

    package static func threadContext(_ appointmentId: Int64) -> String { "thread:\(appointmentId)" }

    /// The clinic's answers in the patient's conversations about `appointmentIds`, by
    /// appointment, each with when it was written (of the latest `ThreadLimits.pageDefault`
    /// messages of each): the inbox quotes the one its message announced (`ClinicSystem.inbox`).
    /// Read-only: nothing is marked read.
    public func answers(clientId: Int64, appointmentIds: Set<Int64>) throws -> [Int64: [(at: Date, text: String)]] {
        guard !appointmentIds.isEmpty else { return [:] }
        let (stored, check) = try database.reading { tx in try Self.latestMessages(tx, clientId: clientId, appointmentIds: appointmentIds) }
        return try Self.answers(stored, keyCheck: check, key: database.personalDataKey)
    }

    /// `answers` awaited (issue 56: `InboxStore.clinicAnswers`).
    public func answers(clientId: Int64, appointmentIds: Set<Int64>) async throws -> [Int64: [(at: Date, text: String)]] {
        guard !appointmentIds.isEmpty else { return [:] }
        let (stored, check) = try await database.clinicAnswers(clientId: clientId, appointmentIds: appointmentIds)
        return try Self.answers(stored, keyCheck: check, key: database.personalDataKey)
    }

    /// `InboxStore.clinicAnswers` through the seam's reads, in the caller's transaction.
    package static func latestMessages(_ tx: any StoreReading, clientId: Int64, appointmentIds: Set<Int64>) throws
        -> (messages: [StoredThreadMessage], keyCheck: String?) {
        var stored: [StoredThreadMessage] = []
        for thread in try tx.threads(ofClient: clientId) where thread.clientId == clientId && appointmentIds.contains(thread.appointmentId) {
            stored += try tx.threadMessages(ofAppointment: thread.appointmentId, before: nil, limit: ThreadLimits.pageDefault).reversed()
        }
        return (stored, stored.isEmpty ? nil : try tx.personalDataKeyCheck())
    }

    /// The clinic's messages among `stored`, opened, by appointment in the order written.
    static func answers(_ stored: [StoredThreadMessage], keyCheck: String?, key: PersonalDataKey) throws
        -> [Int64: [(at: Date, text: String)]] {
        let clinics = stored.filter { $0.author == .staff }
        guard !clinics.isEmpty else { return [:] }
        let cipher = try key.cipher(keyCheck: keyCheck)
        var answers: [Int64: [(at: Date, text: String)]] = [:]
        for message in clinics {
            let plain = try cipher.open(bytes: message.body, context: threadContext(message.appointmentId))
            answers[message.appointmentId, default: []].append((message.createdAt, String(decoding: plain, as: UTF8.self)))
        }
        return answers
    }
}
