import Foundation

// The outbox awaited (issue 56): a round claims one delivery per transaction and gathers what
// composes it (the patient, the message and its appointment's event, the sealed code or text
// opened, the phone); ClinicKit composes the e-mail or the text from those facts alone
// (`Outbox.compose`), and the store drops a delivery that has nowhere to go in the same
// transaction. Sending is not the store's: the round sends between transactions and then marks
// the delivery sent or failed. Reminders: the due ones are decided on the upcoming visits
// (`Outbox.dueReminders`), each written with its message and text (`Outbox.reminder`).

/// The outbox's awaited operations a `ClinicStore` offers.
public protocol OutboxStore: Sendable {
    /// One read: whether a delivery of `channels` is due at `now` (most rounds find none and write nothing).
    func anyDeliveryDue(at now: Date, channels: Set<DeliveryChannel>) async throws -> Bool
    /// One transaction: the due deliveries whose day is over given up; the next due delivery of
    /// the ask's channels claimed (its attempt counted, its lease `DeliveryClaimAsk.leaseUntil`);
    /// its facts gathered and `compose`d; dropped when `compose` says it has nowhere to go.
    func claimDelivery(_ ask: DeliveryClaimAsk, compose: @escaping @Sendable (DeliveryFacts) throws -> OutgoingDelivery?)
        async throws -> DeliveryClaim
    /// The delivery sent: the gateway's `reply` kept (a text's body forgotten).
    func markDeliverySent(_ id: Int64, at: Date, reply: String) async throws
    /// The delivery not sent: the error kept; failed for good when `givingUp`.
    func markDeliveryFailed(_ id: Int64, error: String, givingUp: Bool) async throws
    /// The reminders due at the ask's time written, each with its message and text (a dedupe key
    /// per appointment, start and lead: a reminder is written once across servers). How many.
    /// Looked for in a read first: a round that finds none takes no writer's lock.
    func writeReminders(_ ask: ReminderAsk) async throws -> Int
}

/// What a round claims with.
public struct DeliveryClaimAsk: Sendable {
    public let now: Date
    /// The worker's name (`Outbox.claimant`).
    public let claimant: String
    public let channels: Set<DeliveryChannel>

    public init(now: Date, claimant: String, channels: Set<DeliveryChannel>) {
        self.now = now; self.claimant = claimant; self.channels = channels
    }

    /// Deliveries written no later than this and still due are given up (`Outbox.giveUpAfter`).
    package var giveUpWrittenBefore: Date { Date(seconds: now.seconds - Outbox.giveUpAfter) }

    /// The claim's lease, which is also the back-off before the next attempt.
    package func leaseUntil(attempt: Int) -> Date { Date(seconds: now.seconds + Outbox.backoff(after: attempt)) }
}

/// What composes a claimed delivery, gathered in its claim's transaction.
public struct DeliveryFacts: Sendable {
    public let delivery: ClaimedDelivery
    /// The patient, personal fields opened (nil: gone). Gathered for e-mail.
    public var client: Client?
    /// The sealed code or text, opened (nil: none recorded, or forgotten).
    public var payload: String?
    /// The patient's phone and its number opened. Gathered for texts.
    public var phone: StoredPhone?
    public var number: String?
    /// The inbox message of a message delivery (nil: gone).
    public var message: InboxMessage?
    /// The calendar event of the message's appointment, when the message carries one.
    public var event: CalendarEvent?
    /// The name of the patient's home clinic (a walk-in's claim code names it).
    public var homeClinicName: String?
    /// This database's name in Message-IDs (made once: they stay unique across installations).
    public var mailInstance: String

    public init(delivery: ClaimedDelivery, client: Client? = nil, payload: String? = nil, phone: StoredPhone? = nil,
                number: String? = nil, message: InboxMessage? = nil, event: CalendarEvent? = nil, homeClinicName: String? = nil,
                mailInstance: String = "clinic") {
        self.delivery = delivery; self.client = client; self.payload = payload; self.phone = phone; self.number = number
        self.message = message; self.event = event; self.homeClinicName = homeClinicName; self.mailInstance = mailInstance
    }

