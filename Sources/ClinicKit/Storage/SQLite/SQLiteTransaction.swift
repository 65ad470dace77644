import Foundation
import GRDB

/// The SQLite store's transaction: the seam's operations over GRDB's `Database`, one file per
/// area (`SQLiteTransaction+Area.swift`). Made only by `DatabaseManager.reading`/`writing`
/// (and the forwarding overloads of functions not yet moved behind the seam), on the thread
/// GRDB runs the transaction on.
struct SQLiteTransaction: StoreWriting {
    let db: Database
    /// Nil only in the forwarding overloads of static functions, whose operations need no manager.
    let manager: DatabaseManager?

    var personalDataKey: PersonalDataKey? { manager?.personalDataKey }
}

extension DatabaseManager: ClinicStore {
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

    /// The seam's transaction over a `Database` GRDB gave an unconverted caller (the
    /// forwarding overloads; gone once every caller is converted).
    func transaction(_ db: Database) -> SQLiteTransaction { SQLiteTransaction(db: db, manager: self) }
}
