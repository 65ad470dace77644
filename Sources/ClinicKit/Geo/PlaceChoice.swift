import Foundation

/// Where a search starts: exactly one of coordinates, a coordinate string, an address, or the
/// patient's own address. Both fronts take the same choice (`--lat/--lon`, `--at`,
/// `--address`, `--me`; `lat`/`lon`, `address`, `me=true`).
public enum PlaceChoice: Sendable, Equatable {
    case coordinates(latitude: String, longitude: String)
    case text(String)
    case address(String)
    case home

    /// The one place given; `invalid_input` (`locationChoice`) for none, several, or half a pair.
    public static func choose(latitude: String?, longitude: String?, at: String? = nil, address: String?,
                              home: Bool) throws -> PlaceChoice {
        let given = [latitude != nil || longitude != nil, at != nil, address != nil, home].filter { $0 }.count
        guard given == 1 else { throw ClinicError.invalid(.locationChoice) }
        if latitude != nil || longitude != nil {
            guard let latitude, let longitude else { throw ClinicError.invalid(.locationChoice) }
            return .coordinates(latitude: latitude, longitude: longitude)
        }
        if let at { return .text(at) }
        if let address { return .address(address) }
        return .home
    }

    /// The point, and the geocoding result to remember when an address was looked up.
    /// `patient` is asked only for `.home`.
    public func resolve(_ geocoding: GeocodingService, patient: () throws -> Client) throws -> (Coordinate, GeocodeResult?) {
        switch self {
        case .coordinates(let latitude, let longitude):
            return (try CoordinateParser.parse(latitude: latitude, longitude: longitude), nil)
        case .text(let text):
            return (try CoordinateParser.parse(text), nil)
        case .address(let address):
            let result = try geocoding.resolve(address)
            return (result.coordinate, result)
        case .home:
            guard let coordinate = try patient().coordinate else { throw ClinicError.invalid(.noHomeCoordinates) }
            return (coordinate, nil)
        }
    }

    /// `resolve` with an address's look-up awaited (the other choices read nothing).
    public func resolving(_ geocoding: GeocodingService, patient: () throws -> Client) async throws -> (Coordinate, GeocodeResult?) {
        guard case .address(let address) = self else { return try resolve(geocoding, patient: patient) }
        let result = try await geocoding.resolve(address)
        return (result.coordinate, result)
    }
}