    /// A new name for a database's messages, proposed the first time one is needed.
    package static func newMailInstance() -> String { SessionManager.newToken().prefix(16).lowercased() }

    /// The facts through the seam's reads, in the caller's write transaction (what SQLite runs).
    package static func gather(_ tx: any StoreWriting, _ delivery: ClaimedDelivery, store: any ClinicStore) throws -> DeliveryFacts {
        switch delivery.content {
        case .text, .textCode:
            return try text(delivery, phone: try tx.phone(ofClient: delivery.clientId)) { try store.cipher(tx) }
        case .emailCode, .message:
            var facts = try mail(delivery, client: try store.client(tx, id: delivery.clientId),
                                 mailInstance: try tx.mailInstance(proposing: newMailInstance()) ?? "clinic") { try store.cipher(tx) }
            if case .emailCode = delivery.content {
                facts.homeClinicName = try facts.client?.homeClinicId.flatMap { try tx.clinic(id: $0) }?.name
            }
            if case .message(let inboxId) = delivery.content, let inboxId, let message = try tx.inboxMessage(inboxId) {
                facts.message = message
                if message.kind.carriesEvent, let appointmentId = message.appointmentId,
                   let appointment = try tx.appointment(id: appointmentId) {
                    facts.event = try CalendarEvent.load(tx, appointment)
                }
            }
            return facts
        }
    }

    /// A text's facts: its phone (nil: none any more), and with it the body or code and the number opened.
    package static func text(_ delivery: ClaimedDelivery, phone: StoredPhone?, cipher: () throws -> FieldCipher) throws -> DeliveryFacts {
        var facts = DeliveryFacts(delivery: delivery, phone: phone)
        guard let phone else { return facts }
        if case .text(let sealed) = delivery.content { facts.payload = try opened(sealed, delivery, cipher) }
        if case .textCode(let sealed) = delivery.content { facts.payload = try opened(sealed, delivery, cipher) }
        facts.number = try Texts.number(phone, cipher: try cipher())
        return facts
    }

    /// An e-mail's facts: its patient (nil: gone), and an e-mailed code opened; the message and
    /// the home clinic's name are the caller's to add.
    package static func mail(_ delivery: ClaimedDelivery, client: Client?, mailInstance: String,
                             cipher: () throws -> FieldCipher) throws -> DeliveryFacts {
        var facts = DeliveryFacts(delivery: delivery, client: client, mailInstance: mailInstance)
        if client != nil, case .emailCode(let sealed) = delivery.content { facts.payload = try opened(sealed, delivery, cipher) }
        return facts
    }

    /// A payload sealed to its delivery, opened.
    static func opened(_ sealed: Data?, _ delivery: ClaimedDelivery, _ cipher: () throws -> FieldCipher) throws -> String? {
        try sealed.map { String(decoding: try cipher().open(bytes: $0, context: "delivery:\(delivery.id)"), as: UTF8.self) }
    }
}

/// A delivery composed: the e-mail's envelope, or the text.
public enum OutgoingDelivery: Sendable, Equatable {
    case mail(to: String, data: Data)
    case text(to: String, TextMessage)
}

/// What a claim did.
public struct DeliveryClaim: Sendable {
    /// How many due deliveries were given up.
    public let gaveUp: Int
    /// The delivery claimed (nil: none was due).
    public let delivery: ClaimedDelivery?
    /// What to send (nil with a delivery: it was dropped).
    public let outgoing: OutgoingDelivery?

    public init(gaveUp: Int, delivery: ClaimedDelivery?, outgoing: OutgoingDelivery?) {
        self.gaveUp = gaveUp; self.delivery = delivery; self.outgoing = outgoing
    }

