import Crypto
import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The security area behind the storage seam (issue #25): its rules run over any store that
/// keeps the operations' contracts (here a store in memory), and the store of the run keeps them.
@Suite struct SecuritySeamTests {
    // MARK: The rules over another store

    @Test func sessionRulesRunOverAnyStore() throws {
        let store = MemorySecurityStore()
        let sessions = SessionManager()
        let token = try sessions.create(store, clientId: 7, now: testNow)
        #expect(store.sessionRows.first?.tokenHash == SessionManager.hash(token), "only the hash is kept")
        #expect(try sessions.resolve(store, token: token, now: testNow.addingTimeInterval(SessionManager.idleLimit)) == 7)
        #expect(try sessions.resolve(store, token: token, now: testNow.addingTimeInterval(SessionManager.idleLimit + 1)) == nil,
                "expired")
        #expect(try sessions.resolve(store, token: String(repeating: "0", count: 64), now: testNow) == nil)

        try sessions.touch(store, token: token, now: testNow.addingTimeInterval(100))
        try sessions.touch(store, token: token, now: testNow.addingTimeInterval(50))
        #expect(store.sessionRows.first?.lastUsedAt == testNow.addingTimeInterval(100), "a use never moves back")

        let other = try sessions.create(store, clientId: 8, now: testNow.addingTimeInterval(200))
        let listed = try sessions.list(store, clientId: 7, current: token, now: testNow.addingTimeInterval(200))
        #expect(listed.map(\.isCurrent) == [true])
        #expect(try !sessions.delete(store, id: listed[0].id, clientId: 8), "another patient's session is not theirs to end")
        #expect(try sessions.delete(store, token: other))
        #expect(try sessions.resolve(store, token: other, now: testNow.addingTimeInterval(200)) == nil)
    }

    @Test func theAuditChainRunsOverAnyStoreAndVerifies() throws {
        let store = MemorySecurityStore()
        for index in 0..<3 {
            try AuditLog.append(store, by: .operator, action: .patientRead, clientId: 7, detail: "read \(index)",
                                now: testNow.addingTimeInterval(Double(index)))
        }
        #expect(store.auditRows.map(\.id) == [1, 2, 3])
        #expect(store.head == AuditChainHead(lastId: 3, hash: store.auditRows[2].hash))
        #expect(try AuditLog.verify(store, key: store.key) == [])
        // An edited row no longer verifies.
        let edited = store.auditRows[1]
        store.auditRows[1] = AuditEntry(id: edited.id, at: edited.at, actor: edited.actor, staffId: edited.staffId, role: edited.role,
                                        clinicId: edited.clinicId, action: edited.action, clientId: edited.clientId,
                                        appointmentId: edited.appointmentId, requestId: edited.requestId, detail: "read nothing",
                                        hash: edited.hash)
        #expect(try AuditLog.verify(store, key: store.key) == ["audit row 2 does not match its hash (edited, or a row before it changed)"])
    }

    // MARK: The store of the run keeps the contracts

    @Test func countingAnAttemptIsUndoneByTheRefusalsRollback() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        for expected in 1...ClientController.throttleLimit {
            let (_, window) = try ClientController.reserveAttempt("anna", store: system.database, now: clock.now) { _ in Optional(()) }
            #expect(window == testNow.seconds)
            #expect(try failures(system, "anna") == expected)
            clock.advance(1)
        }
        #expect(expectError(.accountLocked) {
            _ = try ClientController.reserveAttempt("anna", store: system.database, now: clock.now) { _ in Optional(()) }
        } != nil)
        #expect(try failures(system, "anna") == ClientController.throttleLimit, "the refused attempt is not counted")
        // Its window ends: forgotten, and a new one starts with this attempt.
        clock.advance(ClientController.throttleWindow)
        let (_, window) = try ClientController.reserveAttempt("anna", store: system.database, now: clock.now) { _ in Optional(()) }
        #expect(window == clock.now.seconds)
        #expect(try failures(system, "anna") == 1)
        try system.database.writing { tx in try ClientController.releaseAttempt(tx, "anna", window: window) }
        #expect(try failures(system, "anna") == nil, "the last attempt given back takes the row with it")
    }

    @Test func sqliteSessionOperations() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let boris = try register(system, "boris")
        let (annaId, borisId) = (anna.id ?? -1, boris.id ?? -1)
        let device = Device(name: "Phone", platform: "iOS", appVersion: "1.0")
        try system.database.writing { tx in
            try tx.insertSession(clientId: annaId, tokenHash: "a1", at: testNow, device: device)
            try tx.insertSession(clientId: annaId, tokenHash: "a2", at: testNow, device: nil)
            try tx.insertSession(clientId: borisId, tokenHash: "b1", at: testNow, device: nil)
            try tx.touchSession(tokenHash: "a1", at: testNow.addingTimeInterval(60))
            try tx.touchSession(tokenHash: "a1", at: testNow.addingTimeInterval(30))
        }
        let found = try system.database.reading { tx in try tx.session(tokenHash: "a1") }
        #expect(found?.clientId == annaId && found?.lastUsedAt == testNow.addingTimeInterval(60))
        let listed = try system.database.reading { tx in try tx.sessions(ofClient: annaId, lastUsedSince: testNow) }
        #expect(listed.map(\.tokenHash) == ["a1", "a2"] && listed[0].device == device && listed[1].device == nil)
        #expect(try system.database.reading { tx in try tx.sessions(ofClient: annaId, lastUsedSince: testNow.addingTimeInterval(1)) }
            .map(\.tokenHash) == ["a1"])
        #expect(try system.database.writing { tx in try tx.deleteSessions(ofClient: annaId, except: "a1") } == 1)
        #expect(try system.database.writing { tx in try tx.deleteSession(id: listed[0].id, ofClient: borisId) } == false)
        try system.database.writing { tx in try tx.deleteSessions(lastUsedBefore: testNow.addingTimeInterval(1)) }
        #expect(try system.database.reading { tx in [try tx.session(tokenHash: "a1") != nil, try tx.session(tokenHash: "b1") != nil] }
            == [true, false])
    }

    @Test func sqliteIdempotencyAndSecretOperations() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let kept = KeptResponse(fingerprint: "f", status: 201, body: Data("{}".utf8))
        try system.database.writing { tx in try tx.keepIdempotentResponse(ofClient: anna.id ?? -1, key: "k", kept, at: testNow) }
        #expect(try system.database.writing { tx in try tx.idempotentResponse(ofClient: anna.id ?? -1, key: "k") } == kept)
        #expect(throws: ClinicError.self, "a key is kept once") {
            try system.database.writing { tx in try tx.keepIdempotentResponse(ofClient: anna.id ?? -1, key: "k", kept, at: testNow) }
        }
        try system.database.writing { tx in try tx.forgetIdempotentResponses(createdBefore: testNow.addingTimeInterval(1)) }
        #expect(try system.database.writing { tx in try tx.idempotentResponse(ofClient: anna.id ?? -1, key: "k") } == nil)

        try system.database.writing { tx in
            try tx.keepSharedSecret(named: "secret.test", value: "first")
            try tx.keepSharedSecret(named: "secret.test", value: "second")
        }
        #expect(try system.database.reading { tx in try tx.sharedSecret(named: "secret.test") } == "first", "the first one made stays")
        let secret = try await system.sharedSecret("web_test")
        #expect(try await system.sharedSecret("web_test") == secret, "made once, then read")
        let stored = try await system.database.settings(prefix: "secret.web_test")["secret.web_test"]
        #expect(secret.count == 32 && stored?.count == 64)
    }

    @Test(.sqliteOnly) func anAuditRowOutsideAManagersTransactionIsRefused() throws {
        let system = try makeSystem()
        #expect(expectError(.internalError) {
            try system.sqliteFile.writer.write { db in try AuditLog.append(db, by: .operator, action: .patientRead, now: testNow) }
        } != nil)
        try system.database.writing { tx in try AuditLog.append(tx, by: .operator, action: .patientRead, now: testNow) }
        try system.sqliteFile.write { db in try AuditLog.append(db, by: .operator, action: .patientRead, now: testNow) }
        let head = try system.database.reading { tx in try tx.auditChainHead() }
        #expect(head?.lastId == 2)
        #expect(try system.sqliteFile.read { db in try AuditLog.verify(db, key: system.sqliteFile.auditKeys.stored()) } == [])
    }

    private func failures(_ system: ClinicSystem, _ key: String) throws -> Int? {
        try storedInt(system, "SELECT failures FROM login_attempts WHERE login_key = '\(key)'")
    }
}

