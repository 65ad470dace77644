import ClinicKit
import Crypto
import Foundation
import GRDB

/// The UML's `DatabaseManager`: the name the specification's class diagram gives the one type
/// that owns the database and its storage operations. Here that is the embedded store,
/// `SQLiteStore`; PostgreSQL's is `PostgresStore`, and ClinicKit sees both as `ClinicStore`.
public typealias DatabaseManager = SQLiteStore

/// Owns the database connection (a WAL `DatabasePool` for files, a `DatabaseQueue` in memory
/// for tests) and holds the UML's storage operations (the UML's `DatabaseManager`, a typealias). Each operation takes the `Database` of
/// a transaction that the calling controller opened, so one use case is one transaction.
public final class SQLiteStore: Sendable {
    public let writer: any DatabaseWriter
    public let runner: MigrationRunner
    /// The file path, nil in memory.
    public let path: String?
    /// Orders writers across processes (file databases only).
    let writerLock: WriterLock?
    /// The personal-data key: its file (file databases, `<database>.key`), or the key itself (in memory).
    public let personalDataKey: PersonalDataKey
    var keyFile: KeyFile? { personalDataKey.file }
    var cachedKey: LockedBox<SymmetricKey?> { personalDataKey.cached }
    /// Where the audit trail's key is kept (file databases, `<database>.audit-key`), the key
    /// last loaded, and, in memory, the key itself (see `AuditKey`).
    public let auditKeys: AuditKeyRing
    /// Opened read-only because the file may not be written by this user: reads work, every
    /// write is refused with `databaseReadOnly` before it starts.
    public let isReadOnly: Bool

    /// Clinic time zones from where clinics are, for the migration that recomputes them.
    let zones: (any ZoneResolver)?
    /// The versions this process migrated, up or down, in the order they ran (the front tells
    /// about some of them).
    public var migrationsRun: [Int] { ran.current }
    private let ran = LockedBox<[Int]>([])
    /// The process's writer of awaited writes (`ClinicStore.commit`): group commit, started
    /// on first use or by `startWriters`.
    let committer = LockedBox<GroupCommitter?>(nil)

    deinit { committer.current?.stop() }

    init(writer: any DatabaseWriter, runner: MigrationRunner, path: String?, key: SymmetricKey? = nil, readOnly: Bool = false,
         zones: (any ZoneResolver)? = nil) {
        self.zones = zones
        self.writer = writer
        self.runner = runner
        self.path = path
        isReadOnly = readOnly
        // A database opened read-only never writes, and must not create files beside itself.
        writerLock = readOnly ? nil : path.flatMap { WriterLock(path: $0 + ".lock") }
        personalDataKey = PersonalDataKey(file: path.map { KeyFile(databasePath: $0) }, key: key)
        auditKeys = AuditKeyRing(file: path.map { AuditKey.file(databasePath: $0) })
    }

    static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        // GRDB's busy callback is told only the retry count; each connection gets a handler of
        // its own instead, whose wait (`BusyWait`) is the connection's.
        configuration.prepareDatabase { db in BusyWait.install(on: db) }
        return configuration
    }

    /// How long a command waits for another one's write to finish before it reports `busy`.
    public static let busyLimit: TimeInterval = 5

    /// Opens (creating it and its folder if needed) the database file at `path`. With
    /// `migrate`, brings the schema to the latest version; without, only checks that the
    /// applied migrations are known and unchanged.
    public static func open(path: String, migrations: [Migration], migrate: Bool = true,
                            zones: (any ZoneResolver)? = nil) throws -> SQLiteStore {
        let url = URL(fileURLWithPath: path)
        // The folder is made only when it is missing: every command opens the store, and
        // Foundation's attributes cost a process 2 ms of type look-ups the first time (issue 55).
        var folder = stat()
        let folderExists = stat(url.deletingLastPathComponent().path, &folder) == 0 && folder.st_mode & S_IFMT == S_IFDIR
        do {
            if !folderExists {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            }
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
            // secure_delete: what is deleted (a removed attachment, a deleted account) is
            // overwritten in the file, not left in free pages until a VACUUM.
            if !readOnly {
                try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL; PRAGMA secure_delete = ON") }
            }
        } catch {
            throw damaged(error, path) ?? ClinicError(.storage, .databaseUnavailable, path, Self.describe(error))
        }
        // Again now that SQLite has made its files (through a link, it made them at the target).
        try makePrivate(path, refusing: !readOnly)
        let manager = SQLiteStore(writer: pool, runner: MigrationRunner(migrations: migrations), path: path, readOnly: readOnly,
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
                                zones: (any ZoneResolver)? = nil) throws -> SQLiteStore {
        let queue = try DatabaseQueue(configuration: configuration())
        let manager = SQLiteStore(writer: queue, runner: MigrationRunner(migrations: migrations), path: nil, key: key,
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
    /// The version after which appointments' notes are sealed (`AppointmentNotes`).
    static let sealedNotesVersion = 18
    /// The version that gives each attachment a key of its own (`FieldCipher.newAttachmentKey`).
    static let attachmentKeysVersion = 20

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
                                         Self.auditVersion: { db in try self.setAsideDroppedAuditKey(db) },
                                         Self.sealedNotesVersion: { db in try AppointmentNotes.sealPlain(self.transaction(db)) }],
                               beforeDown: [Self.encryptionVersion: { db in try self.openAllRows(db) },
                                            Self.sealedNotesVersion: { db in try AppointmentNotes.openAll(self.transaction(db)) },
                                            Self.attachmentKeysVersion: { db in try self.unwrapAttachmentKeys(db) }])
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
}
