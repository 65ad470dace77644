import ClinicKit
import Foundation
import PostgresNIO

// Sessions ended awaited (issue 56, `SessionStore`): one statement each. The signed-in look-ups
// this store keeps are forgotten before the statement and after it, as a write transaction that
// changes a session does (`PostgresTransaction.noteSessionsChanged`): a look-up in between may
// have read and kept the row. Other servers hear the database's notice.

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

    private func endSessions(_ sql: String, _ binds: [any PostgresBindable]) async throws -> Bool {
        keptLookups.forgetSessions()
        defer { keptLookups.forgetSessions() }
        return try await !awaitedRows(sql, binds).isEmpty
    }
}
