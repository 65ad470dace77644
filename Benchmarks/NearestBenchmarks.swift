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

extension NearestBenchmarks {
    /// The points of `nearest` at `size` (id,lat,lon), its queries (lat,lon) and our answers
    /// (query,id,distance_m), as CSV files in `folder`; then this machine's p50 and p99 over
    /// those queries on stdout.
    static func export(to folder: URL, size: Int, queries: Int) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let points = randomCoordinates(size, seed: 42)
        let ids = (1...Int64(size)).map { $0 }
        var text = ""
        text.reserveCapacity(size * 32)
        for (index, point) in points.enumerated() { text += "\(ids[index]),\(point.latitude),\(point.longitude)\n" }
        try text.write(to: folder.appendingPathComponent("points.csv"), atomically: true, encoding: .utf8)
        let targets = randomCoordinates(queries, seed: 7)
        try targets.map { "\($0.latitude),\($0.longitude)" }.joined(separator: "\n")
            .appending("\n").write(to: folder.appendingPathComponent("queries.csv"), atomically: true, encoding: .utf8)
        let index = try GeoIndex(coordinates: points, ids: ids)
        var answers = ""
        for (number, target) in targets.enumerated() {
            guard let hit = try index.nearest(to: target, k: 1).first else { continue }
            answers += "\(number),\(hit.id),\(hit.distance)\n"
        }
        try answers.write(to: folder.appendingPathComponent("answers.csv"), atomically: true, encoding: .utf8)
        let samples = try Clock.measure(targets) { _ = try index.nearest(to: $0, k: 1) }
        print(String(format: "clinickit p50_us=%.2f p99_us=%.2f", samples.percentile(0.5), samples.percentile(0.99)))
    }
}

enum BenchmarkError: Error, CustomStringConvertible {
    case mismatch(String)
    case unusable(String)
    var description: String {
        switch self {
        case .mismatch(let text): return "answers differ: " + text
        case .unusable(let text): return text
        }
    }
}
