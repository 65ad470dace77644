import Foundation

/// Great-circle geometry on a sphere of radius 6,371,008.8 m (the IUGG mean Earth radius).
public enum Geodesy {
    public static let earthRadius = 6_371_008.8
    /// Half the circumference: no two points are farther apart.
    public static let maximumDistance = Double.pi * earthRadius

    /// Haversine distance in metres.
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        distance(GeoPoint(a), GeoPoint(b))
    }

    /// Haversine distance in metres between prepared points. The finder and every reference it
    /// is checked against go through this one function, so equal inputs give equal bits.
    @inline(__always)
    static func distance(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let sinLat = sin((b.phi - a.phi) * 0.5)
        let sinLon = sin((b.lambda - a.lambda) * 0.5)
        let h = min(1, max(0, sinLat * sinLat + a.cosPhi * b.cosPhi * sinLon * sinLon))
        return 2 * earthRadius * asin(h.squareRoot())
    }

    /// Longitude/latitude boxes (degrees) that together contain every point within `radius`
    /// metres of `center`: the latitude band of the spherical cap, and its longitude span
    /// `asin(sin δ / cos φ)` — the whole circle when the cap reaches a pole — split in two where
    /// it crosses ±180°. Slightly inflated so that rounding can only add points, never lose one.
    public static func boxes(around center: Coordinate, radius: Double) -> [Box] {
        let delta = radius * (1 + 1e-9) / earthRadius + 1e-12 // angular radius, radians
        if delta >= .pi { return [Box(minLon: -180, minLat: -90, maxLon: 180, maxLat: 90)] }
        let deltaDegrees = delta * 180 / .pi
        let margin = 1e-9
        let minLat = max(-90, center.latitude - deltaDegrees - margin)
        let maxLat = min(90, center.latitude + deltaDegrees + margin)
        if minLat <= -90 || maxLat >= 90 {
            return [Box(minLon: -180, minLat: minLat, maxLon: 180, maxLat: maxLat)]
        }
        let ratio = sin(delta) / cos(center.latitude * .pi / 180)
        if ratio >= 1 { return [Box(minLon: -180, minLat: minLat, maxLon: 180, maxLat: maxLat)] }
        let span = asin(ratio) * 180 / .pi + margin
        if span >= 180 { return [Box(minLon: -180, minLat: minLat, maxLon: 180, maxLat: maxLat)] }
        let west = center.longitude - span, east = center.longitude + span
        if west < -180 {
            return [Box(minLon: west + 360, minLat: minLat, maxLon: 180, maxLat: maxLat),
                    Box(minLon: -180, minLat: minLat, maxLon: east, maxLat: maxLat)]
        }
        if east > 180 {
            return [Box(minLon: west, minLat: minLat, maxLon: 180, maxLat: maxLat),
                    Box(minLon: -180, minLat: minLat, maxLon: east - 360, maxLat: maxLat)]
        }
        return [Box(minLon: west, minLat: minLat, maxLon: east, maxLat: maxLat)]
    }

    public struct Box: Equatable, Sendable {
        public let minLon, minLat, maxLon, maxLat: Double
    }
}

/// A coordinate in radians with its latitude's cosine, computed once.
struct GeoPoint: Sendable {
    let phi: Double
    let lambda: Double
    let cosPhi: Double

    init(_ coordinate: Coordinate) {
        self.init(latitude: coordinate.latitude, longitude: coordinate.longitude)
    }

    init(latitude: Double, longitude: Double) {
        phi = latitude * .pi / 180
        lambda = longitude * .pi / 180
        cosPhi = cos(phi)
    }
}
