import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The message area's storage operations (issue #25's seam), on either store: the contract of
/// the outbox's claim; and, on SQLite, the inbox written through a bare `Database` (the
/// forwarding overloads).
@Suite struct MessageStorageTests {
    func deliveryRow(_ system: ClinicSystem, _ id: Int64) throws -> StoredRow? {
        try storedRows(system, "SELECT state, attempts, reply, last_error FROM deliveries WHERE id = \(id)").first
    }

    @Test func aClaimHoldsItsRowsUntilTheLeaseEnds() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let clientId = try #require(anna.id)
        let start = testNow
        let ids = try system.database.writing { tx in
            try (0..<3).map { _ in try tx.enqueueEmailCodeDelivery(toClient: clientId, at: start) }
        }
        func claim(_ claimant: String, limit: Int, at now: Date) throws -> [ClaimedDelivery] {
            try system.database.writing { tx in
                try tx.claimDeliveries(limit: limit, now: now, claimant: claimant, leaseUntil: { attempt in
                    now.addingTimeInterval(60 * Double(attempt))
                })
            }
        }
        #expect(try system.database.reading { tx in try tx.hasDueDeliveries(at: start) })
        #expect(try claim("a", limit: 0, at: start).isEmpty)
        let first = try claim("a", limit: 2, at: start)
        #expect(first.map(\.id) == Array(ids.prefix(2)) && first.allSatisfy { $0.attempt == 1 && $0.clientId == clientId })
        #expect(first.allSatisfy { $0.content == .emailCode(sealed: nil) && $0.createdAt == start })
        // Another claimant gets only what is left; then nothing until the leases end.
        #expect(try claim("b", limit: 5, at: start).map(\.id) == [ids[2]])
        #expect(try claim("b", limit: 5, at: start.addingTimeInterval(59)).isEmpty)
        #expect(try system.database.reading { tx in try tx.hasDueDeliveries(at: start.addingTimeInterval(59)) } == false)
        // Completed, failed and given up, dropped: out of every claim for good.
        try system.database.writing { tx in
            try tx.completeDelivery(ids[0], sentAt: start.addingTimeInterval(10), reply: "250 ok")
            try tx.failDelivery(ids[1], error: "451 try later", givingUp: false)
            try tx.failDelivery(ids[2], error: "550 no", givingUp: true)
        }
        let again = try claim("c", limit: 5, at: start.addingTimeInterval(60))
        #expect(again.map(\.id) == [ids[1]] && again.first?.attempt == 2)
        let failed = try #require(try deliveryRow(system, ids[2]))
        #expect(failed["state"] as String? == "failed" && failed["last_error"] as String? == "550 no")
        let sent = try #require(try deliveryRow(system, ids[0]))
        #expect(sent["state"] as String? == "sent" && sent["reply"] as String? == "250 ok" && sent["attempts"] as Int? == 1)
        try system.database.writing { tx in try tx.dropDelivery(ids[1]) }
        #expect(try claim("c", limit: 5, at: start.addingTimeInterval(86_400)).isEmpty)
    }

    @Test func onlyDueDeliveriesWrittenLongEnoughAgoAreGivenUp() throws {
        let system = try makeSystem()
        let clientId = try #require(try register(system, "anna").id)
        let start = testNow
        let (old, young) = try system.database.writing { tx in
            (try tx.enqueueEmailCodeDelivery(toClient: clientId, at: start),
             try tx.enqueueEmailCodeDelivery(toClient: clientId, at: start.addingTimeInterval(3600)))
        }
        let later = start.addingTimeInterval(86_400)
        #expect(try system.database.writing { tx in try tx.giveUpDeliveries(dueAt: later, writtenNoLaterThan: start) } == 1)
        #expect(try deliveryRow(system, old)?["state"] as String? == "failed")
        #expect(try deliveryRow(system, young)?["state"] as String? == "pending")
        // Not due (claimed under a lease), not given up.
        _ = try system.database.writing { tx in
            try tx.claimDeliveries(limit: 1, now: later, claimant: "a", leaseUntil: { _ in later.addingTimeInterval(60) })
        }
        #expect(try system.database.writing { tx in
            try tx.giveUpDeliveries(dueAt: later, writtenNoLaterThan: later)
        } == 0)
    }

    @Test(.sqliteOnly) func theForwardingOverloadsWriteAsTheSeamDoes() async throws {
        let system = try makeSystem()
        // Anna has a confirmed address (her messages are e-mailed too), Ben none.
        let anna = try await MessagingTests().confirmedPatient(system, "anna", RecordingMailer())
        let annaId = try #require(anna.id), benId = try #require(try register(system, "ben").id)
        let ids = try system.sqliteFile.write { db in
            (try Inbox.post(db, clientId: annaId, kind: .clinic, subject: "S", body: "B", dedupeKey: "k1", now: testNow),
             try Inbox.post(db, clientId: annaId, kind: .clinic, subject: "S", body: "B", dedupeKey: "k1", now: testNow),
             try Inbox.post(db, clientId: benId, kind: .clinic, subject: "T", body: "C", now: testNow))
        }
        #expect(ids.0 != nil && ids.1 == nil && ids.2 != nil)
        #expect(try system.sqliteFile.read { db in try Inbox.messages(db, clientId: annaId) }.map(\.subject) == ["S"])
        #expect(try await system.clients.unreadCount(clientId: benId) == 1)
        let queued = try system.sqliteFile.read { db in
            try Int64.fetchAll(db, sql: "SELECT message_id FROM deliveries WHERE purpose = 'message' AND state = 'pending'")
        }
        #expect(queued == [ids.0].compactMap { $0 })
    }
}
