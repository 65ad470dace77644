import ClinicKit
import Foundation

// Log-ins awaited (issue 56: `LogInStore`), on SQLite: each of a log-in's two transactions one
// write of the next batch (`commit`), the seam's statements inside.

extension SQLiteStore {
    public func reservePatientLogIn(loginKey: String, at now: Date, forgetBefore: Date,
                                    decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedLogIn {
        let (client, window) = try await reserve(attemptKey: loginKey, at: now, forgetBefore: forgetBefore, decide: decide) { tx in
            try tx.storedClient(loginKey: loginKey)
        }
        return ReservedLogIn(client: client, window: window)
    }

    public func reserveStaffLogIn(attemptKey: String, loginKey: String, at now: Date, forgetBefore: Date,
                                  decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedStaffLogIn {
        let (found, window) = try await reserve(attemptKey: attemptKey, at: now, forgetBefore: forgetBefore, decide: decide) { tx in
            try tx.staffCredentials(loginKey: loginKey)
        }
        return ReservedStaffLogIn(member: found?.member, passwordHash: found?.passwordHash, window: window)
    }

    public func withdrawLogInAttempt(loginKey: String, window: Date) async throws {
        try await commit { try self.writing { tx in try tx.withdrawLoginAttempt(loginKey: loginKey, windowStart: window) } }
    }

    public func completePatientLogIn(_ completion: LogInCompletion) async throws -> LoggedInPatient? {
        try await commit { try self.writing { tx in try completion.apply(tx) } }
    }

    public func completeStaffLogIn(_ completion: StaffLogInCompletion) async throws {
        try await commit { try self.writing { tx in try completion.apply(tx) } }
    }

    /// One write of the next batch: the old windows forgotten, the attempt counted, `decide` on
    /// the count (a throw rolls it back), the account `read`; with the window's start.
    private func reserve<Account: Sendable>(attemptKey: String, at now: Date, forgetBefore: Date,
                                            decide: @escaping @Sendable (LoginAttempts) throws -> Void,
                                            read: @escaping @Sendable (any StoreWriting) throws -> Account?) async throws -> (Account?, Date) {
        try await commit {
            try self.writing { tx in
                try tx.forgetLoginAttempts(windowStartedBy: forgetBefore)
                let attempts = try tx.countLoginAttempt(loginKey: attemptKey, at: now)
                try decide(attempts)
                return (try read(tx), attempts.windowStart)
            }
        }
    }
}
