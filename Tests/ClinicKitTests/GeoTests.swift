import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The reference: every point, ranked by the same haversine, ties by id.
func bruteForce(_ points: [Coordinate], _ ids: [Int64], _ center: Coordinate, k: Int, within: Double? = nil,
                accept: (Int) -> Bool = { _ in true }) -> [GeoIndex.Hit] {
    let origin = GeoPoint(center)
    var hits: [GeoIndex.Hit] = []
    for index in points.indices where accept(index) {
        let distance = Geodesy.distance(origin, GeoPoint(points[index]))
        if let within, distance > within { continue }
        hits.append(GeoIndex.Hit(index: index, id: ids[index], distance: distance))
    }
    hits.sort { ($0.distance, $0.id) < ($1.distance, $1.id) }
    return Array(hits.prefix(k))
}

@Suite struct GeodesyTests {
    @Test func knownDistances() throws {
        let london = try #require(Coordinate(latitude: 51.5074, longitude: -0.1278))
        let paris = try #require(Coordinate(latitude: 48.8566, longitude: 2.3522))
        #expect(abs(Geodesy.distance(london, paris) - 343_556) < 100)
        let a = try #require(Coordinate(latitude: 0, longitude: 0)), b = try #require(Coordinate(latitude: 0, longitude: 1))
        #expect(abs(Geodesy.distance(a, b) - 111_195.08) < 0.01, "one degree of the equator on R = 6,371,008.8 m")
        let east = try #require(Coordinate(latitude: 0, longitude: 179.5)), west = try #require(Coordinate(latitude: 0, longitude: -179.5))
        #expect(abs(Geodesy.distance(east, west) - 111_195.08) < 0.01, "across the antimeridian")
        let north = try #require(Coordinate(latitude: 90, longitude: 0)), south = try #require(Coordinate(latitude: -90, longitude: 0))
        #expect(abs(Geodesy.distance(north, south) - Geodesy.maximumDistance) < 1e-6)
    }

    @Test func boxesSplitAtTheAntimeridianAndOpenAtThePoles() throws {
        let fiji = try #require(Coordinate(latitude: -17, longitude: 179))
        let boxes = Geodesy.boxes(around: fiji, radius: 300_000)
        #expect(boxes.count == 2)
        #expect(boxes.contains { $0.maxLon == 180 } && boxes.contains { $0.minLon == -180 })
        let nearPole = try #require(Coordinate(latitude: 88, longitude: 10))
        #expect(Geodesy.boxes(around: nearPole, radius: 300_000) == [Geodesy.Box(minLon: -180, minLat: Geodesy.boxes(around: nearPole, radius: 300_000)[0].minLat, maxLon: 180, maxLat: 90)])
        #expect(Geodesy.boxes(around: fiji, radius: Geodesy.maximumDistance).count == 1)
    }

    /// Every point within the radius lies in one of the boxes, wherever the centre is.
    @Test func boxesContainTheWholeCap() throws {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<20_000 {
            let center = try #require(Coordinate(latitude: .random(in: -90...90, using: &random),
                                                 longitude: .random(in: -180...180, using: &random)))
            let radius = Double.random(in: 1...3_000_000, using: &random)
            let bearing = Double.random(in: 0..<(2 * .pi), using: &random)
            let fraction = Double.random(in: 0...1, using: &random)
            // A point at distance fraction·radius along a bearing (spherical destination formula).
            let delta = fraction * radius / Geodesy.earthRadius
            let phi1 = center.latitude * .pi / 180, lambda1 = center.longitude * .pi / 180
            let phi2 = asin(sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(bearing))
            var lambda2 = lambda1 + atan2(sin(bearing) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
            lambda2 = (lambda2 + 3 * .pi).truncatingRemainder(dividingBy: 2 * .pi) - .pi
            let point = try #require(Coordinate(latitude: min(90, max(-90, phi2 * 180 / .pi)),
                                                longitude: min(180, max(-180, lambda2 * 180 / .pi))))
            let inside = Geodesy.boxes(around: center, radius: radius).contains {
                point.longitude >= $0.minLon && point.longitude <= $0.maxLon && point.latitude >= $0.minLat && point.latitude <= $0.maxLat
            }
            #expect(inside, "\(center) r=\(radius) → \(point)")
            if !inside { return }
        }
    }
}

