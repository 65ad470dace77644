import Foundation

/// One place a query may mean.
public struct GeocodeCandidate: Sendable, Equatable {
    public let coordinate: Coordinate
    /// `city` or `postcode` (gazetteer), or the source's own word.
    public let precision: String
    /// A display name: "Vincennes, Indiana, US".
    public let name: String
    /// The first-level division's name ("Indiana"), when known.
    public let admin1: String?
    /// ISO 3166 alpha-2, when known.
    public let country: String?
    /// What to type to get this place and no other: "Vincennes, IN", "Vincennes, FR".
    public let hint: String?
    /// The IANA zone at the point (`ZoneFinder`), when the zone data is there.
    public var timeZone: String?
}

public struct GeocodeResult: Sendable, Equatable {
    /// The query as normalized for the cache.
    public let query: String
    public let coordinate: Coordinate
    /// `coordinates` (typed as numbers), `postcode`, `address`, `street`, `city` or `region`.
    public let precision: String
    /// `input`, `gazetteer`, `directory` or `nominatim`.
    public let source: String
    /// A street address was typed ("1120 SW 5th Ave, Portland, OR 97204") but only its ZIP code,
    /// city or region was found (the offline sources know no streets): the search is from
    /// that area's centre, and the fronts say so (issue 55).
    public var streetNotFound: Bool {
        guard ["postcode", "city", "region"].contains(precision) else { return false }
        let first = query.split(separator: " ").first ?? ""
        return first.first?.isNumber == true && query.split(separator: " ").count > 2
    }

    /// Whether it came from the geocode cache.
    public let cached: Bool
    /// The place's display name when the source knows it ("Vincennes, Indiana, US").
    public let placeName: String?
    public var admin1: String? = nil
    public var country: String? = nil
    public var timeZone: String? = nil
    /// What to type for this place alone, when other places share its name.
    public var hint: String? = nil
    /// Other places the query may mean, best first (at most `GeocodingService.alternativeCount`).
    public var alternatives: [GeocodeCandidate] = []

    /// True when the query named several places and this is the first of them.
    public var isAmbiguous: Bool { !alternatives.isEmpty }

    /// This place and its alternatives, each with what to type for it alone, for a choice.
    public var choices: [(name: String, typed: String)] {
        [(placeName ?? query, hint ?? query)] + alternatives.map { ($0.name, $0.hint ?? $0.name) }
    }
}

/// The chain's remote source (a Nominatim server). Returns nil when it does not know the query;
/// throws only when it could not be asked (a network failure, a timeout). `geocode` blocks its
/// thread (the CLI's commands); `lookUp` suspends the task (a server's requests).
public protocol Geocoder: Sendable {
    var source: String { get }
    func geocode(_ query: String) throws -> (coordinate: Coordinate, precision: String, name: String?)?
    func lookUp(_ query: String) async throws -> (coordinate: Coordinate, precision: String, name: String?)?
}

/// The chain: typed coordinates, then the offline gazetteer (which names every place the
/// query may mean), then the `geocode_cache` table, then the cities of the clinic directory,
/// then (only when configured) a Nominatim server. The gazetteer comes before the cache: it is
/// an indexed file, as fast as the cache, and its answers carry the alternatives a cached row
/// would lose; so the cache keeps only what the later sources found. `resolve` only reads;
/// `record` stores what was found (or counts a cache hit) in the caller's transaction, so a
/// command that fails afterwards leaves no trace. Each step decides on what was read
/// (`GeocodeFacts`); `resolve` runs them synchronously (the CLI), its `async` overload awaits
/// the store and the remote geocoder (a server).
public final class GeocodingService: Sendable {
    let database: any ClinicStore
    let gazetteer: LazyGazetteer?
    let directory: DirectoryCities
    let remote: (any Geocoder)?
    let zones: LazyZones?
    let now: @Sendable () -> Date
    /// The remote geocoder's answers in this process, by cache key: a form that looks a city
    /// up and the registration that follows cost one request (paced at one per second), not two.
    private let remoteAnswers = LockedBox<[String: GeocodeResult]>([:])
    /// The countries the directory has clinics in, read once per process.
    private let directoryCountries = LockedBox<Set<String>?>(nil)

    /// How many other places a result names at most.
    public static let alternativeCount = 5

    init(database: any ClinicStore, gazetteer: LazyGazetteer?, remote: (any Geocoder)? = nil,
         zones: LazyZones? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.gazetteer = gazetteer
        self.directory = DirectoryCities(gazetteer: gazetteer)
        self.remote = remote
        self.zones = zones
        self.now = now
    }

