import ClinicKit
import Foundation
import PostgresNIO

// A patient's log-in awaited (issue 56: `LogInStore`): two transactions on a leased connection,
// each statement awaited, the statements the seam's (PostgresTransaction+Security.swift,
// +Clients.swift). A completion that renews the password's hash or records the privacy policy
// changes what a kept session look-up holds: those are forgotten before and after, as
// `noteSessionsChanged` does for the seam's writes.

extension PostgresStore {
    /// BEGIN, the old windows forgotten, the attempt counted (its row locked until COMMIT, so
    /// that parallel attempts of one name count one after another), the decision, the patient; COMMIT.
    public func reservePatientLogIn(loginKey: String, at now: Date, forgetBefore: Date,
                                    decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedLogIn {
        let (client, window) = try await reserve(attemptKey: loginKey, at: now, forgetBefore: forgetBefore, decide: decide) { tx in
            try await tx.rows(PostgresTransaction.clientOfLoginKeySQL, [loginKey]).first
                .map { try PostgresTransaction.storedClientOfRow(try PostgresTransaction.row($0)) }
        }
        return ReservedLogIn(client: client, window: window)
    }

    public func withdrawLogInAttempt(loginKey: String, window: Date) async throws {
        let sent = statementsSent
        try await transaction { connection, logger in
            try await Self.withdraw(loginKey: loginKey, window: window,
                                    AwaitedConnection(connection: connection, logger: logger, sent: sent))
        }
    }

    /// BEGIN, the patient read with the key check and locked against deletion and change (none:
    /// nothing is written), the attempt given back, the hash and the privacy policy when due, the
    /// idle sessions purged and the new one opened; COMMIT. The patient answered is the row read,
    /// with the completion's changes (`LogInCompletion.applied`): under the lock, the row is what
    /// the hash's compare-and-set is decided by.
    public func completePatientLogIn(_ completion: LogInCompletion) async throws -> LoggedInPatient? {
        let sent = statementsSent
        let changesPatient = completion.newHash != nil || completion.acceptedPrivacyVersion != nil
        if changesPatient { keptLookups.forgetSessions() }
        defer { if changesPatient { keptLookups.forgetSessions() } }
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let id = completion.clientId
            guard let row = try await tx.rows(PostgresTransaction.clientWithKeyCheckSQL + " FOR SHARE OF c",
                                              [id, PostgresTransaction.clientsKeyCheckSetting]).first.map(PostgresTransaction.row)
            else { return nil }
            let stored = try PostgresTransaction.storedClientOfRow(row)
            try await Self.withdraw(loginKey: completion.loginKey, window: completion.window, tx)
            if let newHash = completion.newHash {
                _ = try await tx.rows("UPDATE clients SET password_hash = $1 WHERE id = $2 AND password_hash = $3",
                                      [newHash.hash, id, newHash.replacing])
            }
            if let version = completion.acceptedPrivacyVersion {
                _ = try await tx.rows(PostgresTransaction.setPrivacyAcceptedSQL, [version, completion.now, id])
            }
            let session = completion.session
            _ = try await tx.rows(PostgresTransaction.purgeSessionsSQL, [session.purgeBefore])
            _ = try await tx.rows(PostgresTransaction.insertSessionSQL, PostgresTransaction.insertSessionBinds(
                clientId: id, tokenHash: session.tokenHash, at: session.at, device: session.device, idleSeconds: session.idleSeconds))
            return LoggedInPatient(client: completion.applied(to: stored),
                                   personalDataKeyCheck: try row.value("personal_key_check", in: "settings"))
        }
    }

    /// `reservePatientLogIn` for a staff member: BEGIN, the old windows, the count, the account; COMMIT.
    public func reserveStaffLogIn(attemptKey: String, loginKey: String, at now: Date, forgetBefore: Date,
                                  decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedStaffLogIn {
        let (found, window) = try await reserve(attemptKey: attemptKey, at: now, forgetBefore: forgetBefore, decide: decide) { tx in
            try await tx.rows(PostgresTransaction.staffOfLoginKeySQL, [loginKey]).first
                .map { try PostgresTransaction.staffCredentials(try PostgresTransaction.row($0)) }
        }
        return ReservedStaffLogIn(member: found?.member, passwordHash: found?.passwordHash, window: window)
    }

    /// The reserving transaction: the old windows forgotten, the attempt counted, `decide` on
    /// the count (a throw rolls it back), the account `read`; with the window's start.
    private func reserve<Account: Sendable>(attemptKey: String, at now: Date, forgetBefore: Date,
                                            decide: @escaping @Sendable (LoginAttempts) throws -> Void,
                                            read: @escaping @Sendable (AwaitedConnection) async throws -> Account?) async throws -> (Account?, Date) {
        let sent = statementsSent
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            _ = try await tx.rows(PostgresTransaction.forgetLoginAttemptsSQL, [forgetBefore])
            let counted = try await tx.rows(PostgresTransaction.countLoginAttemptSQL, [attemptKey, now])
            let attempts = try PostgresTransaction.loginAttempts(try counted.first.map(PostgresTransaction.row))
            try decide(attempts)
            return (try await read(tx), attempts.windowStart)
        }
    }

    /// BEGIN, the attempt given back, the idle staff sessions purged, the new one opened; COMMIT.
    public func completeStaffLogIn(_ completion: StaffLogInCompletion) async throws {
        let sent = statementsSent
        try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            try await Self.withdraw(loginKey: completion.attemptKey, window: completion.window, tx)
            let session = completion.session
            _ = try await tx.rows(PostgresTransaction.purgeStaffSessionsSQL, [session.purgeBefore])
            _ = try await tx.rows(PostgresTransaction.insertStaffSessionSQL,
                                  [completion.staffId, session.tokenHash, session.at, session.idleSeconds])
        }
    }

    /// An attempt given back, as `PostgresTransaction.withdrawLoginAttempt` does: the window's row locked, then one fewer.
    static func withdraw(loginKey: String, window: Date, _ tx: AwaitedConnection) async throws {
        guard let failures = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.lockLoginAttemptsSQL, [loginKey, window]))
        else { return }
        _ = try await tx.rows(PostgresTransaction.withdrawLoginAttemptSQL(last: failures <= 1), [loginKey, window])
    }
}