/// The security area's operations over dictionaries and arrays, keeping each operation's
/// contract in one process (no transactions: each test runs alone).
final class MemorySecurityStore: SecurityWriting {
    var sessionRows: [StoredSession] = []
    var attempts: [String: LoginAttempts] = [:]
    var auditRows: [AuditEntry] = []
    var head: AuditChainHead?
    var kept: [String: (response: KeptResponse, at: Date)] = [:]
    var secrets: [String: String] = [:]
    let key = AuditKey(key: SymmetricKey(size: .bits256), anchorId: 0, anchorHash: AuditLog.genesis)
    private var nextSessionId: Int64 = 1

    func session(tokenHash: String) throws -> SessionLookup? {
        sessionRows.first { $0.tokenHash == tokenHash }
            .map { SessionLookup(id: $0.id, clientId: $0.clientId, tokenHash: $0.tokenHash, lastUsedAt: $0.lastUsedAt,
                                 idleSeconds: $0.idleSeconds) }
    }

    func sessions(ofClient clientId: Int64, lastUsedSince: Date) throws -> [StoredSession] {
        sessionRows.filter { $0.clientId == clientId && $0.lastUsedAt >= lastUsedSince }
    }

    func deleteSessions(lastUsedBefore: Date) throws { sessionRows.removeAll { $0.lastUsedAt < lastUsedBefore } }

