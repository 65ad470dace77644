import ClinicKit
import ClinicStoreSQLite
import Foundation

/// Benchmarks on the embedded default directory (7,146 hospitals with demo departments).
enum DirectoryBenchmarks {
    static func defaultDirectory(_ folder: URL) throws -> (ClinicSystem, String) {
        let path = folder.appendingPathComponent("default.sqlite").path
        let resources = try Resources.locate()
        let database = try SQLiteStore.open(path: path, migrations: try Migration.load(from: resources.migrations))
        let system = ClinicSystem(store: database, resources: resources)
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
    static func find(_ system: ClinicSystem, queries: Int) async throws -> Measurement {
        let points = usPoints(queries, seed: 50)
        let samples = try await Clock.measure(points, warmup: 5) { point in
            let found = try await system.appointments.findFreeSlots(specialization: "cardiology", near: point, limit: 5, clinics: system.clinics)
            guard found.count == 5 else { throw BenchmarkError.mismatch("find gave \(found.count) clinics") }
        }
        return Measurement(name: "find", n: try system.clinics.count(), p50Micros: samples.percentile(0.5),
                           p99Micros: samples.percentile(0.99), opsPerSecond: samples.opsPerSecond, peakRSSBytes: peakRSS(),
                           baseline: nil, baselineP50Micros: nil, speedup: nil)
    }

    /// Runs the release `clinic` beside this benchmark on a database; nil (with a note) when
    /// it is not built.
    static func clinicRunner(databasePath: String, for name: String) throws -> (([String]) throws -> Void)? {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let clinic = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("clinic")
        guard FileManager.default.isExecutableFile(atPath: clinic.path) else {
            FileHandle.standardError.write(Data("\(name) skipped: build clinic in release mode too (swift build -c release)\n".utf8))
            return nil
        }
        let environment = ["CLINIC_DB=" + databasePath, "PATH=/usr/bin:/bin", "HOME=" + NSTemporaryDirectory(), "LANG=C.UTF-8"]
        // posix_spawn and waitpid, not Foundation's Process: its waitUntilExit polls its run
        // loop in steps of tens of milliseconds, which would be measured as the program's time.
        return { arguments in
            let argv = ([clinic.path] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup($0) } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            var pid: pid_t = 0
            guard posix_spawn(&pid, clinic.path, &actions, nil, argv, envp) == 0 else {
                throw BenchmarkError.mismatch("cannot start clinic")
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            guard status == 0 else { throw BenchmarkError.mismatch("clinic \(arguments) failed") }
        }
    }

    /// A whole `clinic clinics nearest --lat … --lon …` process, against `clinic --version`
    /// (starting the process and doing nothing) as the baseline.
    static func cliNearest(databasePath: String, runs: Int) throws -> Measurement? {
        guard let run = try clinicRunner(databasePath: databasePath, for: "cli-nearest") else { return nil }
        let points = usPoints(runs, seed: 51)
        let samples = try Clock.measure(points, warmup: 3) { point in
            try run(["clinics", "nearest", "--lat", String(point.latitude), "--lon", String(point.longitude)])
        }
        let baseline = try Clock.measure(Array(points.prefix(max(10, runs / 2))), warmup: 3) { _ in try run(["--version"]) }
        return Measurement(name: "cli-nearest", n: 7146, p50Micros: samples.percentile(0.5), p99Micros: samples.percentile(0.99),
                           opsPerSecond: samples.opsPerSecond, peakRSSBytes: peakRSS(), baseline: "clinic --version (process start)",
                           baselineP50Micros: baseline.percentile(0.5), speedup: nil)
    }

    /// Small towns, ZIP codes and ambiguous names, as patients type them.
    static let towns = ["Sedona, AZ", "Sausalito, CA", "Marfa, TX", "Stowe, VT", "Vincennes", "Tuba City, AZ", "Apalachicola, FL",
                        "02115", "Boston, MA 02115", "Ogallala, NE", "Pikeville, TN", "Hardinsburg, KY", "Chinle, AZ", "Minsk",
                        "Birmingham", "Florence", "Eufaula, AL", "Tell City, IN", "90210", "Ontario, OR"]

    /// A whole `clinic geocode "Town, ST"` process (the gazetteer is never cached, so every run
    /// is cold: open the database, the gazetteer file and the zone file, answer), against
    /// `clinic --version`.
    static func geocodeCold(databasePath: String, runs: Int) throws -> Measurement? {
        guard let run = try clinicRunner(databasePath: databasePath, for: "geocode-cold") else { return nil }
        let queries = (0..<runs).map { towns[$0 % towns.count] }
        let samples = try Clock.measure(queries, warmup: 3) { town in try run(["geocode", town]) }
        let baseline = try Clock.measure(Array(queries.prefix(max(10, runs / 2))), warmup: 3) { _ in try run(["--version"]) }
        return Measurement(name: "geocode-cold", n: 174_866, p50Micros: samples.percentile(0.5), p99Micros: samples.percentile(0.99),
                           opsPerSecond: samples.opsPerSecond, peakRSSBytes: peakRSS(), baseline: "clinic --version (process start)",
                           baselineP50Micros: baseline.percentile(0.5), speedup: nil)
    }
}
