import ClinicKit
import Foundation
import PostgresNIO

// Mobile numbers and one-tap links on PostgreSQL (Migrations/postgres/0013_texts.sql). One
// patient per confirmed number is the unique index's; a link is used once by the UPDATE that
// checks and marks it.

extension PostgresTransaction {
    func phone(ofClient clientId: Int64) throws -> StoredPhone? {
        try row(Self.phoneSQL, [clientId]).map(StoredPhone.init(row:))
    }

    /// A patient's phone: $1 the patient.
    static let phoneSQL = "SELECT * FROM phones WHERE client_id = $1"

    func confirmedPhone(numberKey: String) throws -> StoredPhone? {
        try row("SELECT * FROM phones WHERE number_key = $1 AND confirmed", [numberKey]).map(StoredPhone.init(row:))
    }

    func offerLink(hash: String) throws -> (offerId: Int64, usedAt: Date?)? {
        try row("SELECT id, link_used_at FROM waitlist_offers WHERE link_hash = $1", [hash]).map { row in
            (try row.value("id", in: "waitlist_offers"), try row.optionalInstant("link_used_at", in: "waitlist_offers"))
        }
    }

    func phoneClients() throws -> [Int64] {
        try values(Int64.self, "SELECT client_id FROM phones ORDER BY client_id")
    }

    func waitlistNotes(entryIds: [Int64]) throws -> [Int64: Data] {
        guard !entryIds.isEmpty else { return [:] }
        var notes: [Int64: Data] = [:]
        for row in try rows(Self.waitlistNotesSQL, ["{" + entryIds.map(String.init).joined(separator: ",") + "}"]) {
            notes[try row.value("id", in: "waitlist_entries")] = try row.value("note", in: "waitlist_entries")
        }
        return notes
    }

    /// The sealed notes of the entries `$1` (an array of ids) that have one.
    static let waitlistNotesSQL = "SELECT id, note FROM waitlist_entries WHERE note IS NOT NULL AND id = ANY($1::bigint[])"

    func setWaitlistNote(entryId: Int64, sealed: Data?) throws {
        try execute(Self.setNoteSQL, [sealed, entryId])
    }

    static let setNoteSQL = "UPDATE waitlist_entries SET note = $1 WHERE id = $2"


    func savePhone(_ phone: StoredPhone, at now: Date) throws {
        try execute(Self.savePhoneSQL, Self.savePhoneBinds(phone, at: now))
    }

    /// A patient's phone inserted or replaced: `savePhoneBinds`.
    static let savePhoneSQL = """
        INSERT INTO phones (client_id, number_sealed, number_key, confirmed, code_hash, code_expires_at, code_attempts,
                            code_sent_at, text_reminders, text_offers, stopped, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
        ON CONFLICT (client_id) DO UPDATE SET number_sealed = EXCLUDED.number_sealed, number_key = EXCLUDED.number_key,
            confirmed = EXCLUDED.confirmed, code_hash = EXCLUDED.code_hash, code_expires_at = EXCLUDED.code_expires_at,
            code_attempts = EXCLUDED.code_attempts, code_sent_at = EXCLUDED.code_sent_at,
            text_reminders = EXCLUDED.text_reminders, text_offers = EXCLUDED.text_offers, stopped = EXCLUDED.stopped,
            updated_at = EXCLUDED.updated_at
        """

    static func savePhoneBinds(_ phone: StoredPhone, at now: Date) -> [any PostgresBindable] {
        [phone.clientId, phone.numberSealed, phone.numberKey, phone.confirmed, phone.codeHash, phone.codeExpiresAt,
         phone.codeAttempts, phone.codeSentAt, phone.textReminders, phone.textOffers, phone.stopped, now]
    }

    func countWrongPhoneCode(ofClient clientId: Int64) throws {
        try execute(Self.countWrongPhoneCodeSQL, [clientId])
    }

    /// A wrong guess at a number's code counted: $1 the patient.
    static let countWrongPhoneCodeSQL = "UPDATE phones SET code_attempts = code_attempts + 1 WHERE client_id = $1"

    func deletePhone(ofClient clientId: Int64) throws {
        try execute("DELETE FROM phones WHERE client_id = $1", [clientId])
    }

    /// Two patients confirming one number at once on two servers: the number's advisory lock
    /// (to the end of the transaction) puts one after the other, so the second's delete sees the
    /// first's committed confirmation and takes the number over (whoever confirms last holds
    /// the phone), instead of both inserting and the second failing on `phones_confirmed` (a
    /// 500, issue 55). The lock is a statement of its own: under READ COMMITTED the delete's
    /// snapshot is then taken after the wait.
    func releaseConfirmedNumber(numberKey: String, exceptClient clientId: Int64) throws {
        try execute(Self.numberLockSQL, [numberKey])
        try execute(Self.releaseNumberSQL, [numberKey, clientId])
    }

    /// The number's advisory lock to the end of the transaction: $1 its key.
    static let numberLockSQL = "SELECT pg_advisory_xact_lock(hashtextextended('phone-number:' || $1, 0))"
    /// The number taken from another patient who confirmed it: $1 its key, $2 the patient confirming.
    static let releaseNumberSQL = "DELETE FROM phones WHERE number_key = $1 AND confirmed AND client_id <> $2"

    func setOfferLink(offerId: Int64, hash: String) throws {
        try execute(Self.setOfferLinkSQL, [hash, offerId])
    }

    /// Offer `$2`'s one-tap link: its hash `$1`.
    static let setOfferLinkSQL = "UPDATE waitlist_offers SET link_hash = $1 WHERE id = $2"

    func useOfferLink(hash: String, at now: Date) throws -> Int64? {
        try value(Int64.self, Self.useOfferLinkSQL, [hash, now])
    }

    static let useOfferLinkSQL = "UPDATE waitlist_offers SET link_used_at = $2 WHERE link_hash = $1 AND link_used_at IS NULL RETURNING id"

}
