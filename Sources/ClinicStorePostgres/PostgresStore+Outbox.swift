import ClinicKit
import Foundation
import PostgresNIO

// The outbox awaited on PostgreSQL (`OutboxStore`). A claim is one transaction: the day-old
// deliveries given up, the next due one locked as it is chosen (`FOR UPDATE SKIP LOCKED`: a
// claimant on another server takes another) and its attempt counted, its facts read, composed
// by ClinicKit, dropped when it has nowhere to go. Reminders: a read-only snapshot decides
// whether any is due; then one transaction decides again on what it reads and writes each
// message (its dedupe key's unique index keeps it to one across servers) and its text.

extension PostgresStore {
    /// One statement.
    public func anyDeliveryDue(at now: Date, channels: Set<DeliveryChannel>) async throws -> Bool {
        let rows = try await awaitedRows(PostgresTransaction.dueDeliveriesSQL(channels), [now])
        return try rows.first?.value("due", in: "deliveries") ?? false
    }

    /// BEGIN; the given up (one statement); the claim (two); the facts: a text's phone with the
    /// key check (one), an e-mail's patient with the key check, home clinic and mail instance
    /// (one; two more the first time, to make the instance), a message (one) and its
    /// appointment's event (one); the drop (one); COMMIT.
    public func claimDelivery(_ ask: DeliveryClaimAsk, compose: @escaping @Sendable (DeliveryFacts) throws -> OutgoingDelivery?)
        async throws -> DeliveryClaim {
        let sent = statementsSent, key = personalDataKey
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let gaveUp = try await tx.rows(PostgresTransaction.giveUpDeliveriesSQL + " RETURNING 1",
                                           [ask.now, ask.giveUpWrittenBefore]).count
            guard let found = try await tx.rows(PostgresTransaction.claimDeliveriesSQL(ask.channels), [ask.now, Int64(1)]).first else {
                return DeliveryClaim(gaveUp: gaveUp, delivery: nil, outgoing: nil)
            }
            let delivery = try PostgresTransaction.claimedDelivery(try PostgresTransaction.row(found))
            _ = try await tx.rows(PostgresTransaction.countAttemptSQL,
                                  [delivery.attempt, ask.leaseUntil(attempt: delivery.attempt), delivery.id])
            let outgoing = try compose(try await Self.deliveryFacts(delivery, tx, key: key))
            if outgoing == nil { _ = try await tx.rows(PostgresTransaction.dropDeliverySQL, [delivery.id]) }
            return DeliveryClaim(gaveUp: gaveUp, delivery: delivery, outgoing: outgoing)
        }
    }

    /// What composes a delivery, read in its claim's transaction.
    static func deliveryFacts(_ delivery: ClaimedDelivery, _ tx: AwaitedConnection, key: PersonalDataKey) async throws -> DeliveryFacts {
        let keySetting = PostgresTransaction.clientsKeyCheckSetting
        switch delivery.content {
        case .text, .textCode:
            let row = try await tx.rows("""
                SELECT p.*, (SELECT value FROM settings WHERE key = $2) AS personal_key_check FROM phones p WHERE p.client_id = $1
                """, [delivery.clientId, keySetting]).first.map(PostgresTransaction.row)
            let check: String? = try row?.value("personal_key_check", in: "settings")
            return try DeliveryFacts.text(delivery, phone: try row.map(StoredPhone.init(row:))) { try key.cipher(keyCheck: check) }
        case .emailCode, .message:
            let row = try await tx.rows("""
                SELECT c.*, (SELECT value FROM settings WHERE key = $2) AS personal_key_check,
                       (SELECT name FROM clinics WHERE id = c.home_clinic_id) AS home_clinic_name,
                       (SELECT value FROM settings WHERE key = 'mail.instance') AS mail_instance
                FROM clients c WHERE c.id = $1
                """, [delivery.clientId, keySetting]).first.map(PostgresTransaction.row)
            let opened = try row.map { try openedClient($0, key: key) }
            // The mail instance is read with the patient; made once, the first time a patient's
            // mail needs it: proposed, then read in a statement of its own (it sees another
            // server's proposal committed meanwhile).
            var instance: String? = try row?.value("mail_instance", in: "settings")
            if row != nil, instance == nil {
                _ = try await tx.rows(PostgresTransaction.proposeMailInstanceSQL, [DeliveryFacts.newMailInstance()])
                instance = try tx.value(String.self, try await tx.rows(PostgresTransaction.mailInstanceSQL, []))
            }
            var facts = try DeliveryFacts.mail(delivery, client: opened?.client, mailInstance: instance ?? "clinic") {
                try key.cipher(keyCheck: opened?.check)
            }
            facts.homeClinicName = try row?.value("home_clinic_name", in: "clinics")
            if case .message(let inboxId) = delivery.content, let inboxId,
               let message = try await tx.rows("SELECT * FROM messages WHERE id = $1", [inboxId]).first
                .map({ try InboxMessage(row: try PostgresTransaction.row($0)) }) {
                facts.message = message
                if message.kind.carriesEvent, let appointmentId = message.appointmentId {
                    facts.event = try await calendarEvent(appointmentId, tx)
                }
            }
            return facts
        }
    }

    /// An appointment's calendar event (nil: the appointment or its clinic is gone): one statement.
    static func calendarEvent(_ appointmentId: Int64, _ tx: AwaitedConnection) async throws -> CalendarEvent? {
        guard let found = try await tx.rows("""
            SELECT a.*, (SELECT row_to_json(k)::text FROM clinics k WHERE k.id = a.clinic_id) AS clinic,
                   (SELECT specialization FROM departments WHERE id = a.department_id) AS specialization,
                   (SELECT count(*) FROM appointment_events e
                    WHERE e.appointment_id = a.id AND e.event IN ('rescheduled', 'cancelled')) AS changes
            FROM appointments a WHERE a.id = $1
            """, [appointmentId]).first else { return nil }
        let row = try PostgresTransaction.row(found)
        guard let clinic: String = try row.value("clinic", in: "clinics") else { return nil }
        return CalendarEvent(appointment: try Appointment(row: row), clinic: try Clinic(row: try JSONRows.row(clinic)),
                             specialization: try row.value("specialization", in: "departments") ?? "",
                             sequence: Int(try row.value("changes", in: "appointment_events") as Int64))
    }

    /// One statement.
    public func markDeliverySent(_ id: Int64, at: Date, reply: String) async throws {
        _ = try await awaitedRows(PostgresTransaction.completeDeliverySQL, [at, reply, id])
    }

    /// One statement.
    public func markDeliveryFailed(_ id: Int64, error: String, givingUp: Bool) async throws {
        _ = try await awaitedRows(PostgresTransaction.failDeliverySQL(givingUp: givingUp), [error, id])
    }

    /// A read-only snapshot: the rules, the upcoming visits (one statement), their reminders
    /// written (one). Then, when one is due: BEGIN; the same reads; for each due reminder its
    /// message's context (one), the message and its e-mail (one), its text (`queue`); COMMIT.
    public func writeReminders(_ ask: ReminderAsk) async throws -> Int {
        guard try await !readAwaited({ tx in try await Self.dueReminders(ask, tx) }).isEmpty else { return 0 }
        let sent = statementsSent, key = personalDataKey
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let keyCheck = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL,
                                                                       [PostgresTransaction.clientsKeyCheckSetting]))
            var written = 0
            for due in try await Self.dueReminders(ask, tx) {
                guard let clientId = due.appointment.clientId,
                      let context = try await tx.rows(PostgresTransaction.messageContextSQL,
                                                      [due.appointment.departmentId, clientId, due.appointment.clinicId])
                        .first.map({ try PostgresTransaction.messageContext(try PostgresTransaction.row($0)) }),
                      let reminder = Outbox.reminder(due, context: context) else { continue }
                let message = reminder.message
                guard let messageId = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.postKeyedMessageSQL, [
                    message.clientId, message.kind.rawValue, due.appointment.id, message.clinicId, message.staffId, message.subject,
                    message.body, ask.now, reminder.dedupeKey, message.emailed])) else { continue }
                if let text = reminder.text { try await Self.queue(text, messageId: messageId, at: ask.now, tx, key: key, keyCheck: keyCheck) }
                written += 1
            }
            return written
        }
    }

    /// The reminders due, decided by ClinicKit on the visits read.
    static func dueReminders(_ ask: ReminderAsk, _ tx: AwaitedConnection) async throws -> [DueReminder] {
        let settings = try PostgresTransaction.settings(try await tx.rows(PostgresTransaction.settingsSQL, [ReminderAsk.settingsPrefix])
            .map(PostgresTransaction.row))
        guard let window = ask.window(settings: settings) else { return [] }
        let visits = try await tx.rows("""
            SELECT a.*, (SELECT max(at) FROM appointment_events e
                         WHERE e.appointment_id = a.id AND e.event IN ('booked', 'rescheduled')) AS chosen_at
            FROM appointments a WHERE a.\(AppointmentStatus.activeCondition) AND a.client_id IS NOT NULL
            AND a.starts_at > $1 AND a.starts_at <= $2 ORDER BY a.starts_at, a.id
            """, [window.after, window.through]).map { found in
            let row = try PostgresTransaction.row(found)
            return RemindableVisit(appointment: try Appointment(row: row),
                                   chosenAt: try row.optionalInstant("chosen_at", in: "appointment_events"))
        }
        // The reminders due before those written are known, then those written among them (the
        // lead a visit is due at does not depend on what was written).
        let keys = ask.candidateKeys(visits, settings: settings)
        guard !keys.isEmpty else { return [] }
        let written = Set(try await tx.rows("SELECT dedupe_key FROM messages WHERE dedupe_key = ANY ($1::text[])", [keys])
            .compactMap { try PostgresTransaction.row($0).value("dedupe_key", in: "messages") as String? })
        return ask.due(visits, written: written, settings: settings)
    }
}
