import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicTransports
@testable import ClinicStoreSQLite

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

@Suite struct GeocoderChainTests {
    func service(_ system: ClinicSystem, remote: (any Geocoder)? = nil) throws -> GeocodingService {
        let gazetteer = LazyGazetteer(data: projectData)
        return GeocodingService(database: system.database, gazetteer: gazetteer,
                                remote: remote, zones: LazyZones(data: projectData), now: { testNow })
    }

    func cacheRow(_ system: ClinicSystem, _ key: String) throws -> StoredRow? {
        try storedRows(system, "SELECT hits FROM geocode_cache WHERE query = '\(key.replacingOccurrences(of: "'", with: "''"))'").first
    }

    @Test func aCacheHitCountsAndSaysSo() throws {
        let system = try makeSystem()
        // A town only the directory knows: its answer is cached.
        _ = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nZZ1,Desert,Zzyzx Springs,CA,35.14,-116.1\n".utf8))
        let geocoder = try service(system)
        let first = try geocoder.geocode("  ZZYZX Springs ")
        #expect(first.source == "directory" && !first.cached && first.precision == "city")
        #expect(first.query == "zzyzx springs")
        #expect(try cacheRow(system, "zzyzx springs")?["hits"] == 0)
        let second = try geocoder.geocode("Zzyzx springs")
        #expect(second.cached && second.source == "directory" && second.coordinate == first.coordinate)
        _ = try geocoder.geocode("zzyzx springs")
        #expect(try cacheRow(system, "zzyzx springs")?["hits"] == 2)
    }

    /// The gazetteer answers before the cache, with every place a name may mean, and is not
    /// cached: the second answer names the alternatives as the first did.
    @Test func gazetteerAnswersComeWithTheirAlternativesEveryTime() throws {
        let system = try makeSystem()
        let geocoder = try service(system)
        for _ in 0..<2 {
            #expect(try geocoder.resolve("Vincennes").timeZone == nil, "zones only when asked for")
            let vincennes = try geocoder.geocode("Vincennes", zones: true)
            #expect(vincennes.source == "gazetteer" && !vincennes.cached)
            #expect(vincennes.placeName == "Vincennes, Indiana, US" && vincennes.admin1 == "Indiana" && vincennes.country == "US")
            #expect(vincennes.timeZone == "America/Indiana/Vincennes" && vincennes.hint == "Vincennes, IN")
            let france = try #require(vincennes.alternatives.first)
            #expect(france.country == "FR" && france.timeZone == "Europe/Paris" && france.hint == "Vincennes, FR")
            #expect(vincennes.alternatives.count <= GeocodingService.alternativeCount)
        }
        #expect(try storedInt(system, "SELECT count(*) FROM geocode_cache") == 0)
        let zip = try geocoder.geocode("Boston, MA 02115", zones: true)
        #expect(zip.precision == "postcode" && zip.placeName == "Boston, MA 02115, US" && zip.timeZone == "America/New_York")
        #expect(!zip.isAmbiguous)
        // A qualifier nothing fits: a failure that suggests the close spelling in that state.
        let hanford = expectError(.geocodeFailed) { _ = try geocoder.geocode("Hanford, VT") }
        #expect(hanford?.key == .geocodeSuggestion && hanford?.arguments.last?.hasSuffix(", VT") == true,
                "\(String(describing: hanford))")
    }

    @Test func resolvingAloneWritesNothing() throws {
        let system = try makeSystem()
        let before = try fingerprint(system)
        _ = try service(system).resolve("Minsk")
        #expect(try fingerprint(system) == before)
    }

    @Test func coordinatesPassThroughAndUnknownPlacesFail() throws {
        let system = try makeSystem()
        let geocoder = try service(system)
        let typed = try geocoder.geocode("53.9, 27.56")
        #expect(typed.source == "input" && typed.precision == "coordinates")
        #expect(try storedInt(system, "SELECT count(*) FROM geocode_cache") == 0)
        let before = try fingerprint(system)
        #expect(expectError(.geocodeFailed) { _ = try geocoder.geocode("Qwertyuiopville") } != nil)
        #expect(expectError(.invalidInput) { _ = try geocoder.geocode("   ") } != nil)
        #expect(expectError(.invalidInput) { _ = try geocoder.geocode("Minsk\u{0000}") } != nil)
        #expect(try fingerprint(system) == before)
    }

    @Test func directoryCitiesFillTheGazetteersGaps() throws {
        let system = try makeSystem()
        _ = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nFS1,Mercy,Qwerton Falls,KS,37.8,-94.7\n".utf8))
        // Qualifiers bind for the directory too: not in another state, nor another country.
        #expect(expectError(.geocodeFailed) { _ = try service(system).resolve("Qwerton Falls, NE") } != nil)
        #expect(expectError(.geocodeFailed) { _ = try service(system).resolve("Qwerton Falls, Germany") } != nil)
        let result = try service(system).geocode("Qwerton Falls, KS")
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
        #expect(try storedInt(system, "SELECT count(*) FROM geocode_cache") == 0,
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
        var stamps: [Double] = []
        for _ in 0..<3 {
            // A new geocoder each time, as in separate processes: the pace is kept in the file.
            _ = try NominatimGeocoder(baseURL: server.baseURL, timeout: 5, interval: 1, rateFile: rateFile).geocode("Somewhere")
            stamps.append(Double(try String(contentsOfFile: rateFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0)
        }
        #expect(server.requests.count == 3)
        // When each request was let go (the stamps the geocoders left): a second apart. The
        // server's own receive times are not compared: on a loaded machine the first request
        // can be read late and the next one early, which says nothing about the pace.
        for (earlier, later) in zip(stamps, stamps.dropFirst()) {
            #expect(later - earlier >= 0.999, "\(later - earlier)")
        }
    }
}
