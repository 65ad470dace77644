import Foundation

// The inbox and the outbox (issue #25's seam): the patients' messages, the e-mail waiting to go
// (`deliveries`), the confirmation of an address. What to write, when to send, how often to
// retry, in which language and who may read what are `Inbox`'s, `Outbox`'s and
// `ClientController+Mail`'s rules; these only store and find.
//
// The inbox's operations are a protocol of their own (`InboxReading`/`InboxWriting`, which the
// message area refines) because `Inbox` needs nothing else: its rules run in the transaction of
// whatever change causes a message, and a store may offer the inbox over a bare connection
// (the SQLite store's migrations: `SQLiteInbox`).

/// What the message about an appointment says of its patient and place, read in one go (it is
/// read in every booking's transaction).
public struct AppointmentMessageContext: Sendable, Equatable {
    /// The patient's preferred language; nil when the stored code is not one this program knows.
    public let language: Language?
    /// Whether the patient has a confirmed e-mail address (then the message is e-mailed too).
    public let emailConfirmed: Bool
    public let clinicName: String
    public let address: String
    public let city: String
    public let state: String
    public let zip: String
    /// The clinic's IANA time zone.
    public let timeZone: String
    /// The department's specialization, "" when the department is gone.
    public let specialization: String

    public init(language: Language?, emailConfirmed: Bool, clinicName: String, address: String, city: String, state: String,
                zip: String, timeZone: String, specialization: String) {
        self.language = language; self.emailConfirmed = emailConfirmed; self.clinicName = clinicName; self.address = address
        self.city = city; self.state = state; self.zip = zip; self.timeZone = timeZone; self.specialization = specialization
    }
}

/// A delivery claimed for sending (see `MessageWriting.claimDeliveries`).
public struct ClaimedDelivery: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        /// An inbox message to e-mail to the patient's confirmed address (nil: none recorded).
        case message(Int64?)
        /// A confirmation code for the patient's pending address, sealed under the personal-data
        /// key with the context `delivery:<id>` (nil: none recorded, or forgotten).
        case emailCode(sealed: Data?)
        /// A text to the patient's confirmed mobile number, its body sealed like a code (nil: forgotten).
        case text(sealed: Data?)
        /// A confirmation code to the mobile number being confirmed, sealed (nil: forgotten).
        case textCode(sealed: Data?)

        public var channel: DeliveryChannel {
            switch self {
            case .message, .emailCode: .email
            case .text, .textCode: .text
            }
        }
    }

    public let id: Int64
    public let clientId: Int64
    public let content: Content
    /// When the delivery was written (it is given up a day later).
    public let createdAt: Date
    /// The number of the attempt this claim is, 1 for the first.
    public let attempt: Int

    public init(id: Int64, clientId: Int64, content: Content, createdAt: Date, attempt: Int) {
        self.id = id; self.clientId = clientId; self.content = content; self.createdAt = createdAt; self.attempt = attempt
    }
}

/// The way a delivery goes: e-mail through SMTP, or a text through the SMS gateway. A worker
/// claims only the channels it can send (a server without a gateway leaves texts to one with).
public enum DeliveryChannel: String, Sendable, CaseIterable {
    case email, text

    /// The `deliveries.purpose` values of the channel.
    public var purposes: [String] {
        switch self {
        case .email: ["message", "email_code"]
        case .text: ["text", "text_code"]
        }
    }

    /// An SQL list of the purposes of `channels` (literals of this enum only, never outside text).
    public static func purposeList(_ channels: Set<DeliveryChannel>) -> String {
        channels.sorted { $0.rawValue < $1.rawValue }.flatMap(\.purposes).map { "'\($0)'" }.joined(separator: ", ")
    }
}

/// The gateway's delivery report of a text, as stored in `deliveries.report`.
public enum TextReport: String, Sendable, CaseIterable {
    case accepted, delivered, buffered, rejected, failed

    /// Whether the network will say nothing more of the text.
    public var isFinal: Bool { self == .delivered || self == .failed || self == .rejected }
}

/// The code waiting to confirm a patient's new address (at most one per patient).
public struct EmailConfirmation: Sendable, Equatable {
    public let codeHash: String
    public let expiresAt: Date
    /// Wrong codes given for it so far.
    public let wrongAttempts: Int

