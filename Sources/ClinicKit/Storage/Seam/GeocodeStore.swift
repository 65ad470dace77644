import Foundation

// The geocoder chain's reads and its cache's one write, awaited (issue 56). The chain decides
// on what is read (`GeocodingService`); a look-up that the offline gazetteer answers reads
// nothing here.

/// The awaited reads and writes of the geocode cache and the directory's places a `ClinicStore` offers.
public protocol GeocodeStore: Sendable {
    /// What `ask` names, in one snapshot.
    func geocodeFacts(_ ask: GeocodeFactsRequest) async throws -> GeocodeFacts
    /// The cache's one write in a transaction of its own.
    func recordGeocode(_ write: GeocodeCacheWrite) async throws
}

/// What a look-up past the gazetteer reads: nil or false leaves a part unread.
public struct GeocodeFactsRequest: Sendable, Equatable {
    /// The normalized query whose cached geocode is read.
    public var cacheKey: String?
    /// The folded city name whose directory cities are read (`Clinic.key(forCity:)`).
    public var cityKey: String?
    /// Whether the directory's clinic `state` codes are read (once per process).
    public var states: Bool

    public init(cacheKey: String? = nil, cityKey: String? = nil, states: Bool = false) {
        self.cacheKey = cacheKey; self.cityKey = cityKey; self.states = states
    }
}

/// What `GeocodeFactsRequest` asked for.
public struct GeocodeFacts: Sendable, Equatable {
    public var cached: CachedGeocode?
    public var cities: [DirectoryCity]
    public var states: [String]

    public init(cached: CachedGeocode? = nil, cities: [DirectoryCity] = [], states: [String] = []) {
        self.cached = cached; self.cities = cities; self.states = states
    }

    /// The read on the seam's transaction (the synchronous chain's, and SQLite's).
    package static func read(_ tx: any StoreReading, _ ask: GeocodeFactsRequest) throws -> GeocodeFacts {
        GeocodeFacts(cached: try ask.cacheKey.flatMap { try tx.cachedGeocode(query: $0) },
                     cities: try ask.cityKey.map { try tx.directoryCities(cityKey: $0) } ?? [],
                     states: ask.states ? try tx.clinicStates() : [])
    }
}

/// The geocode cache's one write for a look-up that succeeded.
public enum GeocodeCacheWrite: Sendable, Equatable {
    /// One more use of a cached geocode counted.
    case hit(query: String)
    /// A new geocode kept (one kept already stays as it is).
    case insert(query: String, CachedGeocode, at: Date)

    /// The write on the seam's transaction.
    package func apply(_ tx: any StoreWriting) throws {
        switch self {
        case .hit(let query): try tx.countGeocodeHit(query: query)
        case .insert(let query, let geocode, let at): try tx.insertGeocode(query: query, geocode, at: at)
        }
    }
}
