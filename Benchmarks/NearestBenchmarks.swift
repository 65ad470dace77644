import ClinicKit
import Foundation

/// The baseline a careful programmer would write without an index: one pass over every point
/// with cos(latitude) precomputed, comparing the haversine term and taking asin only at the end.
struct BruteForce {
    let phi: [Double], lambda: [Double], cosPhi: [Double], ids: [Int64]

    init(_ points: [Coordinate], ids: [Int64]) {
        phi = points.map { $0.latitude * .pi / 180 }
        lambda = points.map { $0.longitude * .pi / 180 }
        cosPhi = phi.map(cos)
        self.ids = ids
    }

    func nearest(to point: Coordinate, accept: (Int) -> Bool = { _ in true }) -> (id: Int64, distance: Double)? {
        let p = point.latitude * .pi / 180, l = point.longitude * .pi / 180, c = cos(p)
        var best = Double.infinity, bestIndex = -1
        for index in phi.indices where accept(index) {
            let sinLat = sin((phi[index] - p) * 0.5), sinLon = sin((lambda[index] - l) * 0.5)
            let h = sinLat * sinLat + c * cosPhi[index] * sinLon * sinLon
            if h < best || (h == best && bestIndex >= 0 && ids[index] < ids[bestIndex]) { best = h; bestIndex = index }
        }
        guard bestIndex >= 0 else { return nil }
        return (ids[bestIndex], 2 * Geodesy.earthRadius * asin(min(1, best).squareRoot()))
    }
}

enum NearestBenchmarks {
    /// k = 1 nearest at each size, against the brute-force scan on the same queries.
    static func nearest(sizes: [Int], queries: Int, baselineQueries: Int) throws -> [Measurement] {
        var results: [Measurement] = []
        for size in sizes {
            let points = randomCoordinates(size, seed: 42)
            let ids = (1...Int64(size)).map { $0 }
            let index = try GeoIndex(coordinates: points, ids: ids)
            let targets = randomCoordinates(queries, seed: 7)
            let finder = Clock.measure(targets) { _ = try? index.nearest(to: $0, k: 1) }
            let scan = BruteForce(points, ids: ids)
            let baselineTargets = Array(targets.prefix(baselineQueries))
            let baseline = Clock.measure(baselineTargets, warmup: 2) { _ = scan.nearest(to: $0) }
            // The figures mean nothing if the answers differ.
            for target in baselineTargets.prefix(50) {
                let fast = try index.nearest(to: target, k: 1).first
                let slow = scan.nearest(to: target)
                guard fast?.id == slow?.id else {
                    throw BenchmarkError.mismatch("nearest at \(size): \(String(describing: fast)) vs \(String(describing: slow))")
                }
            }
            let p50 = finder.percentile(0.5), base = baseline.percentile(0.5)
            results.append(Measurement(name: "nearest", n: size, p50Micros: p50, p99Micros: finder.percentile(0.99),
                                       opsPerSecond: finder.opsPerSecond, peakRSSBytes: peakRSS(),
                                       baseline: "brute-force haversine scan", baselineP50Micros: base, speedup: base / p50))
        }
        return results
    }
}

enum BenchmarkError: Error, CustomStringConvertible {
    case mismatch(String)
    var description: String {
        switch self { case .mismatch(let text): return "answers differ: " + text }
    }
}
