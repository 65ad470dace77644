import Foundation

/// A point on the Earth in degrees (WGS 84 latitude and longitude).
public struct Coordinate: Hashable, Sendable, Codable {
    public let latitude: Double
    public let longitude: Double

    /// Fails for NaN, infinities and values outside ±90 / ±180.
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite,
              (-90.0...90.0).contains(latitude), (-180.0...180.0).contains(longitude)
        else { return nil }
        // -0 is 0: "-0.00000" would be printed otherwise.
        self.latitude = latitude + 0
        self.longitude = longitude + 0
    }
}