@Suite struct FinderPropertyTests {
    /// Random points worldwide, with clusters at the poles and the antimeridian and duplicates.
    func randomPoints(_ count: Int, seed: UInt64) -> ([Coordinate], [Int64]) {
        var random = SeededGenerator(seed: seed)
        var points: [Coordinate] = []
        while points.count < count {
            let kind = Int.random(in: 0..<10, using: &random)
            let lat: Double, lon: Double
            switch kind {
            case 0: lat = .random(in: 80...90, using: &random); lon = .random(in: -180...180, using: &random)
            case 1: lat = .random(in: -90 ... -80, using: &random); lon = .random(in: -180...180, using: &random)
            case 2: lat = .random(in: -60...70, using: &random)
                    lon = Bool.random(using: &random) ? .random(in: 175...180, using: &random) : .random(in: -180 ... -175, using: &random)
            case 3 where !points.isEmpty:
                let twin = points[Int.random(in: 0..<points.count, using: &random)] // an exact duplicate
                lat = twin.latitude; lon = twin.longitude
            default: lat = .random(in: -90...90, using: &random); lon = .random(in: -180...180, using: &random)
            }
            if let point = Coordinate(latitude: lat, longitude: lon) { points.append(point) }
        }
        var ids = (1...Int64(count)).map { $0 }
        ids.shuffle(using: &random) // ids unrelated to positions, so ties are really broken by id
        return (points, ids)
    }

    func randomQueries(_ count: Int, seed: UInt64) -> [Coordinate] {
        var random = SeededGenerator(seed: seed)
        var queries: [Coordinate] = []
        let special: [(Double, Double)] = [(90, 0), (-90, 0), (89.999, 179.999), (0, 180), (0, -180), (51.9, 179.9),
                                           (51.9, -179.9), (-89.5, -179.5), (0, 0)]
        for (lat, lon) in special { if let point = Coordinate(latitude: lat, longitude: lon) { queries.append(point) } }
        while queries.count < count {
            let band = Int.random(in: 0..<4, using: &random)
            let lat = band == 0 ? Double.random(in: 85...90, using: &random) : band == 1 ? Double.random(in: -90 ... -85, using: &random)
                : Double.random(in: -90...90, using: &random)
            let lon = band == 2 ? Double.random(in: 178...180, using: &random) * (Bool.random(using: &random) ? 1 : -1)
                : Double.random(in: -180...180, using: &random)
            if let point = Coordinate(latitude: lat, longitude: lon) { queries.append(point) }
        }
        return queries
    }

    func expectSame(_ found: [GeoIndex.Hit], _ expected: [GeoIndex.Hit], _ label: String) -> Bool {
        let sameIds = found.map(\.id) == expected.map(\.id)
        let closeDistances = zip(found, expected).allSatisfy { abs($0.distance - $1.distance) <= 1e-6 * max(1, $1.distance) }
        #expect(sameIds && closeDistances, "\(label): \(found.prefix(3)) vs \(expected.prefix(3))")
        return sameIds && closeDistances
    }

    @Test(arguments: [(3_000, UInt64(1)), (10_000, UInt64(2)), (500, UInt64(3)), (40, UInt64(4))])
    func nearestEqualsBruteForce(size: Int, seed: UInt64) throws {
        let (points, ids) = randomPoints(size, seed: seed)
        let index = try GeoIndex(coordinates: points, ids: ids)
        for (number, query) in randomQueries(400, seed: seed + 100).enumerated() {
            let k = [1, 1, 2, 5, 10, 50][number % 6]
            guard expectSame(try index.nearest(to: query, k: k), bruteForce(points, ids, query, k: k), "k=\(k) at \(query)")
            else { return }
        }
    }

    @Test func filteredAndBoundedSearchesEqualBruteForce() throws {
        let (points, ids) = randomPoints(5_000, seed: 11)
        let index = try GeoIndex(coordinates: points, ids: ids)
        let rare: (Int) -> Bool = { ids[$0] % 50 == 0 } // 2%, like the pediatric clinics
        var random = SeededGenerator(seed: 12)
        for query in randomQueries(300, seed: 13) {
            let k = Int.random(in: 1...10, using: &random)
            let within = Bool.random(using: &random) ? Double.random(in: 0...2_000_000, using: &random) : nil
            guard expectSame(try index.nearest(to: query, k: k, maximumDistance: within, accept: rare),
                             bruteForce(points, ids, query, k: k, within: within, accept: rare), "filtered k=\(k) within \(String(describing: within))")
            else { return }
        }
        // A filter nothing passes, a radius of 0 away from any point, and k larger than the set.
        let none = try #require(points.first)
        #expect(try index.nearest(to: none, k: 3, accept: { _ in false }).isEmpty)
        #expect(try index.nearest(to: none, k: 1, maximumDistance: 0).map(\.distance) == [0])
        let small = try GeoIndex(coordinates: Array(points.prefix(5)), ids: Array(ids.prefix(5)))
        #expect(try small.nearest(to: none, k: 10).count == 5)
        #expect(try GeoIndex(coordinates: [], ids: []).nearest(to: none, k: 1).isEmpty)
    }
}

