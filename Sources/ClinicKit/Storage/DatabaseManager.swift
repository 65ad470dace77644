import Crypto
import Foundation
import GRDB

/// Owns the database connection (a WAL `DatabasePool` for files, a `DatabaseQueue` in memory
/// for tests) and holds the UML's storage operations. Each operation takes the `Database` of
/// a transaction that the calling controller opened, so one use case is one transaction.
public final class DatabaseManager: Sendable {
    public let writer: any DatabaseWriter
    public let runner: MigrationRunner
    /// The file path, nil in memory.
    public let path: String?
    /// Orders writers across processes (file databases only).
    let writerLock: WriterLock?
    /// Where the personal-data key is kept (file databases), or the key itself (in memory).
    let keyFile: KeyFile?
    let cachedKey: LockedBox<SymmetricKey?>
    /// Where the audit trail's key is kept (file databases, `<database>.audit-key`), the key
    /// last loaded, and, in memory, the key itself (see `AuditKey`).
    let auditKeyFile: KeyFile?
    let cachedAuditKey = LockedBox<AuditKey?>(nil)
    let memoryAuditKey = LockedBox<AuditKey?>(nil)
    /// Opened read-only because the file may not be written by this user: reads work, every
    /// write is refused with `databaseReadOnly` before it starts.
    public let isReadOnly: Bool

    /// Clinic time zones from where clinics are, for the migration that recomputes them.
    let zones: (any ZoneResolver)?
    /// The versions this process migrated, up or down, in the order they ran (the front tells
    /// about some of them).
    public var migrationsRun: [Int] { ran.withLock { $0 } }
    private let ran = LockedBox<[Int]>([])

    init(writer: any DatabaseWriter, runner: MigrationRunner, path: String?, key: SymmetricKey? = nil, readOnly: Bool = false,
         zones: (any ZoneResolver)? = nil) {
        self.zones = zones
        self.writer = writer
        self.runner = runner
        self.path = path
        isReadOnly = readOnly
        // A database opened read-only never writes, and must not create files beside itself.
        writerLock = readOnly ? nil : path.flatMap { WriterLock(path: $0 + ".lock") }
        keyFile = path.map { KeyFile(databasePath: $0) }
        auditKeyFile = path.map { AuditKey.file(databasePath: $0) }
        cachedKey = LockedBox(key)
    }

