import Foundation
import GRDB
import Testing
@testable import ClinicKit

@Suite struct CoordinateParserTests {
    @Test func acceptsTheWaysPeopleWriteCoordinates() throws {
        let minsk = [53.9, 27.56]
        for text in ["53.9,27.56", "53.9, 27.56", "53.9 27.56", " 53.9 ,  27.56 ", "+53.9,+27.56", "53.9N 27.56E",
                     "N53.9 E27.56", "53.9° N, 27.56° E", "27.56E 53.9N", "53.9n,27.56e", "53.9°N 27.56°E", "53.9 N 27.56 E"] {
            let point = try CoordinateParser.parse(text)
            #expect([point.latitude, point.longitude] == minsk, "\(text)")
        }
        let apia = try CoordinateParser.parse("13.8S 171.8W")
        #expect([apia.latitude, apia.longitude] == [-13.8, -171.8])
        let signed = try CoordinateParser.parse("-13.8, -171.8")
        #expect([signed.latitude, signed.longitude] == [-13.8, -171.8])
        #expect(try CoordinateParser.parse("90,180").latitude == 90)
    }

    @Test func separateFieldsMustKeepToTheirAxis() throws {
        let point = try CoordinateParser.parse(latitude: "13.8S", longitude: "171.8W")
        #expect([point.latitude, point.longitude] == [-13.8, -171.8])
        #expect(expectError(.invalidInput) { _ = try CoordinateParser.parse(latitude: "119.6W", longitude: "36.3N") } != nil)
        #expect(expectError(.invalidInput) { _ = try CoordinateParser.parse(latitude: "91", longitude: "0") } != nil)
    }

    @Test func rejectsJunkAndOutOfRange() {
        for text in ["", "53.9", "53.9,27.56,1", "nan,0", "0,inf", "1e2,3", "0x10,1", "91,0", "0,180.0001", "-90.5,0",
                     "53.9N 27.56N", "-53.9S 27.56E", "53..9,27", "abc,def", "53.9;27.56", "'; DROP TABLE clinics; --",
                     String(repeating: "1", count: 200)] {
            let error = expectError(.invalidInput) { _ = try CoordinateParser.parse(text) }
            #expect(error != nil, "\(text)")
        }
    }
}

@Suite struct GazetteerTests {
    static let gazetteer = try? Gazetteer.load(from: projectRoot.appendingPathComponent("Data"))

    @Test func findsCitiesInEnglishAndRussianWhateverTheCaseAndAccents() throws {
        let gazetteer = try #require(Self.gazetteer)
        #expect(gazetteer.places.count > 33_000)
        for query in ["Minsk", "минск", "МИНСК", "Мінск", "Minsk, Belarus", "Минск, Беларусь", "minsk by"] {
            #expect(gazetteer.lookup(query)?.name == "Minsk", "\(query)")
        }
        #expect(gazetteer.lookup("Zurich")?.name == "Zürich")
        #expect(gazetteer.lookup("São Paulo")?.country == "BR")
        #expect(gazetteer.lookup("sao paulo")?.country == "BR")
        #expect(gazetteer.lookup("Москва")?.name == "Moscow")
        #expect(gazetteer.lookup("St. Louis, MO")?.admin1 == "MO")
        #expect(gazetteer.lookup("Winston Salem")?.name == "Winston-Salem")
        #expect(gazetteer.lookup("Atlantis-on-Sea") == nil)
        #expect(gazetteer.lookup("") == nil)
    }

    @Test func addressesResolveToTheirCityNeverToTheirStreet() throws {
        let gazetteer = try #require(Self.gazetteer)
        #expect(gazetteer.lookup("Elm St 3, Qwertyville") == nil, "Elmira must not stand in for an unknown city")
        #expect(gazetteer.lookup("Paris 1, Qwertyville") == nil)
        #expect(gazetteer.lookup("Paris 1, Reno, NV")?.name == "Reno")
        let hanford = try #require(gazetteer.lookup("1025 North Douty Street, Hanford, CA"))
        #expect(hanford.name == "Hanford" && hanford.admin1 == "CA")
        #expect(gazetteer.lookup("1025 North Douty Street, Hanford, CA 93230")?.name == "Hanford")
        #expect(gazetteer.lookup("Hanford CA")?.name == "Hanford")
        #expect(try gazetteer.geocode("1025 North Douty Street, Hanford, CA")?.precision == "city")
    }

