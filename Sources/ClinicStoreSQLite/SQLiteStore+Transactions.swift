import ClinicKit
import Crypto
import Foundation
import GRDB

// Transactions: reads, writes (with the cross-process writer lock), joined writes, and the
// mapping of SQLite's errors to ClinicError.

extension SQLiteStore {
    /// For a server's readiness: the schema version of the file and the newest this program has.
    public func schemaStatus() throws -> (current: Int, latest: Int) {
        (try currentVersion(), runner.latestVersion)
    }

    public func awaitedSchemaStatus() async throws -> (current: Int, latest: Int) {
        let runner = self.runner
        do {
            return (try await writer.read { db in try runner.verifiedVersion(db) }, runner.latestVersion)
        } catch {
            throw Self.mapped(error)
        }
    }

    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try mapErrors { try writer.read(body) }
    }

    /// One write transaction, begun IMMEDIATE so that the checks it makes hold until it
    /// commits: a concurrent writer waits (up to the busy timeout) instead of racing it.
    /// Inside `writeJoined`, on its thread, the write joins that transaction in a savepoint: it
    /// commits with it, and its own failure undoes only its own changes.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try checkWritable()
        if let joined = JoinedTransaction.current(self) {
            return try mapErrors {
                var result: T?
                try joined.inSavepoint {
                    result = try body(joined)
                    return .commit
                }
                guard let result else { throw ClinicError(.internalError, .internalError, "empty savepoint") }
                return result
            }
        }
        guard let writerLock else { return try transaction(body) }
        return try writerLock.withLock(limit: Self.busyLimit) { try transaction(body) }
    }

    /// One write transaction that the controllers' writes made inside `body` (on this thread)
    /// join: what they change and what `body` records beside it commit together or not at all
    /// (an idempotent request and its kept response).
    public func writeJoined<T>(_ body: (Database) throws -> T) throws -> T {
        try write { db in try JoinedTransaction.with(db, for: self) { try body(db) } }
    }

    /// `databaseReadOnly` for a database opened read-only: what every write checks first.
    func checkWritable() throws {
        if isReadOnly { throw ClinicError(.storage, .databaseReadOnly, path ?? "memory") }
    }

    func transaction<T>(_ body: (Database) throws -> T) throws -> T {
        try mapErrors {
            try writer.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try AuditChain.with(self, db) { try body(db) }
                    return .commit
                }
                guard let result else { throw ClinicError(.internalError, .internalError, "empty transaction") }
                return result
            }
        }
    }

    func mapErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw Self.mapped(error)
        }
    }

    /// An error of SQLite's or GRDB's as the domain's; others as they are.
    static func mapped(_ error: any Error) -> any Error {
        switch error {
        case let error as DatabaseError: map(error)
        // A throwing read (`Int64.fetchOne`, `row.decode`) of a value of another type than
        // expected, not named by `Row.value(_:in:)`: a storage error too. Its own text is not
        // passed on (it lists the whole row).
        case is RowDecodingError: ClinicError(.storage, .storageFailure, "a stored value has another type than expected")
        default: error
        }
    }

    static func map(_ error: DatabaseError) -> ClinicError {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return ClinicError(.busy, .databaseBusy)
        default:
            return ClinicError(.storage, .storageFailure, describe(error))
        }
    }

    static func describe(_ error: Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return String(describing: error)
    }

}

/// The transaction `writeJoined` opened, for the writes made inside it: a task-local value
/// (bound on the thread GRDB runs the write's body on, with or without a task), so that the
/// nested `write` of a controller called inside finds it without being handed it.
enum JoinedTransaction {
    @TaskLocal private static var entry: Entry?

    static func current(_ manager: SQLiteStore) -> Database? {
        guard let entry, entry.manager == ObjectIdentifier(manager) else { return nil }
        return entry.db
    }

    static func with<T>(_ db: Database, for manager: SQLiteStore, _ body: () throws -> T) rethrows -> T {
        try $entry.withValue(Entry(manager: ObjectIdentifier(manager), db: db), operation: body)
    }

    /// A `Database` is not `Sendable`: it is only ever used on the thread that runs the write
    /// (the value is read inside the write's own synchronous body).
    private final class Entry: @unchecked Sendable {
        let manager: ObjectIdentifier
        let db: Database
        init(manager: ObjectIdentifier, db: Database) { self.manager = manager; self.db = db }
    }
}
