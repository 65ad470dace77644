import ClinicKit
import Foundation

// The message area's operations on PostgreSQL (`Storage/Seam/MessageStorage.swift`): the
// inboxes, the outbox and the address confirmations, as SQLiteTransaction+Messages.swift does
// them, with what SQLite's single writer gave for free said in SQL: a message's dedupe key and
// the mail instance by ON CONFLICT, claims of deliveries by `FOR UPDATE SKIP LOCKED`.

// MARK: The inbox

extension PostgresTransaction {
    /// Always: PostgreSQL's first migration makes every table (SQLite's older schemas had no
    /// inboxes), and this was a round trip on every booking.
    func keepsInboxes() throws -> Bool { true }

    func inboxMessages(ofClient clientId: Int64, unreadOnly: Bool, limit: Int) throws -> [InboxMessage] {
        try rows("""
            SELECT * FROM messages WHERE client_id = $1 \(unreadOnly ? "AND read_at IS NULL" : "") ORDER BY id DESC LIMIT $2
            """, [clientId, limitBind(limit)]).map(InboxMessage.init(row:))
    }

    func unreadCount(ofClient clientId: Int64) throws -> Int {
        try value(Int.self, Self.unreadCountSQL, [clientId]) ?? 0
    }

    /// How many of a patient's (`$1`) messages are unread, as `unread`.
    static let unreadCountSQL = "SELECT count(*) AS unread FROM messages WHERE client_id = $1 AND read_at IS NULL"

    func inboxMessage(_ id: Int64) throws -> InboxMessage? {
        try row("SELECT * FROM messages WHERE id = $1", [id]).map(InboxMessage.init(row:))
    }

    func messageContext(client clientId: Int64, clinic clinicId: Int64, department departmentId: Int64) throws
        -> AppointmentMessageContext? {
        try row(Self.messageContextSQL, [departmentId, clientId, clinicId]).map(Self.messageContext)
    }

    /// What a message about an appointment is written from: department `$1`, patient `$2`, clinic `$3`.
    static let messageContextSQL = """
        SELECT c.preferred_language, k.name, k.address, k.city, k.state, k.zip, k.time_zone,
               (SELECT specialization FROM departments WHERE id = $1) AS specialization, c.email_confirmed
        FROM clients c, clinics k WHERE c.id = $2 AND k.id = $3
        """

    /// The context of a `messageContextSQL` row.
    static func messageContext(_ row: StoredRowValues) throws -> AppointmentMessageContext {
        AppointmentMessageContext(
            language: Language(rawValue: try row.value("preferred_language", in: "clients")),
            emailConfirmed: try row.value("email_confirmed", in: "clients"),
            clinicName: try row.value("name", in: "clinics"),
            address: try row.value("address", in: "clinics"),
            city: try row.value("city", in: "clinics"),
            state: try row.value("state", in: "clinics"),
            zip: try row.value("zip", in: "clinics"),
            timeZone: try row.value("time_zone", in: "clinics"),
            specialization: try row.value("specialization", in: "departments") ?? "")
    }

    func hasConfirmedEmail(client clientId: Int64) throws -> Bool {
        try value(Bool.self, "SELECT EXISTS (SELECT 1 FROM clients WHERE id = $1 AND email_confirmed)", [clientId]) ?? false
    }

    /// The dedupe key's unique index (`messages_dedupe`, partial) arbitrates: a second message
    /// with the key, from whichever server, inserts nothing and returns no id.
    func insertInboxMessage(toClient clientId: Int64, kind: MessageKind, subject: String, body: String,
                            appointmentId: Int64?, clinicId: Int64?, staffId: Int64?, dedupeKey: String?,
                            at now: Date) throws -> Int64? {
        try value(Int64.self, """
            INSERT INTO messages (client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, dedupe_key)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
            RETURNING id
            """, [clientId, kind.rawValue, appointmentId, clinicId, staffId, subject, body, now, dedupeKey])
    }

    func enqueueDelivery(ofMessage messageId: Int64, toClient clientId: Int64, at now: Date) throws {
        try execute("""
            INSERT INTO deliveries (client_id, message_id, purpose, created_at, next_attempt_at) VALUES ($1, $2, 'message', $3, $3)
            """, [clientId, messageId, now])
    }

    /// A message (no dedupe key) to patient `$1` of kind `$2`, subject `$3` and body `$4` at `$5`,
    /// about clinic `$7` (or none) and appointment `$9` (or none), from staff account `$8` (or
    /// none), queued for e-mail too when `$6` says their address is confirmed (NULL: when it is,
    /// as stored): `Inbox.post` in one statement.
    static let postMessageSQL = """
        WITH m AS (INSERT INTO messages (client_id, kind, subject, body, created_at, clinic_id, staff_id, appointment_id)
                   VALUES ($1, $2, $3, $4, $5, $7, $8, $9) RETURNING id),
             d AS (INSERT INTO deliveries (client_id, message_id, purpose, created_at, next_attempt_at)
                   SELECT $1, id, 'message', $5, $5 FROM m
                   WHERE coalesce($6::boolean, EXISTS (SELECT 1 FROM clients WHERE id = $1 AND email_confirmed)))
        SELECT id FROM m
        """

