import Foundation
@testable import ClinicStoreSQLite
import GRDB
import Testing

/// A stored value of another type than its column's, edited into the file while the server
/// runs: the requests that read it answer 500 `internal_error` (the detail goes to the log),
/// and the server goes on answering the others (issue 23, item 6). GRDB's subscripts used to
/// trap, which took the whole server down.
@Suite struct StoredValueServerTestsInProcess {
    /// Runs `statements` on the database with CHECK constraints off (they would refuse the edit).
    func edit(_ path: String, _ statements: [String]) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            for statement in statements { try db.execute(sql: statement) }
        }
    }

    @Test func anUnreadableStoredValueIsA500AndTheServerGoesOn() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("anna")
            let me = try await server.send(.GET, "/v1/me", token: token)
            #expect(me.status == 200)
            let patientId = try #require(me.object["id"] as? Int, "\(me.text)")
            let clinics = try await server.send(.GET, "/v1/clinics?limit=2")
            let items = try #require(clinics.object["items"] as? [[String: Any]], "\(clinics.text)")
            let broken = try #require(items.first?["id"] as? Int), other = try #require(items.last?["id"] as? Int)
            #expect(broken != other)
            try edit(server.databasePath, ["UPDATE clients SET created_at = 'x' WHERE id = \(patientId)",
                                           "UPDATE clinics SET lat = 'x' WHERE id = \(broken)"])

            let patient = try await server.send(.GET, "/v1/me", token: token)
            #expect(patient.status == 500, "\(patient.text)")
            #expect(patient.errorCode == "internal_error")
            #expect(!(patient.text.contains("created_at")), "a 500 has no detail: \(patient.text)")
            let clinic = try await server.send(.GET, "/v1/clinics/\(broken)")
            #expect(clinic.status == 500, "\(clinic.text)")
            #expect(clinic.errorCode == "internal_error")

            // The server is still there, and answers what does not read the edited values.
            let health = try await server.send(.GET, "/healthz")
            #expect(health.status == 200)
            let fine = try await server.send(.GET, "/v1/clinics/\(other)")
            #expect(fine.status == 200, "\(fine.text)")
            #expect(fine.object["id"] as? Int == other)

            // The operator's log names what cannot be read.
            #expect(server.serverLog.contains("clients.created_at in row id \(patientId)"), "\(server.serverLog)")
            #expect(server.serverLog.contains("clinics.lat in row id \(broken)"), "\(server.serverLog)")
            #expect(!(server.serverLog.contains("Fatal error")), "\(server.serverLog)")
        }
    }
}