    @Test func ambiguousNamesPreferTheGivenStateOrCountryThenTheLarger() throws {
        let gazetteer = try #require(Self.gazetteer)
        #expect(gazetteer.lookup("Paris")?.country == "FR")
        #expect(gazetteer.lookup("Paris, TX")?.admin1 == "TX")
        #expect(gazetteer.lookup("Paris, Texas")?.admin1 == "TX")
        #expect(gazetteer.lookup("Moscow")?.country == "RU")
        #expect(gazetteer.lookup("Moscow, ID")?.admin1 == "ID")
        #expect(gazetteer.lookup("Portland")?.admin1 == "OR")
        #expect(gazetteer.lookup("Portland, Maine")?.admin1 == "ME")
        #expect(gazetteer.lookup("London, Canada")?.country == "CA")
    }

    @Test func timeZonesFollowTheNearestPlaceInTheState() throws {
        let gazetteer = try #require(Self.gazetteer)
        func zone(_ lat: Double, _ lon: Double, _ state: String) throws -> String? {
            try gazetteer.timeZone(at: try #require(Coordinate(latitude: lat, longitude: lon)), state: state)
        }
        #expect(try zone(31.77, -106.44, "TX") == "America/Denver")   // El Paso, not Ciudad Juárez
        #expect(try zone(30.42, -87.22, "FL") == "America/Chicago")   // Pensacola
        #expect(try zone(25.77, -80.19, "FL") == "America/New_York")  // Miami
        #expect(try zone(51.88, -176.65, "AK") == nil)                // Adak: nothing within reach
        #expect(try zone(13.47, 144.75, "GU") == "Pacific/Guam")
    }
}

@Suite struct GeocoderChainTests {
    func service(_ system: ClinicSystem, remote: (any Geocoder)? = nil) throws -> GeocodingService {
        let gazetteer = try Gazetteer.load(from: projectRoot.appendingPathComponent("Data"))
        let states = LazyGazetteer(data: projectRoot.appendingPathComponent("Data"))
        return GeocodingService(database: system.database, offline: [gazetteer, DirectoryCities(database: system.database, gazetteer: states)],
                                remote: remote, now: { testNow })
    }

    func cacheRow(_ system: ClinicSystem, _ key: String) throws -> Row? {
        try system.database.read { try Row.fetchOne($0, sql: "SELECT * FROM geocode_cache WHERE query = ?", arguments: [key]) }
    }

    @Test func aCacheHitCountsAndSaysSo() throws {
        let system = try makeSystem()
        let geocoder = try service(system)
        let first = try geocoder.geocode("  Минск ")
        #expect(first.source == "gazetteer" && !first.cached && first.precision == "city")
        #expect(first.query == "минск")
        #expect(try cacheRow(system, "минск")?["hits"] == 0)
        let second = try geocoder.geocode("МИНСК")
        #expect(second.cached && second.source == "gazetteer" && second.coordinate == first.coordinate)
        _ = try geocoder.geocode("минск")
        #expect(try cacheRow(system, "минск")?["hits"] == 2)
    }

    @Test func resolvingAloneWritesNothing() throws {
        let system = try makeSystem()
        let before = try fingerprint(system.database)
        _ = try service(system).resolve("Minsk")
        #expect(try fingerprint(system.database) == before)
    }

    @Test func coordinatesPassThroughAndUnknownPlacesFail() throws {
        let system = try makeSystem()
        let geocoder = try service(system)
        let typed = try geocoder.geocode("53.9, 27.56")
        #expect(typed.source == "input" && typed.precision == "coordinates")
        #expect(try system.database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM geocode_cache") } == 0)
        let before = try fingerprint(system.database)
        #expect(expectError(.geocodeFailed) { _ = try geocoder.geocode("Qwertyuiopville") } != nil)
        #expect(expectError(.invalidInput) { _ = try geocoder.geocode("   ") } != nil)
        #expect(expectError(.invalidInput) { _ = try geocoder.geocode("Minsk\u{0000}") } != nil)
        #expect(try fingerprint(system.database) == before)
    }

    @Test func directoryCitiesFillTheGazetteersGaps() throws {
        let system = try makeSystem()
        _ = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nFS1,Mercy,Fort Scott,KS,37.8,-94.7\n".utf8))
        let result = try service(system).geocode("Fort Scott, KS")
        #expect(result.source == "directory")
        #expect(abs(result.coordinate.latitude - 37.8) < 1e-9)
    }

