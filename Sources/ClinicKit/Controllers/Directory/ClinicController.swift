import Foundation
import GRDB

public struct ImportReport: Sendable, Equatable {
    public var inserted = 0
    public var updated = 0
    /// Rows left out under `skipInvalid`.
    public var skipped: [ImportProblem] = []
    /// Clinics that received demo departments, doctors and hours.
    public var demoFilled = 0
    /// HIFLD rows left out as CLOSED.
    public var closed = 0
}

/// A clinic and how far it is from the point asked about.
public struct NearbyClinic: Sendable, Equatable {
    public let clinic: Clinic
    /// Great-circle distance in metres.
    public let distance: Double
}

/// What to look for around a point.
public struct NearestQuery: Sendable, Equatable {
    public var limit: Int
    public var pediatricOnly: Bool
    public var hospitalOnly: Bool
    /// A specialization key or its English or Russian name; nil for any.
    public var specialization: String?
    public var withinKilometres: Double?

    public static let maximumLimit = 100

    public init(limit: Int = 1, pediatricOnly: Bool = false, hospitalOnly: Bool = false,
                specialization: String? = nil, withinKilometres: Double? = nil) {
        self.limit = limit
        self.pediatricOnly = pediatricOnly
        self.hospitalOnly = hospitalOnly
        self.specialization = specialization
        self.withinKilometres = withinKilometres
    }

    /// `invalid_input` unless the limit is 1 to `maximumLimit` and the radius finite and not negative.
    public func validate() throws {
        try Self.checkLimit(limit)
        if let radius = withinKilometres, !(radius.isFinite && radius >= 0) {
            throw ClinicError.invalid(.radiusInvalid, String(radius))
        }
    }

    /// `invalid_input` unless 1 ≤ `limit` ≤ `maximumLimit`.
    public static func checkLimit(_ limit: Int) throws {
        guard (1...maximumLimit).contains(limit) else {
            throw ClinicError.invalid(.limitBetween, String(limit), "1", String(maximumLimit))
        }
    }
}

/// The UML's `ClinicController`: the clinic directory and the nearest-clinic search.
public final class ClinicController: Sendable {
    let database: DatabaseManager
    let zones: (any ZoneResolver)?
    /// Built on the first search; built again when the directory's version changed (this
    /// process or another one changed the clinics). With it, the clinics themselves when the
    /// directory is small enough to keep (a search then reads only the version).
    private let finderCache = LockedBox<Directory?>(nil)
    struct Directory: Sendable {
        let finder: NearestClinicFinder
        let version: Int64
        let clinics: [Int64: Clinic]?
    }
    /// Directories up to this many clinics are kept in memory with the finder (7,146 by
    /// default, a few MB); larger ones are read per search.
    static let keptClinics = 50_000

    public init(database: DatabaseManager, zones: (any ZoneResolver)? = nil) {
        self.database = database
        self.zones = zones
    }

    /// The finder over the clinics table, built once.
    public func finder() throws -> NearestClinicFinder { try directory().finder }

    func directory() throws -> Directory {
        let version = try database.read { db in try Self.directoryVersion(db) }
        if let current = finderCache.withLock({ $0 }), current.version == version { return current }
        return try finderCache.withLock { cached in
            if let cached, cached.version == version { return cached }
            // The version is read again in the transaction that reads the clinics.
            let directory = try database.read { db -> Directory in
                let finder = try NearestClinicFinder.load(db)
                let clinics = finder.count <= Self.keptClinics
                    ? Dictionary(try Clinic.fetchAll(db).map { ($0.id ?? 0, $0) }, uniquingKeysWith: { first, _ in first }) : nil
                return Directory(finder: finder, version: try Self.directoryVersion(db), clinics: clinics)
            }
            cached = directory
            return directory
        }
    }

    /// The directory's version (migration 8), 0 before it.
    static func directoryVersion(_ db: Database) throws -> Int64 {
        do {
            return try Int64.fetchOne(db.cachedStatement(sql: "SELECT version FROM directory_version WHERE id = 1")) ?? 0
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            // Before migration 8 there is no such table; any other error is the error.
            if try db.tableExists("directory_version") { throw error }
            return 0
        }
    }

