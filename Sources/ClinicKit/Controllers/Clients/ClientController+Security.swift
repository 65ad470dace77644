import Foundation

// A patient's password change and "sign out everywhere else" awaited (issue 56:
// `AccountSecurityStore`): the same rules and answers as the synchronous ones
// (ClientController+Profile.swift), each transaction awaited and the password work (Argon2) on
// the caller's `PasswordRunner`.

extension ClientController {
    /// "Sign out everywhere else": every session of the patient but `token`'s ends, and the
    /// calendar address is renewed (`SessionsEnding`), in one transaction. Returns how many
    /// sessions ended.
    @discardableResult
    public func endOtherSessions(clientId: Int64, keeping token: String?) async throws -> Int {
        guard let ended = try await database.endOtherSessions(SessionsEnding(clientId: clientId, keeping: token, now: now())) else {
            throw ClinicError(.notLoggedIn, .notLoggedIn)
        }
        return ended
    }

    /// A password the signed-in patient types to confirm a change, awaited: the attempt counted
    /// under log-in's lock (`AccountSecurityStore.reservePasswordCheck`; a locked login refused
    /// unchecked), then checked with Argon2 on `passwords` (`invalid_credentials`).
    func checkOwnPassword(clientId: Int64, _ password: String, passwords: some PasswordRunner,
                          now: Date) async throws -> ReservedPasswordCheck {
        let hasher = self.hasher
        guard let reserved = try await database.reservePasswordCheck(clientId: clientId, at: now, forgetBefore: Self.forgottenWindows(now), decide: {
            attempts in try Self.refuseIfLocked(attempts, now: now)
        }) else {
            throw ClinicError(.notFound, .clientNotFound, String(clientId))
        }
        let stored = reserved.client.client
        guard try await passwords.run({ hasher.verify(password, against: stored.passwordHash) }) else {
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        return reserved
    }

    /// `changePassword` awaited: the new password typed twice must match; the old one is checked
    /// under log-in's lock (the attempt reserved in one transaction, a locked login refused
    /// unchecked); the new one must meet the policy; then the attempt is given back, the hash
    /// set, every other session ended and the calendar address renewed, in a second transaction.
    /// A right old password whose new one is refused gives its attempt back too.
    public func changePassword(clientId: Int64, old: String, new: String, confirmNew: String? = nil, keeping token: String?,
                               passwords: some PasswordRunner) async throws {
        if let confirmNew, !Validator().passwordsMatch(new, confirmNew) { throw ClinicError.invalid(.passwordsDiffer) }
        let now = self.now(), hasher = self.hasher
        let reserved = try await checkOwnPassword(clientId: clientId, old, passwords: passwords, now: now)
        let stored = reserved.client.client
        let hash: String
        do {
            let client = try reserved.client.opened(with: database.personalDataKey.cipher(keyCheck: reserved.personalDataKeyCheck))
            // The policy on the runner too: its common-password list is read from a file once per process.
            hash = try await passwords.run { [self] in
                if let problem = try passwordProblem(new, login: client.login, name: client.name, surname: client.surname) { throw problem }
                return try hasher.hash(new)
            }
        } catch {
            // The old password was right: its check is given back, as a log-in's would be.
            try? await database.withdrawLogInAttempt(loginKey: stored.loginKey, window: reserved.window)
            throw error
        }
        try await database.completePasswordChange(PasswordChange(
            loginKey: stored.loginKey, window: reserved.window, newHash: hash,
            ending: SessionsEnding(clientId: clientId, keeping: token, now: now)))
    }
}
