import Crypto
import Foundation
import GRDB

/// What one round of the outbox did.
public struct DeliveryReport: Sendable, Equatable {
    public var reminders = 0
    public var sent = 0
    public var retrying = 0
    public var failed = 0
    public init() {}
}

/// The outbox: reminders written when due, and e-mail sent from `deliveries`. A delivery is
/// claimed (its attempt counted and its next attempt moved to after the back-off) in one
/// transaction, sent, and marked sent in the next transaction once the server has answered
/// 250. A process that dies between the 250 and the mark sends that message once more after
/// the back-off, with the same `Message-ID` — the one duplicate SMTP allows (RFC 5321 6.1);
/// a process that dies anywhere else sends nothing twice. A message not accepted within a day
/// is given up, with the last error kept.
public final class Outbox: Sendable {
    let database: DatabaseManager
    let now: @Sendable () -> Date

    /// A delivery not sent this long after it was written is given up.
    public static let giveUpAfter: Int64 = 86_400

    public init(database: DatabaseManager, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.now = now
    }

    /// Seconds before the next attempt after `attempt` attempts: 1, 2, 4 … minutes, at most an hour.
    static func backoff(after attempt: Int) -> Int64 { min(3600, 60 << Int64(min(max(attempt - 1, 0), 6))) }

    /// Reminders that are due and then the e-mail that is due (none without a mailer).
    /// `shouldStop` is asked between two e-mails (a server shutting down ends the round early).
    public func run(mailer: (any Mailer)?, from: String, limit: Int = 50,
                    shouldStop: () -> Bool = { false }) throws -> DeliveryReport {
        var report = DeliveryReport()
        report.reminders = try createReminders()
        guard let mailer else { return report }
        let due = try database.read { db in
            try Int64.fetchAll(db, sql: """
                SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?
                """, arguments: [now().seconds, limit])
        }
        for id in due where !shouldStop() {
            let envelope: Envelope
            switch try claim(id, from: from) {
            case .send(let claimed): envelope = claimed
            case .gaveUp: report.failed += 1; continue
            case .skip: continue
            }
            do {
                let reply = try mailer.send(from: from, to: envelope.to, message: envelope.data)
                try database.write { db in
                    try db.execute(sql: "UPDATE deliveries SET state = 'sent', sent_at = ?, reply = ?, last_error = NULL WHERE id = ?",
                                   arguments: [now().seconds, reply, id])
                }
                report.sent += 1
            } catch {
                let reason = (error as? ClinicError)?.message(in: .en) ?? String(describing: error)
                let gaveUp = try database.write { db -> Bool in
                    try db.execute(sql: """
                        UPDATE deliveries SET last_error = ?,
                            state = CASE WHEN ? - created_at >= ? THEN 'failed' ELSE state END
                        WHERE id = ?
                        """, arguments: [String(reason.prefix(500)), now().seconds, Self.giveUpAfter, id])
                    return try String.fetchOne(db, sql: "SELECT state FROM deliveries WHERE id = ?", arguments: [id]) == "failed"
                }
                if gaveUp { report.failed += 1 } else { report.retrying += 1 }
            }
        }
        return report
    }

    struct Envelope { let to: String; let data: Data }

    enum Claim { case send(Envelope), skip, gaveUp }