    func insertSession(clientId: Int64, tokenHash: String, at: Date, device: Device?, idleSeconds: Int?) throws {
        sessionRows.append(StoredSession(id: nextSessionId, clientId: clientId, tokenHash: tokenHash, createdAt: at, lastUsedAt: at,
                                         device: device, idleSeconds: idleSeconds))
        nextSessionId += 1
    }

    func touchSession(tokenHash: String, at: Date) throws {
        sessionRows = sessionRows.map { row in
            guard row.tokenHash == tokenHash else { return row }
            return StoredSession(id: row.id, clientId: row.clientId, tokenHash: row.tokenHash, createdAt: row.createdAt,
                                 lastUsedAt: max(row.lastUsedAt, at), device: row.device, idleSeconds: row.idleSeconds)
        }
    }

    func deleteSession(tokenHash: String) throws -> Bool { remove { $0.tokenHash == tokenHash } > 0 }

    func deleteSession(id: Int64, ofClient clientId: Int64) throws -> Bool { remove { $0.id == id && $0.clientId == clientId } > 0 }

    func deleteSessions(ofClient clientId: Int64, except tokenHash: String?) throws -> Int {
        remove { $0.clientId == clientId && $0.tokenHash != tokenHash }
    }

    private func remove(_ matching: (StoredSession) -> Bool) -> Int {
        let before = sessionRows.count
        sessionRows.removeAll(where: matching)
        return before - sessionRows.count
    }

    func forgetLoginAttempts(windowStartedBy: Date) throws { attempts = attempts.filter { $0.value.windowStart > windowStartedBy } }

    func countLoginAttempt(loginKey: String, at: Date) throws -> LoginAttempts {
        let counted = attempts[loginKey].map { LoginAttempts(count: $0.count + 1, windowStart: $0.windowStart) }
            ?? LoginAttempts(count: 1, windowStart: at)
        attempts[loginKey] = counted
        return counted
    }

    func withdrawLoginAttempt(loginKey: String, windowStart: Date) throws {
        guard let current = attempts[loginKey], current.windowStart == windowStart else { return }
        attempts[loginKey] = current.count <= 1 ? nil : LoginAttempts(count: current.count - 1, windowStart: windowStart)
    }

    func clearLoginAttempts(loginKey: String) throws { attempts[loginKey] = nil }

    private var sends: [String: (start: Int64, count: Int)] = [:]

    func countSend(key: String, window: Int64, at: Date) throws -> Int {
        let counted = sends[key].flatMap { $0.start > at.seconds - window ? ($0.start, $0.count + 1) : nil } ?? (at.seconds, 1)
        sends[key] = counted
        return counted.1
    }

    func hasAuditTrail() throws -> Bool { true }
    func auditChainHead() throws -> AuditChainHead? { head }
    func lockAuditChainHead() throws -> AuditChainHead? { head }
    func auditKeyForAppending() throws -> AuditKey { key }

    func appendAuditEntry(_ entry: AuditEntry) throws {
        auditRows.append(entry)
        head = AuditChainHead(lastId: entry.id, hash: entry.hash)
    }

    func forEachAuditEntry(_ body: (Result<AuditEntry, UnreadableAuditRow>) throws -> Bool) throws {
        for row in auditRows { guard try body(.success(row)) else { return } }
    }

    func auditEntries(ofClient clientId: Int64, limit: Int) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        (Array(auditRows.filter { $0.clientId == clientId }.reversed().prefix(limit)), [])
    }

    func auditEntries(since: Date) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        (auditRows.filter { $0.at >= since }, [])
    }

    func forgetIdempotentResponses(createdBefore: Date) throws { kept = kept.filter { $0.value.at >= createdBefore } }

    func idempotentResponse(ofClient clientId: Int64, key: String) throws -> KeptResponse? { kept["\(clientId) \(key)"]?.response }

    func keepIdempotentResponse(ofClient clientId: Int64, key: String, _ response: KeptResponse, at: Date) throws {
        guard kept["\(clientId) \(key)"] == nil else { throw ClinicError(.storage, .storageFailure, "duplicate key") }
        kept["\(clientId) \(key)"] = (response, at)
    }

    func sharedSecret(named name: String) throws -> String? { secrets[name] }

    func keepSharedSecret(named name: String, value: String) throws {
        if secrets[name] == nil { secrets[name] = value }
    }
}
