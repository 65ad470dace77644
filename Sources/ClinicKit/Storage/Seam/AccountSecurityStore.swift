import Foundation

// A patient's keys to their account as awaited operations of a store (issue 56): the private
// calendar address, "sign out everywhere else", the password change, the number texts go to
// (removed, or confirmed by its code), who read or changed their data (the access log), and the
// account's deletion (`AccountDeletion`). The rules are
// ClinicKit's (`ClientController+Security`): what a change writes is decided before the store
// is called (`SessionsEnding`, `PasswordChange`), and the store writes it in one transaction,
// with the calendar token sealed under its personal-data key (`CalendarAddress`).

/// The awaited account keys a `ClinicStore` offers.
public protocol AccountSecurityStore: Sendable {
    /// One transaction: the patient's calendar token, opened; when there is none, or `rotate`,
    /// `issuing` stored in its place and returned. Nil, and nothing written, for no such patient.
    func calendarToken(ofClient clientId: Int64, issuing token: String, rotate: Bool, at now: Date) async throws -> String?
    /// The patient's calendar token, opened; nil when there is none.
    func existingCalendarToken(ofClient clientId: Int64) async throws -> String?
    /// Ends the patient's calendar address (nothing for none).
    func revokeCalendarToken(ofClient clientId: Int64) async throws
    /// One transaction: what `ending` says written (`SessionsEnding.apply`); how many sessions
    /// ended, nil, and nothing written, when the patient is gone.
    func endOtherSessions(_ ending: SessionsEnding) async throws -> Int?
    /// One transaction: the patient of `clientId` (none: nil, nothing counted), an attempt counted
    /// under their login's key at `now`, windows started at `forgetBefore` or earlier forgotten,
    /// `decide` on the count (a throw refuses it and rolls the count back): what a password typed
    /// to confirm a change needs (`ClientController.checkOwnPassword`).
    func reservePasswordCheck(clientId: Int64, at now: Date, forgetBefore: Date,
                              decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedPasswordCheck?
    /// One transaction: the attempt given back, the new hash, and `change.ending` (nothing when
    /// the patient is gone).
    func completePasswordChange(_ change: PasswordChange) async throws
    /// One transaction: the patient's number forgotten and their texts not yet sent dropped;
    /// false, and nothing written, for no such patient.
    func removePhone(ofClient clientId: Int64) async throws -> Bool
    /// One transaction: the patient's phone (nil: none) read with its row locked until COMMIT,
    /// `decide` on it, the decision written (`PhoneCodeDecision.apply`); the decision, with the
    /// number opened when it confirms one. Nil, and nothing written, for no such patient.
    func confirmPhoneCode(ofClient clientId: Int64, decide: @escaping @Sendable (StoredPhone?) throws -> PhoneCodeDecision)
        async throws -> (decision: PhoneCodeDecision, number: String?)?
    /// The patient's access log: the audit rows about them from their account's own lifetime,
    /// the latest first, at most `limit` (`AuditLog.entries`; a row that cannot be read is left out).
    func accessLog(ofClient clientId: Int64, limit: Int) async throws -> [AuditEntry]
    /// One transaction, its password checked before: the patient locked against a booking of
    /// theirs in flight, their appointments read, `deletion.cancellations` written (each with
    /// its history), every appointment kept for the clinic with nothing personal, the login's
    /// attempts and the patient deleted (their sessions, phone, waitlist places and tokens go
    /// with the row). SQLite's log is truncated after, so that the deleted rows leave no copy.
    func deleteAccount(_ deletion: AccountDeletion) async throws
}

/// A patient's account deleted, the password checked (`ClientController.deleteAccount`).
public struct AccountDeletion: Sendable {
    public let clientId: Int64
    public let loginKey: String
    public let now: Date

    init(clientId: Int64, loginKey: String, now: Date) { self.clientId = clientId; self.loginKey = loginKey; self.now = now }

    /// The patient's upcoming visits would hold their slots with nobody left to cancel them:
    /// each is cancelled, by the patient, with the reason "account deleted" in its history, and
    /// without a message (nobody is left to read it). Of `appointments`, all the patient's.
    public func cancellations(_ appointments: [Appointment]) -> [BookingDecision] {
        appointments.filter { AppointmentScope.upcoming.contains($0, now: now) && $0.status.canMove(to: .cancelled) }.map { appointment in
            var moved = appointment
            moved.status = .cancelled
            moved.updatedAt = now
            return BookingDecision(appointment: moved, event: BookingRules.event(moved, AppointmentStatus.cancelled.rawValue, .patient, now,
                                                                                  reason: ClientController.accountDeletedReason),
                                   message: nil)
        }
    }