@Suite struct DefaultDirectoryGeoTests {
    /// The default directory, loaded once for the suite (it takes a few seconds).
    static let system: ClinicSystem? = {
        guard let database = try? SQLiteStore.inMemory(migrations: projectMigrations) else { return nil }
        let system = ClinicSystem(store: database, resources: Resources(root: projectRoot))
        guard (try? system.initialize(.defaultDirectory)) != nil else { return nil }
        return system
    }()

    func nearest(_ lat: Double, _ lon: Double, limit: Int = 1, _ query: NearestQuery? = nil) throws -> [NearbyClinic] {
        let system = try #require(Self.system)
        var query = query ?? NearestQuery()
        query.limit = limit
        return try system.clinics.nearest(to: try #require(Coordinate(latitude: lat, longitude: lon)), query)
    }

    @Test func theAleutiansWestOf180FindAdak() throws {
        // Attu Island, 52.9°N 173.2°E: on the other side of the antimeridian from Adak (176.6°W).
        let found = try nearest(52.9, 173.2)
        #expect(found.first?.clinic.city == "ADAK")
        #expect(found.first?.clinic.timeZone == "America/Adak")
    }

    @Test func nearSaipanFindsTheMarianas() throws {
        let found = try nearest(15.18, 145.75, limit: 4)
        #expect(found.first?.clinic.state == "MP")
        #expect(Set(found.map(\.clinic.state)).isSubset(of: ["MP", "GU"]))
    }

    @Test func nearTheNorthPoleFindsUtqiagvik() throws {
        let found = try nearest(89.9, -30)
        #expect(found.first?.clinic.city == "BARROW")
        #expect((found.first?.clinic.lat ?? 0) > 71)
    }

    @Test func americanSamoaSouthOfTheEquator() throws {
        #expect(try nearest(-14.3, -170.7).first?.clinic.state == "AS")
    }

    @Test func filtersOnTheRealDirectory() throws {
        let system = try #require(Self.system)
        let center = try #require(Coordinate(latitude: 34.05, longitude: -118.25))
        let pediatric = try system.clinics.nearest(to: center, NearestQuery(limit: 5, pediatricOnly: true))
        #expect(pediatric.count == 5 && pediatric.allSatisfy { $0.clinic.isPediatric })
        let cardiology = try system.clinics.nearest(to: center, NearestQuery(limit: 5, specialization: "Кардиология"))
        #expect(cardiology.count == 5)
        for found in cardiology {
            let departments = try system.departments.getDepartmentsByClinicId(found.clinic.id ?? 0)
            #expect(departments.contains { $0.specialization == "cardiology" })
        }
        let within = try system.clinics.nearest(to: center, NearestQuery(limit: 100, withinKilometres: 5))
        #expect(!within.isEmpty && within.allSatisfy { $0.distance <= 5000 })
        #expect(zip(within, within.dropFirst()).allSatisfy { $0.distance <= $1.distance })
        #expect(expectError(.invalidInput) { _ = try system.clinics.nearest(to: center, NearestQuery(limit: 0)) } != nil)
        #expect(expectError(.invalidInput) { _ = try system.clinics.nearest(to: center, NearestQuery(limit: 101)) } != nil)
        #expect(expectError(.invalidInput) { _ = try system.clinics.nearest(to: center, NearestQuery(withinKilometres: -1)) } != nil)
    }

    @Test func finderEqualsBruteForceOnTheRealDirectory() throws {
        let system = try #require(Self.system)
        let clinics = try system.clinics.getAllClinics()
        let points = clinics.compactMap(\.coordinate), ids = clinics.map { $0.id ?? 0 }
        let finder = try system.clinics.finder()
        var random = SeededGenerator(seed: 99)
        for _ in 0..<300 {
            let query = try #require(Coordinate(latitude: .random(in: -90...90, using: &random),
                                                longitude: .random(in: -180...180, using: &random)))
            let found = try finder.nearest(to: query, limit: 3).map(\.clinicId)
            #expect(found == bruteForce(points, ids, query, k: 3).map(\.id))
        }
    }

    @Test func clinicZonesComeFromTheNearestPlaceInTheirState() throws {
        let system = try #require(Self.system)
        func zone(_ city: String, _ state: String) throws -> String? {
            try system.sqliteFile.read { db in
                try String.fetchOne(db, sql: "SELECT time_zone FROM clinics WHERE city = ? AND state = ? LIMIT 1", arguments: [city, state])
            }
        }
        #expect(try zone("EL PASO", "TX") == "America/Denver")
        #expect(try zone("PENSACOLA", "FL") == "America/Chicago")
        #expect(try zone("DETROIT", "MI") == "America/Detroit")
        #expect(try zone("ADAK", "AK") == "America/Adak", "no place within reach: the state rule")
        #expect(try zone("HONOLULU", "HI") == "Pacific/Honolulu")
        #expect(try zone("SAN JUAN", "PR") == "America/Puerto_Rico")
    }
}