    /// The nearest clinics to a point that match the query, nearest first.
    public func nearest(to point: Coordinate, _ query: NearestQuery = NearestQuery()) throws -> [NearbyClinic] {
        try query.validate()
        var filter = NearestClinicFinder.Filter(pediatricOnly: query.pediatricOnly, hospitalOnly: query.hospitalOnly,
                                                withinMeters: query.withinKilometres.map { $0 * 1000 })
        if let specialization = query.specialization {
            let key = Specialization.key(for: specialization)
            filter.clinicIds = Set(try database.read { db in
                let ids = try Int64.fetchAll(db, sql: "SELECT DISTINCT clinic_id FROM departments WHERE specialization = ?",
                                             arguments: [key])
                if ids.isEmpty { _ = try Specialization.requireKnown(specialization, db) }
                return ids
            })
        }
        let directory = try directory()
        let matches = try directory.finder.nearest(to: point, limit: query.limit, filter: filter)
        let clinics = try directory.clinics ?? database.read { db in
            try Dictionary(Clinic.fetchAll(db, keys: matches.map(\.clinicId)).map { ($0.id ?? 0, $0) },
                           uniquingKeysWith: { first, _ in first })
        }
        return matches.compactMap { match in clinics[match.clinicId].map { NearbyClinic(clinic: $0, distance: match.distance) } }
    }

    /// A clinic's time zone comes from where it is: the time-zone boundaries at its point
    /// (`ZoneFinder`), whatever the import file says. Only without zone data (a library used
    /// without Data/) is the file's zone used, else the state's usual zone (`ZoneApproximation`).
    func makeClinic(_ input: ClinicInput) throws -> Clinic {
        var input = input
        if let zones { input.timeZone = try zones.timeZone(at: input.coordinate) }
        return input.makeClinic()
    }

    /// Adds one clinic. Its external id must be new.
    public func addClinic(_ input: ClinicInput) throws -> Clinic {
        if let problem = input.problem() { throw ClinicError(.invalidInput, problem.key, arguments: problem.arguments) }
        let clinic = try database.write { db in
            if try Clinic.filter(Column("external_id") == input.externalId).fetchCount(db) > 0 {
                throw ClinicError.invalid(.clinicExists, input.externalId)
            }
            return try database.addClinic(db, makeClinic(input))
        }
        finderCache.withLock { $0 = nil }
        return clinic
    }

    public func getAllClinics(_ filter: ClinicFilter = ClinicFilter()) throws -> [Clinic] {
        if let limit = filter.limit, limit < 1 { throw ClinicError.invalid(.limitRange, String(limit)) }
        return try database.read { db in try database.getAllClinics(db, filter) }
    }

    /// One page of the directory in the order (name, id), `limit` long (1 to 100).
    public func clinicsPage(city: String? = nil, limit: Int, cursor: String?) throws -> Page<Clinic> {
        try Page<Clinic>.checkLimit(limit)
        let after = try cursor.map(PagePosition.init(cursor:))
        let found = try getAllClinics(ClinicFilter(city: city, limit: limit + 1, after: after))
        let items = Array(found.prefix(limit))
        let next = found.count > limit ? items.last.map { PagePosition(key: $0.name, id: $0.id ?? 0).cursor } : nil
        return Page(items: items, nextCursor: next)
    }

    public func getClinicById(_ id: Int64) throws -> Clinic {
        guard let clinic = try database.read({ db in try database.getClinicById(db, id) }) else {
            throw ClinicError(.notFound, .clinicNotFound, String(id))
        }
        return clinic
    }

