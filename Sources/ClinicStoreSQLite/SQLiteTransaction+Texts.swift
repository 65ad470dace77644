import ClinicKit
import Foundation
import GRDB

// Mobile numbers and one-tap links on SQLite (Migrations/0022_texts.sql). A store still on an
// older schema (a test of a migration) has no numbers.

extension SQLiteTransaction {
    func phone(ofClient clientId: Int64) throws -> StoredPhone? {
        guard try db.tableExists("phones") else { return nil }
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM phones WHERE client_id = ?"), arguments: [clientId])
            .map { try StoredPhone(row: SQLiteRow($0)) }
    }

    func confirmedPhone(numberKey: String) throws -> StoredPhone? {
        guard try db.tableExists("phones") else { return nil }
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM phones WHERE number_key = ? AND confirmed = 1"),
                                arguments: [numberKey]).map { try StoredPhone(row: SQLiteRow($0)) }
    }

    func offerLink(hash: String) throws -> (offerId: Int64, usedAt: Date?)? {
        guard let row = try Row.fetchOne(db, sql: "SELECT id, link_used_at FROM waitlist_offers WHERE link_hash = ?",
                                         arguments: [hash]) else { return nil }
        let stored = SQLiteRow(row)
        return (try stored.value("id", in: "waitlist_offers"), try stored.optionalInstant("link_used_at", in: "waitlist_offers"))
    }

    func phoneClients() throws -> [Int64] {
        guard try db.tableExists("phones") else { return [] }
        return try Int64.fetchAll(db, sql: "SELECT client_id FROM phones ORDER BY client_id")
    }

    func waitlistNotes(entryIds: [Int64]) throws -> [Int64: Data] {
        guard !entryIds.isEmpty, try db.columns(in: "waitlist_entries").contains(where: { $0.name == "note" }) else { return [:] }
        var notes: [Int64: Data] = [:]
        for row in try Row.fetchAll(db, sql: """
            SELECT id, note FROM waitlist_entries WHERE note IS NOT NULL AND id IN (\(entryIds.map { _ in "?" }.joined(separator: ", ")))
            """, arguments: StatementArguments(entryIds)) {
            let stored = SQLiteRow(row)
            notes[try stored.value("id", in: "waitlist_entries")] = try stored.value("note", in: "waitlist_entries")
        }
        return notes
    }

    func setWaitlistNote(entryId: Int64, sealed: Data?) throws {
        try db.execute(sql: "UPDATE waitlist_entries SET note = ? WHERE id = ?", arguments: [sealed, entryId])
    }

    func savePhone(_ phone: StoredPhone, at now: Date) throws {
        try db.execute(sql: """
            INSERT OR REPLACE INTO phones (client_id, number_sealed, number_key, confirmed, code_hash, code_expires_at, code_attempts,
                                           code_sent_at, text_reminders, text_offers, stopped, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [phone.clientId, phone.numberSealed, phone.numberKey, phone.confirmed, phone.codeHash,
                             phone.codeExpiresAt?.seconds, phone.codeAttempts, phone.codeSentAt?.seconds, phone.textReminders,
                             phone.textOffers, phone.stopped, now.seconds])
    }

    func countWrongPhoneCode(ofClient clientId: Int64) throws {
        try db.execute(sql: "UPDATE phones SET code_attempts = code_attempts + 1 WHERE client_id = ?", arguments: [clientId])
    }

    func deletePhone(ofClient clientId: Int64) throws {
        try db.execute(sql: "DELETE FROM phones WHERE client_id = ?", arguments: [clientId])
    }

    func releaseConfirmedNumber(numberKey: String, exceptClient clientId: Int64) throws {
        try db.execute(sql: "DELETE FROM phones WHERE number_key = ? AND confirmed = 1 AND client_id <> ?",
                       arguments: [numberKey, clientId])
    }

    func setOfferLink(offerId: Int64, hash: String) throws {
        try db.execute(sql: "UPDATE waitlist_offers SET link_hash = ? WHERE id = ?", arguments: [hash, offerId])
    }

    func useOfferLink(hash: String, at now: Date) throws -> Int64? {
        try Int64.fetchOne(db, sql: "UPDATE waitlist_offers SET link_used_at = ? WHERE link_hash = ? AND link_used_at IS NULL RETURNING id",
                           arguments: [now.seconds, hash])
    }
}
