import AsyncHTTPClient
import Foundation
import GRDB
import XCTest

/// A stored value of another type than its column's, edited into the file while the server
/// runs: the requests that read it answer 500 `internal_error` (the detail goes to the log),
/// and the server goes on answering the others (issue 23, item 6). GRDB's subscripts used to
/// trap, which took the whole server down.
final class StoredValueServerTests: XCTestCase {
    /// Runs `statements` on the database with CHECK constraints off (they would refuse the edit).
    func edit(_ path: String, _ statements: [String]) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            for statement in statements { try db.execute(sql: statement) }
        }
    }

    func testAnUnreadableStoredValueIsA500AndTheServerGoesOn() async throws {
        let server = try ServerHarness()
        let token = try await server.patient("anna")
        let me = try await server.send(.GET, "/v1/me", token: token)
        XCTAssertEqual(me.status, 200)
        let patientId = try XCTUnwrap(me.object["id"] as? Int, me.text)
        let clinics = try await server.send(.GET, "/v1/clinics?limit=2")
        let items = try XCTUnwrap(clinics.object["items"] as? [[String: Any]], clinics.text)
        let broken = try XCTUnwrap(items.first?["id"] as? Int), other = try XCTUnwrap(items.last?["id"] as? Int)
        XCTAssertNotEqual(broken, other)
        try edit(server.databasePath, ["UPDATE clients SET created_at = 'x' WHERE id = \(patientId)",
                                       "UPDATE clinics SET lat = 'x' WHERE id = \(broken)"])

        let patient = try await server.send(.GET, "/v1/me", token: token)
        XCTAssertEqual(patient.status, 500, patient.text)
        XCTAssertEqual(patient.errorCode, "internal_error")
        XCTAssertFalse(patient.text.contains("created_at"), "a 500 has no detail: \(patient.text)")
        let clinic = try await server.send(.GET, "/v1/clinics/\(broken)")
        XCTAssertEqual(clinic.status, 500, clinic.text)
        XCTAssertEqual(clinic.errorCode, "internal_error")

        // The server is still there, and answers what does not read the edited values.
        let health = try await server.send(.GET, "/healthz")
        XCTAssertEqual(health.status, 200)
        let fine = try await server.send(.GET, "/v1/clinics/\(other)")
        XCTAssertEqual(fine.status, 200, fine.text)
        XCTAssertEqual(fine.object["id"] as? Int, other)

        // The operator's log names what cannot be read.
        XCTAssertTrue(server.serverLog.contains("clients.created_at in row id \(patientId)"), server.serverLog)
        XCTAssertTrue(server.serverLog.contains("clinics.lat in row id \(broken)"), server.serverLog)
        XCTAssertFalse(server.serverLog.contains("Fatal error"), server.serverLog)
    }
}
