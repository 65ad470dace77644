import Crypto
import Foundation

/// What one round of the outbox did.
public struct DeliveryReport: Sendable, Equatable {
    public var reminders = 0
    public var sent = 0
    public var retrying = 0
    public var failed = 0
    /// Of `sent`, the texts.
    public var texts = 0
    public init() {}
}

/// The outbox: reminders written when due, and e-mail and texts sent from `deliveries`. A delivery is
/// claimed (its attempt counted, and held under a lease that is also the back-off before the
/// next attempt: `MessageWriting.claimDeliveries`) in one transaction, sent, and marked sent in
/// the next transaction once the server has answered 250. A process that dies between the 250
/// and the mark sends that message once more after the back-off, with the same `Message-ID` —
/// the one duplicate SMTP allows (RFC 5321 6.1); a process that dies anywhere else sends
/// nothing twice. A message not accepted within a day is given up, with the last error kept.
public final class Outbox: Sendable {
    let database: any ClinicStore
    let now: @Sendable () -> Date
    /// This worker's name in its claims (several servers may share one store).
    let claimant: String
    /// Where texts may go: a number confirmed before the deployment narrowed its countries, or
    /// stored by an older version that took premium ranges, is texted nothing.
    let textCountries: TextCountries

    /// A delivery not sent this long after it was written is given up.
    public static let giveUpAfter: Int64 = 86_400

    public init(database: any ClinicStore, textCountries: TextCountries = .standard, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.textCountries = textCountries
        self.now = now
        claimant = "outbox-" + SessionManager.newToken().prefix(16).lowercased()
    }

    /// When a process with an SMS gateway last said so (`noteTextGateway`), in the settings:
    /// what tells every server and the command line whether a texted code would be sent.
    static let textGatewayKey = "texts.gateway_seen_at"
    /// A gateway not heard of for this long is taken to be gone.
    static let textGatewayFreshness: Int64 = 3600

    /// Says that this process has an SMS gateway and will send texts (a server with
    /// `CLINIC_SMS_URL` at start and each outbox round, `clinic admin deliver` with it): one
    /// read, and a write at most every five minutes.
    public func noteTextGateway() throws {
        let now = self.now()
        let seen = try database.reading { tx in try tx.setting(Self.textGatewayKey).flatMap { Int64($0) } }
        guard seen.map({ now.seconds - $0 >= 300 || $0 > now.seconds }) ?? true else { return }
        try database.writing { tx in try tx.setSetting(Self.textGatewayKey, to: String(now.seconds)) }
    }

    /// Whether a process with a gateway said so within `textGatewayFreshness` (in `tx`).
    static func textsAvailable(_ tx: any StoreReading, now: Date) throws -> Bool {
        textsAvailable(seen: try tx.setting(textGatewayKey).flatMap { Int64($0) }, now: now)
    }

    /// Whether a gateway seen at `seen` (whole seconds; nil: never) is seen recently enough at `now`.
    static func textsAvailable(seen: Int64?, now: Date) -> Bool {
        guard let seen else { return false }
        return now.seconds - seen < textGatewayFreshness
    }

    /// The setting holding when a process last had an SMS gateway.
    public static var textGatewaySetting: String { textGatewayKey }

    /// Seconds before the next attempt after `attempt` attempts: 1, 2, 4 … minutes, at most an hour.
    static func backoff(after attempt: Int) -> Int64 { min(3600, 60 << Int64(min(max(attempt - 1, 0), 6))) }

    /// Reminders that are due and then the e-mail that is due (none without a mailer), at most
    /// `limit` e-mails claimed. `shouldStop` is asked before each claim (a server shutting down
    /// ends the round early).
    public func run(mailer: (any Mailer)?, from: String, texter: (any TextSender)? = nil, site: String = "", limit: Int = 50,
                    shouldStop: () -> Bool = { false }) throws -> DeliveryReport {
        var report = DeliveryReport()
        if texter != nil { try noteTextGateway() }
        report.reminders = try createReminders()
        var channels = Set<DeliveryChannel>()
        if mailer != nil { channels.insert(.email) }
        if texter != nil { channels.insert(.text) }
        guard !channels.isEmpty else { return report }
        // Looked for in a read first: most rounds find nothing and take no writer's lock.
        guard try database.reading({ tx in try tx.hasDueDeliveries(at: now(), channels: channels) }) else { return report }
        var claimed = 0
        while claimed < limit, !shouldStop() {
            let step = try claimNext(from: from, site: site, channels: channels)
            report.failed += step.gaveUp
            guard let claim = step.claim else { break }
            claimed += 1
            guard case .send(let delivery, let outgoing) = claim else { continue }
            do {
                let reply: String
                switch outgoing {
                case .mail(let envelope):
                    guard let mailer else { continue }
                    reply = try mailer.send(from: from, to: envelope.to, message: envelope.data)
                case .text(let number, let text):
                    guard let texter else { continue }
                    reply = try texter.send(to: number, text: text, deliveryId: delivery.id)
                    report.texts += 1
                }
                try database.writing { tx in try tx.completeDelivery(delivery.id, sentAt: now(), reply: reply) }
                report.sent += 1
            } catch {
                let reason = (error as? ClinicError)?.message(in: .en) ?? String(describing: error)
                let givingUp = now().seconds - delivery.createdAt.seconds >= Self.giveUpAfter
                try database.writing { tx in try tx.failDelivery(delivery.id, error: String(reason.prefix(500)), givingUp: givingUp) }
                if givingUp { report.failed += 1 } else { report.retrying += 1 }
            }
        }
        return report
    }

