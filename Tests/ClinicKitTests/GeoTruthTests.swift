import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

let projectData = projectRoot.appendingPathComponent("Data")

/// A reference for the zone finder that shares none of its code: the committed polygons read
/// with a small WKB reader of its own and tested by ray casting, every piece in turn.
struct ReferencePolygons {
    struct Piece {
        let zone: String
        let isUS: Bool
        let rings: [[(x: Double, y: Double)]]
        let minX: Double, minY: Double, maxX: Double, maxY: Double

        func contains(_ x: Double, _ y: Double) -> Bool {
            guard x >= minX, x <= maxX, y >= minY, y <= maxY else { return false }
            var inside = false
            for ring in rings {
                var j = ring.count - 1
                for i in 0..<ring.count {
                    let (a, b) = (ring[i], ring[j])
                    if (a.y > y) != (b.y > y), x < (b.x - a.x) * (y - a.y) / (b.y - a.y) + a.x { inside.toggle() }
                    j = i
                }
            }
            return inside
        }
    }

    let pieces: [Piece]

    init(_ finder: ZoneFinder) throws {
        pieces = try finder.allPieces().map { zone, isUS, wkb in
            let bytes = [UInt8](wkb)
            var offset = 0
            func uint32() -> UInt32 {
                defer { offset += 4 }
                return bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
            }
            func double() -> Double {
                defer { offset += 8 }
                return Double(bitPattern: bytes[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) })
            }
            precondition(bytes[0] == 1, "little-endian WKB")
            offset = 1
            precondition(uint32() == 3, "a polygon")
            var rings: [[(x: Double, y: Double)]] = []
            for _ in 0..<uint32() {
                rings.append((0..<uint32()).map { _ in (x: double(), y: double()) })
            }
            let points = rings.flatMap { $0 }
            return Piece(zone: zone, isUS: isUS, rings: rings, minX: points.map(\.x).min() ?? 0, minY: points.map(\.y).min() ?? 0,
                         maxX: points.map(\.x).max() ?? 0, maxY: points.map(\.y).max() ?? 0)
        }
    }

    /// The zone of the first piece containing the point, U.S. pieces first; nil for none.
    func zone(_ point: Coordinate) -> String? {
        let hits = pieces.filter { $0.contains(point.longitude, point.latitude) }
        return (hits.first { $0.isUS && !$0.zone.hasPrefix("Etc/") } ?? hits.first { !$0.zone.hasPrefix("Etc/") })?.zone
    }
}

@Suite struct TimeZoneBoundaryTests {
    static let finder = try? ZoneFinder.load(from: projectData)

    @Test func referencePointsGetTheZoneTheyKeep() throws {
        let finder = try #require(Self.finder)
        let places: [(String, Double, Double, String)] = [
            ("Vincennes IN", 38.6773, -87.5286, "America/Indiana/Vincennes"),
            ("Apalachicola FL", 29.7255, -84.9856, "America/New_York"),
            ("Eufaula AL", 31.8913, -85.1455, "America/Chicago"),
            ("Tuba City AZ", 36.1350, -111.2399, "America/Denver"),
            ("Page AZ", 36.9147, -111.4558, "America/Phoenix"),
            ("Phenix City AL", 32.4710, -85.0008, "America/New_York"),
            ("Tell City IN", 37.9514, -86.7678, "America/Indiana/Tell_City"),
            ("El Paso TX", 31.7587, -106.4869, "America/Denver"),
            ("Pensacola FL", 30.4213, -87.2169, "America/Chicago"),
            ("Adak AK", 51.8800, -176.6581, "America/Adak"),
            ("Chinle AZ", 36.1544, -109.5526, "America/Denver"),
            ("Hagåtña GU", 13.4745, 144.7504, "Pacific/Guam"),
            ("Pago Pago AS", -14.2781, -170.7025, "Pacific/Pago_Pago"),
            ("Utqiagvik AK", 71.2906, -156.7886, "America/Anchorage"),
            ("Minsk", 53.9, 27.5667, "Europe/Minsk"),
            ("São Paulo", -23.5505, -46.6333, "America/Sao_Paulo"),
        ]
        for (name, lat, lon, zone) in places {
            #expect(try finder.zone(at: try #require(Coordinate(latitude: lat, longitude: lon))) == zone, "\(name)")
        }
    }