    /// The claim in the caller's write transaction, through the seam's reads and writes (what SQLite runs).
    package static func claim(_ tx: any StoreWriting, _ ask: DeliveryClaimAsk, store: any ClinicStore,
                              compose: (DeliveryFacts) throws -> OutgoingDelivery?) throws -> DeliveryClaim {
        let gaveUp = try tx.giveUpDeliveries(dueAt: ask.now, writtenNoLaterThan: ask.giveUpWrittenBefore)
        guard let delivery = try tx.claimDeliveries(limit: 1, now: ask.now, claimant: ask.claimant, channels: ask.channels,
                                                    leaseUntil: ask.leaseUntil).first else {
            return DeliveryClaim(gaveUp: gaveUp, delivery: nil, outgoing: nil)
        }
        let outgoing = try compose(try DeliveryFacts.gather(tx, delivery, store: store))
        if outgoing == nil { try tx.dropDelivery(delivery.id) }
        return DeliveryClaim(gaveUp: gaveUp, delivery: delivery, outgoing: outgoing)
    }
}

/// When reminders are written.
public struct ReminderAsk: Sendable {
    public let now: Date

    public init(now: Date) { self.now = now }

    /// The settings the reminders' leads are among (`BookingPolicy`'s).
    package static var settingsPrefix: String { BookingPolicy.prefix }

    /// The upcoming visits that may need a reminder under the stored `settings`: those starting
    /// after now, within the longest lead (nil: reminders are off).
    package func window(settings: [String: String]) -> (after: Date, through: Date)? {
        Outbox.reminderLeads(BookingPolicy(settings: settings)).max().map { (now, Date(seconds: now.seconds + Int64($0) * 3600)) }
    }

    /// The reminders due among `visits` under the stored `settings`, those whose keys are in
    /// `written` left out (`Outbox.dueReminders`).
    package func due(_ visits: [RemindableVisit], written: Set<String>, settings: [String: String]) -> [DueReminder] {
        Outbox.dueReminders(visits, written: written, leads: Outbox.reminderLeads(BookingPolicy(settings: settings)), now: now)
    }

    /// The dedupe keys of the reminders that would be due among `visits` if none were written:
    /// those to look for (the lead a visit is due at does not depend on what was written).
    package func candidateKeys(_ visits: [RemindableVisit], settings: [String: String]) -> [String] {
        due(visits, written: [], settings: settings).map(\.key)
    }
}

/// An active visit with a patient, starting within the longest lead: what a reminder is decided on.
public struct RemindableVisit: Sendable, Equatable {
    public let appointment: Appointment
    /// When its time was chosen: booked or last moved (nil: read as its creation).
    public let chosenAt: Date?

    public init(appointment: Appointment, chosenAt: Date?) {
        self.appointment = appointment; self.chosenAt = chosenAt
    }
}

/// A reminder decided due: its visit, its lead in hours, its dedupe key.
public struct DueReminder: Sendable, Equatable {
    public let appointment: Appointment
    public let lead: Int
    public let key: String
}

/// A reminder to write: its message (with the dedupe key) and its text for a patient who takes texts.
public struct ReminderWrite: Sendable, Equatable {
    public let appointment: Appointment
    public let dedupeKey: String
    public let message: NewInboxMessage
    public let text: TextAsk?
}

extension ReminderAsk {
    /// The reminders in the caller's write transaction, through the seam's reads and writes (what SQLite runs).
    package func write(_ tx: any StoreWriting) throws -> Int {
        var written = 0
        for due in try due(tx) where try Inbox.about(tx, due.appointment, kind: .reminder, hoursBefore: due.lead,
                                                     dedupeKey: due.key, now: now) != nil {
            written += 1
        }
        return written
    }

    /// The reminders due, through the seam's reads (a read transaction will do).
    package func due(_ tx: any StoreReading) throws -> [DueReminder] {
        let settings = try tx.settings(prefix: Self.settingsPrefix)
        guard let window = window(settings: settings) else { return [] }
        let visits = try tx.remindableAppointments(startingAfter: window.after, through: window.through).map { appointment in
            RemindableVisit(appointment: appointment, chosenAt: try appointment.id.flatMap { try tx.slotChosenAt(ofAppointment: $0) })
        }
        let written = Set(try candidateKeys(visits, settings: settings).filter { try tx.messageExists(dedupeKey: $0) })
        return due(visits, written: written, settings: settings)
    }
}