    @Test func nominatimIsAskedLastWithAUserAgentAndItsAnswerCached() throws {
        let server = try TestHTTPServer { _ in
            (0, #"[{"lat":"40.7128","lon":"-74.0060","place_rank":30,"display_name":"1 Main St, Springfield"}]"#)
        }
        defer { server.stop() }
        let system = try makeSystem()
        let remote = NominatimGeocoder(baseURL: server.baseURL, timeout: 5, interval: 0)
        let geocoder = try service(system, remote: remote)
        #expect(try geocoder.geocode("Minsk").source == "gazetteer", "offline sources come first")
        #expect(server.requests.isEmpty)
        let found = try geocoder.geocode("1 Main St, Nowheresville-on-Nothing")
        #expect(found.source == "nominatim" && found.precision == "address")
        #expect(found.coordinate.latitude == 40.7128 && found.coordinate.longitude == -74.0060)
        let request = try #require(server.requests.first)
        #expect(request.path.hasPrefix("/search?"))
        #expect(request.path.contains("format=jsonv2"))
        #expect(request.headers["user-agent"]?.hasPrefix("clinic/") == true)
        let again = try geocoder.geocode("1 main st, nowheresville-on-nothing")
        #expect(again.cached && again.source == "nominatim")
        #expect(server.requests.count == 1, "the second time comes from the cache")
    }

    @Test func resolvingTwiceInOneProcessAsksTheRemoteGeocoderOnce() throws {
        let server = try TestHTTPServer { _ in (0, #"[{"lat":"40.7","lon":"-74.0","place_rank":16}]"#) }
        defer { server.stop() }
        let system = try makeSystem()
        let geocoder = try service(system, remote: NominatimGeocoder(baseURL: server.baseURL, timeout: 5, interval: 0))
        let first = try geocoder.resolve("Nowheresville, ZZ") // a form checks the city…
        let second = try geocoder.resolve("nowheresville,  zz") // …and registration looks it up again
        #expect(first == second && first.source == "nominatim" && server.requests.count == 1)
        #expect(try system.database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM geocode_cache") } == 0,
                "still nothing written")
    }

    @Test func aPaceStampInTheFutureHoldsNoLongerThanOneInterval() throws {
        let server = try TestHTTPServer { _ in (0, #"[{"lat":"40.7","lon":"-74.0","place_rank":30}]"#) }
        defer { server.stop() }
        let rateFile = FileManager.default.temporaryDirectory.appendingPathComponent("rate-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: rateFile) }
        try "1e12\n".write(toFile: rateFile, atomically: true, encoding: .utf8) // the year 33658
        let remote = NominatimGeocoder(baseURL: server.baseURL, timeout: 5, interval: 0.2, rateFile: rateFile)
        let system = try makeSystem()
        #expect(try service(system, remote: remote).geocode("2 Main St, Nowheresville").source == "nominatim",
                "answered after one interval at most, not after 31,000 years")
    }

    @Test func nominatimEmptyAnswersFailAndGarbageIsReported() throws {
        let server = try TestHTTPServer { path in (0, path.contains("garbage") ? "<html>" : "[]") }
        defer { server.stop() }
        let system = try makeSystem()
        let geocoder = try service(system, remote: NominatimGeocoder(baseURL: server.baseURL, timeout: 5, interval: 0))
        #expect(expectError(.geocodeFailed) { _ = try geocoder.geocode("Nowhere Street 1, Nothingtown") }?.key == .geocodeFailed)
        #expect(expectError(.geocodeFailed) { _ = try geocoder.geocode("garbage, Nothingtown") }?.key == .geocoderBadAnswer)
    }

    @Test func nominatimTimesOut() throws {
        let server = try TestHTTPServer { _ in (3, "[]") }
        defer { server.stop() }
        let remote = NominatimGeocoder(baseURL: server.baseURL, timeout: 0.5, interval: 0)
        let started = Date()
        #expect(expectError(.geocodeFailed) { _ = try remote.geocode("Somewhere") }?.key == .geocoderTimeout)
        #expect(Date().timeIntervalSince(started) < 2.9, "gave up before the server answered")
    }

    @Test func nominatimKeepsToOneRequestPerSecondAcrossInstances() throws {
        let server = try TestHTTPServer { _ in (0, "[]") }
        defer { server.stop() }
        let rateFile = FileManager.default.temporaryDirectory.appendingPathComponent("rate-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: rateFile) }
        for _ in 0..<3 {
            // A new geocoder each time, as in separate processes: the pace is kept in the file.
            _ = try NominatimGeocoder(baseURL: server.baseURL, timeout: 5, interval: 1, rateFile: rateFile).geocode("Somewhere")
        }
        let times = server.requests.map(\.time)
        #expect(times.count == 3)
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= 0.95, "\(later.timeIntervalSince(earlier))")
        }
    }
}
