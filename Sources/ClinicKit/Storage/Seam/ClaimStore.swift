import Foundation

// A walk-in's claim of their account awaited (issue 56): the patient a claim code was given to
// read awaited (their name is needed for the password check), the password hashed on the
// caller's `PasswordRunner`, then one transaction in which the code is used up, the patient read
// again and whether the login is taken, `ClaimRules.claiming` decides, and the record rewritten.

/// The awaited claim of a walk-in's account a `ClinicStore` offers.
public protocol ClaimStore: Sendable {
    /// One read: the patient (personal fields opened) a claim code of this hash, not expired at
    /// `at`, was given to; nil for none.
    func claimCodeOwner(codeHash: String, at: Date) async throws -> Client?
    /// One transaction: the code used up in one statement (of several claims with one code at
    /// once, on several servers, one gets its patient and the others none), the patient it was
    /// given to (opened, their row locked), whether `rules.loginKey` is taken, `rules.claiming`,
    /// the record rewritten (sealed again, with its search tokens); the patient as claimed.
    /// A refusal rolls the code's use back with the rest.
    func claimAccount(_ rules: ClaimRules) async throws -> Client
}

/// What a claim is decided on, read in its transaction.
public struct ClaimFacts: Sendable, Equatable {
    /// The patient whose code this claim used up; nil: no code of the hash, or expired.
    public let consumedBy: Int64?
    /// That patient, personal fields opened.
    public let client: Client?
    /// Whether the login asked for is taken (by another patient).
    public let loginTaken: Bool

    public init(consumedBy: Int64?, client: Client?, loginTaken: Bool) {
        self.consumedBy = consumedBy; self.client = client; self.loginTaken = loginTaken
    }
}

/// A claim's rules, decided on `ClaimFacts`: the login and password hash checked before it, for
/// the patient the code's owner was read to be.
public struct ClaimRules: Sendable {
    public let codeHash: String
    public let loginKey: String
    public let now: Date
    let login: String
    let passwordHash: String
    let ownerId: Int64?

    init(codeHash: String, login: String, passwordHash: String, ownerId: Int64?, now: Date) {
        self.codeHash = codeHash; self.login = login; loginKey = Client.key(forLogin: login)
        self.passwordHash = passwordHash; self.ownerId = ownerId; self.now = now
    }

    /// The claim: a code used up that was not the owner's read before, none, or a patient who
    /// has an online account already is the one refusal (`invalid_input`, which says nothing of
    /// which); a login taken is `login_taken`. The patient with the login, the password and the
    /// current privacy policy accepted.
    public func claiming(_ facts: ClaimFacts) throws -> Client {
        guard let clientId = facts.consumedBy, clientId == ownerId, var client = facts.client, client.id == clientId,
              !client.hasOnlineAccount else { throw ClinicError.invalid(.claimCodeWrong) }
        if facts.loginTaken { throw ClinicError(.loginTaken, .loginTaken, login) }
        client.login = login
        client.loginKey = loginKey
        client.passwordHash = passwordHash
        client.privacyAcceptedAt = Date(seconds: now.seconds)
        client.privacyVersion = PrivacyPolicy.version
        return client
    }

    /// The claim in the caller's write transaction (the blocking path, and SQLite's).
    package func run(_ tx: any StoreWriting, store: any ClinicStore) throws -> Client {
        let consumed = try tx.consumeClaimCode(hash: codeHash, at: now)
        let client = try consumed.flatMap { try store.client(tx, id: $0) }
        let claimed = try claiming(ClaimFacts(consumedBy: consumed, client: client, loginTaken: try tx.loginExists(loginKey: loginKey)))
        try store.updateClient(tx, claimed)
        return claimed
    }

    /// The owner read in the caller's transaction (the blocking path, and SQLite's).
    package static func owner(_ tx: any StoreReading, store: any ClinicStore, codeHash: String, at now: Date) throws -> Client? {
        guard let found = try tx.claimCode(hash: codeHash), now < found.expiresAt else { return nil }
        return try store.client(tx, id: found.clientId)
    }
}
