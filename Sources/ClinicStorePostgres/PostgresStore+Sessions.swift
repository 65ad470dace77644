import ClinicKit
import Foundation
import PostgresNIO

// Sessions awaited (issue 56, `SessionStore`): one statement each. For an end, the signed-in
// look-ups this store keeps are forgotten before the statement and after it, as a write
// transaction that changes a session does (`PostgresTransaction.noteSessionsChanged`): a look-up
// in between may have read and kept the row. Other servers hear the database's notice. A use
// recorded forgets nothing: what is kept is far from its idle limit, and only moves further.

extension PostgresStore {
    public func endPatientSession(tokenHash: String) async throws -> Bool {
        try await endSessions(PostgresTransaction.deleteSessionSQL, [tokenHash])
    }

    public func endPatientSession(id: Int64, clientId: Int64) async throws -> Bool {
        try await endSessions(PostgresTransaction.deleteSessionOfClientSQL, [id, clientId])
    }

    public func endStaffSession(tokenHash: String) async throws -> Bool {
        try await endSessions(PostgresTransaction.deleteStaffSessionSQL, [tokenHash])
    }

    public func touchPatientSession(tokenHash: String, at: Date) async throws {
        _ = try await awaitedRows(PostgresTransaction.touchSessionSQL, [at, tokenHash])
    }

    public func touchStaffSession(tokenHash: String, at: Date) async throws {
        _ = try await awaitedRows(PostgresTransaction.touchStaffSessionSQL, [at, tokenHash])
    }

    public func patientSessions(clientId: Int64, lastUsedSince: Date) async throws -> [StoredSession] {
        try await awaitedRows(PostgresTransaction.sessionsOfClientSQL, [clientId, lastUsedSince]).map(StoredSession.init(row:))
    }

    private func endSessions(_ sql: String, _ binds: [any PostgresBindable]) async throws -> Bool {
        keptLookups.forgetSessions()
        defer { keptLookups.forgetSessions() }
        return try await !awaitedRows(sql, binds).isEmpty
    }
}
