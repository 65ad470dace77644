import ClinicKit
import ClinicTestPostgres
import Foundation
import PostgresNIO
import Testing
@testable import ClinicStorePostgres

/// The hot paths' prepared statements (PostgresHotStatements.swift): prepared once per
/// connection, with the types they were first bound with, and a connection whose preparation
/// failed is not left to fail every later use.
@Suite struct HotStatementTests {
    @Test func aStatementIsPreparedOnceAndAFailedPreparationDoesNotStick() async throws {
        try await TestPostgres.withStore(maximumConnections: 1) { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            try await onOwnThread {
                let unknown = String(repeating: "c", count: 64)
                // A failed statement leaves its transaction aborted; the first use of a hot
                // statement on this connection (one connection in the pool) is then prepared
                // in it, and fails.
                #expect(throws: (any Error).self) {
                    try store.writeTransaction { tx in
                        _ = try? tx.execute("SELECT 1 / 0")
                        return try tx.signedInPatient(tokenHash: unknown)
                    }
                }
                // postgres-nio would keep that failure for the connection's life; the store
                // closed it, and the pool's next connection prepares the statement afresh.
                #expect(try store.signedInPatient(tokenHash: unknown) == nil)
                #expect(try store.signedInPatient(tokenHash: unknown) == nil)
                // The statement is prepared on the server: one entry, however often it ran.
                let prepared = try store.readTransaction { tx in
                    try tx.values(String.self, "SELECT statement FROM pg_prepared_statements")
                }
                #expect(prepared.filter { $0.contains("FROM sessions s JOIN clients c") }.count == 1, "\(prepared)")
            }
        }
    }

    @Test func aStatementBoundWithOtherTypesThanBeforeIsRefused() throws {
        let types = HotStatementTypes()
        try types.check([.int8, .text], for: "a")
        try types.check([.int8, .text], for: "a")
        #expect(types.types(of: "a") == [.int8, .text])
        #expect(throws: ClinicError.self) { try types.check([.int8, .int8], for: "a") }
        // Optional values are bound as the type they wrap, nil included.
        #expect(SignedInPatientStatement([Int64?.none, "x"]).types == [.int8, .text])
    }
}