    /// Counts the attempt and composes the e-mail, in one transaction; `skip` when the delivery
    /// is no longer due (another process took it) or has nowhere to go any more (dropped),
    /// `gaveUp` when its day is over.
    func claim(_ id: Int64, from: String) throws -> Claim {
        let now = self.now()
        return try database.write { db -> Claim in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM deliveries WHERE id = ? AND state = 'pending' AND next_attempt_at <= ?",
                                             arguments: [id, now.seconds]) else { return .skip }
            let attempts: Int = try row.value("attempts", in: "deliveries")
            let clientId: Int64 = try row.value("client_id", in: "deliveries")
            let created: Int64 = try row.value("created_at", in: "deliveries")
            if now.seconds - created >= Self.giveUpAfter {
                try db.execute(sql: "UPDATE deliveries SET state = 'failed' WHERE id = ?", arguments: [id])
                return .gaveUp
            }
            try db.execute(sql: "UPDATE deliveries SET attempts = ?, next_attempt_at = ? WHERE id = ?",
                           arguments: [attempts + 1, now.seconds + Self.backoff(after: attempts + 1), id])
            guard let client = try database.getUserById(db, clientId),
                  let envelope = try compose(db, delivery: row, client: client, from: from, now: now) else {
                try db.execute(sql: "UPDATE deliveries SET state = 'dropped' WHERE id = ?", arguments: [id])
                return .skip
            }
            return .send(envelope)
        }
    }

    func compose(_ db: Database, delivery row: Row, client: Client, from: String, now: Date) throws -> Envelope? {
        let id: Int64 = try row.value("id", in: "deliveries"), language = client.language
        let messageId = "delivery-\(id).\(try instance(db))@clinic"
        if (try row.value("purpose", in: "deliveries") as String) == "email_code" {
            guard let to = client.pendingEmail, let sealed = try row.value("payload", in: "deliveries") as Data? else { return nil }
            let code = String(decoding: try database.cipher(db).open(bytes: sealed, context: "delivery:\(id)"), as: UTF8.self)
            return Envelope(to: to, data: Mail.compose(
                from: from, to: to, subject: Strings.text(.emailCodeSubject, language, [code]),
                body: Strings.text(.emailCodeBody, language, [code]), messageId: messageId, date: now))
        }
        guard let to = client.email, let messageRow = try Row.fetchOne(db, sql: "SELECT * FROM messages WHERE id = ?",
                                                                       arguments: [try row.value("message_id", in: "deliveries") as Int64?]) else { return nil }
        let message = try InboxMessage(row: messageRow)
        var attachments: [Mail.Attachment] = []
        if message.kind.carriesEvent, let appointmentId = message.appointmentId,
           let appointment = try database.getAppointmentById(db, appointmentId),
           let event = try CalendarEvent.load(db, appointment) {
            let text = ICalendar.document([event], language: language, now: now)
            attachments.append(Mail.Attachment(filename: "appointment-\(appointmentId).ics",
                                               contentType: "text/calendar; charset=utf-8; method=PUBLISH",
                                               data: Data(text.utf8)))
        }
        return Envelope(to: to, data: Mail.compose(from: from, to: to, subject: message.subject, body: message.body,
                                                   messageId: messageId, date: now, attachments: attachments))
    }

    /// A random name for this database's messages, made once: Message-IDs stay unique across installations.
    func instance(_ db: Database) throws -> String {
        try db.execute(sql: "INSERT OR IGNORE INTO settings (key, value) VALUES ('mail.instance', ?)",
                       arguments: [SessionManager.newToken().prefix(16).lowercased()])
        return try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = 'mail.instance'") ?? "clinic"
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
        guard try !database.read({ db in try Self.dueReminders(db, now: now) }).isEmpty else { return 0 }
        return try database.write { db in
            var written = 0
            for (appointment, lead, key) in try Self.dueReminders(db, now: now)
            where try Inbox.about(db, appointment, kind: .reminder, hoursBefore: lead, dedupeKey: key, now: now) != nil {
                written += 1
            }
            return written
        }
    }

    /// The reminders due now and not written yet: the appointment, the lead in hours, the dedupe key.
    static func dueReminders(_ db: Database, now: Date) throws -> [(Appointment, Int, String)] {
        let policy = try BookingPolicy.load(db)
        let leads = Set([policy.reminderFirstHours, policy.reminderSecondHours].filter { $0 > 0 })
        guard let longest = leads.max() else { return [] }
        let upcoming = try Appointment.fetchAll(db, sql: """
            SELECT * FROM appointments WHERE \(AppointmentStatus.activeCondition) AND client_id IS NOT NULL
            AND starts_at > ? AND starts_at <= ? ORDER BY starts_at
            """, arguments: [now.seconds, now.seconds + Int64(longest) * 3600])
        var due: [(Appointment, Int, String)] = []
        for appointment in upcoming {
            let start = appointment.startsAt.seconds
            guard let lead = leads.filter({ start - Int64($0) * 3600 <= now.seconds }).min() else { continue }
            let key = "reminder:\(appointment.id ?? 0):\(start):\(lead)"
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM messages WHERE dedupe_key = ?)", arguments: [key]) == false
            else { continue }
            let chosen = try Int64.fetchOne(db, sql: """
                SELECT max(at) FROM appointment_events WHERE appointment_id = ? AND event IN ('booked', 'rescheduled')
                """, arguments: [appointment.id]) ?? appointment.createdAt.seconds
            guard chosen < start - Int64(lead) * 3600 else { continue }
            due.append((appointment, lead, key))
        }
        return due
    }
}