    struct Envelope { let to: String; let data: Data }

    /// What starts the sealed payload of a code delivery that is a walk-in's claim code.
    static let claimCodeMark = "claim:"

    enum Outgoing { case mail(Envelope), text(to: String, TextMessage) }

    enum Claim { case send(ClaimedDelivery, Outgoing), dropped }

    /// In one transaction: gives up the due deliveries whose day is over (`gaveUp`, how many),
    /// then claims the next due delivery of `channels` (nil: none is due) and composes its
    /// e-mail or text, dropping it when it has nowhere to go any more.
    func claimNext(from: String, site: String = "", channels: Set<DeliveryChannel> = [.email]) throws -> (gaveUp: Int, claim: Claim?) {
        let now = self.now()
        return try database.writing { tx -> (gaveUp: Int, claim: Claim?) in
            let gaveUp = try tx.giveUpDeliveries(dueAt: now, writtenNoLaterThan: Date(seconds: now.seconds - Self.giveUpAfter))
            guard let delivery = try tx.claimDeliveries(limit: 1, now: now, claimant: claimant, channels: channels, leaseUntil: { attempt in
                Date(seconds: now.seconds + Self.backoff(after: attempt))
            }).first else { return (gaveUp, nil) }
            let outgoing: Outgoing?
            switch delivery.content.channel {
            case .email: outgoing = try compose(tx, delivery, from: from, site: site, now: now).map(Outgoing.mail)
            case .text: outgoing = try composeText(tx, delivery, site: site)
            }
            guard let outgoing else {
                try tx.dropDelivery(delivery.id)
                return (gaveUp, .dropped)
            }
            return (gaveUp, .send(delivery, outgoing))
        }
    }

    /// The text of a claimed delivery; nil when it has nowhere to go any more: a code whose
    /// number was confirmed or changed meanwhile, a text to a number no longer confirmed, or
    /// after a STOP, or to a number outside the deployment's countries or in a premium range.
    func composeText(_ tx: any StoreWriting, _ delivery: ClaimedDelivery, site: String) throws -> Outgoing? {
        guard let phone = try tx.phone(ofClient: delivery.clientId) else { return nil }
        let sealed: Data?
        switch delivery.content {
        case .textCode(let code): guard !phone.confirmed else { return nil }; sealed = code
        case .text(let body): guard phone.confirmed, !phone.stopped else { return nil }; sealed = body
        default: return nil
        }
        guard let sealed else { return nil }
        let cipher = try database.cipher(tx)
        let body = String(decoding: try cipher.open(bytes: sealed, context: "delivery:\(delivery.id)"), as: UTF8.self)
            .replacingOccurrences(of: Texts.siteMark, with: site)
        let number = try Texts.number(phone, cipher: cipher)
        guard PhoneNumber.mobileCapable(number), textCountries.allows(number) else { return nil }
        return .text(to: number, TextMessage(body))
    }

