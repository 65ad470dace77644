import Foundation
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// `IdempotencyStore`: a kept response is sent again for the same key, and expired keys are
/// forgotten at most once a `purgeInterval` (not by a DELETE per request).
@Suite struct IdempotencyTests {
    @Test func expiredKeysAreForgottenOnceAMinuteNotOnEveryRequest() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try #require(try register(system, "anna").id)
        let store = IdempotencyStore(database: system.database, now: { clock.now })
        func perform(_ key: String, _ fingerprint: String, status: Int = 201) throws -> IdempotencyStore.Response {
            try store.perform(clientId: anna, key: key, fingerprint: fingerprint) {
                IdempotencyStore.Response(status: status, body: Data(key.utf8))
            }
        }
        func kept(_ key: String) throws -> Bool {
            try system.database.writing { tx in try tx.idempotentResponse(ofClient: anna, key: key) } != nil
        }

        // The same key and request: the kept response; another request: refused.
        #expect(try perform("a", "1").replayed == false)
        #expect(try perform("a", "1").replayed == true)
        #expect(throws: ClinicError.self) { try perform("a", "2") }

        // A day and a half-minute later the first request after the purge interval forgets "a".
        clock.advance(IdempotencyStore.lifetime + 30)
        #expect(try perform("b", "1").replayed == false)
        #expect(try kept("a") == false, "expired and purged")
        #expect(try perform("a", "2").replayed == false, "a forgotten key may be used again")

        // A key that expired just after that purge stays until the next one is due.
        try system.database.writing { tx in
            try tx.keepIdempotentResponse(ofClient: anna, key: "old", KeptResponse(fingerprint: "f", status: 201, body: Data()),
                                          at: clock.now.addingTimeInterval(-IdempotencyStore.lifetime - 10))
        }
        clock.advance(IdempotencyStore.purgeInterval - 1)
        _ = try perform("c", "1")
        #expect(try kept("old"), "no purge within the interval")
        clock.advance(1)
        _ = try perform("d", "1")
        #expect(try kept("old") == false, "purged once the interval has passed")
        #expect(try kept("b") && kept("c") && kept("d"), "live keys stay")
    }

    /// A kept response is an appointment as the API answered it, the patient's reason for the
    /// visit included: it is sealed at rest, bound to its patient and key, and replayed in
    /// clear; one kept in clear before sealing began is replayed as it is.
    @Test func aKeptResponseIsSealedAtRest() throws {
        let system = try makeSystem()
        let anna = try #require(try register(system, "anna").id), bob = try #require(try register(system, "bob").id)
        let store = IdempotencyStore(database: system.database, now: { testNow })
        let body = Data(#"{"notes":"Zebulon's rash"}"#.utf8)
        #expect(try store.perform(clientId: anna, key: "k1", fingerprint: "f") { .init(status: 201, body: body) }.body == body)
        let stored = try #require(try system.database.writing { try $0.idempotentResponse(ofClient: anna, key: "k1") })
        #expect(stored.body.first == 1 && stored.body.range(of: Data("Zebulon".utf8)) == nil)
        let replay = try store.perform(clientId: anna, key: "k1", fingerprint: "f") { .init(status: 500, body: Data()) }
        #expect(replay.replayed && replay.status == 201 && replay.body == body)
        // Moved to another patient's key, it does not open.
        try system.database.writing { tx in
            try tx.keepIdempotentResponse(ofClient: bob, key: "k1", KeptResponse(fingerprint: "f", status: 201, body: stored.body), at: testNow)
        }
        #expect(expectError(.keyError) { _ = try store.perform(clientId: bob, key: "k1", fingerprint: "f") { .init(status: 201, body: Data()) } } != nil)
        // Kept in clear by an older program: replayed as it is.
        try system.database.writing { tx in
            try tx.keepIdempotentResponse(ofClient: anna, key: "old", KeptResponse(fingerprint: "f", status: 200, body: Data("{}".utf8)), at: testNow)
        }
        #expect(try store.perform(clientId: anna, key: "old", fingerprint: "f") { .init(status: 500, body: Data()) }.body == Data("{}".utf8))
    }

    @Test(.sqliteOnly) func aRotationSealsKeptResponsesAgain() throws {
        let system = try makeSystem()
        let anna = try #require(try register(system, "anna").id)
        let store = IdempotencyStore(database: system.database, now: { testNow })
        let body = Data(#"{"notes":"Knee"}"#.utf8)
        _ = try store.perform(clientId: anna, key: "k1", fingerprint: "f") { .init(status: 201, body: body) }
        let before = try system.database.writing { try $0.idempotentResponse(ofClient: anna, key: "k1")?.body }
        try #require(system.database as? SQLiteStore).rotateKey()
        let after = try system.database.writing { try $0.idempotentResponse(ofClient: anna, key: "k1")?.body }
        #expect(after != nil && after != before && after?.first == 1)
        #expect(try store.perform(clientId: anna, key: "k1", fingerprint: "f") { .init(status: 500, body: Data()) }.body == body)
    }
}
