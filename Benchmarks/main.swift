import ArgumentParser
import ClinicKit
import Foundation

/// `clinic-bench [--quick] [--json] [--only NAME]`: measures ClinicKit's hot paths, each next to
/// a baseline measured in the same run. Build it in release mode (see docs/BENCHMARKS.md).
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clinic-bench", abstract: "ClinicKit benchmarks.")

    @Flag(help: "Smaller sizes; finishes within a minute.") var quick = false
    @Flag(help: "Print a JSON array instead of a table.") var json = false
    @Option(help: "Run only the benchmarks with this name (nearest, nearest-build).") var only: String?

    func run() throws {
        var results: [Measurement] = []
        let wanted = { (name: String) in only == nil || only == name }
        if wanted("nearest") {
            results += try NearestBenchmarks.nearest(sizes: quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000],
                                                     queries: quick ? 2_000 : 20_000, baselineQueries: quick ? 50 : 200)
        }
        if wanted("nearest-build") {
            results.append(try NearestBenchmarks.build(size: quick ? 100_000 : 1_000_000, runs: quick ? 2 : 3))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            FileHandle.standardOutput.write(try encoder.encode(results) + Data("\n".utf8))
            return
        }
        print("name            n          p50         p99         ops/s        peak RSS   baseline p50   speed-up")
        for r in results {
            let line = [r.name.padding(toLength: 14, withPad: " ", startingAt: 0),
                        String(r.n).padding(toLength: 9, withPad: " ", startingAt: 0),
                        format(r.p50Micros).padding(toLength: 10, withPad: " ", startingAt: 0),
                        format(r.p99Micros).padding(toLength: 10, withPad: " ", startingAt: 0),
                        String(format: "%11.0f", r.opsPerSecond),
                        String(format: "%8.0f MB", Double(r.peakRSSBytes) / 1e6),
                        (r.baselineP50Micros.map(format) ?? "-").padding(toLength: 13, withPad: " ", startingAt: 0),
                        r.speedup.map { String(format: "%.0f×", $0) } ?? "-"]
            print(line.joined(separator: "  "))
        }
        if results.contains(where: { $0.baseline != nil }) { print("baseline: brute-force haversine scan (precomputed cos φ, asin once)") }
    }
}

Bench.main()