    /// A message with dedupe key `$9` (else as `insertInboxMessage`: patient `$1`, kind `$2`,
    /// appointment `$3`, clinic `$4`, staff `$5`, subject `$6`, body `$7`, at `$8`), queued for
    /// e-mail too when `$10`; its id, or no row when a message with the key exists (from
    /// whichever server: the key's unique index arbitrates).
    static let postKeyedMessageSQL = """
        WITH m AS (INSERT INTO messages (client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, dedupe_key)
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
                   RETURNING id),
             d AS (INSERT INTO deliveries (client_id, message_id, purpose, created_at, next_attempt_at)
                   SELECT $1, id, 'message', $8, $8 FROM m WHERE $10::boolean)
        SELECT id FROM m
        """

    func markMessageRead(_ messageId: Int64, ofClient clientId: Int64, at now: Date) throws -> InboxMessage? {
        try row(Self.markReadSQL, [now, messageId, clientId]).map(InboxMessage.init(row:))
    }

    /// A patient's message marked read (`$1` when, `$2` the message, `$3` the patient) unless it
    /// was, as it then is; no row for another patient's.
    static let markReadSQL = "UPDATE messages SET read_at = coalesce(read_at, $1) WHERE id = $2 AND client_id = $3 RETURNING *"
}

// MARK: The outbox and the address confirmations

extension PostgresTransaction {
    func hasDueDeliveries(at now: Date, channels: Set<DeliveryChannel>) throws -> Bool {
        try value(Bool.self, Self.dueDeliveriesSQL(channels), [now]) ?? false
    }

    /// Whether a delivery of `channels` is due at `$1`, as `due`.
    static func dueDeliveriesSQL(_ channels: Set<DeliveryChannel>) -> String {
        """
        SELECT EXISTS (SELECT 1 FROM deliveries WHERE state = 'pending' AND next_attempt_at <= $1
        AND purpose IN (\(DeliveryChannel.purposeList(channels)))) AS due
        """
    }

    func storedRemindableAppointments(startingAfter after: Date, through: Date) throws -> [Appointment] {
        try rows("""
            SELECT * FROM appointments WHERE \(AppointmentStatus.activeCondition) AND client_id IS NOT NULL
            AND starts_at > $1 AND starts_at <= $2 ORDER BY starts_at, id
            """, [after, through]).map(Appointment.init(row:))
    }

    func messageExists(dedupeKey: String) throws -> Bool {
        try value(Bool.self, "SELECT EXISTS (SELECT 1 FROM messages WHERE dedupe_key = $1)", [dedupeKey]) ?? false
    }

