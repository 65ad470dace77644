import ClinicKit
import Foundation

// A patient's log-in awaited (issue 56: `LogInStore`), on SQLite: each of its two transactions
// one write of the next batch (`commit`), the seam's statements inside.

extension SQLiteStore {
    public func reservePatientLogIn(loginKey: String, at now: Date, forgetBefore: Date,
                                    decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedLogIn {
        try await commit {
            try self.writing { tx in
                try tx.forgetLoginAttempts(windowStartedBy: forgetBefore)
                let attempts = try tx.countLoginAttempt(loginKey: loginKey, at: now)
                try decide(attempts)
                return ReservedLogIn(client: try tx.storedClient(loginKey: loginKey), window: attempts.windowStart)
            }
        }
    }

    public func withdrawLogInAttempt(loginKey: String, window: Date) async throws {
        try await commit { try self.writing { tx in try tx.withdrawLoginAttempt(loginKey: loginKey, windowStart: window) } }
    }

    public func completePatientLogIn(_ completion: LogInCompletion) async throws -> LoggedInPatient? {
        try await commit { try self.writing { tx in try completion.apply(tx) } }
    }
}

extension SQLiteStore {
    public func reserveStaffLogIn(attemptKey: String, loginKey: String, at now: Date, forgetBefore: Date,
                                  decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedStaffLogIn {
        try await commit {
            try self.writing { tx in
                try tx.forgetLoginAttempts(windowStartedBy: forgetBefore)
                let attempts = try tx.countLoginAttempt(loginKey: attemptKey, at: now)
                try decide(attempts)
                let found = try tx.staffCredentials(loginKey: loginKey)
                return ReservedStaffLogIn(member: found?.member, passwordHash: found?.passwordHash, window: attempts.windowStart)
            }
        }
    }

    public func completeStaffLogIn(_ completion: StaffLogInCompletion) async throws {
        try await commit { try self.writing { tx in try completion.apply(tx) } }
    }
}
