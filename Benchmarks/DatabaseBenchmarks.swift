import ClinicKit
import ClinicStoreSQLite
import Foundation
import GRDB

/// Benchmarks over real SQLite files in a temporary folder, built with deterministic data.
enum DatabaseBenchmarks {
    static func migrations() throws -> [Migration] {
        try Migration.load(from: try Resources.locate().migrations)
    }

    static func freshDatabase(_ folder: URL, _ name: String) throws -> SQLiteStore {
        try SQLiteStore.open(path: folder.appendingPathComponent(name).path, migrations: migrations())
    }

    /// `count` clinics uniformly at latitude -60..70, longitude -180..180, 2% pediatric,
    /// inserted directly (the import's validation is not what is measured here).
    static func insertClinics(_ database: SQLiteStore, count: Int, seed: UInt64) throws {
        let points = randomCoordinates(count, seed: seed)
        var random = SeededGenerator(seed: seed &+ 1)
        try database.write { db in
            let statement = try db.makeStatement(sql: """
                INSERT INTO clinics (external_id, name, address, city, city_key, category, lat, lon, is_pediatric, is_hospital, time_zone)
                VALUES (?, ?, '', 'Benchville', 'benchville', 'GENERAL ACUTE CARE', ?, ?, ?, 1, 'America/Chicago')
                """)
            for (index, point) in points.enumerated() {
                let pediatric = Int.random(in: 0..<50, using: &random) == 0
                try statement.execute(arguments: ["B\(index)", "Clinic \(index)", point.latitude, point.longitude, pediatric])
            }
        }
    }

    // MARK: nearest-build, nearest-k10-filtered

    /// Building the finder from a clinics table of `size` rows.
    static func build(size: Int, runs: Int, folder: URL) throws -> Measurement {
        let database = try freshDatabase(folder, "build-\(size).sqlite")
        try insertClinics(database, count: size, seed: 42)
        var samples = Samples()
        for _ in 0..<runs {
            let start = Clock.now()
            let finder = try database.reading { tx in try NearestClinicFinder.load(tx) }
            samples.add(Clock.now() - start)
            guard finder.count == size else { throw BenchmarkError.mismatch("finder holds \(finder.count) of \(size)") }
        }
        return Measurement(name: "nearest-build", n: size, p50Micros: samples.percentile(0.5), p99Micros: samples.percentile(0.99),
                           opsPerSecond: samples.opsPerSecond, peakRSSBytes: peakRSS(), baseline: nil, baselineP50Micros: nil,
                           speedup: nil)
    }

    /// k = 10 pediatric-only (2% of the clinics) against a filtered brute-force scan.
    static func filtered(size: Int, queries: Int, folder: URL) throws -> Measurement {
        let database = try freshDatabase(folder, "filtered-\(size).sqlite")
        try insertClinics(database, count: size, seed: 43)
        let finder = try database.reading { tx in try NearestClinicFinder.load(tx) }
        let rows = try database.read { db in try Row.fetchAll(db, sql: "SELECT id, lat, lon, is_pediatric FROM clinics ORDER BY id") }
        let points = rows.compactMap { Coordinate(latitude: $0["lat"], longitude: $0["lon"]) }
        let ids = rows.map { $0["id"] as Int64 }
        let pediatric = rows.map { $0["is_pediatric"] as Bool }
        let scan = BruteForce(points, ids: ids)
        let targets = randomCoordinates(queries, seed: 8)
        let filter = NearestClinicFinder.Filter(pediatricOnly: true)
        let fast = try Clock.measure(targets) { _ = try finder.nearest(to: $0, limit: 10, filter: filter) }
        let slow = Clock.measure(Array(targets.prefix(30)), warmup: 2) { target in _ = scan.nearest(to: target) { pediatric[$0] } }
        for target in targets.prefix(20) {
            let found = try finder.nearest(to: target, limit: 1, filter: filter).first?.clinicId
            guard found == scan.nearest(to: target, accept: { pediatric[$0] })?.id else {
                throw BenchmarkError.mismatch("filtered nearest at \(target)")
            }
        }
        return Measurement(name: "nearest-k10-filtered", n: size, p50Micros: fast.percentile(0.5), p99Micros: fast.percentile(0.99),
                           opsPerSecond: fast.opsPerSecond, peakRSSBytes: peakRSS(),
                           baseline: "brute-force scan of pediatric clinics (k=1)", baselineP50Micros: slow.percentile(0.5),
                           speedup: slow.percentile(0.5) / fast.percentile(0.5))
    }