    /// Imports a directory file: all or nothing unless `skipInvalid`, idempotent by external
    /// id (a known id updates its clinic, a new one inserts). With `demo`, clinics left
    /// without departments get the demo ones. One transaction.
    public func importClinics(_ data: Data, format: ClinicDirectory.Format = .project, skipInvalid: Bool = false,
                              demo: Bool = false, progress: ((Int, Int) -> Void)? = nil,
                              alsoInTransaction: ((Database) throws -> Void)? = nil) throws -> ImportReport {
        let parsed = try ClinicDirectory.parse(data, format: format)
        if !parsed.problems.isEmpty && !skipInvalid {
            throw ClinicError(.invalidInput, .importRejected,
                              arguments: [String(parsed.problems.count)], problems: parsed.problems)
        }
        // Zones first, outside the write transaction: it may read the gazetteer.
        let clinics = try parsed.clinics.map { try makeClinic($0) }
        defer { finderCache.withLock { $0 = nil } }
        let total = demo ? 2 * clinics.count : clinics.count
        return try database.write { db in
            var report = ImportReport()
            report.skipped = parsed.problems
            report.closed = parsed.closed
            let existing = try Dictionary(
                Row.fetchAll(db, sql: "SELECT external_id, id, time_zone FROM clinics").map { row -> (String, (Int64, String)) in
                    (try row.value("external_id", in: "clinics"),
                     (try row.value("id", in: "clinics"), try row.value("time_zone", in: "clinics")))
                }, uniquingKeysWith: { first, _ in first })
            let now = Date()
            for (index, prepared) in clinics.enumerated() {
                var clinic = prepared
                if let (id, zone) = existing[clinic.externalId] {
                    clinic.id = id
                    try clinic.update(db)
                    report.updated += 1
                    // A clinic that moved zone (it moved, or the boundaries did): its booked
                    // appointments are listed by `admin check`.
                    if zone != clinic.timeZone {
                        try DatabaseManager.recordZoneChange(db, clinicId: id, from: zone, to: clinic.timeZone, at: now)
                    }
                } else {
                    try clinic.insert(db)
                    report.inserted += 1
                }
                if let progress, index % 500 == 0 { progress(index, total) }
            }
            if demo {
                // The demo data is the second half of the work.
                report.demoFilled = try DemoDirectory.fill(db, progress: progress.map { progress in
                    { done, count in progress(clinics.count + done * clinics.count / max(count, 1), total) }
                })
            }
            progress?(total, total)
            try alsoInTransaction?(db)
            return report
        }
    }

    /// The number of clinics in the directory.
    public func count() throws -> Int {
        try database.read { db in try Clinic.fetchCount(db) }
    }

}

/// A clinic as the web map draws it.
public struct MapClinic: Sendable, Equatable {
    public let id: Int64
    public let name: String
    public let lat: Double
    public let lon: Double
    public let isPediatric: Bool
    public let isHospital: Bool
    /// The specialization keys of its departments.
    public let specializations: [String]
}

extension ClinicController {
    /// What the map's markers depend on: the directory's version and the departments (which
    /// may change without a clinic changing). Equal versions: equal `mapClinics()`.
    public func mapVersion() throws -> String {
        try database.read { db in try Self.mapVersion(db) }
    }

    static func mapVersion(_ db: Database) throws -> String {
        let departments = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(max(id), 0) FROM departments")
        return "\(try directoryVersion(db)).\(departments?[0] as Int64? ?? 0).\(departments?[1] as Int64? ?? 0)"
    }

    /// Every clinic with its departments' specializations, by id: the web map's markers, with
    /// their `mapVersion` read in the same transaction.
    public func mapClinics() throws -> (version: String, clinics: [MapClinic]) {
        try database.read { db in
            let version = try Self.mapVersion(db)
            var specializations: [Int64: [String]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT clinic_id, specialization FROM departments ORDER BY clinic_id, specialization") {
                let clinicId: Int64 = try row.value("clinic_id", in: "departments", key: "clinic_id")
                specializations[clinicId, default: []].append(try row.value("specialization", in: "departments", key: "clinic_id"))
            }
            return (version, try Row.fetchAll(db, sql: "SELECT id, name, lat, lon, is_pediatric, is_hospital FROM clinics ORDER BY id").map { row in
                let id: Int64 = try row.value("id", in: "clinics")
                return MapClinic(id: id, name: try row.value("name", in: "clinics"), lat: try row.value("lat", in: "clinics"),
                                 lon: try row.value("lon", in: "clinics"), isPediatric: try row.value("is_pediatric", in: "clinics"),
                                 isHospital: try row.value("is_hospital", in: "clinics"), specializations: specializations[id] ?? [])
            })
        }
    }
}
