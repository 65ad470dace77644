import ClinicKit
import Foundation

/// Benchmarks on the embedded default directory (7,146 hospitals with demo departments).
enum DirectoryBenchmarks {
    static func defaultDirectory(_ folder: URL) throws -> (ClinicSystem, String) {
        let path = folder.appendingPathComponent("default.sqlite").path
        let resources = try Resources.locate()
        let database = try DatabaseManager.open(path: path, migrations: try Migration.load(from: resources.migrations))
        let system = ClinicSystem(database: database, resources: resources)
        try system.initialize(.defaultDirectory)
        return (system, path)
    }

    /// Points spread over the contiguous United States.
    static func usPoints(_ count: Int, seed: UInt64) -> [Coordinate] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).compactMap { _ in
            Coordinate(latitude: .random(in: 30...48, using: &random), longitude: .random(in: -123 ... -72, using: &random))
        }
    }

    /// The 5 nearest clinics with a free cardiology slot.
    static func find(_ system: ClinicSystem, queries: Int) throws -> Measurement {
        let points = usPoints(queries, seed: 50)
        let samples = try Clock.measure(points, warmup: 5) { point in
            let found = try system.appointments.findFreeSlots(specialization: "cardiology", near: point, limit: 5, clinics: system.clinics)
            guard found.count == 5 else { throw BenchmarkError.mismatch("find gave \(found.count) clinics") }
        }
        return Measurement(name: "find", n: try system.clinics.count(), p50Micros: samples.percentile(0.5),
                           p99Micros: samples.percentile(0.99), opsPerSecond: samples.opsPerSecond, peakRSSBytes: peakRSS(),
                           baseline: nil, baselineP50Micros: nil, speedup: nil)
    }

    /// A whole `clinic clinics nearest --lat … --lon …` process, against `clinic --version`
    /// (starting the process and doing nothing) as the baseline.
    static func cliNearest(databasePath: String, runs: Int) throws -> Measurement? {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let clinic = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("clinic")
        guard FileManager.default.isExecutableFile(atPath: clinic.path) else {
            FileHandle.standardError.write(Data("cli-nearest skipped: build clinic in release mode too (swift build -c release)\n".utf8))
            return nil
        }
        func run(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = clinic
            process.arguments = arguments
            process.environment = ["CLINIC_DB": databasePath, "PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchmarkError.mismatch("clinic \(arguments) failed") }
        }
        let points = usPoints(runs, seed: 51)
        let samples = try Clock.measure(points, warmup: 3) { point in
            try run(["clinics", "nearest", "--lat", String(point.latitude), "--lon", String(point.longitude)])
        }
        let baseline = try Clock.measure(Array(points.prefix(max(10, runs / 2))), warmup: 3) { _ in try run(["--version"]) }
        return Measurement(name: "cli-nearest", n: 7146, p50Micros: samples.percentile(0.5), p99Micros: samples.percentile(0.99),
                           opsPerSecond: samples.opsPerSecond, peakRSSBytes: peakRSS(), baseline: "clinic --version (process start)",
                           baselineP50Micros: baseline.percentile(0.5), speedup: nil)
    }
}
