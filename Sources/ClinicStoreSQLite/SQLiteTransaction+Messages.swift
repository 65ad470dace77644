import ClinicKit
import Foundation
import GRDB

// The message area's operations in SQLite (`Storage/Seam/MessageStorage.swift`). The inbox's
// are written once, in `SQLiteInboxStatements`, for both the transaction and `SQLiteInbox`;
// the outbox's and the address confirmations' are the transaction's alone.

/// What the inbox's SQLite operations need: a connection, nothing of the manager (no key).
protocol SQLiteInboxStatements: InboxWriting {
    var db: Database { get }
}

/// The inbox over a bare GRDB `Database`, for this store's own code that holds no
/// `SQLiteStore` (SQLiteForwarding.swift).
struct SQLiteInbox: SQLiteInboxStatements {
    let db: Database
}

extension SQLiteTransaction: SQLiteInboxStatements {}

// MARK: The inbox

extension SQLiteInboxStatements {
    func keepsInboxes() throws -> Bool { try db.tableExists("messages") }

    func inboxMessages(ofClient clientId: Int64, unreadOnly: Bool, limit: Int) throws -> [InboxMessage] {
        try Row.fetchAll(db, sql: """
            SELECT * FROM messages WHERE client_id = ? \(unreadOnly ? "AND read_at IS NULL" : "") ORDER BY id DESC LIMIT ?
            """, arguments: [clientId, limit]).map(InboxMessage.init(row:))
    }

