import ClinicKit
@testable import ClinicStoreSQLite
import ClinicTestPostgres
@testable import ClinicStorePostgres
import GRDB
import NIOConcurrencyHelpers
import Foundation
import PostgresNIO
import Testing

/// The storage seam's synchronous transaction bodies on PostgreSQL (`blockingTransaction`):
/// run from threads of their own, as the server's work pool and the CLI run them.
@Suite struct BlockingTransactionTests {
    /// Many threads book one slot of one doctor at once, each the way the rules do it (look
    /// whether the doctor is free, then insert): exactly one succeeds, every other is told
    /// `slot_taken` — by the look when the winner had committed, by the exclusion constraint
    /// when they raced past it — and the doctor holds one active appointment.
    @Test func racingBookingsOfOneSlotGiveOneAppointment() async throws {
        let migrations = try TestPostgres.migrations()
        // A connection for each of the 24 racers: the race is between transactions, not for
        // the pool (on a loaded machine 16 racers waiting for 8 connections outwaited the
        // lease's bound and were `busy`, CI of 2af5930).
        try await TestPostgres.withStore(maximumConnections: 24) { store, _ in
            try await store.migrate(migrations)
            let ids = try await store.transaction { connection, logger in try await PostgresStoreTests.doctorAndClients(connection, logger) }
            let patients: [Int64] = try await onOwnThread {
                try store.blockingTransaction { connection in
                    try (0..<24).map { index in
                        let login = "racer\(index)"
                        let rows = try connection.query("""
                            INSERT INTO clients (login, login_key, password_hash, name, surname, street, house, city, created_at)
                            VALUES (\(login), \(login), 'x', 'N', 'S', 'Main', '1', 'Reno', now()) RETURNING id
                            """).rows
                        guard let id = try rows.first?.decode(Int64.self) else { throw ClinicError(.internalError, .internalError, "no id") }
                        return id
                    }
                }
            }
            let outcomes = try await withThrowingTaskGroup(of: ClinicError.Code?.self) { group in
                for patient in patients {
                    group.addTask {
                        try await onOwnThread {
                            do {
                                try store.blockingTransaction { connection in
                                    let busy = try connection.query("""
                                        SELECT EXISTS (SELECT 1 FROM appointments WHERE doctor_id = \(ids.doctor)
                                            AND status IN ('scheduled', 'confirmed', 'arrived', 'in_progress')
                                            AND starts_at < '2030-01-07 10:30Z'::timestamptz AND ends_at > '2030-01-07 10:00Z'::timestamptz)
                                        """).rows.first?.decode(Bool.self) ?? true
                                    if busy { throw ClinicError(.slotTaken, .slotTaken) }
                                    try connection.query("""
                                        INSERT INTO appointments (client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at,
                                                                  ends_at, created_at, updated_at)
                                        VALUES (\(patient), \(ids.clinic), \(ids.department), \(ids.doctor), 'Dr',
                                                '2030-01-07 10:00Z'::timestamptz, '2030-01-07 10:30Z'::timestamptz, now(), now())
                                        """)
                                }
                                return nil
                            } catch let error as ClinicError {
                                return error.code
                            }
                        }
                    }
                }
                var codes: [ClinicError.Code?] = []
                for try await code in group { codes.append(code) }
                return codes
            }
            #expect(outcomes.count == patients.count)
            #expect(outcomes.filter { $0 == nil }.count == 1, "exactly one booking: \(outcomes)")
            #expect(outcomes.compactMap { $0 }.allSatisfy { $0 == .slotTaken }, "\(outcomes)")
            let active = try await onOwnThread {
                try store.blockingTransaction { connection in
                    try connection.query("SELECT count(*) FROM appointments WHERE doctor_id = \(ids.doctor)").rows.first?.decode(Int64.self)
                }
            }
            #expect(active == 1)
        }
    }

