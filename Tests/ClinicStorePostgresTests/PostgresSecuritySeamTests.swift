@testable import ClinicKit
@testable import ClinicStoreSQLite
import ClinicTestPostgres
import Foundation
import GRDB
import Testing
@testable import ClinicStorePostgres
@testable import ClinicStoreCopy

/// The security and message areas of the storage seam on PostgreSQL
/// (PostgresTransaction+Security.swift, +Messages.swift): what SQLite's do, and the
/// cross-server contracts SQLite got from its single writer, tested with transactions running
/// at once on threads of their own.
@Suite struct PostgresSecuritySeamTests {
    /// A fixed "now": Sunday 2026-11-22 12:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_795_348_800)

    // MARK: Helpers

    /// One write transaction on a thread of its own.
    private func write<T: Sendable>(_ store: PostgresStore, _ body: @escaping @Sendable (PostgresTransaction) throws -> T)
        async throws -> T {
        try await onOwnThread { try store.writeTransaction(body) }
    }

    /// One read transaction on a thread of its own.
    private func read<T: Sendable>(_ store: PostgresStore, _ body: @escaping @Sendable (PostgresTransaction) throws -> T)
        async throws -> T {
        try await onOwnThread { try store.readTransaction(body) }
    }

    /// `body(index)` on `count` threads at once; the results in index order.
    private func concurrently<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) async throws -> [T] {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            for index in 0..<count {
                group.addTask { (index, try await onOwnThread { try body(index) }) }
            }
            var results: [(Int, T)] = []
            for try await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    private func migratedStore<T>(maximumConnections: Int = 8, _ body: (PostgresStore) async throws -> T) async throws -> T {
        let migrations = try TestPostgres.migrations()
        return try await TestPostgres.withStore(maximumConnections: maximumConnections) { store, _ in
            try await store.migrate(migrations)
            return try await body(store)
        }
    }

    static func client(_ tx: PostgresTransaction, _ login: String, createdAt: Date = now, emailConfirmed: Bool = false,
                       language: String = "en") throws -> Int64 {
        guard let id = try tx.value(Int64.self, """
            INSERT INTO clients (login, login_key, password_hash, name, surname, street, house, city, preferred_language,
                                 created_at, email_confirmed)
            VALUES ($1, $1, 'x', 'N', 'S', 'Main', '1', 'Reno', $2, $3, $4) RETURNING id
            """, [login, language, createdAt, emailConfirmed]) else { throw ClinicError(.internalError, .internalError, "no client") }
        return id
    }

    /// A clinic, one department and one doctor.
    static func place(_ tx: PostgresTransaction) throws -> (clinic: Int64, department: Int64, doctor: Int64) {
        guard let clinic = try tx.value(Int64.self, """
            INSERT INTO clinics (external_id, name, address, city, city_key, state, zip, lat, lon, time_zone)
            VALUES ('R1', 'Reno Clinic', '1 Main St', 'Reno', 'reno', 'NV', '89501', 39.5, -119.8, 'America/Los_Angeles')
            RETURNING id
            """), let department = try tx.value(Int64.self, """
            INSERT INTO departments (clinic_id, specialization) VALUES ($1, 'therapy') RETURNING id
            """, [clinic]), let doctor = try tx.value(Int64.self, """
            INSERT INTO doctors (department_id, name) VALUES ($1, 'Dr Who') RETURNING id
            """, [department]) else { throw ClinicError(.internalError, .internalError, "no place") }
        return (clinic, department, doctor)
    }

    /// A stand-in for the audit key's MAC: 64 hex digits depending on the previous hash and the id.
    static func chainHash(previous: String, id: Int64) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (previous + ":" + String(id)).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let part = String(hash, radix: 16)
        let padded = String(repeating: "0", count: 16 - part.count) + part
        return String(repeating: padded, count: 4)
    }

    static let genesis = String(repeating: "0", count: 64)

    /// Appends the next row the way `AuditLog.append` does: the head locked, the row after it.
    @discardableResult
    static func appendNext(_ tx: PostgresTransaction, at: Date = now, clientId: Int64? = nil, action: String = "test.append")
        throws -> AuditEntry {
        let head = try tx.lockAuditChainHead() ?? AuditChainHead(lastId: 0, hash: genesis)
        let id = head.lastId + 1
        let entry = AuditEntry(id: id, at: at, actor: "operator", staffId: nil, role: "operator", clinicId: nil, action: action,
                               clientId: clientId, appointmentId: nil, requestId: "r\(id)", detail: "d\(id)",
                               hash: chainHash(previous: head.hash, id: id))
        try tx.appendAuditEntry(entry)
        return entry
    }

    final class Box<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value
        init(_ value: Value) { stored = value }
        var value: Value { lock.withLock { stored } }
        func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
    }

    // MARK: The personal-data key

    /// Two servers on different machines, each with a key file of its own, seal their first
    /// rows at the same moment: the first check stored counts, and the other's write is refused
    /// (`key_wrong`), never sealed under a key no other server has. (Before, the second's insert
    /// of its check quietly did nothing and its rows were sealed under its own key.)
    @Test func twoFirstSealingsWithDifferentKeysLeaveOneKey() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { first, server in
            try await first.migrate(migrations)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let second = try await PostgresStore.open(first.url, environment: server.environment,
                                                      keys: PostgresStoreKeys(personal: folder + "/other.key",
                                                                              audit: folder + "/other.audit-key"))
            let firstSealed = DispatchSemaphore(value: 0)
            async let stored: String? = onOwnThread {
                try first.writeTransaction { tx in
                    _ = try first.personalDataKey.sealingCipher(tx)
                    firstSealed.signal()
                    // Until the second reaches its insert and waits on this row (not a fixed
                    // time: on a loaded machine 0.5 s was not always enough, and the second then
                    // began after this COMMIT and found no key of its own, `key_missing`).
                    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
                    let start = Date()
                    while try first.reading({ tx in try (tx as? PostgresTransaction)?.value(Int64.self, waiting) ?? 0 }) == 0 {
                        guard Date().timeIntervalSince(start) < 30 else { throw ClinicError(.busy, .storeConnectionLost, "the second never waited") }
                        Thread.sleep(forTimeInterval: 0.01)
                    }
                    return try tx.personalDataKeyCheck()
                }
            }
            async let refused: MessageKey? = onOwnThread {
                firstSealed.wait()
                do {
                    _ = try second.writeTransaction { tx in try second.personalDataKey.sealingCipher(tx) }
                    return nil
                } catch let error as ClinicError {
                    return error.key
                }
            }
            let (check, key) = try await (stored, refused)
            await second.shutdown()
            #expect(key == .keyWrong)
            let firstKey = try #require(try KeyFile.read(first.personalDataKey.file?.path ?? ""))
            #expect(check == KeyFile.check(firstKey))
            #expect(try await read(first) { tx in try tx.personalDataKeyCheck() } == check)
        }
    }

    // MARK: Sessions

    @Test func sessionsRoundTripOrderTouchAndDelete() async throws {
        try await migratedStore { store in
            let now = Self.now
            let (anna, boris) = try await write(store) { tx in (try Self.client(tx, "anna"), try Self.client(tx, "boris")) }
            try await write(store) { tx in
                // Instants are kept in whole seconds.
                try tx.insertSession(clientId: anna, tokenHash: "h1", at: now.addingTimeInterval(0.7),
                                     device: Device(name: "Phone", platform: "iOS", appVersion: "1.2"))
                try tx.insertSession(clientId: anna, tokenHash: "h2", at: now.addingTimeInterval(-7200), device: nil)
                try tx.insertSession(clientId: anna, tokenHash: "h3", at: now.addingTimeInterval(60), device: nil)
                try tx.insertSession(clientId: boris, tokenHash: "b1", at: now, device: nil)
            }
            let (lookup, missing, recent) = try await read(store) { tx in
                (try tx.session(tokenHash: "h1"), try tx.session(tokenHash: "nope"),
                 try tx.sessions(ofClient: anna, lastUsedSince: now.addingTimeInterval(-3600)))
            }
            #expect(lookup?.clientId == anna && lookup?.tokenHash == "h1" && lookup?.lastUsedAt == now)
            #expect(missing == nil)
            #expect(recent.map(\.tokenHash) == ["h1", "h3"], "by id, the old one left out")
            #expect(recent.first?.device == Device(name: "Phone", platform: "iOS", appVersion: "1.2"))
            #expect(recent.first?.createdAt == now && recent.last?.device == nil)
            #expect(recent.map(\.id) == recent.map(\.id).sorted())

            // A later use moves it on; an earlier one (a slow request) never moves it back.
            try await write(store) { tx in try tx.touchSession(tokenHash: "h1", at: now.addingTimeInterval(300)) }
            try await write(store) { tx in try tx.touchSession(tokenHash: "h1", at: now.addingTimeInterval(100)) }
            #expect(try await read(store) { tx in try tx.session(tokenHash: "h1")?.lastUsedAt } == now.addingTimeInterval(300))

            // Deletes: another patient's session by id is left alone.
            let borisSession = try #require(try await read(store) { tx in try tx.session(tokenHash: "b1")?.id })
            #expect(try await write(store) { tx in try tx.deleteSession(id: borisSession, ofClient: anna) } == false)
            #expect(try await write(store) { tx in try tx.deleteSession(id: borisSession, ofClient: boris) } == true)
            #expect(try await write(store) { tx in try tx.deleteSession(tokenHash: "h3") } == true)
            #expect(try await write(store) { tx in try tx.deleteSession(tokenHash: "h3") } == false)
            try await write(store) { tx in
                try tx.insertSession(clientId: anna, tokenHash: "h4", at: now, device: nil)
                try tx.insertSession(clientId: anna, tokenHash: "h5", at: now, device: nil)
            }
            #expect(try await write(store) { tx in try tx.deleteSessions(ofClient: anna, except: "h4") } == 3)
            #expect(try await read(store) { tx in try tx.sessions(ofClient: anna, lastUsedSince: .distantPast).map(\.tokenHash) } == ["h4"])
            try await write(store) { tx in
                try tx.insertSession(clientId: boris, tokenHash: "old", at: now.addingTimeInterval(-86_400), device: nil)
                try tx.insertSession(clientId: boris, tokenHash: "new", at: now, device: nil)
                try tx.deleteSessions(lastUsedBefore: now)
            }
            #expect(try await read(store) { tx in try tx.sessions(ofClient: boris, lastUsedSince: .distantPast).map(\.tokenHash) } == ["new"])
            #expect(try await write(store) { tx in try tx.deleteSessions(ofClient: boris, except: nil) } == 1)

            // A token hash is unique: a second session with it is an error, not a second row.
            let duplicate = await clinicError {
                try await write(store) { tx in try tx.insertSession(clientId: boris, tokenHash: "h4", at: now, device: nil) }
            }
            #expect(duplicate != nil)
        }
    }

    // MARK: Log-in throttling

    @Test func loginAttemptsCountWithdrawAndForget() async throws {
        try await migratedStore { store in
            let now = Self.now
            let first = try await write(store) { tx in try tx.countLoginAttempt(loginKey: "anna", at: now.addingTimeInterval(0.9)) }
            #expect(first == LoginAttempts(count: 1, windowStart: now))
            let second = try await write(store) { tx in try tx.countLoginAttempt(loginKey: "anna", at: now.addingTimeInterval(30)) }
            #expect(second == LoginAttempts(count: 2, windowStart: now), "the window keeps its start")

            // Another window's withdrawal is not this one's.
            try await write(store) { tx in try tx.withdrawLoginAttempt(loginKey: "anna", windowStart: now.addingTimeInterval(1)) }
            #expect(try await write(store) { tx in try tx.countLoginAttempt(loginKey: "anna", at: now) }.count == 3)
            try await write(store) { tx in
                try tx.withdrawLoginAttempt(loginKey: "anna", windowStart: now)
                try tx.withdrawLoginAttempt(loginKey: "anna", windowStart: now)
            }
            let left = try await read(store) { tx in try tx.value(Int64.self, "SELECT failures FROM login_attempts WHERE login_key = 'anna'") }
            #expect(left == 1)
            try await write(store) { tx in try tx.withdrawLoginAttempt(loginKey: "anna", windowStart: now) }
            #expect(try await read(store) { tx in try tx.value(Int64.self, "SELECT count(*) FROM login_attempts") } == 0,
                    "the last attempt withdrawn takes the row")

            // A transaction that rolls back takes its attempt with it.
            _ = try await write(store) { tx in try tx.countLoginAttempt(loginKey: "boris", at: now) }
            let refused = await clinicError {
                try await write(store) { tx in
                    _ = try tx.countLoginAttempt(loginKey: "boris", at: now)
                    throw ClinicError(.slotTaken, .slotTaken)
                }
            }
            #expect(refused?.code == .slotTaken)
            #expect(try await write(store) { tx in try tx.countLoginAttempt(loginKey: "boris", at: now) }.count == 2)

            try await write(store) { tx in
                _ = try tx.countLoginAttempt(loginKey: "old", at: now.addingTimeInterval(-900))
                try tx.forgetLoginAttempts(windowStartedBy: now.addingTimeInterval(-900))
                try tx.clearLoginAttempts(loginKey: "boris")
            }
            #expect(try await read(store) { tx in try tx.value(Int64.self, "SELECT count(*) FROM login_attempts") } == 0)
        }
    }

    /// Many transactions counting one name at once, on several threads, some rolling back:
    /// the count is exactly the committed attempts, and each committed one saw a different count.
    @Test func concurrentLoginAttemptsAreCountedExactly() async throws {
        try await migratedStore(maximumConnections: 8) { store in
            let now = Self.now
            let threads = 8, perThread = 12
            let seen = try await concurrently(threads) { thread -> [Int] in
                var counts: [Int] = []
                for attempt in 0..<perThread {
                    let rollBack = attempt % 4 == 3
                    do {
                        let counted = try store.writeTransaction { tx -> Int in
                            let counted = try tx.countLoginAttempt(loginKey: "shared", at: now).count
                            // Hold the row lock a moment, so that others queue behind it.
                            if attempt % 3 == 0 { Thread.sleep(forTimeInterval: 0.005) }
                            if rollBack { throw ClinicError(.slotTaken, .slotTaken) }
                            return counted
                        }
                        counts.append(counted)
                    } catch let error as ClinicError where error.code == .slotTaken && rollBack {
                        continue
                    }
                }
                return counts
            }
            let committed = seen.flatMap { $0 }
            #expect(committed.count == threads * perThread * 3 / 4)
            let stored = try await read(store) { tx in
                try tx.value(Int64.self, "SELECT failures FROM login_attempts WHERE login_key = 'shared'")
            }
            #expect(stored == Int64(committed.count), "exactly the committed attempts")
            // No two committed transactions read the same count: each added to the other's.
            #expect(Set(committed).count == committed.count, "\(committed.sorted())")
            #expect((committed.max() ?? 0) <= committed.count)
        }
    }

    // MARK: The audit trail

    @Test func auditHeadIsNilForAnEmptyChainThenMovesWithEachRow() async throws {
        try await migratedStore { store in
            let (hasTrail, head, locked, rows) = try await write(store) { tx in
                (try tx.hasAuditTrail(), try tx.auditChainHead(), try tx.lockAuditChainHead(),
                 try tx.value(Int64.self, "SELECT count(*) FROM audit_head WHERE last_id = 0"))
            }
            #expect(hasTrail && head == nil && locked == nil)
            #expect(rows == 1, "migration 0002 made the empty chain's head row, to lock")
            let first = try await write(store) { tx in try Self.appendNext(tx) }
            let second = try await write(store) { tx in try Self.appendNext(tx) }
            #expect(first.id == 1 && second.id == 2 && second.hash == Self.chainHash(previous: first.hash, id: 2))
            #expect(try await read(store) { tx in try tx.auditChainHead() } == AuditChainHead(lastId: 2, hash: second.hash))
            #expect(try await read(store) { tx in try tx.lockAuditChainHead() } == AuditChainHead(lastId: 2, hash: second.hash))
            // Append-only: the trigger refuses a change (the transaction fails as a whole).
            let edit = await clinicError {
                _ = try await write(store) { tx in try tx.execute("UPDATE audit_events SET detail = 'x' WHERE id = 1") }
            }
            #expect(edit?.code == .storage)
        }
    }

    /// The migration's down removes the empty chain's row, and up puts it back; a trail with
    /// rows keeps its head.
    @Test func theHeadRowMigrationGoesDownAndUp() async throws {
        let migrations = try TestPostgres.migrations()
        let latest = migrations.last?.version ?? 0
        let down = Array((2...latest).reversed()), up = Array(2...latest)
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            #expect(try await store.migrate(migrations, to: 1) == down)
            #expect(try await read(store) { tx in try tx.value(Int64.self, "SELECT count(*) FROM audit_head") } == 0)
            #expect(try await store.migrate(migrations) == up)
            #expect(try await read(store) { tx in try tx.value(Int64.self, "SELECT count(*) FROM audit_head") } == 1)
            let entry = try await write(store) { tx in try Self.appendNext(tx) }
            #expect(try await store.migrate(migrations, to: 1) == down)
            #expect(try await read(store) { tx in try tx.auditChainHead() } == AuditChainHead(lastId: 1, hash: entry.hash))
            #expect(try await store.migrate(migrations) == up)
            #expect(try await read(store) { tx in try tx.auditChainHead() } == AuditChainHead(lastId: 1, hash: entry.hash))
        }
    }

    /// `admin copy` with the seeded head row: a source without an audit trail leaves the empty
    /// chain's row (so the first append has a row to lock), a source with one replaces it, and
    /// the row never travels back into a SQLite file (which has no head before its first row).
    @Test func storeCopyKeepsTheEmptyChainsHeadRow() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-sec-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sqliteMigrations = try Migration.load(from: TestPostgres.projectRoot.appendingPathComponent("Migrations"))
        let source = try SQLiteStore.open(path: folder + "/empty.sqlite", migrations: sqliteMigrations)
        try await migratedStore { store in
            let copied = try await StoreCopy.sqliteToPostgres(source: source, target: store, migrations: try TestPostgres.migrations())
            #expect(copied.first { $0.table == "audit_head" }?.rows == 0)
            let (head, rows) = try await read(store) { tx in
                (try tx.auditChainHead(), try tx.value(Int64.self, "SELECT count(*) FROM audit_head WHERE last_id = 0"))
            }
            #expect(head == nil && rows == 1)
            let entry = try await write(store) { tx in try Self.appendNext(tx) }
            #expect(entry.id == 1)
            let back = try await StoreCopy.postgresToSQLite(source: store, postgresMigrations: try TestPostgres.migrations(),
                                                            targetPath: folder + "/back.sqlite", sqliteMigrations: sqliteMigrations)
            #expect(back.first { $0.table == "audit_head" }?.rows == 1)
        }
        try await migratedStore { store in
            _ = try await StoreCopy.postgresToSQLite(source: store, postgresMigrations: try TestPostgres.migrations(),
                                                     targetPath: folder + "/none.sqlite", sqliteMigrations: sqliteMigrations)
            let none = try SQLiteStore.open(path: folder + "/none.sqlite", migrations: sqliteMigrations)
            #expect(try none.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM audit_head") } == 0,
                    "the empty chain's row is the PostgreSQL schema's, not copied")
        }
    }

    /// Appenders on several threads at once: each waits for the head the one before it wrote,
    /// so the ids follow each other and every row chains from the one before (no fork, no
    /// refused duplicate id).
    @Test func concurrentAppendersNeverForkTheChain() async throws {
        try await migratedStore { store in
            let threads = 6, perThread = 8
            let appended = try await concurrently(threads) { thread -> [Int64] in
                try (0..<perThread).map { index in
                    try store.writeTransaction { tx -> Int64 in
                        let entry = try Self.appendNext(tx, action: "t\(thread).\(index)")
                        // Keep the head locked a moment: the others must wait, not read the old head.
                        Thread.sleep(forTimeInterval: 0.003)
                        return entry.id
                    }
                }
            }
            let ids = appended.flatMap { $0 }
            #expect(ids.sorted() == Array(1...Int64(threads * perThread)))
            let (entries, head) = try await read(store) { tx -> ([AuditEntry], AuditChainHead?) in
                var entries: [AuditEntry] = []
                try tx.forEachAuditEntry { read in
                    if case .success(let entry) = read { entries.append(entry) }
                    return true
                }
                return (entries, try tx.auditChainHead())
            }
            var previous = Self.genesis
            for (offset, entry) in entries.enumerated() {
                #expect(entry.id == Int64(offset + 1))
                #expect(entry.hash == Self.chainHash(previous: previous, id: entry.id), "row \(entry.id) follows row \(entry.id - 1)")
                previous = entry.hash
            }
            #expect(head == AuditChainHead(lastId: Int64(threads * perThread), hash: previous))
        }
    }

    @Test func auditEntriesAreReadInPagesAndByPatient() async throws {
        try await migratedStore { store in
            let now = Self.now
            let total = PostgresTransaction.auditPageSize * 2 + 7
            let (anna, later) = try await write(store) { tx -> (Int64, Int64) in
                let anna = try Self.client(tx, "anna", createdAt: now)
                // Rows before the account existed (an earlier account with the same id) stay out.
                try Self.appendNext(tx, at: now.addingTimeInterval(-60), clientId: anna, action: "before")
                for index in 1..<total {
                    try Self.appendNext(tx, at: now.addingTimeInterval(TimeInterval(index)), clientId: index % 100 == 0 ? anna : nil)
                }
                return (anna, try Self.client(tx, "later", createdAt: now.addingTimeInterval(10_000)))
            }
            let (all, firstThree, byAnna, limited, since, none) = try await read(store) { tx in
                var all: [Result<AuditEntry, UnreadableAuditRow>] = []
                try tx.forEachAuditEntry { all.append($0); return true }
                var firstThree: [Int64] = []
                try tx.forEachAuditEntry { read in
                    if case .success(let entry) = read { firstThree.append(entry.id) }
                    return firstThree.count < 3
                }
                return (all, firstThree, try tx.auditEntries(ofClient: anna, limit: 100), try tx.auditEntries(ofClient: anna, limit: 2),
                        try tx.auditEntries(since: now.addingTimeInterval(TimeInterval(total - 5))),
                        try tx.auditEntries(ofClient: later, limit: 10))
            }
            let ids = all.compactMap { try? $0.get().id }
            #expect(all.count == total && ids == Array(1...Int64(total)), "every row once, in id order, across pages")
            #expect(firstThree == [1, 2, 3], "false stops the walk")
            let annaIds = byAnna.entries.map(\.id)
            #expect(annaIds == [1001, 901, 801, 701, 601, 501, 401, 301, 201, 101], "newest first, not the row from before the account")
            #expect(byAnna.unreadable.isEmpty && limited.entries.map(\.id) == [1001, 901])
            #expect(since.entries.map(\.id) == Array(Int64(total - 4)...Int64(total)))
            #expect(none.entries.isEmpty)
            let sample = try #require(try all[1].get())
            #expect(sample.at == now.addingTimeInterval(1) && sample.requestId == "r2" && sample.detail == "d2"
                    && sample.actor == "operator" && sample.role == "operator" && sample.clientId == nil && sample.staffId == nil)
        }
    }

    // MARK: Idempotency keys

    /// A second copy of a request waits for the first's transaction and finds what it kept.
    @Test func theIdempotencyLockMakesTheSecondWaitAndFindTheFirstsResponse() async throws {
        try await migratedStore { store in
            let now = Self.now
            let anna = try await write(store) { tx in try Self.client(tx, "anna") }
            let kept = KeptResponse(fingerprint: "fp", status: 201, body: Data("{\"id\":1}".utf8))
            let firstHasLock = DispatchSemaphore(value: 0)
            let results = try await concurrently(2) { index -> (KeptResponse?, Date) in
                if index == 0 {
                    let found = try store.writeTransaction { tx -> KeptResponse? in
                        let found = try tx.idempotentResponse(ofClient: anna, key: "k1")
                        firstHasLock.signal()
                        Thread.sleep(forTimeInterval: 0.4)
                        try tx.keepIdempotentResponse(ofClient: anna, key: "k1", kept, at: now)
                        return found
                    }
                    return (found, Date())
                }
                firstHasLock.wait()
                let found = try store.writeTransaction { tx in try tx.idempotentResponse(ofClient: anna, key: "k1") }
                return (found, Date())
            }
            #expect(results[0].0 == nil, "the first finds nothing")
            #expect(results[1].0 == kept, "the second waited, then found the first's response")
            // Another key does not wait; a read transaction takes no lock.
            #expect(try await write(store) { tx in try tx.idempotentResponse(ofClient: anna, key: "other") } == nil)
            #expect(try await read(store) { tx in try tx.idempotentResponse(ofClient: anna, key: "k1") } == kept)
            // A second response under a key is an error, never an overwrite.
            let second = await clinicError {
                try await write(store) { tx in
                    try tx.keepIdempotentResponse(ofClient: anna, key: "k1", KeptResponse(fingerprint: "x", status: 200, body: Data()),
                                                  at: now)
                }
            }
            #expect(second != nil)
            #expect(try await read(store) { tx in try tx.idempotentResponse(ofClient: anna, key: "k1") } == kept)
            try await write(store) { tx in
                try tx.keepIdempotentResponse(ofClient: anna, key: "k2", kept, at: now.addingTimeInterval(100))
                try tx.forgetIdempotentResponses(createdBefore: now.addingTimeInterval(100))
            }
            let (k1, k2) = try await read(store) { tx in
                (try tx.idempotentResponse(ofClient: anna, key: "k1"), try tx.idempotentResponse(ofClient: anna, key: "k2"))
            }
            #expect(k1 == nil && k2 == kept)
        }
    }

    // MARK: Shared secrets

    @Test func aSharedSecretIsKeptOnce() async throws {
        try await migratedStore { store in
            #expect(try await read(store) { tx in try tx.sharedSecret(named: "test.secret") } == nil)
            let kept = try await concurrently(4) { index in
                try store.writeTransaction { tx -> String? in
                    try tx.keepSharedSecret(named: "test.secret", value: "value\(index)")
                    return try tx.sharedSecret(named: "test.secret")
                }
            }
            let stored = try await read(store) { tx in try tx.sharedSecret(named: "test.secret") }
            #expect(stored != nil && kept.allSatisfy { $0 == stored }, "\(kept) \(String(describing: stored))")
        }
    }

    // MARK: The inbox

    @Test func inboxMessagesDedupeOrderAndRead() async throws {
        try await migratedStore { store in
            let now = Self.now
            let (anna, boris, place) = try await write(store) { tx in
                (try Self.client(tx, "anna", emailConfirmed: true, language: "ru"), try Self.client(tx, "boris"), try Self.place(tx))
            }
            let (keeps, firstId, duplicate, otherId) = try await write(store) { tx in
                (try tx.keepsInboxes(),
                 try tx.insertInboxMessage(toClient: anna, kind: .booked, subject: "S1", body: "B1", appointmentId: 7,
                                           clinicId: place.clinic, staffId: nil, dedupeKey: "booked:7", at: now),
                 try tx.insertInboxMessage(toClient: anna, kind: .booked, subject: "S1", body: "B1", appointmentId: 7,
                                           clinicId: place.clinic, staffId: nil, dedupeKey: "booked:7", at: now),
                 try tx.insertInboxMessage(toClient: anna, kind: .clinic, subject: "S2", body: "B2", appointmentId: nil,
                                           clinicId: nil, staffId: nil, dedupeKey: nil, at: now.addingTimeInterval(60)))
            }
            #expect(keeps && firstId != nil && duplicate == nil && otherId != nil)
            // Two servers writing one reminder at once write one.
            let racing = try await concurrently(4) { _ in
                try store.writeTransaction { tx in
                    try tx.insertInboxMessage(toClient: anna, kind: .reminder, subject: "R", body: "R", appointmentId: nil,
                                              clinicId: nil, staffId: nil, dedupeKey: "reminder:1", at: now)
                }
            }
            #expect(racing.compactMap { $0 }.count == 1, "\(racing)")
            let reminderId = try #require(racing.compactMap { $0 }.first)
            let first = try #require(firstId), other = try #require(otherId)

            let (all, unread, limited, count, one, exists, notExists) = try await read(store) { tx in
                (try tx.inboxMessages(ofClient: anna, unreadOnly: false, limit: 10),
                 try tx.inboxMessages(ofClient: anna, unreadOnly: true, limit: 10),
                 try tx.inboxMessages(ofClient: anna, unreadOnly: false, limit: 1),
                 try tx.unreadCount(ofClient: anna), try tx.inboxMessage(first),
                 try tx.messageExists(dedupeKey: "booked:7"), try tx.messageExists(dedupeKey: "booked:8"))
            }
            #expect(all.map(\.id) == [first, other, reminderId].sorted(by: >), "newest first")
            #expect(unread.count == 3 && limited.count == 1 && count == 3 && exists && !notExists)
            #expect(one?.kind == .booked && one?.subject == "S1" && one?.body == "B1" && one?.appointmentId == 7
                    && one?.clinicId == place.clinic && one?.createdAt == now && one?.readAt == nil)

            // Read once: a later read keeps the first time; another patient's message is not found.
            let read1 = try await write(store) { tx in try tx.markMessageRead(first, ofClient: anna, at: now.addingTimeInterval(5)) }
            let read2 = try await write(store) { tx in try tx.markMessageRead(first, ofClient: anna, at: now.addingTimeInterval(50)) }
            let foreign = try await write(store) { tx in try tx.markMessageRead(first, ofClient: boris, at: now) }
            #expect(read1?.readAt == now.addingTimeInterval(5) && read2?.readAt == now.addingTimeInterval(5) && foreign == nil)
            #expect(try await read(store) { tx in try tx.unreadCount(ofClient: anna) } == 2)
            #expect(try await read(store) { tx in try tx.inboxMessages(ofClient: anna, unreadOnly: true, limit: 10).map(\.id) }
                    == [other, reminderId].sorted(by: >))

            let (context, missing, confirmed, unconfirmed) = try await read(store) { tx in
                (try tx.messageContext(client: anna, clinic: place.clinic, department: place.department),
                 try tx.messageContext(client: anna, clinic: place.clinic + 100, department: place.department),
                 try tx.hasConfirmedEmail(client: anna), try tx.hasConfirmedEmail(client: boris))
            }
            #expect(context == AppointmentMessageContext(language: .ru, emailConfirmed: true, clinicName: "Reno Clinic",
                                                         address: "1 Main St", city: "Reno", state: "NV", zip: "89501",
                                                         timeZone: "America/Los_Angeles", specialization: "therapy"))
            #expect(missing == nil && confirmed && !unconfirmed)
            let noDepartment = try await read(store) { tx in
                try tx.messageContext(client: boris, clinic: place.clinic, department: place.department + 100)
            }
            #expect(noDepartment?.specialization == "" && noDepartment?.emailConfirmed == false && noDepartment?.language == .en)
        }
    }

    @Test func remindableAppointmentsAndTheSlotsChoice() async throws {
        try await migratedStore { store in
            let now = Self.now
            let (ids, appointments) = try await write(store) { tx -> ([Int64], [Int64]) in
                let anna = try Self.client(tx, "anna")
                let place = try Self.place(tx)
                func appointment(_ start: TimeInterval, _ status: String, client: Int64?) throws -> Int64 {
                    guard let id = try tx.value(Int64.self, """
                        INSERT INTO appointments (client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at,
                                                  status, created_at, updated_at)
                        VALUES ($1, $2, $3, $4, 'Dr', $5, $6, $7, $8, $8) RETURNING id
                        """, [client, place.clinic, place.department, place.doctor, now.addingTimeInterval(start),
                              now.addingTimeInterval(start + 1800), status, now]) else { throw ClinicError(.internalError, .internalError) }
                    return id
                }
                let later = try appointment(7200, "confirmed", client: anna)
                let soon = try appointment(3600, "scheduled", client: anna)
                _ = try appointment(5400, "cancelled", client: anna)
                _ = try appointment(9000, "scheduled", client: nil)
                let atEdge = try appointment(0, "scheduled", client: anna)
                let beyond = try appointment(90_000, "scheduled", client: anna)
                for (event, at) in [("booked", now.addingTimeInterval(-600)), ("rescheduled", now.addingTimeInterval(-60)),
                                    ("confirmed", now.addingTimeInterval(-10))] {
                    try tx.execute("INSERT INTO appointment_events (appointment_id, event, actor, at) VALUES ($1, $2, 'patient', $3)",
                                   [later, event, at])
                }
                return ([soon, later], [atEdge, beyond])
            }
            let (remindable, chosen, never) = try await read(store) { tx in
                (try tx.remindableAppointments(startingAfter: now, through: now.addingTimeInterval(86_400)).compactMap(\.id),
                 try tx.slotChosenAt(ofAppointment: ids[1]), try tx.slotChosenAt(ofAppointment: appointments[0]))
            }
            #expect(remindable == ids, "active, with a patient, after `after` and through `through`, soonest first")
            #expect(chosen == now.addingTimeInterval(-60) && never == nil)
        }
    }

    // MARK: The outbox

    @Test func deliveriesClaimLeaseAndSettle() async throws {
        try await migratedStore { store in
            let now = Self.now
            let (anna, message) = try await write(store) { tx -> (Int64, Int64) in
                let anna = try Self.client(tx, "anna", emailConfirmed: true)
                guard let message = try tx.insertInboxMessage(toClient: anna, kind: .clinic, subject: "S", body: "B", appointmentId: nil,
                                                              clinicId: nil, staffId: nil, dedupeKey: nil, at: now)
                else { throw ClinicError(.internalError, .internalError) }
                try tx.enqueueDelivery(ofMessage: message, toClient: anna, at: now)
                return (anna, message)
            }
            let code = try await write(store) { tx -> Int64 in
                let id = try tx.enqueueEmailCodeDelivery(toClient: anna, at: now.addingTimeInterval(1))
                try tx.setDeliveryPayload(Data([1, 2, 3]), ofDelivery: id)
                return id
            }
            #expect(try await read(store) { tx in try tx.hasDueDeliveries(at: now) } == true)
            #expect(try await read(store) { tx in try tx.hasDueDeliveries(at: now.addingTimeInterval(-1)) } == false)
            #expect(try await write(store) { tx in try tx.claimDeliveries(limit: 0, now: now, claimant: "w", leaseUntil: { _ in now }) }.isEmpty)

            let lease: @Sendable (Int) -> Date = { attempt in now.addingTimeInterval(TimeInterval(600 * attempt)) }
            let claimed = try await write(store) { tx in
                try tx.claimDeliveries(limit: 10, now: now.addingTimeInterval(1), claimant: "w1", leaseUntil: lease)
            }
            #expect(claimed.map(\.attempt) == [1, 1])
            #expect(claimed.first?.content == .message(message) && claimed.first?.clientId == anna && claimed.first?.createdAt == now)
            #expect(claimed.last?.id == code && claimed.last?.content == .emailCode(sealed: Data([1, 2, 3])))
            // Claimed: due for no one until the lease ends; then due again, the next attempt.
            #expect(try await write(store) { tx in
                try tx.claimDeliveries(limit: 10, now: now.addingTimeInterval(599), claimant: "w2", leaseUntil: lease)
            }.isEmpty)
            try await write(store) { tx in try tx.failDelivery(code, error: "421 try later", givingUp: false) }
            let again = try await write(store) { tx in
                try tx.claimDeliveries(limit: 10, now: now.addingTimeInterval(600), claimant: "w2", leaseUntil: lease)
            }
            #expect(again.map(\.attempt) == [2, 2])
            try await write(store) { tx in
                try tx.completeDelivery(claimed[0].id, sentAt: now.addingTimeInterval(601), reply: "250 ok")
                try tx.failDelivery(code, error: "550 no", givingUp: true)
            }
            let states = try await read(store) { tx in
                try tx.rows("SELECT id, state, sent_at, reply, last_error, attempts FROM deliveries ORDER BY id").map { row in
                    [try row.decode(String.self, forColumn: "state"), try row.decode(String?.self, forColumn: "reply") ?? "-",
                     try row.decode(String?.self, forColumn: "last_error") ?? "-", String(try row.decode(Int64.self, forColumn: "attempts")),
                     String(try row.decode(Int64?.self, forColumn: "sent_at") ?? 0)]
                }
            }
            #expect(states == [["sent", "250 ok", "-", "2", String(Int64(now.timeIntervalSince1970) + 601)],
                               ["failed", "-", "550 no", "2", "0"]])

            // Giving up, dropping.
            let (late, fresh, codeToDrop, otherCode) = try await write(store) { tx -> (Int64, Int64, Int64, Int64) in
                let late = try tx.enqueueEmailCodeDelivery(toClient: anna, at: now.addingTimeInterval(-90_000))
                let fresh = try tx.enqueueEmailCodeDelivery(toClient: anna, at: now)
                try tx.setDeliveryPayload(Data([9]), ofDelivery: fresh)
                let codeToDrop = try tx.enqueueEmailCodeDelivery(toClient: anna, at: now)
                return (late, fresh, codeToDrop, try tx.enqueueEmailCodeDelivery(toClient: anna, at: now))
            }
            #expect(try await write(store) { tx in try tx.giveUpDeliveries(dueAt: now, writtenNoLaterThan: now.addingTimeInterval(-86_400)) } == 1)
            try await write(store) { tx in try tx.dropDelivery(codeToDrop) }
            try await write(store) { tx in try tx.dropPendingEmailCodes(ofClient: anna) }
            let settled = try await read(store) { tx in
                try tx.rows("SELECT id, state, payload IS NULL AS no_payload FROM deliveries WHERE id = ANY(ARRAY[$1, $2, $3, $4]::bigint[]) ORDER BY id",
                            [late, fresh, codeToDrop, otherCode]).map { row in
                    "\(try row.decode(String.self, forColumn: "state"))/\(try row.decode(Bool.self, forColumn: "no_payload"))"
                }
            }
            #expect(settled == ["failed/true", "dropped/false", "dropped/true", "dropped/true"])
            try await write(store) { tx in
                _ = try tx.enqueueEmailCodeDelivery(toClient: anna, at: now)
                let message = try tx.insertInboxMessage(toClient: anna, kind: .clinic, subject: "S", body: "B", appointmentId: nil,
                                                        clinicId: nil, staffId: nil, dedupeKey: nil, at: now)
                try tx.enqueueDelivery(ofMessage: message ?? 0, toClient: anna, at: now)
                try tx.execute("UPDATE deliveries SET payload = '\\x01'::bytea WHERE state = 'pending'")
                try tx.dropPendingDeliveries(ofClient: anna)
            }
            #expect(try await read(store) { tx in
                try tx.value(Int64.self, "SELECT count(*) FROM deliveries WHERE state = 'pending' OR (state = 'dropped' AND payload IS NOT NULL)")
            } == 1, "only the code dropped by dropPendingEmailCodes keeps its payload; nothing pending")
        }
    }

    /// Workers of several servers claiming at once never get one delivery twice, and between
    /// them (and a last claim) take every one.
    @Test func concurrentClaimsNeverReturnADeliveryTwice() async throws {
        try await migratedStore { store in
            let now = Self.now
            let total = 60
            let all = try await write(store) { tx -> [Int64] in
                let anna = try Self.client(tx, "anna")
                return try (0..<total).map { index in
                    try tx.enqueueEmailCodeDelivery(toClient: anna, at: now.addingTimeInterval(TimeInterval(-index)))
                }
            }
            let lease: @Sendable (Int) -> Date = { _ in now.addingTimeInterval(3600) }
            // Every worker has its connection before any claims (a worker still opening one
            // would find the others done): a barrier, a minute at most.
            let arrived = NSCondition()
            let ready = Box<Int>(0)
            let claims = try await concurrently(6) { worker -> [Int64] in
                _ = try store.readTransaction { tx in try tx.setting("warm") }
                arrived.lock()
                ready.update { $0 += 1 }
                arrived.broadcast()
                let deadline = Date().addingTimeInterval(60)
                while ready.value < 6 && arrived.wait(until: deadline) {}
                arrived.unlock()
                var mine: [Int64] = []
                while true {
                    let claimed = try store.writeTransaction { tx -> [Int64] in
                        let claimed = try tx.claimDeliveries(limit: 4, now: now, claimant: "worker\(worker)", leaseUntil: lease)
                        // Hold the claim a moment: the others claim meanwhile.
                        Thread.sleep(forTimeInterval: 0.02)
                        return claimed.map(\.id)
                    }
                    if claimed.isEmpty { return mine }
                    mine += claimed
                }
            }
            let rest = try await write(store) { tx in
                try tx.claimDeliveries(limit: total, now: now, claimant: "last", leaseUntil: lease).map(\.id)
            }
            let claimed = claims.flatMap { $0 } + rest
            #expect(claimed.count == Set(claimed).count, "a delivery claimed twice: \(claimed.sorted())")
            #expect(Set(claimed) == Set(all))
            #expect(claims.filter { !$0.isEmpty }.count > 1, "several workers got some")
            let attempts = try await read(store) { tx in try tx.values(Int64.self, "SELECT DISTINCT attempts FROM deliveries") }
            #expect(attempts == [1])
        }
    }

    @Test func theMailInstanceIsMadeOnce() async throws {
        try await migratedStore { store in
            let names = try await concurrently(5) { index in
                try store.writeTransaction { tx in try tx.mailInstance(proposing: "instance-\(index)") }
            }
            let first = try #require(names.first ?? nil)
            #expect(names.allSatisfy { $0 == first }, "\(names)")
            #expect(try await write(store) { tx in try tx.mailInstance(proposing: "another") } == first)
        }
    }

    @Test func emailConfirmationsReplaceCountAndDelete() async throws {
        try await migratedStore { store in
            let now = Self.now
            let anna = try await write(store) { tx in try Self.client(tx, "anna") }
            #expect(try await read(store) { tx in try tx.emailConfirmation(ofClient: anna) } == nil)
            try await write(store) { tx in
                try tx.replaceEmailConfirmation(ofClient: anna, codeHash: "c1", expiresAt: now.addingTimeInterval(0.5))
                try tx.countWrongEmailCode(ofClient: anna)
                try tx.countWrongEmailCode(ofClient: anna)
            }
            #expect(try await read(store) { tx in try tx.emailConfirmation(ofClient: anna) }
                    == EmailConfirmation(codeHash: "c1", expiresAt: now, wrongAttempts: 2))
            try await write(store) { tx in
                try tx.replaceEmailConfirmation(ofClient: anna, codeHash: "c2", expiresAt: now.addingTimeInterval(900))
            }
            #expect(try await read(store) { tx in try tx.emailConfirmation(ofClient: anna) }
                    == EmailConfirmation(codeHash: "c2", expiresAt: now.addingTimeInterval(900), wrongAttempts: 0))
            try await write(store) { tx in try tx.deleteEmailConfirmation(ofClient: anna) }
            #expect(try await read(store) { tx in try tx.emailConfirmation(ofClient: anna) } == nil)
        }
    }
}