    /// Random points inside each U.S. polygon (by the reference's ray casting) resolve to that
    /// polygon's zone.
    @Test func randomPointsInsideEachUSPolygonGetItsZone() throws {
        let finder = try #require(Self.finder)
        let reference = try ReferencePolygons(finder)
        var generator = SeededGenerator(seed: 2026)
        var checked = 0
        for piece in reference.pieces where piece.isUS {
            var found = 0
            for _ in 0..<400 where found < 5 {
                let x = Double.random(in: piece.minX...piece.maxX, using: &generator)
                let y = Double.random(in: piece.minY...piece.maxY, using: &generator)
                guard piece.contains(x, y), let point = Coordinate(latitude: y, longitude: x) else { continue }
                // On a shared border both pieces contain the point: either zone is right.
                let owners = Set(reference.pieces.filter { $0.isUS && $0.contains(x, y) }.map(\.zone))
                #expect(owners.contains(try finder.zone(at: point)), "\(piece.zone) at \(y), \(x)")
                found += 1
            }
            checked += found
        }
        #expect(checked > 1000, "\(checked) points")
    }

    /// The default directory imported with the zone data: every clinic's zone is the zone of
    /// the committed polygon it lies in.
    @Test func everyDefaultClinicHasTheZoneOfItsPolygon() throws {
        let finder = try #require(Self.finder)
        let reference = try ReferencePolygons(finder)
        let database = try SQLiteStore.inMemory(migrations: projectMigrations)
        let clinics = ClinicController(database: database, zones: finder)
        let report = try clinics.importClinics(try Data(contentsOf: projectData.appendingPathComponent("clinics.csv")))
        #expect(report.inserted == 7_146)
        var outside = 0
        for clinic in try clinics.getAllClinics() {
            guard let point = clinic.coordinate, let expected = reference.zone(point) else { outside += 1; continue }
            #expect(clinic.timeZone == expected, "\(clinic.name), \(clinic.city) \(clinic.state)")
        }
        #expect(outside <= 5, "\(outside) clinics in no polygon")
    }

    @Test func pointsOutsideEveryPolygonTakeTheNearest() throws {
        let finder = try #require(Self.finder)
        // Far out in the Pacific, in the Gulf of Mexico, at the poles: a zone, never a failure.
        for (lat, lon) in [(0.0, -140.0), (25.0, -90.0), (90.0, 0.0), (-90.0, 180.0), (0.0, 180.0), (0.0, -180.0)] {
            let zone = try finder.zone(at: try #require(Coordinate(latitude: lat, longitude: lon)))
            #expect(TimeZone(identifier: zone) != nil, "\(lat), \(lon): \(zone)")
        }
    }
}

@Suite struct GazetteerTests {
    static let gazetteer = try? Gazetteer.load(from: projectData)

    func first(_ query: String, preferring: Set<String> = ["US"]) throws -> Gazetteer.Place? {
        try #require(Self.gazetteer).lookup(query, preferredCountries: preferring).places.first
    }

    @Test func namesInAnyScriptAndSpelling() throws {
        for query in ["Minsk", "Минск", "минск", "MINSK", "Minsk, Belarus", "Минск, Беларусь"] {
            #expect(try first(query)?.name == "Minsk", "\(query)")
        }
        #expect(try first("Zurich")?.name == "Zürich")
        #expect(try first("São Paulo")?.country == "BR")
        #expect(try first("sao paulo")?.country == "BR")
        #expect(try first("Москва")?.name == "Moscow")
        #expect(try first("St. Louis, MO")?.admin1 == "MO")
        #expect(try first("Winston Salem")?.name == "Winston-Salem")
        #expect(try first("Atlantis-on-Sea") == nil)
        #expect(try first("") == nil)
    }

    @Test func onlyTheCityPartOfAnAddressIsMatched() throws {
        #expect(try first("Elm St 3, Qwertyville") == nil, "Elmira must not stand in for an unknown city")
        #expect(try first("Paris 1, Qwertyville") == nil)
        #expect(try first("Paris 1, Reno, NV")?.name == "Reno")
        #expect(try first("1025 North Douty Street, Hanford, CA")?.name == "Hanford")
        #expect(try first("1025 North Douty Street, Hanford, CA 93230")?.name == "Hanford")
        #expect(try first("Hanford CA")?.name == "Hanford")
    }

    @Test func smallTownsAreKnown() throws {
        for (query, state) in [("Sedona, AZ", "AZ"), ("Sausalito, CA", "CA"), ("Marfa, TX", "TX"), ("Stowe, VT", "VT"),
                               ("Vincennes, Indiana", "IN"), ("Tuba City, AZ", "AZ"), ("Apalachicola, FL", "FL")] {
            let place = try first(query)
            #expect(place?.admin1 == state && place?.country == "US", "\(query): \(String(describing: place))")
        }
    }

