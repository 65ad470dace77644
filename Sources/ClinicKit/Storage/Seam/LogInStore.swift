import Foundation

// A patient's log-in as awaited operations of a store (issue 56): the attempt reserved in one
// transaction, the password checked outside any (Argon2, on the caller's `PasswordRunner`), the
// log-in completed in a second. The rules are ClinicKit's (`ClientController.logIn`): a locked
// name is refused by `decide` inside the reserving transaction, so that its count rolls back.

/// The awaited log-in a `ClinicStore` offers.
public protocol LogInStore: Sendable {
    /// One transaction: attempts of windows started at `forgetBefore` or earlier forgotten, this
    /// attempt counted for `loginKey` at `now`, `decide` on the count (a throw refuses it and
    /// rolls the count back), and the patient of that key as stored, personal fields sealed.
    func reservePatientLogIn(loginKey: String, at now: Date, forgetBefore: Date,
                             decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedLogIn
    /// Gives back an attempt counted in the window that began at `window` (a new window's
    /// attempts are not this one's to undo).
    func withdrawLogInAttempt(loginKey: String, window: Date) async throws
    /// One transaction: what `completion` says written together, and the patient as stored
    /// then with the personal-data key's check; nil, and nothing written, when the patient is gone.
    func completePatientLogIn(_ completion: LogInCompletion) async throws -> LoggedInPatient?
    /// `reservePatientLogIn` for a staff member: the attempt counted under `attemptKey` (the
    /// name's key after `staff:`), and the account of `loginKey` with its password's hash.
    func reserveStaffLogIn(attemptKey: String, loginKey: String, at now: Date, forgetBefore: Date,
                           decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedStaffLogIn
    /// One transaction: the attempt given back, idle staff sessions purged, the new one opened.
    func completeStaffLogIn(_ completion: StaffLogInCompletion) async throws
}

/// A staff member's attempt reserved: the account (nil: none) and when the attempt's window began.
public struct ReservedStaffLogIn: Sendable {
    public let member: StaffMember?
    public let passwordHash: String?
    public let window: Date

    public init(member: StaffMember?, passwordHash: String?, window: Date) {
        self.member = member; self.passwordHash = passwordHash; self.window = window
    }
}

/// What a staff log-in whose password matched writes, in one transaction.
public struct StaffLogInCompletion: Sendable {
    public let staffId: Int64
    public let attemptKey: String
    public let window: Date
    /// The new session; `purgeBefore` is the staff's idle cut-off.
    public let session: NewSession

    public init(staffId: Int64, attemptKey: String, window: Date, session: NewSession) {
        self.staffId = staffId; self.attemptKey = attemptKey; self.window = window; self.session = session
    }

    /// The completion on the seam's transaction (what SQLite runs in one write).
    package func apply(_ tx: any StoreWriting) throws {
        try tx.withdrawLoginAttempt(loginKey: attemptKey, windowStart: window)
        try tx.deleteStaffSessions(lastUsedBefore: session.purgeBefore)
        try tx.insertStaffSession(staffId: staffId, tokenHash: session.tokenHash, at: session.at, idleSeconds: session.idleSeconds)
    }
}

/// An attempt reserved: the patient of the name (nil: none) and when its window began.
public struct ReservedLogIn: Sendable {
    public let client: StoredClient?
    public let window: Date

    public init(client: StoredClient?, window: Date) {
        self.client = client; self.window = window
    }
}

/// What a log-in whose password matched writes, in one transaction.
public struct LogInCompletion: Sendable {
    public let clientId: Int64
    /// The attempt given back: the name's key and its window's start.
    public let loginKey: String
    public let window: Date
    /// A new hash of the password, set only while the stored hash is still `replacing` (a
    /// password changed meanwhile wins).
    public let newHash: (hash: String, replacing: String)?
    /// The privacy policy's version accepted now, when the patient's was older.
    public let acceptedPrivacyVersion: Int?
    public let now: Date
    /// The new session (`SessionManager.opening`) and the last use before which anyone's
    /// sessions are purged.
    public let session: NewSession

    public init(clientId: Int64, loginKey: String, window: Date, newHash: (hash: String, replacing: String)?,
                acceptedPrivacyVersion: Int?, now: Date, session: NewSession) {
        self.clientId = clientId; self.loginKey = loginKey; self.window = window; self.newHash = newHash
        self.acceptedPrivacyVersion = acceptedPrivacyVersion; self.now = now; self.session = session
    }

    /// The completion on the seam's transaction (what SQLite runs in one write).
    package func apply(_ tx: any StoreWriting) throws -> LoggedInPatient? {
        guard let stored = try tx.storedClient(id: clientId) else { return nil }
        try tx.withdrawLoginAttempt(loginKey: loginKey, windowStart: window)
        if let newHash, stored.client.passwordHash == newHash.replacing {
            try tx.setPasswordHash(newHash.hash, ofClient: clientId)
        }
        if let acceptedPrivacyVersion {
            try tx.setPrivacyAccepted(ofClient: clientId, version: acceptedPrivacyVersion, at: now)
        }
        try tx.deleteSessions(lastUsedBefore: session.purgeBefore)
        try tx.insertSession(clientId: clientId, tokenHash: session.tokenHash, at: session.at, device: session.device,
                             idleSeconds: session.idleSeconds)
        return LoggedInPatient(client: applied(to: stored), personalDataKeyCheck: try tx.personalDataKeyCheck())
    }

    /// The patient as this completion leaves them, from their row as read before its writes (in
    /// the same transaction, so the hash's compare-and-set is decided by that row).
    package func applied(to stored: StoredClient) -> StoredClient {
        var client = stored
        if let newHash, stored.client.passwordHash == newHash.replacing { client.client.passwordHash = newHash.hash }
        if let acceptedPrivacyVersion {
            client.client.privacyVersion = acceptedPrivacyVersion
            client.client.privacyAcceptedAt = Date(seconds: now.seconds)
        }
        return client
    }
}

/// A session about to be opened: its token's hash, when, from which device, its own idle limit.
public struct NewSession: Sendable {
    public let tokenHash: String
    public let at: Date
    public let device: Device?
    public let idleSeconds: Int?
    /// Sessions (anyone's) last used before this are purged on the way.
    public let purgeBefore: Date

    public init(tokenHash: String, at: Date, device: Device?, idleSeconds: Int?, purgeBefore: Date) {
        self.tokenHash = tokenHash; self.at = at; self.device = device; self.idleSeconds = idleSeconds
        self.purgeBefore = purgeBefore
    }
}

/// The patient as stored once logged in, with the key check to open the personal fields with.
public struct LoggedInPatient: Sendable {
    public let client: StoredClient
    public let personalDataKeyCheck: String?

    public init(client: StoredClient, personalDataKeyCheck: String?) {
        self.client = client; self.personalDataKeyCheck = personalDataKeyCheck
    }
}