    /// A body that throws leaves nothing behind, and the connection goes back to the pool
    /// usable: the next transaction on a one-connection pool works.
    @Test func aThrowingBodyRollsBackAndGivesTheConnectionBack() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore(maximumConnections: 1) { store, _ in
            try await store.migrate(migrations)
            let thrown = try await onOwnThread { () -> Bool in
                do {
                    try store.blockingTransaction { connection in
                        try connection.query("INSERT INTO settings (key, value) VALUES ('test.kept', 'no')")
                        throw ClinicError(.slotTaken, .slotTaken)
                    }
                    return false
                } catch let error as ClinicError where error.code == .slotTaken {
                    return true
                }
            }
            #expect(thrown)
            let counts = try await onOwnThread {
                try (0..<20).map { _ in
                    try store.blockingTransaction { connection in
                        try connection.query("SELECT count(*) FROM settings WHERE key = 'test.kept'").rows.first?.decode(Int64.self)
                    }
                }
            }
            #expect(counts.allSatisfy { $0 == 0 }, "\(counts)")
        }
    }

    /// Every session has the store's limits, and a wait past one ends the transaction as
    /// `busy` (here a lock another transaction holds, with the limit shortened for the test).
    @Test func aLockWaitPastTheLimitIsBusy() async throws {
        try await TestPostgres.withStore { store, _ in
            let limits = try await onOwnThread {
                try store.blockingTransaction { connection in
                    try ["lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout"].map { name in
                        try connection.query(PostgresQuery(unsafeSQL: "SHOW " + name)).rows.first?.decode(String.self) ?? ""
                    }
                }
            }
            #expect(limits == ["30s", "2min", "2min"])
            let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            async let holder: Void = onOwnThread {
                try store.blockingTransaction { connection in
                    try connection.query("SELECT pg_advisory_xact_lock(4242)")
                    holding.signal()
                    _ = release.wait(timeout: .now() + 60)
                }
            }
            let refused = try await onOwnThread { () -> ClinicError? in
                holding.wait()
                defer { release.signal() }
                do {
                    try store.blockingTransaction { connection in
                        try connection.query("SET LOCAL lock_timeout = '200ms'")
                        try connection.query("SELECT pg_advisory_xact_lock(4242)")
                    }
                    return nil
                } catch let error as ClinicError {
                    return error
                }
            }
            try await holder
            #expect(refused?.code == .busy && refused?.key == .databaseBusy, "\(String(describing: refused))")
        }
    }

    /// A violated constraint surfaces as the domain's error, decided by SQLSTATE and the
    /// constraint's name (here the logins' unique constraint: `login_taken`).
    @Test func aConstraintViolationIsTheDomainsError() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            let code = try await onOwnThread { () -> ClinicError.Code? in
                do {
                    try store.blockingTransaction { connection in
                        for _ in 0..<2 {
                            try connection.query("""
                                INSERT INTO clients (login, login_key, password_hash, name, surname, street, house, city, created_at)
                                VALUES ('anna', 'anna', 'x', 'N', 'S', 'Main', '1', 'Reno', now())
                                """)
                        }
                    }
                    return nil
                } catch let error as ClinicError {
                    return error.code
                }
            }
            #expect(code == .loginTaken)
        }
    }

    /// Cells as SQLite holds them, to the edges: instants round down (before 1970 too), and
    /// ±infinity, which an operator may write, is PostgreSQL's word, refused by the models'
    /// readers, never an overflow that stops the process.
    @Test func cellsAtTheEdges() async throws {
        try await TestPostgres.withStore { store, _ in
            let cells = try await onOwnThread { () -> (texts: [String?], numbers: [Int64?], infinityIsAnInstant: Bool) in
                try store.readTransaction { transaction in
                    let row = try #require(try transaction.rows("""
                        SELECT '-infinity'::timestamptz AS a, 'infinity'::timestamptz AS b, '-infinity'::date AS c,
                               '1969-12-31 23:59:59.5Z'::timestamptz AS d, '2000-01-01 00:00:00.999Z'::timestamptz AS e,
                               '1999-12-31'::date AS f
                        """).first as StoredRowValues?)
                    return (["a", "b", "c", "f"].map { try? row.decode(String.self, forColumn: $0) }, ["d", "e"].map { try? row.decode(Int64.self, forColumn: $0) },
                            (try? row.decode(Int64.self, forColumn: "a")) != nil) // the models' instant reader
                }
            }
            #expect(cells.texts == ["-infinity", "infinity", "-infinity", "1999-12-31"])
            #expect(cells.numbers == [-1, 946_684_800])
            #expect(!cells.infinityIsAnInstant)
        }
    }
}

/// A serialization failure (SQLSTATE 40001) runs the transaction again; past the attempts
/// it is `busy`.
@Suite struct TransactionRetryTests {
    final class Count: @unchecked Sendable {
        let lock = NSLock(); var value = 0
        func next() -> Int { lock.withLock { value += 1; return value } }
    }

    @Test func aSerializationFailureIsRetriedThenBusy() async throws {
        try await TestPostgres.withStore { store, _ in
            let runs = Count()
            let result = try await store.transaction(attempts: 3) { connection, logger in
                if runs.next() < 3 {
                    try await connection.query("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$", logger: logger)
                }
                return "done"
            }
            #expect(result == "done" && runs.value == 3)
            let always = Count()
            let error = await clinicError {
                _ = try await store.transaction(attempts: 2) { connection, logger in
                    _ = always.next()
                    try await connection.query("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$", logger: logger)
                    return 0
                }
            }
            #expect(error?.code == .busy && always.value == 2)
        }
    }
}