    @Test func qualifiersBind() throws {
        let gazetteer = try #require(Self.gazetteer)
        #expect(try first("Stowe, VT")?.name == "Stowe", "not Stow, Ohio")
        #expect(try first("Paris, TX")?.admin1 == "TX")
        #expect(try first("Paris, Texas")?.admin1 == "TX")
        #expect(try first("Moscow, ID")?.admin1 == "ID")
        #expect(try first("Portland, Maine")?.admin1 == "ME")
        #expect(try first("London, Canada")?.country == "CA")
        #expect(try first("Vincennes, FR")?.country == "FR")
        #expect(try first("Vincennes, Île-de-France")?.country == "FR")
        // A qualifier that no place of that name fits: nobody, and a close spelling there.
        let hanford = try gazetteer.lookup("Hanford, VT")
        #expect(hanford.places.isEmpty)
        #expect(hanford.suggestion?.admin1 == "VT", "\(String(describing: hanford.suggestion))")
        #expect(try gazetteer.lookup("Minsk, Texas").places.isEmpty)
    }

    /// A name whose last word is also some region's name is read as typed first.
    @Test func namesEndingInARegionWordAreNames() throws {
        for (query, state) in [("Green Bay, WI", "WI"), ("Palm Bay, FL", "FL"), ("West Jordan, UT", "UT"),
                               ("Grand Island, NE", "NE"), ("Lake Forest, CA", "CA"), ("Green Bay WI", "WI")] {
            let place = try first(query)
            #expect(place?.admin1 == state && place.map { query.hasPrefix($0.name) } == true, "\(query): \(String(describing: place))")
        }
        #expect(try first("New Delhi")?.country == "IN")
        #expect(try first("Staten Island")?.admin1 == "NY")
    }

    /// Three Georgetowns in Indiana: each gets a hint that names it alone.
    @Test func hintsTellApartPlacesOfOneNameAndState() throws {
        let gazetteer = try #require(Self.gazetteer)
        let places = try gazetteer.lookup("Georgetown, IN").places
        #expect(places.count >= 2)
        let hints = try gazetteer.hints(places)
        #expect(Set(hints).count == hints.count, "\(hints)")
        for (place, hint) in zip(places, hints) {
            let found = try #require(try gazetteer.lookup(hint).places.first, "\(hint)")
            #expect(Geodesy.distance(found.coordinate, place.coordinate) < 25_000, "\(hint) is near \(place.displayName)")
        }
    }

    @Test func zipCodesResolveToTheirCentroid() throws {
        for (query, town, code) in [("02115", "Boston", "02115"), ("90210", "Beverly Hills", "90210"),
                                    ("Boston, MA 02115", "Boston", "02115"), ("02115-3000", "Boston", "02115")] {
            let place = try first(query)
            #expect(place?.name == town && place?.postcode == code && place?.precision == "postcode", "\(query): \(String(describing: place))")
        }
        #expect(try first("02115")?.displayName == "Boston, MA 02115, US")
        #expect(try first("00000") == nil)
        // A ZIP code in another state than the one named is not taken.
        #expect(try first("Boston, TX 02115")?.postcode == nil)
    }

    @Test func ambiguousNamesAreRankedNotGuessed() throws {
        let gazetteer = try #require(Self.gazetteer)
        let vincennes = try gazetteer.lookup("Vincennes", preferredCountries: ["US"]).places
        #expect(vincennes.map(\.country).prefix(2) == ["US", "FR"])
        #expect(vincennes.first?.displayName == "Vincennes, Indiana, US")
        #expect(vincennes.first?.hint(among: vincennes) == "Vincennes, IN")
        #expect(vincennes.dropFirst().first?.hint(among: vincennes) == "Vincennes, FR")
        // Without a preference, the larger comes first.
        #expect(try gazetteer.lookup("Vincennes").places.first?.country == "FR")
        for name in ["Birmingham", "Florence", "Paris"] {
            let places = try gazetteer.lookup(name, preferredCountries: ["US"]).places
            #expect(places.count > 1 && places.first?.country == "US", "\(name)")
            let populations = places.filter { $0.country == "US" }.map(\.population)
            #expect(populations == populations.sorted(by: >), "\(name): larger first")
        }
    }