    public init(codeHash: String, expiresAt: Date, wrongAttempts: Int) {
        self.codeHash = codeHash; self.expiresAt = expiresAt; self.wrongAttempts = wrongAttempts
    }
}

/// Reading the patients' inboxes.
public protocol InboxReading {
    /// Whether this store has inboxes at all: false only for a SQLite file still on a schema
    /// before them (migration 13), which tests of the migrations open with today's code.
    func keepsInboxes() throws -> Bool
    /// A patient's messages, newest first, at most `limit`; only the unread ones if `unreadOnly`.
    func inboxMessages(ofClient clientId: Int64, unreadOnly: Bool, limit: Int) throws -> [InboxMessage]
    /// How many of a patient's messages are unread.
    func unreadCount(ofClient clientId: Int64) throws -> Int
    /// One message, whoever it belongs to (nil when there is none).
    func inboxMessage(_ id: Int64) throws -> InboxMessage?
    /// The patient and the place a message about an appointment names; nil when the patient or
    /// the clinic does not exist.
    func messageContext(client clientId: Int64, clinic clinicId: Int64, department departmentId: Int64) throws
        -> AppointmentMessageContext?
    /// Whether the patient exists and has a confirmed e-mail address.
    func hasConfirmedEmail(client clientId: Int64) throws -> Bool
}

/// Writing to the patients' inboxes.
public protocol InboxWriting: InboxReading {
    /// Stores a message, unread; nil, and nothing stored, when a message with the same
    /// `dedupeKey` exists already (two processes writing the same reminder write one).
    func insertInboxMessage(toClient clientId: Int64, kind: MessageKind, subject: String, body: String,
                            appointmentId: Int64?, clinicId: Int64?, staffId: Int64?, dedupeKey: String?,
                            at now: Date) throws -> Int64?
    /// Queues the e-mail of an inbox message to the patient, pending and due at `now`.
    func enqueueDelivery(ofMessage messageId: Int64, toClient clientId: Int64, at now: Date) throws
    /// Marks the patient's message read at `now` (a message read before keeps its time) and
    /// returns it; nil, and nothing changed, when the patient has no message with that id.
    func markMessageRead(_ messageId: Int64, ofClient clientId: Int64, at now: Date) throws -> InboxMessage?
}

/// What the message area reads: the inboxes, what the outbox finds due, the address confirmations.
public protocol MessageReading: InboxReading {
    /// Whether some delivery of one of `channels` is pending and due at `now`.
    func hasDueDeliveries(at now: Date, channels: Set<DeliveryChannel>) throws -> Bool
    /// The active appointments with a patient starting after `after` and no later than
    /// `through`, soonest first (the ones a reminder may be due for).
    func storedRemindableAppointments(startingAfter after: Date, through: Date) throws -> [Appointment]
    /// Whether a message with this dedupe key was written.
    func messageExists(dedupeKey: String) throws -> Bool
    /// When the appointment's slot was last chosen (booked or moved to), from its history; nil
    /// when its history has neither.
    func slotChosenAt(ofAppointment appointmentId: Int64) throws -> Date?
    /// The code waiting to confirm the patient's new address, if any.
    func emailConfirmation(ofClient clientId: Int64) throws -> EmailConfirmation?
}

/// What the message area writes.
public protocol MessageWriting: MessageReading, InboxWriting {
    /// Gives up (state failed) every pending delivery due at `now` that was written at or
    /// before `cutoff`; returns how many.
    func giveUpDeliveries(dueAt now: Date, writtenNoLaterThan cutoff: Date) throws -> Int

