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
/// next attempt) and composed in one transaction (`OutboxStore.claimDelivery`), sent, and marked
/// sent in the next transaction once the server has answered 250. A process that dies between the 250
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
    public func noteTextGateway() async throws {
        let now = self.now()
        guard Self.shouldNoteTextGateway(seen: try await database.textGatewaySeen(), now: now) else { return }
        _ = try await database.changeSetting(Self.textGatewayKey, to: String(now.seconds), prefix: Self.textGatewayKey)
    }

    /// Whether a gateway last noted at `seen` is noted again at `now`: five minutes on, or a
    /// note from the future (a clock set back).
    static func shouldNoteTextGateway(seen: Int64?, now: Date) -> Bool {
        seen.map { now.seconds - $0 >= 300 || $0 > now.seconds } ?? true
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

    /// Reminders that are due and then the e-mail and texts that are due (none without a mailer
    /// or a texter), at most `limit` deliveries claimed. Each claim is a transaction of its own
    /// (`OutboxStore.claimDelivery`), composed by `compose`; the sending (SMTP, the SMS gateway,
    /// up to 30 s) runs on `sending` (the server's thread pool: no cooperative thread waits on a
    /// socket), and the delivery is then marked sent or failed. `shouldStop` is asked before each
    /// claim (a server shutting down ends the round early).
    public func run(mailer: (any Mailer)?, from: String, texter: (any TextSender)? = nil, site: String = "", limit: Int = 50,
                    sending: some PasswordRunner = InlinePasswordRunner(),
                    shouldStop: () -> Bool = { false }) async throws -> DeliveryReport {
        var report = DeliveryReport()
        if texter != nil { try await noteTextGateway() }
        report.reminders = try await createReminders()
        var channels = Set<DeliveryChannel>()
        if mailer != nil { channels.insert(.email) }
        if texter != nil { channels.insert(.text) }
        guard !channels.isEmpty else { return report }
        // Looked for in a read first: most rounds find nothing and take no writer's lock.
        guard try await database.anyDeliveryDue(at: now(), channels: channels) else { return report }
        let textCountries = self.textCountries
        var claimed = 0
        while claimed < limit, !shouldStop() {
            let now = self.now()
            let step = try await database.claimDelivery(DeliveryClaimAsk(now: now, claimant: claimant, channels: channels)) { facts in
                Self.compose(facts, from: from, site: site, textCountries: textCountries, now: now)
            }
            report.failed += step.gaveUp
            guard let delivery = step.delivery else { break }
            claimed += 1
            guard let outgoing = step.outgoing else { continue }
            do {
                let reply: String
                switch outgoing {
                case .mail(let to, let data):
                    guard let mailer else { continue }
                    reply = try await sending.run { try mailer.send(from: from, to: to, message: data) }
                case .text(let number, let text):
                    guard let texter else { continue }
                    reply = try await sending.run { try texter.send(to: number, text: text, deliveryId: delivery.id) }
                    report.texts += 1
                }
                try await database.markDeliverySent(delivery.id, at: self.now(), reply: reply)
                report.sent += 1
            } catch {
                let reason = (error as? ClinicError)?.message(in: .en) ?? String(describing: error)
                let givingUp = self.now().seconds - delivery.createdAt.seconds >= Self.giveUpAfter
                try await database.markDeliveryFailed(delivery.id, error: String(reason.prefix(500)), givingUp: givingUp)
                if givingUp { report.failed += 1 } else { report.retrying += 1 }
            }
        }
        return report
    }

    /// What starts the sealed payload of a code delivery that is a walk-in's claim code.
    static let claimCodeMark = "claim:"

    /// A claimed delivery's e-mail or text, composed from its facts alone; nil when it has
    /// nowhere to go any more (then it is dropped).
    static func compose(_ facts: DeliveryFacts, from: String, site: String, textCountries: TextCountries, now: Date)
        -> OutgoingDelivery? {
        switch facts.delivery.content.channel {
        case .email: composeMail(facts, from: from, site: site, now: now)
        case .text: composeText(facts, site: site, textCountries: textCountries)
        }
    }

    /// The text of a claimed delivery; nil when it has nowhere to go any more: a code whose
    /// number was confirmed or changed meanwhile, a text to a number no longer confirmed, or
    /// after a STOP, or to a number outside the deployment's countries or in a premium range.
    static func composeText(_ facts: DeliveryFacts, site: String, textCountries: TextCountries) -> OutgoingDelivery? {
        guard let phone = facts.phone, let number = facts.number, let payload = facts.payload else { return nil }
        switch facts.delivery.content {
        case .textCode: guard !phone.confirmed else { return nil }
        case .text: guard phone.confirmed, !phone.stopped else { return nil }
        default: return nil
        }
        guard PhoneNumber.mobileCapable(number), textCountries.allows(number) else { return nil }
        return .text(to: number, TextMessage(payload.replacingOccurrences(of: Texts.siteMark, with: site)))
    }

    /// The e-mail of a claimed delivery; nil when it has nowhere to go any more (the patient
    /// removed the address or is gone, the message or the code is gone).
    static func composeMail(_ facts: DeliveryFacts, from: String, site: String, now: Date) -> OutgoingDelivery? {
        guard let client = facts.client else { return nil }
        let language = client.language
        let messageId = "delivery-\(facts.delivery.id).\(facts.mailInstance)@clinic"
        func mail(to: String, subject: String, body: String, attachments: [Mail.Attachment] = []) -> OutgoingDelivery {
            .mail(to: to, data: Mail.compose(from: from, to: to, subject: subject, body: body, messageId: messageId, date: now,
                                             attachments: attachments))
        }
        switch facts.delivery.content {
        case .emailCode:
            guard let code = facts.payload else { return nil }
            // A walk-in's claim code goes as a code delivery too, its payload marked as such.
            if code.hasPrefix(claimCodeMark) {
                guard let to = client.email, !client.hasOnlineAccount else { return nil }
                let arguments = [String(code.dropFirst(claimCodeMark.count)), facts.homeClinicName ?? "the clinic",
                                 String(StaffController.claimCodeDays)]
                return mail(to: to, subject: Strings.text(.claimCodeSubject, language, arguments),
                            body: Strings.text(.claimCodeBody, language, arguments))
            }
            guard let to = client.pendingEmail else { return nil }
            return mail(to: to, subject: Strings.text(.emailCodeSubject, language, [code]),
                        body: Strings.text(.emailCodeBody, language, [code]))
        case .text, .textCode:
            return nil
        case .message:
            guard let to = client.email, let message = facts.message else { return nil }
            var attachments: [Mail.Attachment] = []
            if message.kind.carriesEvent, let appointmentId = message.appointmentId, let event = facts.event {
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
            return mail(to: to, subject: message.subject, body: body, attachments: attachments)
        }
    }

    // MARK: Reminders

    /// Writes the reminders that are due: for each active appointment, when the shortest lead
    /// whose time has come (after an outage, one reminder, not two) began after its slot was
    /// chosen (a booking made inside the lead has its booking message), once per appointment,
    /// start and lead. A moved appointment is reminded of its new start only; a cancelled one
    /// not at all.
    public func createReminders() async throws -> Int {
        try await database.writeReminders(ReminderAsk(now: now()))
    }

    /// The leads in hours reminders go at (0 turns one off).
    static func reminderLeads(_ policy: BookingPolicy) -> Set<Int> {
        Set([policy.reminderFirstHours, policy.reminderSecondHours].filter { $0 > 0 })
    }

    /// The dedupe key of a visit's reminder at a lead: per appointment, start and lead.
    static func reminderKey(_ appointment: Appointment, lead: Int) -> String {
        "reminder:\(appointment.id ?? 0):\(appointment.startsAt.seconds):\(lead)"
    }

    /// The reminders due at `now` among the upcoming visits (`leads` from the policy), decided on
    /// plain facts: the shortest lead whose time has come, when the visit's time was chosen
    /// before that lead began and its reminder at that lead is not among those `written`.
    static func dueReminders(_ visits: [RemindableVisit], written: Set<String>, leads: Set<Int>, now: Date) -> [DueReminder] {
        visits.compactMap { visit in
            let appointment = visit.appointment, start = appointment.startsAt.seconds
            guard appointment.clientId != nil, appointment.status.isActive,
                  let lead = leads.filter({ start - Int64($0) * 3600 <= now.seconds && start > now.seconds }).min() else { return nil }
            let key = reminderKey(appointment, lead: lead)
            guard !written.contains(key) else { return nil }
            let chosen = visit.chosenAt?.seconds ?? appointment.createdAt.seconds
            guard chosen < start - Int64(lead) * 3600 else { return nil }
            return DueReminder(appointment: appointment, lead: lead, key: key)
        }
    }

    /// A due reminder's message and text, in the patient's language (`context`: the message's,
    /// `AppointmentMessageContext`); nil for a visit without a patient.
    package static func reminder(_ due: DueReminder, context: AppointmentMessageContext) -> ReminderWrite? {
        guard let message = Inbox.message(about: due.appointment, kind: .reminder, context: context, hoursBefore: due.lead),
              let clientId = due.appointment.clientId else { return nil }
        let text = Texts.body(about: due.appointment, kind: .reminder, context: context).map {
            TextAsk(clientId: clientId, topic: $0.1, body: $0.0)
        }
        return ReminderWrite(appointment: due.appointment, dedupeKey: due.key, message: message, text: text)
    }
}
