import Foundation

// Text messages (issue 45): a patient's mobile number with its confirmation and choices, and a
// waitlist offer's one-tap link. Who may be texted what, how a code is checked and what a
// reply does are `ClientController+Phone`'s and `TextController`'s rules; these only store and
// find. Across servers the database holds: one patient per confirmed number (a unique index),
// a link used once (`useOfferLink`: checked and marked in one statement).

/// A patient's mobile number as stored: sealed, with its lookup key, and the code waiting to
/// confirm it.
public struct StoredPhone: Sendable, Equatable {
    public let clientId: Int64
    /// The E.164 number sealed under the personal-data key, context `phone:<client>`.
    public var numberSealed: Data
    /// HMAC of the number (`TextController.numberKey`): how an incoming text finds its patient.
    public var numberKey: String
    public var confirmed: Bool
    public var codeHash: String?
    public var codeExpiresAt: Date?
    public var codeAttempts: Int
    public var codeSentAt: Date?
    public var textReminders: Bool
    public var textOffers: Bool
    /// The patient replied STOP: nothing is texted until START.
    public var stopped: Bool

    public init(clientId: Int64, numberSealed: Data, numberKey: String, confirmed: Bool = false, codeHash: String? = nil,
                codeExpiresAt: Date? = nil, codeAttempts: Int = 0, codeSentAt: Date? = nil, textReminders: Bool = true,
                textOffers: Bool = true, stopped: Bool = false) {
        self.clientId = clientId; self.numberSealed = numberSealed; self.numberKey = numberKey; self.confirmed = confirmed
        self.codeHash = codeHash; self.codeExpiresAt = codeExpiresAt; self.codeAttempts = codeAttempts; self.codeSentAt = codeSentAt
        self.textReminders = textReminders; self.textOffers = textOffers; self.stopped = stopped
    }
}

/// Reading numbers and links.
public protocol TextReading {
    func phone(ofClient clientId: Int64) throws -> StoredPhone?
    /// The patient whose confirmed number has this key, if any.
    func confirmedPhone(numberKey: String) throws -> StoredPhone?
    /// The offer a one-tap link's token hash names, and when the link was used (nil: not yet).
    func offerLink(hash: String) throws -> (offerId: Int64, usedAt: Date?)?
    /// The patients with a number (a key rotation makes their lookup keys again).
    func phoneClients() throws -> [Int64]
    /// The front desk's sealed notes on these waitlist entries (the ones that have one).
    func waitlistNotes(entryIds: [Int64]) throws -> [Int64: Data]
}

/// Writing numbers and links.
public protocol TextWriting: TextReading {
    /// Stores the patient's number (replacing the row they had) at `now`.
    func savePhone(_ phone: StoredPhone, at now: Date) throws
    func deletePhone(ofClient clientId: Int64) throws
    /// Counts a wrong code given for the patient's number, in one statement.
    func countWrongPhoneCode(ofClient clientId: Int64) throws
    /// Forgets the number of another patient who had confirmed the same one (the one who
    /// confirms it now has the phone in hand).
    func releaseConfirmedNumber(numberKey: String, exceptClient clientId: Int64) throws
    /// Sets (nil: removes) the front desk's sealed note on a waitlist entry.
    func setWaitlistNote(entryId: Int64, sealed: Data?) throws
    /// Sets the offer's link (the hash of its token).
    func setOfferLink(offerId: Int64, hash: String) throws
    /// Marks the link used at `now` if it was not, in one statement; the offer's id, or nil when
    /// there is no such link or it was used already.
    func useOfferLink(hash: String, at now: Date) throws -> Int64?
}

extension StoredPhone {
    public init(row: some StoredRow) throws {
        let table = "phones", key = "client_id"
        clientId = try row.value("client_id", in: table, key: key)
        numberSealed = try row.value("number_sealed", in: table, key: key)
        numberKey = try row.value("number_key", in: table, key: key)
        confirmed = try row.value("confirmed", in: table, key: key)
        codeHash = try row.value("code_hash", in: table, key: key)
        codeExpiresAt = try row.optionalInstant("code_expires_at", in: table, key: key)
        codeAttempts = try row.value("code_attempts", in: table, key: key)
        codeSentAt = try row.optionalInstant("code_sent_at", in: table, key: key)
        textReminders = try row.value("text_reminders", in: table, key: key)
        textOffers = try row.value("text_offers", in: table, key: key)
        stopped = try row.value("stopped", in: table, key: key)
    }
}
