import ClinicKit
import Foundation
import GRDB

/// The SQLite store's transaction: the seam's operations over GRDB's `Database`, one file per
/// area (`SQLiteTransaction+Area.swift`). Made only by `SQLiteStore.reading`/`writing`
/// (and `transaction(_:)`, for this store's own code holding a bare `Database`: migration hooks),
/// on the thread GRDB runs the transaction on.
struct SQLiteTransaction: StoreWriting {
    let db: Database
    /// Nil only where this store's own code has no store at hand (a backup file's `check`), whose operations need none.
    let manager: SQLiteStore?

    var personalDataKey: PersonalDataKey? { manager?.personalDataKey }
}

extension SQLiteStore: ClinicStore {
    public func reading<T>(_ body: (any StoreReading) throws -> T) throws -> T {
        try read { db in try body(SQLiteTransaction(db: db, manager: self)) }
    }

    public func writing<T>(_ body: (any StoreWriting) throws -> T) throws -> T {
        try write { db in try body(SQLiteTransaction(db: db, manager: self)) }
    }

    public func truncateLog() {
        // Inside a joined write (an idempotent request, a group commit) nothing has committed yet
        // and this thread holds the writer: skipped, the next delete made outside one truncates.
        guard !isReadOnly, path != nil, JoinedTransaction.current(self) == nil else { return }
        _ = try? writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// The seam's transaction over a `Database` GRDB gave this store's own code (a migration hook).
    func transaction(_ db: Database) -> SQLiteTransaction { SQLiteTransaction(db: db, manager: self) }
}