    // MARK: slots

    /// Free slots of one department for 7 days, with `appointments` appointments stored
    /// across the working slots of the next 90 days. Baseline: asking the database slot by
    /// slot whether it is taken (the naive loop).
    static func slots(appointments: Int, queries: Int, folder: URL) throws -> Measurement {
        let database = try freshDatabase(folder, "slots.sqlite")
        let clinicCount = max(200, appointments / 100)
        try insertClinics(database, count: clinicCount, seed: 44)
        try database.writing { tx in _ = try DemoDirectory.fill(tx) }
        let now = Date()
        let system = ClinicSystem(store: database, resources: nil, now: { now })
        try fillAppointments(database, count: appointments, days: 90, now: now, seed: 45)
        let departments = try database.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM departments ORDER BY id") }
        var random = SeededGenerator(seed: 46)
        let picks = (0..<queries).map { _ in departments[Int.random(in: 0..<departments.count, using: &random)] }
        let fast = try Clock.measure(picks) { _ = try system.appointments.slots(departmentId: $0, days: 7) }
        let slow = try Clock.measure(Array(picks.prefix(200)), warmup: 5) { departmentId in
            // The naive way: every slot of the week, then one query per slot.
            let all = try system.appointments.slots(departmentId: departmentId, days: 7)
            try database.read { db in
                for slot in all {
                    _ = try Int.fetchOne(db, sql: """
                        SELECT count(*) FROM appointments WHERE doctor_id = ? AND starts_at = ? AND status IN ('scheduled', 'confirmed')
                        """, arguments: [slot.doctorId, Int64(slot.start.timeIntervalSince1970)])
                }
            }
        }
        let stored = try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM appointments") ?? 0 }
        return Measurement(name: "slots", n: stored, p50Micros: fast.percentile(0.5), p99Micros: fast.percentile(0.99),
                           opsPerSecond: fast.opsPerSecond, peakRSSBytes: peakRSS(), baseline: "one query per slot",
                           baselineP50Micros: slow.percentile(0.5), speedup: slow.percentile(0.5) / fast.percentile(0.5))
    }

