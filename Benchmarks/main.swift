import ArgumentParser
import ClinicKit
import Foundation

/// `clinic-bench [--quick] [--json] [--only NAME]`: measures ClinicKit's hot paths, each next to
/// a baseline measured in the same run where there is one. Build it in release mode (see
/// docs/BENCHMARKS.md).
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clinic-bench", abstract: "ClinicKit benchmarks.")

    static let names = ["nearest-build", "nearest", "nearest-k10-filtered", "slots", "book", "book-contended", "find", "cli-nearest", "geocode-cold", "waitlist-month"]

    @Flag(help: "Smaller sizes; finishes within a minute.") var quick = false
    @Flag(help: "Print a JSON array instead of a table.") var json = false
    @Option(help: "Run only this benchmark: \(Bench.names.joined(separator: ", ")).") var only: String?
    @Option(help: ArgumentHelp("Write the nearest benchmark's points, queries and answers as CSV to this folder (for Benchmarks/postgis-compare.sh) and stop.", valueName: "dir"))
    var export: String?
    @Option(help: "With --export: how many points (default 1000000).") var exportSize: Int = 1_000_000
    @Option(help: .hidden) var worker: String?
    @Option(help: .hidden) var workerIndex: Int = 0
    @Option(help: .hidden) var workers: Int = 1
    @Option(help: .hidden) var attempts: Int = 0

    func validate() throws {
        if let only, !Self.names.contains(only) { throw ValidationError("unknown benchmark '\(only)'") }
        guard exportSize >= 1 else { throw ValidationError("--export-size must be at least 1") }
        guard workers >= 1, (0..<workers).contains(workerIndex), attempts >= 0 else {
            throw ValidationError("--worker-index must be below --workers, --attempts not negative")
        }
    }

    func run() throws {
        if let worker {
            try DatabaseBenchmarks.worker(path: worker, index: workerIndex, workers: workers, attempts: attempts)
            return
        }
        if let export {
            try NearestBenchmarks.export(to: URL(fileURLWithPath: export), size: exportSize, queries: 2_000)
            return
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let wanted = { (name: String) in only == nil || only == name }
        var results: [Measurement] = []
        func note(_ name: String) { if !json { FileHandle.standardError.write(Data("running \(name)…\n".utf8)) } }

        // Memory-hungry first, while peak RSS still says something about them.
        if wanted("nearest-build") {
            note("nearest-build")
            results.append(try DatabaseBenchmarks.build(size: quick ? 100_000 : 1_000_000, runs: 3, folder: folder))
        }
        if wanted("nearest") {
            note("nearest")
            results += try NearestBenchmarks.nearest(sizes: quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000],
                                                     queries: quick ? 2_000 : 20_000, baselineQueries: quick ? 50 : 200)
        }
        if wanted("nearest-k10-filtered") {
            note("nearest-k10-filtered")
            results.append(try DatabaseBenchmarks.filtered(size: quick ? 100_000 : 1_000_000, queries: quick ? 2_000 : 10_000, folder: folder))
        }
        if wanted("slots") {
            note("slots")
            results.append(try DatabaseBenchmarks.slots(appointments: quick ? 100_000 : 1_000_000, queries: quick ? 500 : 2_000, folder: folder))
        }
        if wanted("book") {
            note("book")
            results.append(try DatabaseBenchmarks.book(count: quick ? 1_000 : 5_000, folder: folder))
        }
        if wanted("book-contended") {
            note("book-contended")
            results.append(try DatabaseBenchmarks.contended(workers: 8, perWorker: quick ? 150 : 600, folder: folder))
        }
        if wanted("find") || wanted("cli-nearest") || wanted("geocode-cold") {
            note("the default directory")
            let (system, path) = try DirectoryBenchmarks.defaultDirectory(folder)
            if wanted("find") { results.append(try Clock.wait { try await DirectoryBenchmarks.find(system, queries: quick ? 100 : 500) }) }
            if wanted("cli-nearest"), let measured = try DirectoryBenchmarks.cliNearest(databasePath: path, runs: quick ? 20 : 60) {
                results.append(measured)
            }
            if wanted("geocode-cold"), let measured = try DirectoryBenchmarks.geocodeCold(databasePath: path, runs: quick ? 20 : 60) {
                results.append(measured)
            }
        }
        // Not a timing: the waitlist's month, simulated (its own table, after the others).
        var simulation: String?
        if wanted("waitlist-month"), !json {
            note("waitlist-month")
            simulation = try WaitlistSimulation.run(folder: folder, quick: quick)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .throw
            FileHandle.standardOutput.write(try encoder.encode(results) + Data("\n".utf8))
            return
        }
        if !results.isEmpty { print(table(results)) }
        if let simulation { print(simulation) }
    }

    func table(_ results: [Measurement]) -> String {
        func cell(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        var lines = [[cell("name", 21), cell("n", 8), cell("p50", 10), cell("p99", 10), cell("ops/s", 9), cell("peak RSS", 9),
                      cell("baseline p50", 13), "speed-up"].joined(separator: "  ")]
        for r in results {
            lines.append([cell(r.name, 21), cell(String(r.n), 8), cell(r.p50Micros.map(format) ?? "-", 10),
                          cell(r.p99Micros.map(format) ?? "-", 10), cell(r.opsPerSecond.map { String(format: "%.0f", $0) } ?? "-", 9),
                          cell(String(format: "%.0f MB", Double(r.peakRSSBytes) / 1e6), 9),
                          cell(r.baselineP50Micros.map(format) ?? "-", 13),
                          r.speedup.map { String(format: "%.1f×", $0) } ?? "-"].joined(separator: "  "))
        }
        let baselines = results.compactMap { r in r.baseline.map { "\(r.name): \($0)" } }
        return (lines + ["", "baselines:"] + Array(Set(baselines)).sorted().map { "  " + $0 }).joined(separator: "\n")
    }
}

Bench.main()
