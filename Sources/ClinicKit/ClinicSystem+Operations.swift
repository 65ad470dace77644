import Foundation

// The operator's use cases and what a server builds on the store, through `ClinicSystem`, so
// that no front calls the store (`DatabaseManager`) itself: the fronts decode, call one of
// these, and encode.

extension ClinicSystem {
    /// The SQLite database, for an operation that is a file's (`store_unsupported` on another store).
    func sqliteDatabase() throws -> DatabaseManager {
        guard let sqlite else { throw ClinicError(.storeUnsupported, .storeOperationUnsupported) }
        return sqlite
    }

    /// Moves the schema to `version` (default: the newest); the versions that ran.
    public func migrate(to version: Int? = nil) throws -> [Int] { try sqliteDatabase().migrate(to: version) }

    /// The schema version of the database.
    public func schemaVersion() throws -> Int { try database.schemaStatus().current }

    /// For a server's readiness: the schema version of the database and the newest this program has.
    public func schemaStatus() throws -> (current: Int, latest: Int) { try database.schemaStatus() }

    /// An online backup to a new file, then verified (opened, checked, its version read):
    /// returns that version.
    public func backup(to path: String) throws -> Int {
        let sqlite = try sqliteDatabase()
        try sqlite.backup(to: path)
        return try sqlite.verifyBackup(at: path)
    }

    /// Replaces the database with a backup, the current file kept at `aside`; returns the
    /// restored schema version.
    public func restore(from path: String, keepingAside aside: String) throws -> Int {
        let sqlite = try sqliteDatabase()
        try sqlite.restore(from: path, keepingAside: aside)
        return try sqlite.currentVersion()
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
    public func rotateKey() throws -> Int { try sqliteDatabase().rotateKey() }

    /// A secret every server of this database shares (created on first use), by name.
    public func sharedSecret(_ name: String) throws -> [UInt8] { try database.sharedSecret(name) }

    /// The writer that commits many changes in one transaction (a server's bookings).
    public func makeGroupCommitter(maximumBatch: Int, report: @escaping @Sendable (GroupCommitter.BatchReport) -> Void = { _ in }) -> GroupCommitter {
        GroupCommitter(database: database, maximumBatch: maximumBatch, report: report)
    }

    /// Idempotency keys' stored responses, shared by every server of this database.
    public func makeIdempotencyStore() -> IdempotencyStore { IdempotencyStore(database: database) }
}

extension ClinicSystem {
    /// When opening this database just ran the migration that recomputed clinic zones: the
    /// upcoming appointments booked before their clinic's zone changed (staff should tell
    /// those patients the new local time). Empty otherwise.
    public func appointmentsMovedByThisRunsZoneChange() throws -> [ZoneChangedAppointment] {
        guard let sqlite, sqlite.migrationsRun.contains(DatabaseManager.zoneVersion) else { return [] }
        return try sqlite.appointmentsAfterZoneChanges()
    }

    /// `admin check` of the database file at `path`, without opening it as a system (a file too
    /// damaged to open still gets its report).
    public static func check(path: String, migrations: [Migration]) -> CheckReport {
        DatabaseManager.check(path: path, runner: MigrationRunner(migrations: migrations))
    }
}