    @Test func editDistanceIsBounded() {
        #expect(Gazetteer.editDistance("hanford", "hartford", limit: 2) == 2)
        #expect(Gazetteer.editDistance("hanford", "hanford", limit: 2) == 0)
        #expect(Gazetteer.editDistance("hanford", "stowe", limit: 2) == nil)
        #expect(Gazetteer.editDistance("", "ab", limit: 2) == 2)
    }
}

@Suite struct ZoneMigrationTests {
    /// A database made by the previous release (migrations 1–6), whose Vincennes clinic got
    /// Chicago's zone from the nearest-city rule and has an appointment booked: migration 7
    /// gives the clinic its real zone, keeps the appointment's instant, and lists it.
    @Test func theZoneMigrationMovesAClinicAndListsItsBookedAppointments() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("zones-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("old.sqlite").path
        let previous = Array(projectMigrations.prefix(6))
        let appointment: Appointment
        do {
            let old = try SQLiteStore.open(path: path, migrations: previous)
            let system = ClinicSystem(store: old, resources: nil, hasher: fastHasher, now: { testNow })
            let csv = """
                external_id,name,city,state,lat,lon,category,time_zone
                VIN,Good Samaritan,Vincennes,IN,38.6773,-87.5286,GENERAL ACUTE CARE,America/Chicago
                LA1,Adventist,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE,America/Los_Angeles
                """
            _ = try system.importDirectory(Data(csv.utf8), demo: true)
            try old.write { db in
                try db.execute(sql: "INSERT INTO geocode_cache (query, lat, lon, precision, source, created_at) VALUES ('stowe, vt', 41.16, -81.44, 'city', 'gazetteer', 0)")
            }
            let anna = try register(system, "anna", city: "Los Angeles")
            let clinicId = try clinic(system, "VIN").id ?? 0
            let cardiology = try #require(try system.departments.getDepartmentsByClinicId(clinicId).first)
            appointment = try system.appointments.createAppointment(
                clientId: anna.id ?? 0, departmentId: cardiology.id ?? 0,
                at: .local(LocalDateTime(year: 2026, month: 11, day: 30, hour: 9, minute: 20)!))
            #expect(try old.currentVersion() == 6)
        }
        let upgraded = try SQLiteStore.open(path: path, migrations: projectMigrations, zones: LazyZones(data: projectData))
        #expect(upgraded.migrationsRun == Array(7...(projectMigrations.last?.version ?? 7)), "7, and the ones after it")
        let zones = try upgraded.read { db in
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT external_id, time_zone FROM clinics").map {
                ($0["external_id"] as String, $0["time_zone"] as String)
            })
        }
        #expect(zones == ["VIN": "America/Indiana/Vincennes", "LA1": "America/Los_Angeles"])
        let kept = try upgraded.read { db in try Int64.fetchOne(db, sql: "SELECT starts_at FROM appointments WHERE id = ?", arguments: [appointment.id]) }
        #expect(kept == appointment.startsAt.seconds, "the instant is kept")
        let moved = try upgraded.appointmentsAfterZoneChanges(now: testNow)
        #expect(moved.map(\.appointmentId) == [appointment.id ?? 0])
        #expect(moved.first?.oldZone == "America/Chicago" && moved.first?.newZone == "America/Indiana/Vincennes")
        #expect(try upgraded.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM geocode_cache WHERE source = 'gazetteer'") } == 0,
                "old gazetteer answers forgotten")
        #expect(upgraded.check().isSound)
        // Moved again after the change (the change dated an hour after the booking, as the
        // test clock runs behind the real one): no longer listed.
        try upgraded.write { db in try db.execute(sql: "UPDATE clinic_zone_changes SET changed_at = ?", arguments: [testNow.seconds + 3600]) }
        #expect(try upgraded.appointmentsAfterZoneChanges(now: testNow).count == 1)
        let system = ClinicSystem(store: upgraded, resources: nil, hasher: fastHasher, now: { testNow.addingTimeInterval(7200) })
        let anna = try system.clients.getUserByLogin("anna")
        _ = try system.appointments.rescheduleAppointment(appointment.id ?? 0, clientId: anna.id ?? 0,
                                                          to: .local(LocalDateTime(year: 2026, month: 11, day: 30, hour: 10, minute: 0)!))
        #expect(try upgraded.appointmentsAfterZoneChanges(now: testNow).isEmpty)
    }

    @Test func aDatabaseWithClinicsNeedsTheZoneDataToMigrate() throws {
        let database = try SQLiteStore.inMemory(migrations: projectMigrations)
        let system = ClinicSystem(store: database, resources: nil, hasher: fastHasher, now: { testNow })
        _ = try system.importDirectory(Data("external_id,name,city,state,lat,lon\nLA1,Adventist,Los Angeles,CA,34.05,-118.25\n".utf8))
        try database.migrate(to: 6)
        let before = try fingerprint(database)
        #expect(expectError(.storage) { try database.migrate() }?.key == .gazetteerMissing)
        #expect(try fingerprint(database) == before && database.currentVersion() == 6)
    }
}
