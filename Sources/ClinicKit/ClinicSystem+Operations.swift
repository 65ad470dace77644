import Foundation

// The operator's use cases and what a server builds on the store, through `ClinicSystem`, so
// that no front calls the store itself: the fronts decode, call one of these, and encode.

/// What an operator does to a store that is one file of this program's (the SQLite store):
/// migrations run on demand, online backups, restores and key rotation. A store shared by
/// several servers (PostgreSQL) has its own tools for these (`clinic admin postgres …`,
/// pg_dump), and `ClinicSystem` answers `store_unsupported` there.
public protocol StoreFileOperations: ClinicStore {
    /// Moves the schema to `version` (default: the newest); the versions that ran.
    func migrate(to version: Int?) throws -> [Int]
    /// An online backup to a new file, then verified: returns the backup's schema version.
    func backupVerified(to path: String) throws -> Int
    /// Replaces the store with a backup, the current file kept at `aside`; the restored version.
    func restoreBackup(from path: String, keepingAside aside: String) throws -> Int
    /// The schema version of the file and the newest this program has.
    func schemaStatus() throws -> (current: Int, latest: Int)
    /// Re-encrypts every patient's personal data under a new key; how many rows.
    func rotateKey() throws -> Int
    /// When opening this store just ran the migration that recomputed clinic zones: the
    /// upcoming appointments booked before their clinic's zone changed. Empty otherwise.
    func appointmentsMovedByThisRunsZoneChange() throws -> [ZoneChangedAppointment]
}

extension ClinicSystem {
    /// The store's file operations, for an operation that is a file's (`store_unsupported` on another store).
    func fileOperations() throws -> any StoreFileOperations {
        guard let fileStore else { throw ClinicError(.storeUnsupported, .storeOperationUnsupported) }
        return fileStore
    }

    /// Moves the schema to `version` (default: the newest); the versions that ran.
    public func migrate(to version: Int? = nil) throws -> [Int] { try fileOperations().migrate(to: version) }

    /// The schema version of the database file (`store_unsupported` on another store: PostgreSQL's
    /// is `schemaStatus()` awaited).
    public func schemaVersion() throws -> Int { try fileOperations().schemaStatus().current }

    /// For a server's readiness: the schema version of the database and the newest this program
    /// has, with no thread waiting for it.
    public func schemaStatus() async throws -> (current: Int, latest: Int) { try await database.awaitedSchemaStatus() }

    /// An online backup to a new file, then verified (opened, checked, its version read):
    /// returns that version.
    public func backup(to path: String) throws -> Int {
        try fileOperations().backupVerified(to: path)
    }

    /// Replaces the database with a backup, the current file kept at `aside`; returns the
    /// restored schema version.
    public func restore(from path: String, keepingAside aside: String) throws -> Int {
        try fileOperations().restoreBackup(from: path, keepingAside: aside)
    }

    /// The audit trail checked against its key on any store, as `admin check` reports it:
    /// why it cannot be verified (`problem`), a note (a trail never keyed), and the rows that
    /// break the chain (empty when it holds).
    public func auditCheck() throws -> (problem: ClinicError?, note: ClinicError?, broken: [String]) {
        try database.reading { tx in
            let key = database.auditKeys.forChecking(tx)
            if let problem = key.problem { return (problem, key.note, []) }
            return (nil, key.note, try AuditLog.verify(tx, key: key.key, keyed: key.keyed))
        }
    }

    /// Re-encrypts every patient's personal data under a new key; how many rows.
    public func rotateKey() throws -> Int { try fileOperations().rotateKey() }

    /// A secret every server of this database shares (created on first use), by name.
    public func sharedSecret(_ name: String) async throws -> [UInt8] { try await database.sharedSecret(name) }

    /// The kept answers of idempotent requests (`Idempotency-Key`).
    public func makeIdempotencyStore() -> IdempotencyStore { IdempotencyStore(database: database) }
}

extension ClinicSystem {
    /// When opening this database just ran the migration that recomputed clinic zones: the
    /// upcoming appointments booked before their clinic's zone changed (staff should tell
    /// those patients the new local time). Empty otherwise.
    public func appointmentsMovedByThisRunsZoneChange() throws -> [ZoneChangedAppointment] {
        try fileStore?.appointmentsMovedByThisRunsZoneChange() ?? []
    }
}