    /// Claims up to `limit` pending deliveries due at `now`, the longest waiting first, for
    /// `claimant` (a name for one worker: a process of one server), counting an attempt of each.
    ///
    /// The contract: atomically, each row returned is marked claimed by `claimant` until its
    /// lease ends, at `leaseUntil(attempt)` (`attempt` is the number of this attempt, 1 for the
    /// first), and until then no other claimant gets it, however many servers claim at once
    /// (PostgreSQL: `SELECT … FOR UPDATE SKIP LOCKED`, so concurrent claimants take different
    /// rows instead of waiting). A claimed row leaves the claim through `completeDelivery`,
    /// `failDelivery` or `dropDelivery`; one whose claimant died is due again when its lease
    /// ends, so the lease is also the back-off before the next attempt and must outlast a send.
    ///
    /// SQLite serialises writers (IMMEDIATE under the writer lock), so there the claim is
    /// moving each row's next attempt to its lease's end: the row is not due for anyone before
    /// then. It records no claimant (the schema has no column for it).
    /// Only deliveries of `channels` are claimed.
    func claimDeliveries(limit: Int, now: Date, claimant: String, channels: Set<DeliveryChannel>,
                         leaseUntil: (_ attempt: Int) -> Date) throws -> [ClaimedDelivery]
    /// The delivery was accepted (the SMTP server's 250, `reply`) at `sentAt`: sent, error cleared.
    func completeDelivery(_ deliveryId: Int64, sentAt: Date, reply: String) throws
    /// The attempt failed with `error` (kept as the last error); given up (failed) if `givingUp`,
    /// otherwise due again when its claim's lease ends.
    func failDelivery(_ deliveryId: Int64, error: String, givingUp: Bool) throws
    /// The delivery has nowhere to go any more (no address, no message): dropped, never sent.
    func dropDelivery(_ deliveryId: Int64) throws

    /// The name of this store's messages in their Message-IDs, made once: `candidate` is kept if
    /// the store has none yet (two workers at once keep one). Nil only if it cannot be found after.
    func mailInstance(proposing candidate: String) throws -> String?

    /// Queues the e-mail of a confirmation code to the patient (its sealed code is set after,
    /// by `setDeliveryPayload`, since the seal names the delivery); returns its id.
    func enqueueEmailCodeDelivery(toClient clientId: Int64, at now: Date) throws -> Int64
    /// Queues a text to the patient (`code`: a confirmation code to the number being confirmed,
    /// else a text to the confirmed number, of inbox message `messageId` if any); its sealed body
    /// is set after by `setDeliveryPayload`. Returns its id.
    func enqueueTextDelivery(toClient clientId: Int64, code: Bool, messageId: Int64?, at now: Date) throws -> Int64
    /// Records the gateway's delivery report of a text delivery (the first final one is never
    /// replaced); false when there is no such text delivery (nothing changed).
    func recordTextReport(_ report: TextReport, ofDelivery deliveryId: Int64, at now: Date) throws -> Bool
    /// Stores a delivery's sealed content (a confirmation code).
    func setDeliveryPayload(_ sealed: Data, ofDelivery deliveryId: Int64) throws
    /// Drops the patient's confirmation codes still waiting to be sent.
    func dropPendingEmailCodes(ofClient clientId: Int64) throws
    /// Drops everything of `channels` still waiting to go to the patient, forgetting sealed contents.
    func dropPendingDeliveries(ofClient clientId: Int64, channels: Set<DeliveryChannel>) throws

    /// Sets the code waiting to confirm the patient's new address (replacing any), no wrong attempts yet.
    func replaceEmailConfirmation(ofClient clientId: Int64, codeHash: String, expiresAt: Date) throws
    /// Counts a wrong code given for the patient's waiting confirmation.
    func countWrongEmailCode(ofClient clientId: Int64) throws
    /// Forgets the patient's waiting confirmation.
    func deleteEmailConfirmation(ofClient clientId: Int64) throws
}

extension MessageReading {
    /// Whether some delivery of any channel is pending and due at `now`.
    public func hasDueDeliveries(at now: Date) throws -> Bool {
        try hasDueDeliveries(at: now, channels: Set(DeliveryChannel.allCases))
    }
}

extension MessageWriting {
    /// Claims deliveries of every channel.
    public func claimDeliveries(limit: Int, now: Date, claimant: String, leaseUntil: (_ attempt: Int) -> Date) throws
        -> [ClaimedDelivery] {
        try claimDeliveries(limit: limit, now: now, claimant: claimant, channels: Set(DeliveryChannel.allCases), leaseUntil: leaseUntil)
    }

    /// Drops everything still waiting to go to the patient, by any channel.
    public func dropPendingDeliveries(ofClient clientId: Int64) throws {
        try dropPendingDeliveries(ofClient: clientId, channels: Set(DeliveryChannel.allCases))
    }
}

extension ClaimedDelivery.Content {
    /// The content of a delivery row: its purpose, message and sealed payload.
    public init(purpose: String, messageId: Int64?, payload: Data?) {
        switch purpose {
        case "email_code": self = .emailCode(sealed: payload)
        case "text": self = .text(sealed: payload)
        case "text_code": self = .textCode(sealed: payload)
        default: self = .message(messageId)
        }
    }
}