    func slotChosenAt(ofAppointment appointmentId: Int64) throws -> Date? {
        try value(Int64.self, """
            SELECT max(at) FROM appointment_events WHERE appointment_id = $1 AND event IN ('booked', 'rescheduled')
            """, [appointmentId]).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    func emailConfirmation(ofClient clientId: Int64) throws -> EmailConfirmation? {
        try row("SELECT client_id, code_hash, expires_at, attempts FROM email_confirmations WHERE client_id = $1",
                [clientId]).flatMap(Self.emailConfirmation(of:))
    }

    /// The confirmation in a row with its `code_hash`, `expires_at` and `attempts`; nil when
    /// `code_hash` is NULL (none, in an outer join).
    static func emailConfirmation(of row: StoredRowValues) throws -> EmailConfirmation? {
        let table = "email_confirmations", key = "client_id"
        guard let hash = try row.value("code_hash", in: table, key: key) as String? else { return nil }
        return EmailConfirmation(codeHash: hash,
                                 expiresAt: Date(timeIntervalSince1970: TimeInterval(try row.value("expires_at", in: table, key: key) as Int64)),
                                 wrongAttempts: try row.value("attempts", in: table, key: key))
    }

    func giveUpDeliveries(dueAt now: Date, writtenNoLaterThan cutoff: Date) throws -> Int {
        try execute(Self.giveUpDeliveriesSQL, [now, cutoff])
    }

    /// The deliveries due at `$1` and written no later than `$2` given up.
    static let giveUpDeliveriesSQL = "UPDATE deliveries SET state = 'failed' WHERE state = 'pending' AND next_attempt_at <= $1 AND created_at <= $2"

    /// The due rows are locked as they are chosen (`FOR UPDATE SKIP LOCKED`): a claimant
    /// running at the same time on another server skips them and takes others instead of
    /// waiting, and once this transaction commits their next attempt is at the lease's end,
    /// so they are due for no one until then (a claimant that locked a row just after the
    /// commit reads it again, no longer due, and leaves it). As on SQLite the claim is the
    /// moved next attempt and the counted attempt; the schema has no column for the claimant.
    func claimDeliveries(limit: Int, now: Date, claimant: String, channels: Set<DeliveryChannel>,
                         leaseUntil: (_ attempt: Int) -> Date) throws -> [ClaimedDelivery] {
        guard limit > 0, !channels.isEmpty else { return [] }
        return try rows(Self.claimDeliveriesSQL(channels), [now, limit]).map { row in
            let delivery = try Self.claimedDelivery(row)
            try execute(Self.countAttemptSQL, [delivery.attempt, leaseUntil(delivery.attempt), delivery.id])
            return delivery
        }
    }

    /// The first `$2` deliveries of `channels` due at `$1`, locked as they are chosen.
    static func claimDeliveriesSQL(_ channels: Set<DeliveryChannel>) -> String {
        """
        SELECT id, client_id, purpose, message_id, payload, created_at, attempts FROM deliveries
        WHERE state = 'pending' AND next_attempt_at <= $1 AND purpose IN (\(DeliveryChannel.purposeList(channels)))
        ORDER BY next_attempt_at, id LIMIT $2
        FOR UPDATE SKIP LOCKED
        """
    }

    /// A claim's attempt `$1` counted, the next at `$2` (the lease), of delivery `$3`.
    static let countAttemptSQL = "UPDATE deliveries SET attempts = $1, next_attempt_at = $2 WHERE id = $3"

    /// The delivery of a `claimDeliveriesSQL` row, as its claim makes it (the attempt counted).
    static func claimedDelivery(_ row: StoredRowValues) throws -> ClaimedDelivery {
        let table = "deliveries"
        let content = ClaimedDelivery.Content(purpose: try row.value("purpose", in: table),
                                              messageId: try row.value("message_id", in: table),
                                              payload: try row.value("payload", in: table))
        return ClaimedDelivery(id: try row.value("id", in: table), clientId: try row.value("client_id", in: table), content: content,
                               createdAt: Date(timeIntervalSince1970: TimeInterval(try row.value("created_at", in: table) as Int64)),
                               attempt: (try row.value("attempts", in: table) as Int) + 1)
    }

    func completeDelivery(_ deliveryId: Int64, sentAt: Date, reply: String) throws {
        try execute(Self.completeDeliverySQL, [sentAt, reply, deliveryId])
    }

    /// Delivery `$3` sent at `$1`, the gateway's reply `$2` kept. A text's body (a link's token,
    /// a code) is not kept once the gateway has it.
    static let completeDeliverySQL = """
        UPDATE deliveries SET state = 'sent', sent_at = $1, reply = $2, last_error = NULL,
            payload = CASE WHEN purpose IN ('text', 'text_code') THEN NULL ELSE payload END WHERE id = $3
        """

    func failDelivery(_ deliveryId: Int64, error: String, givingUp: Bool) throws {
        try execute(Self.failDeliverySQL(givingUp: givingUp), [error, deliveryId])
    }

    /// Delivery `$2`'s error `$1` kept; failed for good when `givingUp`.
    static func failDeliverySQL(givingUp: Bool) -> String {
        givingUp ? "UPDATE deliveries SET last_error = $1, state = 'failed' WHERE id = $2" : "UPDATE deliveries SET last_error = $1 WHERE id = $2"
    }

    func dropDelivery(_ deliveryId: Int64) throws {
        try execute(Self.dropDeliverySQL, [deliveryId])
    }

    static let dropDeliverySQL = "UPDATE deliveries SET state = 'dropped' WHERE id = $1"

    /// Two servers proposing at once: the second's insert waits for the first's row, then does
    /// nothing, and the read after it (a statement of its own, READ COMMITTED) finds the first's.
    func mailInstance(proposing candidate: String) throws -> String? {
        try execute(Self.proposeMailInstanceSQL, [candidate])
        return try value(String.self, Self.mailInstanceSQL)
    }

    /// `$1` proposed as the mail instance; nothing when there is one.
    static let proposeMailInstanceSQL = "INSERT INTO settings (key, value) VALUES ('mail.instance', $1) ON CONFLICT (key) DO NOTHING"
    static let mailInstanceSQL = "SELECT value FROM settings WHERE key = 'mail.instance'"

    func enqueueEmailCodeDelivery(toClient clientId: Int64, at now: Date) throws -> Int64 {
        guard let id = try value(Int64.self, Self.enqueueEmailCodeSQL, [clientId, now]) else {
            throw ClinicError(.storage, .storageFailure, "deliveries: no id returned")
        }
        return id
    }

    /// An e-mailed code's delivery to patient `$1` at `$2`; its id.
    static let enqueueEmailCodeSQL = """
        INSERT INTO deliveries (client_id, purpose, created_at, next_attempt_at) VALUES ($1, 'email_code', $2, $2) RETURNING id
        """

    func setDeliveryPayload(_ sealed: Data, ofDelivery deliveryId: Int64) throws {
        try execute(Self.deliveryPayloadSQL, [sealed, deliveryId])
    }

    /// A delivery's sealed payload: $1 the payload, $2 the delivery.
    static let deliveryPayloadSQL = "UPDATE deliveries SET payload = $1 WHERE id = $2"
    /// A text's delivery: $1 the patient, $2 the message (or NULL), $3 the purpose, $4 now; its id.
    static let enqueueTextSQL = """
        INSERT INTO deliveries (client_id, message_id, purpose, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $4) RETURNING id
        """

    func dropPendingEmailCodes(ofClient clientId: Int64) throws {
        try execute(Self.dropPendingEmailCodesSQL, [clientId])
    }

    /// The e-mailed codes not yet sent to patient $1 dropped.
    static let dropPendingEmailCodesSQL =
        "UPDATE deliveries SET state = 'dropped' WHERE client_id = $1 AND purpose = 'email_code' AND state = 'pending'"

    func dropPendingDeliveries(ofClient clientId: Int64, channels: Set<DeliveryChannel>) throws {
        try execute(Self.dropPendingDeliveriesSQL(channels), [clientId])
    }

    /// The deliveries of `channels` not yet sent to patient $1 dropped.
    static func dropPendingDeliveriesSQL(_ channels: Set<DeliveryChannel>) -> String {
        """
        UPDATE deliveries SET state = 'dropped', payload = NULL WHERE client_id = $1 AND state = 'pending'
        AND purpose IN (\(DeliveryChannel.purposeList(channels)))
        """
    }

    func enqueueTextDelivery(toClient clientId: Int64, code: Bool, messageId: Int64?, at now: Date) throws -> Int64 {
        guard let id = try value(Int64.self, Self.enqueueTextSQL, [clientId, messageId, code ? "text_code" : "text", now]) else {
            throw ClinicError(.storage, .storageFailure, "deliveries: no id returned")
        }
        return id
    }

    func recordTextReport(_ report: TextReport, ofDelivery deliveryId: Int64, at now: Date) throws -> Bool {
        try value(Bool.self, Self.recordTextReportSQL, [report.rawValue, now, deliveryId]) ?? false
    }

    /// Report `$1` at `$2` on the text delivery `$3`, unless a final report (delivered, failed,
    /// rejected) stays there: the network's reports of one text come in any order, and a replayed
    /// report cannot rewrite the outcome. Whether there is such a text delivery, in the same statement.
    static let recordTextReportSQL = """
        WITH recorded AS (
            UPDATE deliveries SET report = $1, reported_at = $2 WHERE id = $3 AND purpose IN ('text', 'text_code')
            AND (report IS NULL OR report NOT IN ('delivered', 'failed', 'rejected')) RETURNING id
        )
        SELECT EXISTS (SELECT 1 FROM deliveries WHERE id = $3 AND purpose IN ('text', 'text_code')) AS known
        """

    func replaceEmailConfirmation(ofClient clientId: Int64, codeHash: String, expiresAt: Date) throws {
        try execute(Self.replaceEmailConfirmationSQL, [clientId, codeHash, expiresAt])
    }

    /// Patient $1's e-mail code: its hash $2, valid until $3, no wrong guess yet.
    static let replaceEmailConfirmationSQL = """
        INSERT INTO email_confirmations (client_id, code_hash, expires_at, attempts) VALUES ($1, $2, $3, 0)
        ON CONFLICT (client_id) DO UPDATE SET code_hash = EXCLUDED.code_hash, expires_at = EXCLUDED.expires_at, attempts = 0
        """

    func countWrongEmailCode(ofClient clientId: Int64) throws {
        try execute(Self.countWrongEmailCodeSQL, [clientId])
    }

    /// A wrong guess at the e-mail code counted: $1 the patient.
    static let countWrongEmailCodeSQL = "UPDATE email_confirmations SET attempts = attempts + 1 WHERE client_id = $1"

    func deleteEmailConfirmation(ofClient clientId: Int64) throws {
        try execute(Self.deleteEmailConfirmationSQL, [clientId])
    }

    /// The e-mail confirmation ended: $1 the patient.
    static let deleteEmailConfirmationSQL = "DELETE FROM email_confirmations WHERE client_id = $1"
}
