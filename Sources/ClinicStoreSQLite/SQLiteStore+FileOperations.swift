import ClinicKit
import Foundation

// The operator's file operations (`StoreFileOperations`): what `ClinicSystem` offers on this
// store only (backup, restore, key rotation, migrations on demand).

extension SQLiteStore: StoreFileOperations {
    public func backupVerified(to path: String) throws -> Int {
        try backup(to: path)
        return try verifyBackup(at: path)
    }

    public func restoreBackup(from path: String, keepingAside aside: String) throws -> Int {
        try restore(from: path, keepingAside: aside)
        return try currentVersion()
    }

    public func appointmentsMovedByThisRunsZoneChange() throws -> [ZoneChangedAppointment] {
        guard migrationsRun.contains(Self.zoneVersion) else { return [] }
        return try appointmentsAfterZoneChanges()
    }

    /// `admin check` of the database file at `path`, without opening it as a system (a file too
    /// damaged to open still gets its report).
    public static func check(path: String, migrations: [Migration]) -> CheckReport {
        check(path: path, runner: MigrationRunner(migrations: migrations))
    }
}