    static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .callback(Self.retryWhileBusy)
        return configuration
    }

    /// How long a command waits for another one's write to finish before it reports `busy`.
    public static let busyLimit: TimeInterval = 5

    /// SQLite's own busy timeout sleeps in steps of up to 100 ms, which under contention left
    /// the lock idle most of the time (8 writers: 219 bookings/s). This retries after 50 to 250
    /// microseconds, at random so that waiting processes do not wake in step, until
    /// `busyLimit` has passed by the clock (sleeps overrun, so counting them would wait longer);
    /// then SQLITE_BUSY surfaces and is reported as `busy`. A wait runs on one thread: its start
    /// is kept in that thread's dictionary.
    static let retryWhileBusy: Database.BusyCallback = { retries in
        let now = ProcessInfo.processInfo.systemUptime
        let key = "ClinicKit.busySince"
        if retries == 0 { Thread.current.threadDictionary[key] = now }
        let since = Thread.current.threadDictionary[key] as? TimeInterval ?? now
        usleep(UInt32.random(in: 50...250))
        return now - since < busyLimit
    }

    /// Opens (creating it and its folder if needed) the database file at `path`. With
    /// `migrate`, brings the schema to the latest version; without, only checks that the
    /// applied migrations are known and unchanged.
    public static func open(path: String, migrations: [Migration], migrate: Bool = true,
                            zones: (any ZoneResolver)? = nil) throws -> DatabaseManager {
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            // Say which part of the path is in the way, not Foundation's error domain and code.
            var blocker = url.deletingLastPathComponent()
            var reason = (error as NSError).localizedFailureReason ?? error.localizedDescription
            while blocker.path != "/" {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: blocker.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                    reason = blocker.path + " is a file, not a folder"
                    break
                }
                blocker.deleteLastPathComponent()
            }
            throw ClinicError(.storage, .databaseUnavailable, path, reason)
        }
        // Created private before SQLite opens it: it holds password hashes and personal data.
        // SQLite gives its -wal and -shm files the same mode.
        if !FileManager.default.fileExists(atPath: path) {
            let descriptor = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor >= 0 { close(descriptor) }
        }
        // A file this user may only read is opened read-only: reading commands work on it.
        let readOnly = access(path, W_OK) != 0 && (errno == EACCES || errno == EROFS)
        try makePrivate(path, refusing: !readOnly)
        let pool: DatabasePool
        do {
            var configuration = configuration()
            configuration.readonly = readOnly
            pool = try DatabasePool(path: path, configuration: configuration)
            // A commit is on disk when it returns, power loss included. DatabasePool sets
            // NORMAL on its writer while opening (after `prepareDatabase`), so this comes after.
            if !readOnly { try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") } }
        } catch {
            throw damaged(error, path) ?? ClinicError(.storage, .databaseUnavailable, path, Self.describe(error))
        }
        // Again now that SQLite has made its files (through a link, it made them at the target).
        try makePrivate(path, refusing: !readOnly)
        let manager = DatabaseManager(writer: pool, runner: MigrationRunner(migrations: migrations), path: path, readOnly: readOnly,
                                      zones: zones)
        do {
            try manager.prepareSchema(migrate: migrate)
        } catch {
            throw damaged(error, path) ?? error
        }
        return manager
    }

    /// `databaseDamaged` for SQLite's "malformed" and "not a database", which name the file
    /// as what is wrong; nil for any other error.
    static func damaged(_ error: Error, _ path: String) -> ClinicError? {
        guard let error = error as? DatabaseError, [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) else { return nil }
        return ClinicError(.storage, .databaseDamaged, path, describe(error))
    }

    /// The database, its `-wal` and `-shm` files are readable by their owner only, whatever
    /// mode a file that existed before had (an empty file made with the default 0644 would
    /// otherwise fill with password hashes and personal data readable by all). Through a
    /// symbolic link, the files are the target's (SQLite keeps `-wal` and `-shm` beside the
    /// file it resolves to). A file others may read that this user cannot make private is
    /// refused when this user would write to it (`refusing`); one it may only read is left as
    /// its owner made it.
    static func makePrivate(_ path: String, refusing: Bool) throws {
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        for file in [real, real + "-wal", real + "-shm"] {
            var info = stat()
            guard stat(file, &info) == 0, info.st_mode & 0o077 != 0 else { continue }
            if chmod(file, info.st_mode & 0o700) != 0 && refusing {
                throw ClinicError(.storage, .databaseInsecure, file)
            }
        }
    }

    /// A fresh in-memory database at the latest schema, for tests; its personal-data key is
    /// `key` (a new random one by default).
    public static func inMemory(migrations: [Migration], key: SymmetricKey = SymmetricKey(size: .bits256),
                                zones: (any ZoneResolver)? = nil) throws -> DatabaseManager {
        let queue = try DatabaseQueue(configuration: configuration())
        let manager = DatabaseManager(writer: queue, runner: MigrationRunner(migrations: migrations), path: nil, key: key,
                                      zones: zones)
        try manager.prepareSchema(migrate: true)
        return manager
    }

    /// Checks the applied migrations; with `migrate`, applies the missing ones. A database
    /// already at the latest version is only read: commands that do not write never wait for
    /// the write lock.
    func prepareSchema(migrate: Bool) throws {
        let version = try mapErrors { try read { db in try runner.verifiedVersion(db) } }
        guard version < runner.latestVersion else { return }
        // This program cannot read an older schema, and cannot move a read-only one.
        if isReadOnly { throw ClinicError(.storage, .databaseReadOnlyOutdated, path ?? "memory") }
        guard migrate else { return }
        try self.migrate()
    }

    /// The version whose migration moved personal data into `clients.personal`.
    static let encryptionVersion = 4
    /// The version after which every clinic's `city_key` is folded again (`Clinic.key(forCity:)`).
    static let cityKeyVersion = 5
    /// The version after which every clinic's zone is recomputed from the boundaries.
    public static let zoneVersion = 7
    /// The version that creates the audit trail (a new, empty one: see `setAsideDroppedAuditKey`).
    static let auditVersion = 10

    /// Moves the schema to `version` (default: the latest) in one transaction, under the
    /// writer lock like every other write.
    @discardableResult
    public func migrate(to version: Int? = nil) throws -> [Int] {
        try checkWritable()
        guard let writerLock else { return try migrateHoldingLock(to: version) }
        return try writerLock.withLock(limit: Self.busyLimit) { try migrateHoldingLock(to: version) }
    }

    /// `migrate` for a caller that holds the writer lock already (a flock taken twice by one
    /// process would be released by the inner unlock).
    @discardableResult
    func migrateHoldingLock(to version: Int? = nil) throws -> [Int] {
        let applied = try mapErrors {
            try runner.migrate(writer, to: version,
                               afterUp: [Self.encryptionVersion: { db in try self.sealPlainRows(db) },
                                         Self.cityKeyVersion: { db in try Self.refoldCityKeys(db) },
                                         Self.zoneVersion: { db in try self.recomputeZones(db, now: Date()) },
                                         Self.auditVersion: { db in try self.setAsideDroppedAuditKey(db) }],
                               beforeDown: [Self.encryptionVersion: { db in try self.openAllRows(db) }])
        }
        ran.withLock { $0 += applied }
        return applied
    }

    /// Recomputes every clinic's city key with today's folding.
    static func refoldCityKeys(_ db: Database) throws {
        let update = try db.makeStatement(sql: "UPDATE clinics SET city_key = ? WHERE id = ?")
        for row in try Row.fetchAll(db, sql: "SELECT id, city FROM clinics") {
            let id = try row.decode(Int64.self, forColumn: "id"), city = try row.decode(String.self, forColumn: "city")
            let key = Clinic.key(forCity: city)
            try update.execute(arguments: [key, id])
        }
    }

    public func currentVersion() throws -> Int {
        try read { db in try runner.verifiedVersion(db) }
    }

    // MARK: Transactions

    /// For a server's readiness: the schema version of the file and the newest this program has.
    public func schemaStatus() throws -> (current: Int, latest: Int) {
        (try currentVersion(), runner.latestVersion)
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
        } catch let error as ClinicError {
            throw error
        } catch let error as DatabaseError {
            throw Self.map(error)
        } catch is RowDecodingError {
            // A throwing read (`Int64.fetchOne`, `row.decode`) of a value of another type than
            // expected, not named by `Row.value(_:in:)`: a storage error too. Its own text is
            // not passed on (it lists the whole row).
            throw ClinicError(.storage, .storageFailure, "a stored value has another type than expected")
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

    /// True for a unique violation on the index over `index` (a column name). SQLite names the
    /// columns of the violated index in its message ("UNIQUE constraint failed:
    /// appointments.doctor_id, appointments.starts_at"), and that is what tells the doctor's
    /// index from the patient's.
    static func isUniqueViolation(_ error: Error, index: String) -> Bool {
        guard let error = error as? DatabaseError,
              error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY
        else { return false }
        return (error.message ?? "").contains(index)
    }

    // MARK: UML storage operations (each runs in the caller's transaction)

    /// Stores a patient with the personal fields sealed in `personal` and blank in the plain
    /// columns.
    public func addUser(_ db: Database, _ client: Client) throws -> Client {
        var stored = client
        stored.take(FieldCipher.Personal(name: "", surname: "", street: "", house: "", lat: nil, lon: nil))
        try stored.insert(db)
        try db.execute(sql: "UPDATE clients SET personal = ? WHERE id = ?",
                       arguments: [try sealingCipher(db).seal(client.personal, loginKey: client.loginKey), stored.id])
        var added = client
        added.id = stored.id
        return added
    }

    /// Rewrites a patient's row, personal fields sealed again.
    public func updateUser(_ db: Database, _ client: Client) throws {
        var stored = client
        stored.take(FieldCipher.Personal(name: "", surname: "", street: "", house: "", lat: nil, lon: nil))
        try stored.update(db)
        try db.execute(sql: "UPDATE clients SET personal = ? WHERE id = ?",
                       arguments: [try sealingCipher(db).seal(client.personal, loginKey: client.loginKey), client.id])
        // Whether to e-mail the patient is decided without opening the profile (migration 13).
        if try db.tableExists("calendar_feeds") {
            try db.execute(sql: "UPDATE clients SET email_confirmed = ? WHERE id = ?", arguments: [client.email != nil, client.id])
        }
    }

    // The look-ups on the booking path use cached statements: preparing SQL (and GRDB's query
    // generation with its authorizer) cost more than running it.

    public func getUserById(_ db: Database, _ id: Int64) throws -> Client? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM clients WHERE id = ?"), arguments: [id]).map { try opened(db, $0) }
    }

    public func getUserByLogin(_ db: Database, _ login: String) throws -> Client? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM clients WHERE login_key = ?"),
                         arguments: [Client.key(forLogin: login)]).map { try opened(db, $0) }
    }

    /// A patient by login with the personal fields left sealed (empty): what a log-in needs to
    /// check a password, so that a wrong password never depends on the key (a missing key
    /// would otherwise tell a known login from an unknown one).
    func getSealedUserByLogin(_ db: Database, _ login: String) throws -> Client? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM clients WHERE login_key = ?"),
                         arguments: [Client.key(forLogin: login)]).map { try Client(row: $0) }
    }

    /// Whether a login is taken (any case), without opening anyone's personal data.
    public func loginExists(_ db: Database, _ login: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM clients WHERE login_key = ?)"),
                          arguments: [Client.key(forLogin: login)]) ?? false
    }

    /// Whether a patient exists, without opening their personal data.
    public func clientExists(_ db: Database, _ id: Int64) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM clients WHERE id = ?)"), arguments: [id]) ?? false
    }

    /// A patient row with its personal fields opened (rows from before encryption have none).
    func opened(_ db: Database, _ row: Row) throws -> Client {
        var client = try Client(row: row)
        if let envelope = try row.value("personal", in: "clients") as Data? {
            client.take(try cipher(db).open(envelope, loginKey: client.loginKey))
        }
        return client
    }

    public func addClinic(_ db: Database, _ clinic: Clinic) throws -> Clinic {
        var clinic = clinic
        try clinic.insert(db)
        return clinic
    }

    public func getAllClinics(_ db: Database, _ filter: ClinicFilter = ClinicFilter()) throws -> [Clinic] {
        var request = Clinic.all()
        if let city = filter.city { request = request.filter(Column("city_key") == Clinic.key(forCity: city)) }
        if filter.pediatricOnly { request = request.filter(Column("is_pediatric") == true) }
        if filter.hospitalOnly { request = request.filter(Column("is_hospital") == true) }
        if let after = filter.after {
            request = request.filter(Column("name") > after.key || (Column("name") == after.key && Column("id") > after.id))
        }
        request = request.order(Column("name"), Column("id"))
        if let limit = filter.limit { request = request.limit(limit) }
        return try request.fetchAll(db)
    }

    public func getClinicById(_ db: Database, _ id: Int64) throws -> Clinic? {
        try Clinic.fetchOne(db.cachedStatement(sql: "SELECT * FROM clinics WHERE id = ?"), arguments: [id])
    }

    public func addAppointment(_ db: Database, _ appointment: Appointment) throws -> Appointment {
        var appointment = appointment
        try appointment.insert(db)
        return appointment
    }

    public func updateAppointment(_ db: Database, _ appointment: Appointment) throws {
        try appointment.update(db)
    }

    public func getAppointmentById(_ db: Database, _ id: Int64) throws -> Appointment? {
        try Appointment.fetchOne(db.cachedStatement(sql: "SELECT * FROM appointments WHERE id = ?"), arguments: [id])
    }

    public func getAppointmentsByUserId(_ db: Database, _ clientId: Int64) throws -> [Appointment] {
        try Appointment.filter(Column("client_id") == clientId)
            .order(Column("starts_at"), Column("id")).fetchAll(db)
    }

    public func addDepartment(_ db: Database, _ department: Department) throws -> Department {
        var department = department
        try department.insert(db)
        return department
    }

    public func getDepartmentsByClinicId(_ db: Database, _ clinicId: Int64) throws -> [Department] {
        try Department.filter(Column("clinic_id") == clinicId).order(Column("specialization"), Column("id")).fetchAll(db)
    }

    public func getDepartmentById(_ db: Database, _ id: Int64) throws -> Department? {
        try Department.fetchOne(db.cachedStatement(sql: "SELECT * FROM departments WHERE id = ?"), arguments: [id])
    }

    public func getDoctorsByDepartmentId(_ db: Database, _ departmentId: Int64) throws -> [Doctor] {
        // Deactivated doctors (migration 12) are not offered, booked or listed. Filtered here,
        // not in SQL: the library also runs on a database before that migration (the upgrade tests).
        try Doctor.fetchAll(db.cachedStatement(sql: "SELECT * FROM doctors WHERE department_id = ? ORDER BY id"),
                            arguments: [departmentId]).filter(\.isActive)
    }

    public func getDoctorById(_ db: Database, _ id: Int64) throws -> Doctor? {
        try Doctor.fetchOne(db.cachedStatement(sql: "SELECT * FROM doctors WHERE id = ?"), arguments: [id])
    }

    public func getWorkingHours(_ db: Database, doctorId: Int64) throws -> [WorkingHours] {
        try WorkingHours.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM working_hours WHERE doctor_id = ? ORDER BY weekday, start_minute"),
            arguments: [doctorId])
    }
}

