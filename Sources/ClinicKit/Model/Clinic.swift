import Foundation

public struct Clinic: Hashable, Sendable {

    public var id: Int64?
    /// The directory's own id (HIFLD `ID` for the default directory); unique.
    public var externalId: String
    public var name: String
    public var address: String
    public var city: String
    /// `city` folded for case- and accent-insensitive matching.
    public var cityKey: String
    public var state: String
    public var zip: String
    public var description: String
    /// The directory's category, e.g. "GENERAL ACUTE CARE".
    public var category: String
    public var lat: Double
    public var lon: Double
    public var isPediatric: Bool
    public var isHospital: Bool
    /// IANA time zone identifier; working hours and slots are in this zone.
    public var timeZone: String
    public var phone: String
    public var website: String

    public var coordinate: Coordinate? { Coordinate(latitude: lat, longitude: lon) }
    /// The clinic's zone (UTC if the identifier is unknown to this system). Zones are made once
    /// per identifier: building one from the tz database costs more than a booking's queries.
    public var zone: TimeZone { Self.zone(named: timeZone) }

    static func zone(named identifier: String) -> TimeZone {
        zones.withLock { cache in
            if let zone = cache[identifier] { return zone }
            let zone = TimeZone(identifier: identifier) ?? .gmt
            cache[identifier] = zone
            return zone
        }
    }

    private static let zones = LockedBox<[String: TimeZone]>([:])


    public static func key(forCity city: String) -> String {
        Text.fold(city)
    }
}