    func unreadCount(ofClient clientId: Int64) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM messages WHERE client_id = ? AND read_at IS NULL"),
                         arguments: [clientId]) ?? 0
    }

    func inboxMessage(_ id: Int64) throws -> InboxMessage? {
        try Row.fetchOne(db, sql: "SELECT * FROM messages WHERE id = ?", arguments: [id]).map(InboxMessage.init(row:))
    }

    func messageContext(client clientId: Int64, clinic clinicId: Int64, department departmentId: Int64) throws
        -> AppointmentMessageContext? {
        // One query, columns by position: this runs in every booking's transaction, and
        // `Clinic(row:)`'s look-ups by column name were most of its time.
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT c.preferred_language, k.name, k.address, k.city, k.state, k.zip, k.time_zone,
                   (SELECT specialization FROM departments WHERE id = ?), c.email_confirmed = 1
            FROM clients c, clinics k WHERE c.id = ? AND k.id = ?
            """), arguments: [departmentId, clientId, clinicId])
        else { return nil }
        // A value that cannot be read is named by its table and column (the row is the
        // appointment's client, clinic or department).
        return AppointmentMessageContext(
            language: Language(rawValue: try row.value(atIndex: 0, "preferred_language", in: "clients")),
            emailConfirmed: try row.value(atIndex: 8, "email_confirmed", in: "clients"),
            clinicName: try row.value(atIndex: 1, "name", in: "clinics"),
            address: try row.value(atIndex: 2, "address", in: "clinics"),
            city: try row.value(atIndex: 3, "city", in: "clinics"),
            state: try row.value(atIndex: 4, "state", in: "clinics"),
            zip: try row.value(atIndex: 5, "zip", in: "clinics"),
            timeZone: try row.value(atIndex: 6, "time_zone", in: "clinics"),
            specialization: try row.value(atIndex: 7, "specialization", in: "departments") ?? "")
    }

    func hasConfirmedEmail(client clientId: Int64) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM clients WHERE id = ? AND email_confirmed = 1)"),
                          arguments: [clientId]) ?? false
    }

    func insertInboxMessage(toClient clientId: Int64, kind: MessageKind, subject: String, body: String,
                            appointmentId: Int64?, clinicId: Int64?, staffId: Int64?, dedupeKey: String?,
                            at now: Date) throws -> Int64? {
        // Cached statements here and in `enqueueDelivery`: both run in every booking's transaction.
        try db.cachedStatement(sql: """
            INSERT INTO messages (client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, dedupe_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
            """).execute(arguments: [clientId, kind.rawValue, appointmentId, clinicId, staffId, subject, body, now.seconds, dedupeKey])
        guard db.changesCount > 0 else { return nil }
        return db.lastInsertedRowID
    }

    func enqueueDelivery(ofMessage messageId: Int64, toClient clientId: Int64, at now: Date) throws {
        try db.cachedStatement(sql: """
            INSERT INTO deliveries (client_id, message_id, purpose, created_at, next_attempt_at) VALUES (?, ?, 'message', ?, ?)
            """).execute(arguments: [clientId, messageId, now.seconds, now.seconds])
    }

    func markMessageRead(_ messageId: Int64, ofClient clientId: Int64, at now: Date) throws -> InboxMessage? {
        try db.execute(sql: "UPDATE messages SET read_at = coalesce(read_at, ?) WHERE id = ? AND client_id = ?",
                       arguments: [now.seconds, messageId, clientId])
        return try Row.fetchOne(db, sql: "SELECT * FROM messages WHERE id = ? AND client_id = ?",
                                arguments: [messageId, clientId]).map(InboxMessage.init(row:))
    }
}

// MARK: The outbox and the address confirmations

extension SQLiteTransaction {
    func hasDueDeliveries(at now: Date, channels: Set<DeliveryChannel>) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ?
            AND purpose IN (\(DeliveryChannel.purposeList(channels))))
            """, arguments: [now.seconds]) ?? false
    }

    func storedRemindableAppointments(startingAfter after: Date, through: Date) throws -> [Appointment] {
        try Appointment.fetchAll(db, sql: """
            SELECT * FROM appointments WHERE \(AppointmentStatus.activeCondition) AND client_id IS NOT NULL
            AND starts_at > ? AND starts_at <= ? ORDER BY starts_at
            """, arguments: [after.seconds, through.seconds])
    }

    func messageExists(dedupeKey: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM messages WHERE dedupe_key = ?)", arguments: [dedupeKey]) ?? false
    }

    func slotChosenAt(ofAppointment appointmentId: Int64) throws -> Date? {
        try Int64.fetchOne(db, sql: """
            SELECT max(at) FROM appointment_events WHERE appointment_id = ? AND event IN ('booked', 'rescheduled')
            """, arguments: [appointmentId]).map(Date.init(seconds:))
    }

    func emailConfirmation(ofClient clientId: Int64) throws -> EmailConfirmation? {
        let table = "email_confirmations", key = "client_id"
        return try Row.fetchOne(db, sql: "SELECT * FROM email_confirmations WHERE client_id = ?", arguments: [clientId]).map { row in
            EmailConfirmation(codeHash: try row.value("code_hash", in: table, key: key),
                              expiresAt: try row.instant("expires_at", in: table, key: key),
                              wrongAttempts: try row.value("attempts", in: table, key: key))
        }
    }

    func giveUpDeliveries(dueAt now: Date, writtenNoLaterThan cutoff: Date) throws -> Int {
        try db.execute(sql: "UPDATE deliveries SET state = 'failed' WHERE state = 'pending' AND next_attempt_at <= ? AND created_at <= ?",
                       arguments: [now.seconds, cutoff.seconds])
        return db.changesCount
    }

    func claimDeliveries(limit: Int, now: Date, claimant: String, channels: Set<DeliveryChannel>,
                         leaseUntil: (_ attempt: Int) -> Date) throws -> [ClaimedDelivery] {
        // SQLite reads a negative LIMIT as none.
        guard limit > 0, !channels.isEmpty else { return [] }
        let table = "deliveries"
        let rows = try Row.fetchAll(db, sql: """
            SELECT id, client_id, purpose, message_id, payload, created_at, attempts FROM deliveries
            WHERE state = 'pending' AND next_attempt_at <= ? AND purpose IN (\(DeliveryChannel.purposeList(channels)))
            ORDER BY next_attempt_at, id LIMIT ?
            """, arguments: [now.seconds, limit])
        return try rows.map { row in
            let id: Int64 = try row.value("id", in: table)
            let attempt = (try row.value("attempts", in: table) as Int) + 1
            // The claim: under the writer lock, a row whose next attempt is after now is no one's to take.
            try db.execute(sql: "UPDATE deliveries SET attempts = ?, next_attempt_at = ? WHERE id = ?",
                           arguments: [attempt, leaseUntil(attempt).seconds, id])
            let content = ClaimedDelivery.Content(purpose: try row.value("purpose", in: table),
                                                  messageId: try row.value("message_id", in: table),
                                                  payload: try row.value("payload", in: table))
            return ClaimedDelivery(id: id, clientId: try row.value("client_id", in: table), content: content,
                                   createdAt: try row.instant("created_at", in: table), attempt: attempt)
        }
    }

    func completeDelivery(_ deliveryId: Int64, sentAt: Date, reply: String) throws {
        // A text's body (a link's token, a code) is not kept once the gateway has it.
        try db.execute(sql: """
            UPDATE deliveries SET state = 'sent', sent_at = ?, reply = ?, last_error = NULL,
                payload = CASE WHEN purpose IN ('text', 'text_code') THEN NULL ELSE payload END WHERE id = ?
            """, arguments: [sentAt.seconds, reply, deliveryId])
    }

    func failDelivery(_ deliveryId: Int64, error: String, givingUp: Bool) throws {
        try db.execute(sql: givingUp ? "UPDATE deliveries SET last_error = ?, state = 'failed' WHERE id = ?"
                                     : "UPDATE deliveries SET last_error = ? WHERE id = ?",
                       arguments: [error, deliveryId])
    }

    func dropDelivery(_ deliveryId: Int64) throws {
        try db.execute(sql: "UPDATE deliveries SET state = 'dropped' WHERE id = ?", arguments: [deliveryId])
    }

    func mailInstance(proposing candidate: String) throws -> String? {
        try db.execute(sql: "INSERT OR IGNORE INTO settings (key, value) VALUES ('mail.instance', ?)", arguments: [candidate])
        return try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = 'mail.instance'")
    }

    func enqueueEmailCodeDelivery(toClient clientId: Int64, at now: Date) throws -> Int64 {
        try db.execute(sql: "INSERT INTO deliveries (client_id, purpose, created_at, next_attempt_at) VALUES (?, 'email_code', ?, ?)",
                       arguments: [clientId, now.seconds, now.seconds])
        return db.lastInsertedRowID
    }

    func setDeliveryPayload(_ sealed: Data, ofDelivery deliveryId: Int64) throws {
        try db.execute(sql: "UPDATE deliveries SET payload = ? WHERE id = ?", arguments: [sealed, deliveryId])
    }

    func dropPendingEmailCodes(ofClient clientId: Int64) throws {
        try db.execute(sql: "UPDATE deliveries SET state = 'dropped' WHERE client_id = ? AND purpose = 'email_code' AND state = 'pending'",
                       arguments: [clientId])
    }

    func dropPendingDeliveries(ofClient clientId: Int64, channels: Set<DeliveryChannel>) throws {
        try db.execute(sql: """
            UPDATE deliveries SET state = 'dropped', payload = NULL WHERE client_id = ? AND state = 'pending'
            AND purpose IN (\(DeliveryChannel.purposeList(channels)))
            """, arguments: [clientId])
    }

    func enqueueTextDelivery(toClient clientId: Int64, code: Bool, messageId: Int64?, at now: Date) throws -> Int64 {
        try db.execute(sql: "INSERT INTO deliveries (client_id, message_id, purpose, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?)",
                       arguments: [clientId, messageId, code ? "text_code" : "text", now.seconds, now.seconds])
        return db.lastInsertedRowID
    }

    func recordTextReport(_ report: TextReport, ofDelivery deliveryId: Int64, at now: Date) throws -> Bool {
        // The first final report (delivered, failed, rejected) stays: the network's reports of
        // one text come in any order, and a replayed report cannot rewrite the outcome.
        try db.execute(sql: """
            UPDATE deliveries SET report = ?, reported_at = ? WHERE id = ? AND purpose IN ('text', 'text_code')
            AND (report IS NULL OR report NOT IN ('delivered', 'failed', 'rejected'))
            """, arguments: [report.rawValue, now.seconds, deliveryId])
        return try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM deliveries WHERE id = ? AND purpose IN ('text', 'text_code'))",
                                 arguments: [deliveryId]) ?? false
    }

    func replaceEmailConfirmation(ofClient clientId: Int64, codeHash: String, expiresAt: Date) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO email_confirmations (client_id, code_hash, expires_at, attempts) VALUES (?, ?, ?, 0)",
                       arguments: [clientId, codeHash, expiresAt.seconds])
    }

    func countWrongEmailCode(ofClient clientId: Int64) throws {
        try db.execute(sql: "UPDATE email_confirmations SET attempts = attempts + 1 WHERE client_id = ?", arguments: [clientId])
    }

    func deleteEmailConfirmation(ofClient clientId: Int64) throws {
        try db.execute(sql: "DELETE FROM email_confirmations WHERE client_id = ?", arguments: [clientId])
    }
}