public struct ClinicFilter: Sendable, Equatable {
    public var city: String?
    public var pediatricOnly: Bool
    public var hospitalOnly: Bool
    public var limit: Int?
    /// Only clinics after this one in the order (name, id): the next page.
    public var after: PagePosition?

    public init(city: String? = nil, pediatricOnly: Bool = false, hospitalOnly: Bool = false, limit: Int? = nil,
                after: PagePosition? = nil) {
        self.city = city
        self.pediatricOnly = pediatricOnly
        self.hospitalOnly = hospitalOnly
        self.limit = limit
        self.after = after
    }
}

/// The transaction `writeJoined` opened, for the writes made on its thread while it runs
/// (GRDB runs a write's body synchronously on the calling thread's writer queue).
enum JoinedTransaction {
    private static let key = "ClinicKit.JoinedTransaction"

    static func current(_ manager: DatabaseManager) -> Database? {
        guard let entry = Thread.current.threadDictionary[key] as? Entry, entry.manager == ObjectIdentifier(manager) else { return nil }
        return entry.db
    }

    static func with<T>(_ db: Database, for manager: DatabaseManager, _ body: () throws -> T) rethrows -> T {
        let dictionary = Thread.current.threadDictionary
        let previous = dictionary[key]
        dictionary[key] = Entry(manager: ObjectIdentifier(manager), db: db)
        defer { dictionary[key] = previous }
        return try body()
    }

    private final class Entry {
        let manager: ObjectIdentifier
        let db: Database
        init(manager: ObjectIdentifier, db: Database) { self.manager = manager; self.db = db }
    }
}
