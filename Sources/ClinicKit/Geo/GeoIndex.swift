import Foundation

/// Exact k-nearest search by great-circle distance over a fixed set of points.
///
/// GEOS's STR-tree is planar in longitude/latitude, so its own "nearest" is not the geodesic
/// nearest. The tree is used only to gather candidates inside boxes that provably contain the
/// whole spherical cap of a radius r (`Geodesy.boxes`); candidates are ranked by haversine.
/// If at least k accepted points lie within r, no point outside the cap can beat them, so the
/// k best are exact; otherwise r grows (×4) until it covers the Earth, where the search is a
/// full scan. Ties are broken by `ids`, so results equal a brute-force scan sorted the same way.
public final class GeoIndex: Sendable {
    let points: [GeoPoint]
    let coordinates: [Coordinate]
    let ids: [Int64]
    let tree: EnvelopeTree

    public struct Hit: Equatable, Sendable {
        /// Position in the arrays the index was built from.
        public let index: Int
        public let id: Int64
        public let distance: Double
    }

    public init(coordinates: [Coordinate], ids: [Int64]) throws {
        precondition(coordinates.count == ids.count)
        self.coordinates = coordinates
        self.ids = ids
        points = coordinates.map(GeoPoint.init)
        tree = try EnvelopeTree(longitudes: coordinates.map(\.longitude), latitudes: coordinates.map(\.latitude))
    }

    public var count: Int { ids.count }

    /// The `k` nearest accepted points within `maximumDistance` metres, nearest first.
    public func nearest(to center: Coordinate, k: Int, maximumDistance: Double? = nil,
                        accept: (Int) -> Bool = { _ in true }) throws -> [Hit] {
        guard k > 0, !ids.isEmpty else { return [] }
        let limit = min(maximumDistance ?? Geodesy.maximumDistance, Geodesy.maximumDistance)
        guard limit >= 0 else { return [] }
        let origin = GeoPoint(center)
        // A cap expected to hold about 4k points if they were spread evenly over the Earth.
        var radius = min(limit, 2 * Geodesy.earthRadius * (Double(4 * k) / Double(ids.count)).squareRoot())
        while true {
            var candidates: [Int] = []
            let boxes = Geodesy.boxes(around: center, radius: radius)
            for box in boxes { candidates = try tree.query(box, into: candidates) }
            var hits: [Hit] = []
            hits.reserveCapacity(candidates.count)
            for index in candidates where accept(index) {
                let distance = Geodesy.distance(origin, points[index])
                if distance <= radius { hits.append(Hit(index: index, id: ids[index], distance: distance)) }
            }
            if hits.count >= k || radius >= limit {
                hits.sort { ($0.distance, $0.id) < ($1.distance, $1.id) }
                return Array(hits.prefix(k))
            }
            radius = min(limit, radius * 4)
        }
    }
}
