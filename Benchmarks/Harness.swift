import ClinicKit
import Foundation

/// One benchmark's result, as printed and as `--json` emits it.
struct Measurement: Encodable {
    let name: String
    let n: Int
    let p50Micros: Double?
    let p99Micros: Double?
    let opsPerSecond: Double?
    let peakRSSBytes: Int
    let baseline: String?
    let baselineP50Micros: Double?
    let speedup: Double?

    private enum Keys: String, CodingKey {
        case name, n, p50Micros, p99Micros, opsPerSecond, peakRSSBytes, baseline, baselineP50Micros, speedup
    }

    /// Every key, with `null` where a figure does not apply (a derived encoding would drop it).
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(name, forKey: .name)
        try container.encode(n, forKey: .n)
        try container.encode(p50Micros, forKey: .p50Micros)
        try container.encode(p99Micros, forKey: .p99Micros)
        try container.encode(opsPerSecond, forKey: .opsPerSecond)
        try container.encode(peakRSSBytes, forKey: .peakRSSBytes)
        try container.encode(baseline, forKey: .baseline)
        try container.encode(baselineP50Micros, forKey: .baselineP50Micros)
        try container.encode(speedup, forKey: .speedup)
    }
}

/// Latencies of repeated runs of one operation.
struct Samples {
    private(set) var nanoseconds: [UInt64] = []

    mutating func add(_ value: UInt64) { nanoseconds.append(value) }

    func percentile(_ p: Double) -> Double {
        guard !nanoseconds.isEmpty else { return .nan }
        let sorted = nanoseconds.sorted()
        let rank = Int((p * Double(sorted.count - 1)).rounded())
        return Double(sorted[rank]) / 1000
    }

    var total: Double { Double(nanoseconds.reduce(0, +)) / 1e9 }
    var opsPerSecond: Double { total > 0 ? Double(nanoseconds.count) / total : .nan }
}

enum Clock {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs `body` for each input after `warmup` untimed runs, timing each call.
    static func measure<Input>(_ inputs: [Input], warmup: Int = 20, _ body: (Input) throws -> Void) rethrows -> Samples {
        for input in inputs.prefix(warmup) { try body(input) }
        var samples = Samples()
        for input in inputs {
            let start = now()
            try body(input)
            samples.add(now() - start)
        }
        return samples
    }

    /// Runs awaited work to its end from the benchmark's main thread, which may block.
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let box = WaitedResult<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { box.set(.success(try await work())) } catch { box.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        return try box.get()
    }

    /// `measure` of an awaited body.
    static func measure<Input>(_ inputs: [Input], warmup: Int = 20, _ body: (Input) async throws -> Void) async rethrows -> Samples {
        for input in inputs.prefix(warmup) { try await body(input) }
        var samples = Samples()
        for input in inputs {
            let start = now()
            try await body(input)
            samples.add(now() - start)
        }
        return samples
    }
}

/// The most memory this process has held, in bytes.
func peakRSS() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
}

/// Uniform random points on latitude -60..70 and longitude -180..180, from a fixed seed.
func randomCoordinates(_ count: Int, seed: UInt64) -> [Coordinate] {
    var random = SeededGenerator(seed: seed)
    var points: [Coordinate] = []
    points.reserveCapacity(count)
    while points.count < count {
        if let point = Coordinate(latitude: .random(in: -60...70, using: &random), longitude: .random(in: -180...180, using: &random)) {
            points.append(point)
        }
    }
    return points
}

func format(_ micros: Double) -> String {
    micros >= 1000 ? String(format: "%.2f ms", micros / 1000) : String(format: "%.1f µs", micros)
}

/// What a waited task answered, handed to the waiting thread.
private final class WaitedResult<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error> = .failure(BenchmarkError.mismatch("no result"))
    func set(_ result: Result<T, any Error>) { lock.withLock { self.result = result } }
    func get() throws -> T { try lock.withLock { result }.get() }
}