    /// Up to `count` appointments on random working slots of random doctors over `days` days.
    static func fillAppointments(_ database: SQLiteStore, count: Int, days: Int, now: Date, seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let doctors = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT d.id, d.department_id, p.clinic_id FROM doctors d JOIN departments p ON p.id = d.department_id")
        }
        let zone = TimeZone(identifier: "America/Chicago") ?? .gmt
        let today = LocalDateTime.of(now, in: zone).at(minuteOfDay: 0)
        try database.write { db in
            let statement = try db.makeStatement(sql: """
                INSERT OR IGNORE INTO appointments (client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at,
                    status, notes, created_at, updated_at)
                VALUES (NULL, ?, ?, ?, 'Dr Bench', ?, ?, 'scheduled', '', 0, 0)
                """)
            var inserted = 0
            while inserted < count {
                let doctor = doctors[Int.random(in: 0..<doctors.count, using: &random)]
                let day = today.adding(days: Int.random(in: 1...days, using: &random))
                guard (1...5).contains(day.weekday) else { continue }
                let slot = Int.random(in: 0..<24, using: &random)
                let minute = slot < 12 ? 480 + slot * 20 : 780 + (slot - 12) * 20
                guard let start = day.at(minuteOfDay: minute).firstInstant(in: zone) else { continue }
                let seconds = Int64(start.timeIntervalSince1970)
                try statement.execute(arguments: [doctor["clinic_id"] as Int64, doctor["department_id"] as Int64,
                                                  doctor["id"] as Int64, seconds, seconds + 1200])
                inserted += db.changesCount
            }
        }
    }

    // MARK: book, book-contended

    /// A directory of `clinics` clinics with demo hours, `patients` patients, lead time 0 and
    /// a high limit per patient, ready for booking.
    static func bookingDatabase(_ folder: URL, name: String, clinics: Int, patients: Int) throws -> SQLiteStore {
        let database = try freshDatabase(folder, name)
        try insertClinics(database, count: clinics, seed: 47)
        try database.writing { tx in _ = try DemoDirectory.fill(tx) }
        try database.write { db in
            for (key, value) in [("booking.lead_minutes", "0"), ("booking.max_active", "1000")] {
                try db.execute(sql: "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", arguments: [key, value])
            }
            let statement = try db.makeStatement(sql: """
                INSERT INTO clients (login, login_key, password_hash, name, surname, street, house, city, created_at)
                VALUES (?, ?, 'x', 'Bench', 'Patient', 'Main Street', '1', 'Benchville', 0)
                """)
            for index in 0..<patients { try statement.execute(arguments: ["p\(index)", "p\(index)"]) }
        }
        return database
    }

    /// Every (department, start) a booking can try over the next `days` days, in a fixed order.
    static func bookableSlots(_ database: SQLiteStore, days: Int, now: Date) throws -> [(department: Int64, start: Date)] {
        let departments = try database.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM departments ORDER BY id") }
        let zone = TimeZone(identifier: "America/Chicago") ?? .gmt
        var result: [(Int64, Date)] = []
        let first = LocalDateTime.of(now, in: zone).at(minuteOfDay: 0).adding(days: 1)
        for offset in 0..<days {
            let day = first.adding(days: offset)
            guard (1...5).contains(day.weekday) else { continue }
            for minute in Array(stride(from: 480, to: 720, by: 20)) + Array(stride(from: 780, to: 1020, by: 20)) {
                guard let start = day.at(minuteOfDay: minute).firstInstant(in: zone) else { continue }
                for department in departments { result.append((department, start)) }
            }
        }
        return result
    }

    /// One booking per transaction in one process, durable (synchronous=FULL). Baseline: a
    /// bare INSERT in the same kind of transaction, with the same durability.
    static func book(count: Int, folder: URL) throws -> Measurement {
        let database = try bookingDatabase(folder, name: "book.sqlite", clinics: 50, patients: 2000)
        let now = Date()
        let system = ClinicSystem(store: database, resources: nil, now: { now })
        let slots = Array(try bookableSlots(database, days: 60, now: now).prefix(count))
        var index = 0
        let fast = try Clock.measure(slots, warmup: 0) { slot in
            index += 1
            _ = try system.appointments.createAppointment(clientId: Int64(index % 2000 + 1), departmentId: slot.department,
                                                          at: .instant(slot.start))
        }
        let raw = try Clock.measure(Array(0..<min(count, 2000)), warmup: 0) { value in
            try database.write { db in try db.execute(sql: "INSERT INTO settings (key, value) VALUES (?, 'x')", arguments: ["bench\(value)"]) }
        }
        return Measurement(name: "book", n: count, p50Micros: fast.percentile(0.5), p99Micros: fast.percentile(0.99),
                           opsPerSecond: fast.opsPerSecond, peakRSSBytes: peakRSS(),
                           baseline: "bare durable INSERT transaction", baselineP50Micros: raw.percentile(0.5),
                           speedup: raw.percentile(0.5) / fast.percentile(0.5))
    }

    /// `workers` processes book in the same departments at once: each takes its own slots of a
    /// shared list (interleaved), and every fifth attempt goes for its neighbour's slot, so
    /// they also collide. Throughput is successful bookings per second over the span of the
    /// workers' booking loops (process start-up excluded). Afterwards no slot may hold two
    /// active appointments.
    static func contended(workers: Int, perWorker: Int, folder: URL) throws -> Measurement {
        let path = folder.appendingPathComponent("contended.sqlite").path
        let database = try bookingDatabase(folder, name: "contended.sqlite", clinics: 4, patients: 4000)
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var processes: [(Process, Pipe)] = []
        for worker in 0..<workers {
            let process = Process(), output = Pipe()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["--worker", path, "--worker-index", String(worker), "--workers", String(workers),
                                 "--attempts", String(perWorker)]
            process.standardOutput = output
            try process.run()
            processes.append((process, output))
        }
        // Each worker prints "booked taken p50 p99 loopStart loopEnd" (µs, µs, Unix seconds).
        var p50s: [Double] = [], p99s: [Double] = [], starts: [Double] = [], ends: [Double] = []
        for (process, output) in processes {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
            if fields.count == 6 { p50s.append(fields[2]); p99s.append(fields[3]); starts.append(fields[4]); ends.append(fields[5]) }
        }
        let elapsed = (ends.max() ?? 0) - (starts.min() ?? 0)
        guard processes.allSatisfy({ $0.0.terminationStatus == 0 }), p50s.count == workers else {
            throw BenchmarkError.mismatch("a worker failed")
        }
        let (booked, doubles) = try database.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM appointments WHERE status = 'scheduled'") ?? 0,
             try Int.fetchOne(db, sql: """
                SELECT count(*) FROM (SELECT 1 FROM appointments WHERE status IN ('scheduled', 'confirmed')
                GROUP BY doctor_id, starts_at HAVING count(*) > 1)
                """) ?? -1)
        }
        guard doubles == 0 else { throw BenchmarkError.mismatch("\(doubles) double bookings") }
        return Measurement(name: "book-contended", n: workers, p50Micros: p50s.sorted()[workers / 2], p99Micros: p99s.max(),
                           opsPerSecond: Double(booked) / elapsed, peakRSSBytes: peakRSS(), baseline: nil, baselineP50Micros: nil,
                           speedup: nil)
    }

    /// The worker `index` of `workers` in `contended`: makes `attempts` bookings in the shared
    /// list, on its own slots (interleaved) and every fifth on its neighbour's.
    static func worker(path: String, index: Int, workers: Int, attempts count: Int) throws {
        let database = try SQLiteStore.open(path: path, migrations: migrations())
        let now = Date()
        let system = ClinicSystem(store: database, resources: nil, now: { now })
        let slots = try bookableSlots(database, days: 60, now: now)
        guard !slots.isEmpty else { throw BenchmarkError.unusable("no bookable slots in \(path)") }
        var booked = 0, taken = 0
        var samples = Samples()
        let loopStart = Date().timeIntervalSince1970
        for attempt in 0..<count {
            let owner = attempt % 5 == 4 ? (index + 1) % workers : index
            let slot = slots[(attempt * workers + owner) % slots.count]
            let start = Clock.now()
            defer { samples.add(Clock.now() - start) }
            do {
                _ = try system.appointments.createAppointment(clientId: Int64(index * 500 + attempt % 500 + 1),
                                                              departmentId: slot.department, at: .instant(slot.start))
                booked += 1
            } catch let error as ClinicError where error.code == .slotTaken || error.code == .overlappingAppointment {
                taken += 1
            }
        }
        let loopEnd = Date().timeIntervalSince1970
        print("\(booked) \(taken) \(samples.percentile(0.5)) \(samples.percentile(0.99)) \(loopStart) \(loopEnd)")
    }
}