    /// The cache key: folded, with commas and spaces normalized.
    public static func normalize(_ query: String) -> String {
        query.split(separator: ",").map { Text.fold(String($0)) }.filter { !$0.isEmpty }.joined(separator: ", ")
    }

    /// Where the query is. With `zones`, the result and its alternatives carry the time zone
    /// at their points (`timeZone`): what `geocode` shows; a command that only needs the point
    /// (nearest clinics, registration) does not read the zone data for it.
    public func resolve(_ query: String, zones wanted: Bool = false) throws -> GeocodeResult {
        let result = try locate(query)
        return wanted ? try zoned(result) : result
    }

    /// `resolve`'s awaited form: the same steps, the store's reads and the remote geocoder awaited.
    public func resolve(_ query: String, zones wanted: Bool = false) async throws -> GeocodeResult {
        let result = try await locating(query)
        return wanted ? try zoned(result) : result
    }

    // The chain's order, once blocking (`locate`) and once awaited (`locating`): the steps are
    // shared and decide on what was read; only how it is read differs.

    func locate(_ query: String) throws -> GeocodeResult {
        let (typed, trimmed, key) = try prepare(query)
        if let typed { return typed }
        let read = { (ask: GeocodeFactsRequest) in try self.database.reading { tx in try GeocodeFacts.read(tx, ask) } }
        if asksStreetFirst(trimmed) {
            if let cached = try cachedResult(key, read(GeocodeFactsRequest(cacheKey: key)).cached) { return cached }
            if let found = (try? remoteResult(trimmed, key: key)) ?? nil { return found }
        }
        let countries = try directoryCountries.current ?? learnCountries(gazetteer == nil ? [] : try read(GeocodeFactsRequest(states: true)).states)
        let (found, suggestion) = try gazetteerResult(trimmed, key: key, countries: countries)
        if let found { return found }
        let past = try pastGazetteer(trimmed, key: key)
        if let found = try offlineResult(key, past, try read(past.ask)) { return found }
        if let found = try remoteResult(trimmed, key: key) { return found }
        throw Self.failure(trimmed, suggestion)
    }

    func locating(_ query: String) async throws -> GeocodeResult {
        let (typed, trimmed, key) = try prepare(query)
        if let typed { return typed }
        if asksStreetFirst(trimmed) {
            if let cached = try cachedResult(key, try await database.geocodeFacts(GeocodeFactsRequest(cacheKey: key)).cached) { return cached }
            if let found = (try? await remoteAnswer(trimmed, key: key)) ?? nil { return found }
        }
        var countries = directoryCountries.current
        if countries == nil {
            countries = try learnCountries(gazetteer == nil ? [] : try await database.geocodeFacts(GeocodeFactsRequest(states: true)).states)
        }
        let (found, suggestion) = try gazetteerResult(trimmed, key: key, countries: countries ?? [])
        if let found { return found }
        let past = try pastGazetteer(trimmed, key: key)
        if let found = try offlineResult(key, past, try await database.geocodeFacts(past.ask)) { return found }
        if let found = try await remoteAnswer(trimmed, key: key) { return found }
        throw Self.failure(trimmed, suggestion)
    }

    /// The query checked: typed coordinates are the answer; otherwise it trimmed and its cache key.
    func prepare(_ query: String) throws -> (typed: GeocodeResult?, trimmed: String, key: String) {
        let trimmed = query.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 300, !Text.hasForbiddenControl(trimmed)
        else { throw ClinicError.invalid(.addressInvalid) }
        if let coordinate = try? CoordinateParser.parse(trimmed) {
            return (GeocodeResult(query: trimmed, coordinate: coordinate, precision: "coordinates", source: "input",
                                  cached: false, placeName: nil), trimmed, "")
        }
        return (nil, trimmed, Self.normalize(trimmed))
    }

    /// A street address goes to the street-level geocoder first, when there is one (and its
    /// answer to the cache): the gazetteer knows ZIP codes and towns, and the nearest clinic
    /// from a ZIP's centre is often not the nearest to the patient's door. Offline, or when
    /// it cannot be asked, the gazetteer answers at its own precision, which the result says.
    func asksStreetFirst(_ trimmed: String) -> Bool { remote != nil && Self.hasStreetPart(trimmed) }

