import Foundation

/// A geocode the cache keeps for a normalized query.
public struct CachedGeocode: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var precision: String
    public var source: String

    public init(latitude: Double, longitude: Double, precision: String, source: String) {
        self.latitude = latitude
        self.longitude = longitude
        self.precision = precision
        self.source = source
    }
}

/// A city of the directory in one state: the mean position of its clinics.
public struct DirectoryCity: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var state: String?
    /// The city's name as one of its clinics writes it.
    public var name: String?
    public var clinics: Int

    public init(latitude: Double, longitude: Double, state: String?, name: String?, clinics: Int) {
        self.latitude = latitude
        self.longitude = longitude
        self.state = state
        self.name = name
        self.clinics = clinics
    }
}

/// The geocode cache and the directory's places (issue #25's seam).
public protocol GeoReading {
    func cachedGeocode(query: String) throws -> CachedGeocode?
    /// The `state` codes the directory's clinics have (a U.S. state, or a territory's ISO code).
    func clinicStates() throws -> [String]
    /// The directory's cities with this folded name (`Clinic.key(forCity:)`), one per state,
    /// the one with most clinics first (ties by state).
    func directoryCities(cityKey: String) throws -> [DirectoryCity]
}

public protocol GeoWriting: GeoReading {
    /// Keeps a geocode for a query; one kept already stays as it is.
    func insertGeocode(query: String, _ geocode: CachedGeocode, at: Date) throws
    /// Counts one more use of a cached geocode.
    func countGeocodeHit(query: String) throws
}
