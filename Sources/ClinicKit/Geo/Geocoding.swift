import Foundation
import GRDB

public struct GeocodeResult: Sendable, Equatable {
    /// The query as normalized for the cache.
    public let query: String
    public let coordinate: Coordinate
    /// `coordinates` (typed as numbers), `address`, `street`, `city` or `region`.
    public let precision: String
    /// `input`, `gazetteer`, `directory` or `nominatim`.
    public let source: String
    /// Whether it came from the geocode cache.
    public let cached: Bool
    /// The place's name when the source knows it.
    public let placeName: String?
}

/// One source of the geocoder chain. Returns nil when it does not know the query; throws only
/// when it could not be asked (a network failure, a timeout).
public protocol Geocoder: Sendable {
    var source: String { get }
    func geocode(_ query: String) throws -> (coordinate: Coordinate, precision: String, name: String?)?
}

extension Gazetteer: Geocoder {
    public var source: String { "gazetteer" }

    public func geocode(_ query: String) throws -> (coordinate: Coordinate, precision: String, name: String?)? {
        guard let place = lookup(query) else { return nil }
        return (place.coordinate, "city", place.name)
    }
}

/// The chain: typed coordinates, then the `geocode_cache` table, then the offline gazetteer,
/// then the cities of the clinic directory, then (only when configured) a Nominatim server.
/// `resolve` only reads; `record` stores what was found (or counts a cache hit) in the
/// caller's transaction, so a command that fails afterwards leaves no trace.
public final class GeocodingService: Sendable {
    let database: DatabaseManager
    let offline: [any Geocoder]
    let remote: (any Geocoder)?
    let now: @Sendable () -> Date
    /// The remote geocoder's answers in this process, by cache key: a form that looks a city
    /// up and the registration that follows cost one request (paced at one per second), not two.
    private let remoteAnswers = LockedBox<[String: GeocodeResult]>([:])

    public init(database: DatabaseManager, offline: [any Geocoder], remote: (any Geocoder)? = nil,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.offline = offline
        self.remote = remote
        self.now = now
    }

    /// The cache key: folded, with commas and spaces normalized.
    public static func normalize(_ query: String) -> String {
        query.split(separator: ",").map { Text.fold(String($0)) }.filter { !$0.isEmpty }.joined(separator: ", ")
    }

    public func resolve(_ query: String) throws -> GeocodeResult {
        let trimmed = query.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 300,
              !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw ClinicError.invalid(.addressInvalid) }
        if let coordinate = try? CoordinateParser.parse(trimmed) {
            return GeocodeResult(query: trimmed, coordinate: coordinate, precision: "coordinates", source: "input",
                                 cached: false, placeName: nil)
        }
        let key = Self.normalize(trimmed)
        if let row = try database.read({ db in
            try Row.fetchOne(db, sql: "SELECT lat, lon, precision, source FROM geocode_cache WHERE query = ?", arguments: [key])
        }), let coordinate = Coordinate(latitude: row["lat"], longitude: row["lon"]) {
            return GeocodeResult(query: key, coordinate: coordinate, precision: row["precision"], source: row["source"],
                                 cached: true, placeName: nil)
        }
        for geocoder in offline {
            if let found = try geocoder.geocode(trimmed) {
                return GeocodeResult(query: key, coordinate: found.coordinate, precision: found.precision,
                                     source: geocoder.source, cached: false, placeName: found.name)
            }
        }
        if let remote {
            if let answer = remoteAnswers.withLock({ $0[key] }) { return answer }
            if let found = try remote.geocode(trimmed) {
                let answer = GeocodeResult(query: key, coordinate: found.coordinate, precision: found.precision,
                                           source: remote.source, cached: false, placeName: found.name)
                remoteAnswers.withLock { $0[key] = answer }
                return answer
            }
        }
        throw ClinicError(.geocodeFailed, .geocodeFailed, trimmed)
    }

    /// Stores a new result in the cache, or counts a hit of a cached one.
    public func record(_ db: Database, _ result: GeocodeResult) throws {
        guard result.source != "input" else { return }
        if result.cached {
            try db.execute(sql: "UPDATE geocode_cache SET hits = hits + 1 WHERE query = ?", arguments: [result.query])
        } else {
            try db.execute(sql: """
                INSERT INTO geocode_cache (query, lat, lon, precision, source, created_at, hits) VALUES (?, ?, ?, ?, ?, ?, 0)
                ON CONFLICT (query) DO NOTHING
                """, arguments: [result.query, result.coordinate.latitude, result.coordinate.longitude, result.precision,
                                 result.source, Int64(now().timeIntervalSince1970)])
        }
    }

    /// Records a result in its own transaction: for a command that resolves first and keeps
    /// the answer only once it has succeeded. Nothing on a read-only database.
    public func remember(_ result: GeocodeResult) throws {
        // The cache only saves work: a database this user may only read is answered from, not added to.
        guard !database.isReadOnly else { return }
        try database.write { db in try record(db, result) }
    }

    /// Resolves and records in one go.
    public func geocode(_ query: String) throws -> GeocodeResult {
        let result = try resolve(query)
        try remember(result)
        return result
    }
}

/// Cities of the clinic directory, for towns too small for the gazetteer: the mean position of
/// the clinics of a city (in the state given, if any).
struct DirectoryCities: Geocoder {
    let database: DatabaseManager
    /// For reading a state or country at the end of the query.
    let gazetteer: LazyGazetteer?
    var source: String { "directory" }

    func geocode(_ query: String) throws -> (coordinate: Coordinate, precision: String, name: String?)? {
        guard let (city, qualifiers) = Gazetteer.cityPart(query, absorbingWith: try gazetteer?.load()) else { return nil }
        let rows = try database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT avg(lat) AS lat, avg(lon) AS lon, state, min(city) AS city, count(*) AS n FROM clinics
                WHERE city_key = ? GROUP BY state ORDER BY n DESC, state
                """, arguments: [city])
        }
        let row = rows.first { qualifiers.admin1 == nil || ($0["state"] as String?) == qualifiers.admin1 } ?? rows.first
        guard let row, let coordinate = Coordinate(latitude: row["lat"], longitude: row["lon"]) else { return nil }
        return (coordinate, "city", row["city"])
    }
}
