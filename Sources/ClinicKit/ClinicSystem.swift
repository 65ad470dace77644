import Foundation
import GRDB

/// The library's front door: one database and the controllers over it. A program opens one
/// `ClinicSystem` per process.
public final class ClinicSystem: Sendable {
    public let database: DatabaseManager
    public let resources: Resources?
    public let clients: ClientController
    public let clinics: ClinicController
    public let departments: DepartmentController
    public let appointments: AppointmentController

    public init(database: DatabaseManager, resources: Resources?, hasher: PasswordHasher = PasswordHasher(),
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.resources = resources
        clients = ClientController(database: database, hasher: hasher, now: now)
        clinics = ClinicController(database: database)
        departments = DepartmentController(database: database)
        appointments = AppointmentController(database: database, now: now)
    }

    static let initializedKey = "directory_initialized"

    public enum Initialization: String, Sendable {
        /// The embedded default directory with demo departments, doctors and hours.
        case defaultDirectory = "default"
        /// The default directory's clinics only.
        case clinicsOnly = "clinics_only"
        /// No clinics.
        case empty
    }

    /// How the directory was first filled, nil if it has not been yet.
    public func initialization() throws -> Initialization? {
        try database.read { db in
            guard let value = try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?",
                                                  arguments: [Self.initializedKey]) else { return nil }
            return Initialization(rawValue: value)
        }
    }

    /// Fills a database that has never been filled: the default directory, in one
    /// transaction, so an interrupted first run is simply done again next time.
    @discardableResult
    public func initialize(_ kind: Initialization, progress: ((Int, Int) -> Void)? = nil) throws -> ImportReport? {
        if try initialization() != nil { return nil }
        var report: ImportReport?
        if kind != .empty {
            guard let resources else { throw ClinicError(.storage, .resourcesMissing) }
            guard let data = FileManager.default.contents(atPath: resources.defaultDirectory.path) else {
                throw ClinicError(.storage, .resourcesMissing)
            }
            report = try clinics.importClinics(data, demo: kind == .defaultDirectory, progress: progress,
                                               alsoInTransaction: { db in try Self.mark(db, kind) })
        } else {
            try database.write { db in try Self.mark(db, kind) }
        }
        return report
    }

    /// Imports an operator's directory. On a database never filled, it takes the place of the
    /// default directory: the first-use mark is set in the import's own transaction, so a
    /// refused import leaves the database exactly as it was.
    public func importDirectory(_ data: Data, skipInvalid: Bool = false, demo: Bool = false) throws -> ImportReport {
        try clinics.importClinics(data, skipInvalid: skipInvalid, demo: demo, alsoInTransaction: { db in
            try db.execute(sql: "INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)",
                           arguments: [Self.initializedKey, Initialization.empty.rawValue])
        })
    }

    static func mark(_ db: Database, _ kind: Initialization) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
                       arguments: [initializedKey, kind.rawValue])
    }
}