    /// The e-mail of a claimed delivery; nil when it has nowhere to go any more (the patient
    /// removed the address or is gone, the message or the code is gone).
    func compose(_ tx: any StoreWriting, _ delivery: ClaimedDelivery, from: String, site: String = "", now: Date) throws -> Envelope? {
        guard let client = try database.client(tx, id: delivery.clientId) else { return nil }
        let language = client.language
        let messageId = "delivery-\(delivery.id).\(try instance(tx))@clinic"
        switch delivery.content {
        case .emailCode(let sealed):
            guard let sealed else { return nil }
            let code = String(decoding: try database.cipher(tx).open(bytes: sealed, context: "delivery:\(delivery.id)"), as: UTF8.self)
            // A walk-in's claim code goes as a code delivery too, its payload marked as such.
            if code.hasPrefix(Self.claimCodeMark) {
                guard let to = client.email, !client.hasOnlineAccount else { return nil }
                let clinic = try client.homeClinicId.flatMap { try tx.clinic(id: $0) }?.name ?? "the clinic"
                let arguments = [String(code.dropFirst(Self.claimCodeMark.count)), clinic, String(StaffController.claimCodeDays)]
                return Envelope(to: to, data: Mail.compose(
                    from: from, to: to, subject: Strings.text(.claimCodeSubject, language, arguments),
                    body: Strings.text(.claimCodeBody, language, arguments), messageId: messageId, date: now))
            }
            guard let to = client.pendingEmail else { return nil }
            return Envelope(to: to, data: Mail.compose(
                from: from, to: to, subject: Strings.text(.emailCodeSubject, language, [code]),
                body: Strings.text(.emailCodeBody, language, [code]), messageId: messageId, date: now))
        case .text, .textCode:
            return nil
        case .message(let inboxId):
            guard let to = client.email, let inboxId, let message = try tx.inboxMessage(inboxId) else { return nil }
            var attachments: [Mail.Attachment] = []
            if message.kind.carriesEvent, let appointmentId = message.appointmentId,
               let appointment = try tx.appointment(id: appointmentId),
               let event = try CalendarEvent.load(tx, appointment) {
                let text = ICalendar.document([event], language: language, now: now)
                attachments.append(Mail.Attachment(filename: "appointment-\(appointmentId).ics",
                                                   contentType: "text/calendar; charset=utf-8; method=PUBLISH",
                                                   data: Data(text.utf8)))
            }
            var body = message.body
            // A reminder by e-mail says where to cancel, so that the time can go to someone waiting.
            if message.kind == .reminder, !site.isEmpty, let appointmentId = message.appointmentId {
                body += "\n\n" + Strings.text(.reminderCantCome, language, ["\(site)/appointments/\(appointmentId)"])
            }
            return Envelope(to: to, data: Mail.compose(from: from, to: to, subject: message.subject, body: body,
                                                       messageId: messageId, date: now, attachments: attachments))
        }
    }

    /// A random name for this database's messages, made once: Message-IDs stay unique across installations.
    func instance(_ tx: any StoreWriting) throws -> String {
        try tx.mailInstance(proposing: SessionManager.newToken().prefix(16).lowercased()) ?? "clinic"
    }

    // MARK: Reminders

    /// Writes the reminders that are due: for each active appointment, when the shortest lead
    /// whose time has come (after an outage, one reminder, not two) began after its slot was
    /// chosen (a booking made inside the lead has its booking message), once per appointment,
    /// start and lead. A moved appointment is reminded of its new start only; a cancelled one
    /// not at all.
    public func createReminders() throws -> Int {
        let now = self.now()
        // Looked for in a read first: most rounds find nothing and take no writer's lock.
        guard try !database.reading({ tx in try Self.dueReminders(tx, now: now) }).isEmpty else { return 0 }
        return try database.writing { tx in
            var written = 0
            for (appointment, lead, key) in try Self.dueReminders(tx, now: now)
            where try Inbox.about(tx, appointment, kind: .reminder, hoursBefore: lead, dedupeKey: key, now: now) != nil {
                written += 1
            }
            return written
        }
    }

    /// The reminders due now and not written yet: the appointment, the lead in hours, the dedupe key.
    static func dueReminders(_ tx: any StoreReading, now: Date) throws -> [(Appointment, Int, String)] {
        let policy = try BookingPolicy.load(tx)
        let leads = Set([policy.reminderFirstHours, policy.reminderSecondHours].filter { $0 > 0 })
        guard let longest = leads.max() else { return [] }
        let upcoming = try tx.remindableAppointments(startingAfter: now,
                                                     through: Date(seconds: now.seconds + Int64(longest) * 3600))
        var due: [(Appointment, Int, String)] = []
        for appointment in upcoming {
            let start = appointment.startsAt.seconds
            guard let lead = leads.filter({ start - Int64($0) * 3600 <= now.seconds }).min() else { continue }
            let key = "reminder:\(appointment.id ?? 0):\(start):\(lead)"
            guard try !tx.messageExists(dedupeKey: key) else { continue }
            let chosen = try appointment.id.flatMap { try tx.slotChosenAt(ofAppointment: $0) }?.seconds ?? appointment.createdAt.seconds
            guard chosen < start - Int64(lead) * 3600 else { continue }
            due.append((appointment, lead, key))
        }
        return due
    }
}