    /// The deletion in the caller's write transaction (the blocking path, and SQLite's).
    package func apply(_ tx: any StoreWriting) throws {
        for cancellation in cancellations(try tx.storedAppointments(ofClient: clientId)) {
            try tx.updateAppointment(cancellation.appointment)
            try tx.insertAppointmentEvent(cancellation.event)
        }
        try tx.detachAppointments(ofClient: clientId)
        try tx.clearLoginAttempts(loginKey: loginKey)
        try tx.deleteClient(id: clientId) // sessions go with it
    }
}

/// A patient's password check reserved: the patient as stored, the key check to open their
/// personal fields with, and when the attempt's window began.
public struct ReservedPasswordCheck: Sendable {
    public let client: StoredClient
    public let personalDataKeyCheck: String?
    public let window: Date

    public init(client: StoredClient, personalDataKeyCheck: String?, window: Date) {
        self.client = client; self.personalDataKeyCheck = personalDataKeyCheck; self.window = window
    }
}

/// Every session of a patient but one ended, and the calendar address renewed: what "sign out
/// everywhere else" and a password change write. A calendar address handed out before is as much
/// a key to the appointments as a session, so a patient who has one gets `newCalendarToken` in
/// its place and is told (in the inbox, and by e-mail) that calendars must subscribe again.
public struct SessionsEnding: Sendable {
    public let clientId: Int64
    /// The session that stays (the one in use); nil: none.
    public let keepingTokenHash: String?
    public let newCalendarToken: String
    public let now: Date

    public init(clientId: Int64, keeping token: String?, now: Date) {
        self.clientId = clientId; self.keepingTokenHash = token.map(SessionManager.hash)
        self.newCalendarToken = SessionManager.newToken(); self.now = now
    }

    /// The message about the renewed address, in the patient's language.
    public func renewalMessage(_ language: Language) -> (subject: String, body: String) {
        (Strings.text(.messageCalendarRenewedSubject, language), Strings.text(.messageCalendarRenewedBody, language))
    }

    /// The ending on the seam's transaction (what SQLite runs in one write); nil, and nothing
    /// written, for a patient gone.
    package func apply(_ tx: any StoreWriting, store: any ClinicStore) throws -> Int? {
        guard let language = try tx.storedClient(id: clientId)?.client.language else { return nil }
        let ended = try tx.deleteSessions(ofClient: clientId, except: keepingTokenHash)
        guard try tx.sealedCalendarToken(ofClient: clientId) != nil else { return ended }
        try CalendarAddress.store(tx, newCalendarToken, clientId: clientId, cipher: try store.sealingCipher(tx), now: now)
        let message = renewalMessage(language)
        try Inbox.post(tx, clientId: clientId, kind: .account, subject: message.subject, body: message.body, now: now)
        return ended
    }
}

/// What a password change writes once the old password matched and the new one was hashed.
public struct PasswordChange: Sendable {
    /// The attempt given back: the login's key and its window's start.
    public let loginKey: String
    public let window: Date
    public let newHash: String
    public let ending: SessionsEnding

    public init(loginKey: String, window: Date, newHash: String, ending: SessionsEnding) {
        self.loginKey = loginKey; self.window = window; self.newHash = newHash; self.ending = ending
    }

    /// The change on the seam's transaction (what SQLite runs in one write).
    package func apply(_ tx: any StoreWriting, store: any ClinicStore) throws {
        guard try tx.clientExists(id: ending.clientId) else { return }
        try tx.withdrawLoginAttempt(loginKey: loginKey, windowStart: window)
        try tx.setPasswordHash(newHash, ofClient: ending.clientId)
        _ = try ending.apply(tx, store: store)
    }
}

/// A patient's private calendar address: its token kept as a hash (to find the patient by) and
/// sealed (to show it again), under the personal-data key, bound to the patient.
package enum CalendarAddress {
    /// The token sealed for the patient.
    package static func sealed(_ token: String, clientId: Int64, cipher: FieldCipher) throws -> Data {
        try cipher.seal(bytes: Data(token.utf8), context: context(clientId))
    }

    /// A sealed token opened.
    package static func opened(_ sealed: Data, clientId: Int64, cipher: FieldCipher) throws -> String {
        String(decoding: try cipher.open(bytes: sealed, context: context(clientId)), as: UTF8.self)
    }

    /// `token` as the patient's calendar token, replacing the one there was, in the caller's transaction.
    package static func store(_ tx: any StoreWriting, _ token: String, clientId: Int64, cipher: FieldCipher, now: Date) throws {
        try tx.replaceCalendarToken(ofClient: clientId, tokenHash: SessionManager.hash(token),
                                    sealed: try sealed(token, clientId: clientId, cipher: cipher), at: now)
    }

    private static func context(_ clientId: Int64) -> String { "calendar:\(clientId)" }
}
