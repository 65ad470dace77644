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
        // A cap expected to hold about 4k points if they were spread evenly over the Earth,
        // and no wider than 30 km × √k to begin with: clinics crowd where people live, and a
        // first cap of hundreds of kilometres in a city would rank thousands of candidates.
        var radius = min(limit, 2 * Geodesy.earthRadius * (Double(4 * k) / Double(ids.count)).squareRoot(),
                         30_000 * Double(k).squareRoot())
        while true {
            var candidates: [Int] = []
            let boxes = Geodesy.boxes(around: center, radius: radius)
            for box in boxes { candidates = try tree.query(box, into: candidates) }
            // The k best so far, in order (distance, then id), kept by insertion for a small k
            // (sorting every candidate cost more than the search); how many accepted lie within r.
            var best: [Hit] = []
            best.reserveCapacity(min(k, 64) + 1)
            var within = 0
            for index in candidates where accept(index) {
                let distance = Geodesy.distance(origin, points[index])
                guard distance <= radius else { continue }
                within += 1
                let hit = Hit(index: index, id: ids[index], distance: distance)
                if k > 64 { best.append(hit); continue }
                if best.count == k, let last = best.last, !Self.precedes(hit, last) { continue }
                var position = best.count
                while position > 0, Self.precedes(hit, best[position - 1]) { position -= 1 }
                best.insert(hit, at: position)
                if best.count > k { best.removeLast() }
            }
            if within >= k || radius >= limit {
                if k > 64 { best.sort(by: Self.precedes) }
                return Array(best.prefix(k))
            }
            radius = min(limit, radius * 4)
        }
    }

    static func precedes(_ a: Hit, _ b: Hit) -> Bool { (a.distance, a.id) < (b.distance, b.id) }
}