    /// The gazetteer's places for the query, those of the directory's `countries` first; nil,
    /// with the place it suggests instead (if any), when it knows none.
    func gazetteerResult(_ trimmed: String, key: String, countries: Set<String>) throws
        -> (result: GeocodeResult?, suggestion: Gazetteer.Place?) {
        guard let gazetteer = try gazetteer?.load() else { return (nil, nil) }
        let answer = try gazetteer.lookup(trimmed, preferring: { countries })
        guard let first = answer.places.first else { return (nil, answer.suggestion) }
        let shown = Array(answer.places.prefix(Self.alternativeCount + 1))
        let hints = shown.count > 1 ? try gazetteer.hints(shown) : []
        var result = GeocodeResult(query: key, coordinate: first.coordinate, precision: first.precision, source: "gazetteer",
                                   cached: false, placeName: first.displayName, admin1: first.admin1Name.nonEmpty,
                                   country: first.country, hint: hints.first)
        result.alternatives = zip(shown.dropFirst(), hints.dropFirst()).map { place, hint in
            GeocodeCandidate(coordinate: place.coordinate, precision: place.precision, name: place.displayName,
                             admin1: place.admin1Name.nonEmpty, country: place.country, hint: hint)
        }
        return (result, nil)
    }

    /// What the steps past the gazetteer read (the cache's row, the directory's cities of the
    /// query's city) and how a city's state is checked against the query's qualifiers.
    func pastGazetteer(_ trimmed: String, key: String) throws
        -> (ask: GeocodeFactsRequest, admits: ((String) throws -> Bool)?) {
        let city = try directory.cityAndQualifiers(trimmed)
        return (GeocodeFactsRequest(cacheKey: key, cityKey: city?.city), city?.admits)
    }

    /// The cache's answer, then the directory's.
    func offlineResult(_ key: String, _ past: (ask: GeocodeFactsRequest, admits: ((String) throws -> Bool)?),
                       _ facts: GeocodeFacts) throws -> GeocodeResult? {
        if let cached = try cachedResult(key, facts.cached) { return cached }
        guard let admits = past.admits, let found = try directory.pick(facts.cities, admits: admits) else { return nil }
        return GeocodeResult(query: key, coordinate: found.coordinate, precision: "city", source: directory.source,
                             cached: false, placeName: found.name)
    }

    /// No source knew the query: the gazetteer's suggestion, if it had one.
    static func failure(_ trimmed: String, _ suggestion: Gazetteer.Place?) -> ClinicError {
        if let suggestion {
            return ClinicError(.geocodeFailed, .geocodeSuggestion, trimmed, suggestion.displayName, suggestion.hint(among: []))
        }
        return ClinicError(.geocodeFailed, .geocodeFailed, trimmed)
    }

    /// Whether a query starts with a street address: a first comma-separated part that holds
    /// both a number and a word ("4650 Sunset Blvd", "ул. Ленина 5"), followed by more parts;
    /// or, with no comma at all, a house number followed by a street and a town ("350 Fifth
    /// Avenue New York NY 10118"). "Boston, MA 02115" and "90027" have none.
    static func hasStreetPart(_ query: String) -> Bool {
        let parts = query.split(separator: ",")
        guard let first = parts.first else { return false }
        let words = first.split(whereSeparator: { $0.isWhitespace })
        guard parts.count >= 2 else {
            return words.count >= 3 && words[0].first?.isNumber == true && words.dropFirst().contains { $0.contains(where: \.isLetter) }
        }
        return words.count >= 2 && first.contains(where: \.isNumber) && first.contains(where: \.isLetter)
    }

    /// The geocode cache's row as an answer, nil when it has none.
    func cachedResult(_ key: String, _ cached: CachedGeocode?) throws -> GeocodeResult? {
        guard let cached, let coordinate = Coordinate(latitude: cached.latitude, longitude: cached.longitude) else { return nil }
        return GeocodeResult(query: key, coordinate: coordinate, precision: cached.precision, source: cached.source, cached: true,
                             placeName: nil)
    }

    /// The HTTP geocoder's answer (asked once per process for a query), nil without one or
    /// when it does not know the query; throws when it cannot be asked.
    func remoteResult(_ query: String, key: String) throws -> GeocodeResult? {
        guard let remote else { return nil }
        if let answer = remoteAnswers.withLock({ $0[key] }) { return answer }
        return remembered(try remote.geocode(query), from: remote, key: key)
    }

    /// `remoteResult` awaited.
    func remoteAnswer(_ query: String, key: String) async throws -> GeocodeResult? {
        guard let remote else { return nil }
        if let answer = remoteAnswers.withLock({ $0[key] }) { return answer }
        return remembered(try await remote.lookUp(query), from: remote, key: key)
    }

    /// The remote geocoder's answer, kept for this process.
    func remembered(_ found: (coordinate: Coordinate, precision: String, name: String?)?, from remote: any Geocoder,
                    key: String) -> GeocodeResult? {
        guard let found else { return nil }
        let answer = GeocodeResult(query: key, coordinate: found.coordinate, precision: found.precision,
                                   source: remote.source, cached: false, placeName: found.name)
        remoteAnswers.withLock { $0[key] = answer }
        return answer
    }

