import Foundation

// A patient's log-in awaited (issue 56: `LogInStore`): the same rules as `logIn`, with each
// transaction awaited and the password work (Argon2) on the caller's `PasswordRunner`, so that
// no thread waits for the store and no cooperative thread computes a hash.

extension ClientController {
    /// `logIn` awaited: the attempt reserved (a locked name refused, its count rolled back), the
    /// password checked (an unknown name against a decoy, at the same cost), then the attempt
    /// given back, the hash renewed if due, the privacy policy accepted if asked, and the session
    /// opened, in one transaction. The same answers and refusals as `logIn`.
    public func logIn(login: String, password: String, acceptPrivacy: Bool = false, device: Device? = nil,
                      idleSeconds: Int? = nil, passwords: some PasswordRunner) async throws -> (client: Client, token: String) {
        let device = try device?.validated()
        let hasher = self.hasher
        guard Client.couldExist(login: login) else {
            _ = try await passwords.run { hasher.verify(password, against: Self.decoyHash(hasher)) }
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        let key = Client.key(forLogin: login), now = self.now()
        let reserved = try await database.reservePatientLogIn(loginKey: key, at: now, forgetBefore: Self.forgottenWindows(now)) {
            attempts in try Self.refuseIfLocked(attempts, now: now)
        }
        let client = reserved.client?.client
        let match = try await passwords.run {
            client.map { hasher.match(password, against: $0.passwordHash) }
                ?? { _ = hasher.verify(password, against: Self.decoyHash(hasher)); return .none }()
        }
        guard let client, let clientId = client.id, match.matched else { throw ClinicError(.invalidCredentials, .invalidCredentials) }
        let outdatedConsent = client.privacyVersion != PrivacyPolicy.version
        if outdatedConsent && !acceptPrivacy {
            try await database.withdrawLogInAttempt(loginKey: key, window: reserved.window)
            throw ClinicError(.privacyNotAccepted, .privacyChanged, String(PrivacyPolicy.version))
        }
        let newHash: String?
        if match == .raw || hasher.needsRehash(client.passwordHash) {
            newHash = try await passwords.run { try hasher.hash(password) }
        } else {
            newHash = nil
        }
        let token = SessionManager.newToken()
        let completion = LogInCompletion(
            clientId: clientId, loginKey: key, window: reserved.window, newHash: newHash.map { ($0, client.passwordHash) },
            acceptedPrivacyVersion: outdatedConsent ? PrivacyPolicy.version : nil, now: now,
            session: SessionManager.opening(token: token, now: now, device: device, idleSeconds: idleSeconds))
        guard let done = try await database.completePatientLogIn(completion) else {
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        return (try Self.opened(done, key: database.personalDataKey), token)
    }

    /// The patient logged in, with the personal fields opened (rows from before encryption have none).
    static func opened(_ done: LoggedInPatient, key: PersonalDataKey) throws -> Client {
        guard done.client.personal != nil else { return done.client.client }
        return try done.client.opened(with: key.cipher(keyCheck: done.personalDataKeyCheck))
    }
}
