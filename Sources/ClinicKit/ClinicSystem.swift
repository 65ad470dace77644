import Foundation

/// The library's front door: one store and the controllers over it. A program opens one
/// `ClinicSystem` per process. The store is the embedded SQLite database (`SQLiteStore`) or
/// any other `ClinicStore` (PostgreSQL, shared by several servers).
public final class ClinicSystem: Sendable {
    public let database: any ClinicStore
    /// The store's file operations when it is one file of this program's (SQLite): backup,
    /// restore, key rotation, migrations at open; nil on another store.
    public let fileStore: (any StoreFileOperations)?
    public let resources: Resources?
    public let geocoding: GeocodingService
    public let clients: ClientController
    public let clinics: ClinicController
    public let departments: DepartmentController
    public let appointments: AppointmentController
    public let staff: StaffController
    public let outbox: Outbox
    /// Files on appointments and the conversations with the clinic (issue 28).
    public let attachments: AttachmentController
    /// Waiting for a time, and the freed times offered (issue 45).
    public let waitlist: WaitlistController
    /// Replies and delivery reports from the phone network (issue 45).
    public let texts: TextController

    /// A system over a store.
    /// - Parameters:
    ///   - store: the embedded SQLite file (ClinicStoreSQLite) or a store shared by several
    ///     servers (ClinicStorePostgres): the composition root chooses.
    ///   - resources: where Data/ is; without it there is no gazetteer and no zone data (some
    ///     tests): clinic time zones are then the import file's, else `ZoneApproximation`'s.
    ///   - remoteGeocoder: an HTTP geocoder to ask last (`CLINIC_GEOCODER_URL`), nil for none.
    ///   - codeLimits: how many confirmation codes go out and where texts may go (`CodeLimits.from(environment:)`).
    ///   - images: what decodes and writes photos again (ClinicImages' libvips); nil: photos are
    ///     refused as attachments (`unsupported_type`).
    ///   - pdfs: what checks a PDF for active content (ClinicPDF's libqpdf); nil: PDFs are
    ///     refused as attachments (`unsupported_type`).
    public init(store database: any ClinicStore, resources: Resources?, hasher: PasswordHasher = PasswordHasher(),
                remoteGeocoder: (any Geocoder)? = nil, images: (any ImageProcessing)? = nil, pdfs: (any PDFChecking)? = nil,
                codeLimits: CodeLimits = .standard, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.fileStore = database as? any StoreFileOperations
        self.resources = resources
        let gazetteer = resources.map { LazyGazetteer(data: $0.data) }
        let zones = resources.map { LazyZones(data: $0.data) }
        geocoding = GeocodingService(database: database, gazetteer: gazetteer,
                                     remote: remoteGeocoder, zones: zones, now: now)
        clinics = ClinicController(database: database, zones: zones, now: now)
        departments = DepartmentController(database: database, now: now)
        let data = resources?.data
        clients = ClientController(database: database, hasher: hasher, now: now, geocoding: geocoding, clinics: clinics,
                                   commonPasswords: { try data.map(Validator.commonPasswords(in:)) ?? [] }, codeLimits: codeLimits)
        appointments = AppointmentController(database: database, now: now)
        outbox = Outbox(database: database, textCountries: codeLimits.textCountries, now: now)
        attachments = AttachmentController(database: database, images: images, pdfs: pdfs, now: now)
        waitlist = WaitlistController(database: database, appointments: appointments, now: now)
        texts = TextController(database: database, appointments: appointments, now: now)
        staff = StaffController(database: database, hasher: hasher, now: now, appointments: appointments, waitlist: waitlist) { [clients] password, login, name, surname in
            try clients.passwordProblem(password, login: login, name: name, surname: surname)
        }
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
        try database.reading { tx in
            guard let value = try tx.setting(Self.initializedKey) else { return nil }
            return Initialization(rawValue: value)
        }
    }

    /// `initialization()` awaited (`DirectoryReadsStore.setting`).
    public func initialization() async throws -> Initialization? {
        try await database.setting(Self.initializedKey).flatMap(Initialization.init(rawValue:))
    }

    /// Fills a database that has never been filled: the default directory, in one
    /// transaction, so an interrupted first run is simply done again next time. Processes that
    /// start together on an empty database (servers on PostgreSQL) fill it once: the fill takes
    /// the directory's import lock and looks again under it; the others find it filled and
    /// return nil.
    @discardableResult
    public func initialize(_ kind: Initialization, progress: ((Int, Int) -> Void)? = nil) throws -> ImportReport? {
        if try initialization() != nil { return nil }
        guard kind != .empty else {
            try database.writing { tx in try Self.mark(tx, kind) }
            return nil
        }
        guard let resources else { throw ClinicError(.storage, .resourcesMissing) }
        guard let data = FileManager.default.contents(atPath: resources.defaultDirectory.path) else {
            throw ClinicError(.storage, .resourcesMissing)
        }
        // The import's own write joins this one, so the look and the fill are one transaction.
        return try database.writingJoined { tx -> ImportReport? in
            try tx.lockDirectoryForImport()
            if try tx.setting(Self.initializedKey) != nil { return nil }
            return try clinics.importClinics(data, demo: kind == .defaultDirectory, progress: progress,
                                             alsoInTransaction: { tx in try Self.mark(tx, kind) })
        }
    }

    /// Imports an operator's directory. On a database never filled, it takes the place of the
    /// default directory: the first-use mark is set in the import's own transaction, so a
    /// refused import leaves the database exactly as it was.
    public func importDirectory(_ data: Data, format: ClinicDirectory.Format = .project, skipInvalid: Bool = false,
                                demo: Bool = false, progress: ((Int, Int) -> Void)? = nil) throws -> ImportReport {
        try clinics.importClinics(data, format: format, skipInvalid: skipInvalid, demo: demo, progress: progress,
                                  alsoInTransaction: { tx in
            try tx.setSettingIfAbsent(Self.initializedKey, to: Initialization.empty.rawValue)
        })
    }

    static func mark(_ tx: any StoreWriting, _ kind: Initialization) throws {
        try tx.setSetting(initializedKey, to: kind.rawValue)
    }
}

/// The gazetteer, opened from Data/ the first time it is needed: a command that only measures
/// distances between coordinates never opens it.
final class LazyGazetteer: Sendable {
    let data: URL
    init(data: URL) { self.data = data }

    func load() throws -> Gazetteer { try Gazetteer.load(from: data) }
}

/// The time-zone boundaries of Data/, read the first time a zone is needed (a migration that
/// recomputes zones, an import, a geocoded place).
public final class LazyZones: ZoneResolver {
    let data: URL
    public init(data: URL) { self.data = data }

    public func load() throws -> ZoneFinder { try ZoneFinder.load(from: data) }

    public func timeZone(at point: Coordinate) throws -> String { try load().zone(at: point) }
}

/// Finds the IANA time zone at a point.
public protocol ZoneResolver: Sendable {
    func timeZone(at point: Coordinate) throws -> String
}

extension ZoneFinder: ZoneResolver {
    public func timeZone(at point: Coordinate) throws -> String { try zone(at: point) }
}