    /// The result with the zone at its point and at each alternative's.
    func zoned(_ result: GeocodeResult) throws -> GeocodeResult {
        guard let finder = try zones?.load() else { return result }
        var result = result
        result.timeZone = try finder.zone(at: result.coordinate)
        for index in result.alternatives.indices {
            result.alternatives[index].timeZone = try finder.zone(at: result.alternatives[index].coordinate)
        }
        return result
    }

    /// The countries of the directory's clinics (their `state` codes: a U.S. state, or a
    /// territory's ISO code), which rank first among places of the same name; read once per process.
    func learnCountries(_ states: [String]) throws -> Set<String> {
        var found: Set<String> = []
        if let gazetteer = try gazetteer?.load() { found = Set(try states.compactMap { try gazetteer.country(ofState: $0) }) }
        directoryCountries.withLock { $0 = found }
        return found
    }

    /// Whether a result belongs in the cache: typed coordinates need none, and the gazetteer
    /// answers before the cache is read.
    static func isCached(_ result: GeocodeResult) -> Bool {
        result.source != "input" && result.source != "gazetteer"
    }

    /// The cache's write for a result: a new one kept, a cached one's hit counted; nil for none.
    func cacheWrite(_ result: GeocodeResult) -> GeocodeCacheWrite? {
        guard Self.isCached(result) else { return nil }
        if result.cached { return .hit(query: result.query) }
        return .insert(query: result.query, CachedGeocode(latitude: result.coordinate.latitude, longitude: result.coordinate.longitude,
                                                          precision: result.precision, source: result.source), at: now())
    }

    /// Stores a new result in the cache, or counts a hit of a cached one.
    func record(_ tx: any StoreWriting, _ result: GeocodeResult) throws {
        try cacheWrite(result)?.apply(tx)
    }

    /// Records a result in its own transaction: for a command that resolves first and keeps
    /// the answer only once it has succeeded. Nothing on a read-only database.
    public func remember(_ result: GeocodeResult) throws {
        // The cache only saves work: a database this user may only read is answered from, not added to.
        guard !database.isReadOnly, Self.isCached(result) else { return }
        try database.writing { tx in try record(tx, result) }
    }

    /// `remember` awaited.
    public func remember(_ result: GeocodeResult) async throws {
        guard !database.isReadOnly, let write = cacheWrite(result) else { return }
        try await database.recordGeocode(write)
    }

    /// Resolves (with the zones, if asked) and records in one go.
    public func geocode(_ query: String, zones: Bool = false) throws -> GeocodeResult {
        let result = try resolve(query, zones: zones)
        try remember(result)
        return result
    }

    /// `geocode` awaited.
    public func geocode(_ query: String, zones: Bool = false) async throws -> GeocodeResult {
        let result = try await resolve(query, zones: zones)
        try await remember(result)
        return result
    }
}

/// Cities of the clinic directory, for towns too small for the gazetteer: the mean position of
/// the clinics of a city (in the state given, if any).
struct DirectoryCities: Sendable {
    /// For reading a state or country at the end of the query.
    let gazetteer: LazyGazetteer?
    var source: String { "directory" }

    /// The city part of a query and whether a clinic `state` lies where its qualifiers say:
    /// read by the gazetteer when there is one, else the last comma-separated part, folded,
    /// with no qualifiers.
    func cityAndQualifiers(_ query: String) throws -> (city: String, admits: (String) throws -> Bool)? {
        if let gazetteer = try gazetteer?.load() {
            guard let (name, qualifiers) = try gazetteer.nameAndQualifiers(query), !name.isEmpty else { return nil }
            // A clinic's `state` is a U.S. state's code or a territory's (ISO) country code.
            return (name, { state in
                guard !qualifiers.isEmpty else { return true }
                guard let country = try gazetteer.country(ofState: state) else { return false }
                return qualifiers.admit(country: country, admin1: state.uppercased())
            })
        }
        guard let last = query.split(separator: ",").map({ Text.fold(String($0)) }).last(where: { !$0.isEmpty }) else { return nil }
        return (last, { _ in true })
    }

    /// The first of the directory's cities of the name (most clinics first) whose state the
    /// qualifiers admit: one in another state or country is not the place asked for.
    func pick(_ cities: [DirectoryCity], admits: (String) throws -> Bool) throws -> (coordinate: Coordinate, name: String?)? {
        guard let found = try cities.first(where: { try admits($0.state ?? "") }),
              let coordinate = Coordinate(latitude: found.latitude, longitude: found.longitude) else { return nil }
        return (coordinate, found.name)
    }
}

extension String {
    /// nil for "", the string otherwise.
    var nonEmpty: String? { isEmpty ? nil : self }
}
