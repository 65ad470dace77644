import Foundation

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
    /// Only hospitals a patient walks in to for an everyday visit (`Clinic.servesEveryday`): no
    /// military, psychiatric, long-term, rehabilitation or specialty ones, and a children's
    /// hospital only when `pediatricOnly` (issue 55). The nearest of those, still exact.
    public var everydayOnly = false

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
    let database: any ClinicStore
    let zones: (any ZoneResolver)?
    /// The clock (the system's): when an import records a zone change.
    let now: @Sendable () -> Date
    /// Built on the first search; built again when the directory's version changed (this
    /// process or another one changed the clinics). From the second search of a version on,
    /// with it the clinics themselves when the directory is small enough to keep (a search
    /// then reads only the version). The first search reads only the clinics it returns: a
    /// one-shot `clinic clinics nearest` does not read 7,146 rows to show five (issue 55).
    private let finderCache = LockedBox<Directory?>(nil)
    struct Directory: Sendable {
        let finder: NearestClinicFinder
        let version: Int64
        let clinics: [Int64: Clinic]?
        /// Nothing more to read for this version: the clinics are kept, or too many to keep.
        var complete: Bool { clinics != nil || finder.count > ClinicController.keptClinics }
    }
    /// Directories up to this many clinics are kept in memory with the finder (7,146 by
    /// default, a few MB); larger ones are read per search.
    static let keptClinics = 50_000

    public init(database: any ClinicStore, zones: (any ZoneResolver)? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.zones = zones
        self.now = now
    }

    /// The finder over the clinics table, built once.
    public func finder() throws -> NearestClinicFinder { try directory().finder }

    /// `finder()` awaited: the directory's version read (kept between searches where the store
    /// keeps it), the points read again only when it moved.
    public func finder() async throws -> NearestClinicFinder {
        try await directory(awaiting: try await database.searchFacts(specialization: nil).directoryVersion).finder
    }

    /// The kept finder, made again when the directory's version is not `version` (read here
    /// when not given).
    func directory(version known: Int64? = nil) throws -> Directory {
        // The directory's version moves with every change of a clinic row, whoever made it
        // (see `DirectoryReading.directoryVersion()`): one read tells whether the kept finder
        // still describes the table.
        let version = try known ?? database.reading { tx in try tx.directoryVersion() }
        if let current = finderCache.current, current.version == version, current.complete { return current }
        return try finderCache.withLock { cached in
            if let kept = cached, kept.version == version {
                if kept.complete { return kept }
                // The second search of this version: this process searches more than once,
                // so the clinics are kept beside the finder. The version is read again with them.
                let (rows, read) = try database.reading { tx in (try tx.allClinics(), try tx.directoryVersion()) }
                if read == version {
                    let directory = Directory(finder: kept.finder, version: version, clinics: Self.byId(rows))
                    cached = directory
                    return directory
                }
            }
            // The version is read again in the transaction that reads the points.
            let directory = try database.reading { tx -> Directory in
                Directory(finder: try Self.finder(tx.clinicPoints()), version: try tx.directoryVersion(), clinics: nil)
            }
            cached = directory
            return directory
        }
    }

    /// The finder over these clinics.
    static func finder(_ points: [ClinicPoint]) throws -> NearestClinicFinder {
        var ids: [Int64] = [], coordinates: [Coordinate] = [], pediatric: [Bool] = [], hospital: [Bool] = []
        for point in points {
            // The schema's CHECK keeps coordinates in range; skip rather than trap if one is not.
            guard let coordinate = Coordinate(latitude: point.latitude, longitude: point.longitude) else { continue }
            ids.append(point.id)
            coordinates.append(coordinate)
            pediatric.append(point.isPediatric)
            hospital.append(point.isHospital)
        }
        return try NearestClinicFinder(ids: ids, coordinates: coordinates, isPediatric: pediatric, isHospital: hospital)
    }

    /// The nearest clinics to a point that match the query, nearest first.
    public func nearest(to point: Coordinate, _ query: NearestQuery = NearestQuery()) throws -> [NearbyClinic] {
        try query.validate()
        return try nearest(to: point, query, state: nil, reach: query.limit)
    }

    /// How far a paged search reaches (offset and count together).
    public static let maximumReach = 1_000

    /// One page of the nearest clinics (FHIR's `Location?near`): the `query.limit` after the
    /// first `offset`, nearest first, and whether more follow within `maximumReach`. `state`:
    /// only clinics in that state (its two letters, any case).
    public func nearestPage(to point: Coordinate, _ query: NearestQuery, state: String? = nil,
                            offset: Int) throws -> (items: [NearbyClinic], more: Bool) {
        let reach = try Self.pageReach(query, offset: offset)
        let found = try nearest(to: point, query, state: state, reach: min(reach + 1, Self.maximumReach))
        return (Array(found.dropFirst(offset).prefix(query.limit)), found.count > reach)
    }

    /// How far a page reaches (its offset and its count), the query and the offset checked.
    static func pageReach(_ query: NearestQuery, offset: Int) throws -> Int {
        try query.validate()
        // `offset` comes from outside: compared before it is added to, so a huge one cannot overflow.
        guard offset >= 0, offset <= maximumReach - query.limit else {
            throw ClinicError.invalid(.limitBetween, String(offset), "0", String(maximumReach - query.limit))
        }
        return offset + query.limit
    }

    private func nearest(to point: Coordinate, _ query: NearestQuery, state: String?,
                         reach: Int) throws -> [NearbyClinic] {
        // The version and the specialization's clinics in one gather (one round trip on PostgreSQL).
        let facts = try database.nearestSearchFacts(specialization: query.specialization.map(Specialization.key(for:)))
        if let specialization = query.specialization, facts.clinicIds?.isEmpty == true {
            // None: an unknown name is refused (with a suggestion); a known one no clinic has finds nothing.
            _ = try database.reading { tx in try Specialization.requireKnown(specialization, tx) }
        }
        let directory = try directory(version: facts.directoryVersion)
        let all = try state == nil ? nil : directory.clinics.map { Array($0.values) } ?? database.reading { tx in try tx.allClinics() }
        var rounds = NearestRounds(query, facts: facts, state: state, clinics: all, reach: reach)
        while true {
            let matches = try directory.finder.nearest(to: point, limit: rounds.asked, filter: rounds.filter)
            let missing = directory.clinics == nil ? rounds.missing(matches) : []
            if !missing.isEmpty { rounds.read(try database.reading { tx in try tx.clinics(ids: missing) }) }
            if let found = rounds.answer(matches, kept: directory.clinics) { return found }
        }
    }

    /// `nearest(to:)` awaited (issue 56: `NearestSearchStore`): the same rounds, each read
    /// awaited; the finder itself runs on the caller's task (a search is microseconds; building
    /// it, once per directory version, about 7 ms for the 7,146 clinics, BENCHMARKS.md).
    public func nearest(to point: Coordinate, _ query: NearestQuery = NearestQuery()) async throws -> [NearbyClinic] {
        try query.validate()
        return try await searching(to: point, query, state: nil, reach: query.limit)
    }

    /// `nearestPage` awaited.
    public func nearestPage(to point: Coordinate, _ query: NearestQuery, state: String? = nil,
                            offset: Int) async throws -> (items: [NearbyClinic], more: Bool) {
        let reach = try Self.pageReach(query, offset: offset)
        let found = try await searching(to: point, query, state: state, reach: min(reach + 1, Self.maximumReach))
        return (Array(found.dropFirst(offset).prefix(query.limit)), found.count > reach)
    }

    private func searching(to point: Coordinate, _ query: NearestQuery, state: String?, reach: Int) async throws -> [NearbyClinic] {
        let facts = try await database.searchFacts(specialization: query.specialization.map(Specialization.key(for:)))
        if let specialization = query.specialization, facts.clinicIds?.isEmpty == true {
            let key = Specialization.key(for: specialization), known = try await database.knownSpecializations()
            if !known.contains(key) { throw Specialization.unknown(specialization, known: known) }
        }
        let directory = try await directory(awaiting: facts.directoryVersion)
        var all = directory.clinics.map { Array($0.values) }
        if state != nil, all == nil { all = try await database.directoryClinics().rows }
        var rounds = NearestRounds(query, facts: facts, state: state, clinics: all, reach: reach)
        while true {
            let matches = try directory.finder.nearest(to: point, limit: rounds.asked, filter: rounds.filter)
            let missing = directory.clinics == nil ? rounds.missing(matches) : []
            if !missing.isEmpty { rounds.read(try await database.searchedClinics(ids: missing)) }
            if let found = rounds.answer(matches, kept: directory.clinics) { return found }
        }
    }

    /// The kept finder awaited, as `directory(version:)`: the clinics kept beside it from the
    /// second search of a version on, the points read again when the version moved. Nothing
    /// is held across a read: two first searches at once may both build the finder, and the
    /// one that finishes last is kept (a complete directory is not replaced by a bare one of
    /// the same version).
    func directory(awaiting version: Int64) async throws -> Directory {
        let kept = finderCache.current
        if let kept, kept.version == version, kept.complete { return kept }
        let directory: Directory
        if let kept, kept.version == version, let complete = try await Self.withClinics(kept, database.directoryClinics()) {
            directory = complete
        } else {
            let points = try await database.directoryPoints()
            directory = Directory(finder: try Self.finder(points.rows), version: points.version, clinics: nil)
        }
        finderCache.withLock { cached in
            if !(cached?.version == directory.version && cached?.complete == true) { cached = directory }
        }
        return directory
    }

    /// The kept finder with the clinics beside it, when they were read at its version.
    private static func withClinics(_ kept: Directory, _ all: DirectorySnapshot<Clinic>) -> Directory? {
        all.version == kept.version ? Directory(finder: kept.finder, version: kept.version, clinics: byId(all.rows)) : nil
    }

    static func byId(_ clinics: [Clinic]) -> [Int64: Clinic] {
        Dictionary(clinics.map { ($0.id ?? 0, $0) }, uniquingKeysWith: { first, _ in first })
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
        let clinic = try database.writing { tx in
            if try tx.clinic(externalId: input.externalId) != nil {
                throw ClinicError.invalid(.clinicExists, input.externalId)
            }
            return try tx.insertClinic(makeClinic(input))
        }
        finderCache.withLock { $0 = nil }
        return clinic
    }

    public func getAllClinics(_ filter: ClinicFilter = ClinicFilter()) throws -> [Clinic] {
        if let limit = filter.limit, limit < 1 { throw ClinicError.invalid(.limitRange, String(limit)) }
        return try database.reading { tx in try tx.clinics(matching: filter) }
    }

    /// One page of the directory in the order (name, id), `limit` long (1 to 100).
    public func clinicsPage(city: String? = nil, limit: Int, cursor: String?) throws -> Page<Clinic> {
        let filter = try Self.pageFilter(city: city, limit: limit, cursor: cursor)
        return Self.page(try getAllClinics(filter), limit: limit)
    }

    /// `clinicsPage` awaited (issue 56: `DirectoryReadsStore.clinics(matching:)`).
    public func clinicsPage(city: String? = nil, limit: Int, cursor: String?) async throws -> Page<Clinic> {
        let filter = try Self.pageFilter(city: city, limit: limit, cursor: cursor)
        return Self.page(try await database.clinics(matching: filter), limit: limit)
    }

    /// What a page reads: one more than `limit`, after the cursor's position (a bad limit or
    /// cursor refused before anything is read).
    static func pageFilter(city: String?, limit: Int, cursor: String?) throws -> ClinicFilter {
        try Page<Clinic>.checkLimit(limit)
        return ClinicFilter(city: city, limit: limit + 1, after: try cursor.map(PagePosition.init(cursor:)))
    }

    /// The page of what `pageFilter` read: `limit` clinics, and a cursor when there are more.
    static func page(_ found: [Clinic], limit: Int) -> Page<Clinic> {
        let items = Array(found.prefix(limit))
        let next = found.count > limit ? items.last.map { PagePosition(key: $0.name, id: $0.id ?? 0).cursor } : nil
        return Page(items: items, nextCursor: next)
    }

    /// A clinic named as an operator knows it: its id, its directory's external id, or its name
    /// (any case). A name several clinics share is refused with each one's id and city, so the
    /// operator can give the id; nothing matching is `not_found`.
    public func clinic(reference: String) throws -> Clinic {
        let text = reference.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw ClinicError.invalid(.fieldEmpty, "clinic") }
        if let id = Int64(text), let clinic = try database.reading({ tx in try tx.clinic(id: id) }) { return clinic }
        if let clinic = try database.reading({ tx in try tx.clinic(externalId: text) }) { return clinic }
        return try Self.clinic(named: text, among: getAllClinics())
    }

    /// `clinic(reference:)` awaited: the directory read in one snapshot (an operator's
    /// command), the reference looked for in it as by id, external id, then name.
    public func clinic(reference: String) async throws -> Clinic {
        let text = reference.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw ClinicError.invalid(.fieldEmpty, "clinic") }
        let all = try await database.directoryClinics().rows
        if let id = Int64(text), let clinic = all.first(where: { $0.id == id }) { return clinic }
        if let clinic = all.first(where: { $0.externalId == text }) { return clinic }
        return try Self.clinic(named: text, among: all)
    }

    /// The one clinic of `clinics` named `text` (case and accents aside): `not_found` for
    /// none, `invalid_input` listing them for several.
    static func clinic(named text: String, among clinics: [Clinic]) throws -> Clinic {
        let named = clinics.filter { $0.name.compare(text, options: [.caseInsensitive, .diacriticInsensitive]) == .orderedSame }
        switch named.count {
        case 0: throw ClinicError(.notFound, .clinicNotFound, text)
        case 1: return named[0]
        default:
            let list = named.prefix(10).map { "\($0.id ?? 0) (\($0.city), \($0.state))" }.joined(separator: ", ")
            throw ClinicError.invalid(.clinicNameShared, text, list)
        }
    }

    public func getClinicById(_ id: Int64) throws -> Clinic {
        guard let clinic = try database.reading({ tx in try tx.clinic(id: id) }) else {
            throw ClinicError(.notFound, .clinicNotFound, String(id))
        }
        return clinic
    }

    /// Imports a directory file: all or nothing unless `skipInvalid`, idempotent by external
    /// id (a known id updates its clinic, a new one inserts). With `demo`, clinics left
    /// without departments get the demo ones. One transaction.
    public func importClinics(_ data: Data, format: ClinicDirectory.Format = .project, skipInvalid: Bool = false,
                              demo: Bool = false, progress: ((Int, Int) -> Void)? = nil,
                              alsoInTransaction: ((any StoreWriting) throws -> Void)? = nil) throws -> ImportReport {
        let parsed = try ClinicDirectory.parse(data, format: format)
        if !parsed.problems.isEmpty && !skipInvalid {
            throw ClinicError(.invalidInput, .importRejected,
                              arguments: [String(parsed.problems.count)], problems: parsed.problems)
        }
        // Zones first, outside the write transaction: it may read the gazetteer.
        let clinics = try parsed.clinics.map { try makeClinic($0) }
        defer { finderCache.withLock { $0 = nil } }
        let total = demo ? 2 * clinics.count : clinics.count
        return try database.writing { tx in
            try tx.lockDirectoryForImport()
            var report = ImportReport()
            report.skipped = parsed.problems
            report.closed = parsed.closed
            let existing = try tx.clinicIdsAndZones()
            let now = self.now()
            // The known ones are updated one by one, the new ones inserted 500 at a time (a
            // store may write each chunk in one statement).
            var fresh: [Clinic] = []
            for (index, prepared) in clinics.enumerated() {
                var clinic = prepared
                if let (id, zone) = existing[clinic.externalId] {
                    clinic.id = id
                    try tx.updateClinic(clinic)
                    report.updated += 1
                    // A clinic that moved zone (it moved, or the boundaries did): its booked
                    // appointments are listed by `admin check`.
                    if zone != clinic.timeZone {
                        try ZoneChanges.record(tx, clinicId: id, from: zone, to: clinic.timeZone, at: now)
                    }
                } else {
                    fresh.append(clinic)
                    report.inserted += 1
                }
                if fresh.count == 500 || index == clinics.count - 1 {
                    _ = try tx.insertClinics(fresh)
                    fresh.removeAll(keepingCapacity: true)
                }
                if let progress, index % 500 == 0 { progress(index, total) }
            }
            if demo {
                // The demo data is the second half of the work.
                report.demoFilled = try DemoDirectory.fill(tx, progress: progress.map { progress in
                    { done, count in progress(clinics.count + done * clinics.count / max(count, 1), total) }
                })
            }
            progress?(total, total)
            try alsoInTransaction?(tx)
            return report
        }
    }

    /// The number of clinics in the directory.
    public func count() throws -> Int {
        try database.reading { tx in try tx.clinicCount() }
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

    /// What a store makes of its rows (public: a store may live in a module of its own).
    public init(id: Int64, name: String, lat: Double, lon: Double, isPediatric: Bool, isHospital: Bool,
                specializations: [String]) {
        self.id = id; self.name = name; self.lat = lat; self.lon = lon; self.isPediatric = isPediatric
        self.isHospital = isHospital; self.specializations = specializations
    }
}

extension ClinicController {
    /// What the map's markers depend on: the directory's version and the departments (which
    /// may change without a clinic changing). Equal versions: equal `mapClinics()`. Awaited
    /// (issue 56: `DirectoryReadsStore.mapVersionFacts`).
    public func mapVersion() async throws -> String {
        try await database.mapVersionFacts().text
    }

    /// Every clinic with its departments' specializations, by id: the web map's markers, with
    /// their `mapVersion` read in the same snapshot.
    public func mapClinics() async throws -> (version: String, clinics: [MapClinic]) {
        let (version, clinics) = try await database.mapSnapshot()
        return (version.text, clinics)
    }
}
