import Foundation
import Testing
@testable import ClinicKit
@testable import ClinicTransports

/// The geocoder chain awaited (issue 56): the same steps as the blocking chain, its reads of the
/// cache and the directory awaited from the store, the HTTP geocoder awaited.
@Suite struct AwaitedGeocodingTests {
    func service(_ system: ClinicSystem, remote: (any Geocoder)? = nil) -> GeocodingService {
        GeocodingService(database: system.database, gazetteer: LazyGazetteer(data: projectData), remote: remote,
                         zones: LazyZones(data: projectData), now: { testNow })
    }

    /// The blocking chain's answer (a synchronous caller's overload), or its error's key.
    func blocking(_ geocoder: GeocodingService, _ query: String) -> Result<GeocodeResult, ClinicError> {
        do { return .success(try geocoder.resolve(query, zones: true)) } catch let error as ClinicError { return .failure(error) } catch {
            return .failure(ClinicError(.geocodeFailed, .geocodeFailed, "\(error)"))
        }
    }

    /// What an awaited look-up of "Somewhere" ends with: its error's key, nil when it answered.
    func refusal(_ geocoder: NominatimGeocoder) async -> MessageKey? {
        do {
            _ = try await geocoder.lookUp("Somewhere")
            return nil
        } catch {
            return (error as? ClinicError)?.key
        }
    }

    @Test func theAwaitedChainAnswersAsTheBlockingOne() async throws {
        let system = try makeSystem()
        _ = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nZZ1,Desert,Zzyzx Springs,CA,35.14,-116.1\n".utf8))
        // A fresh service for each chain: neither learns the directory's countries from the other.
        let awaited = service(system), blocked = service(system)
        for query in ["Vincennes", "Springfield", "Boston, MA 02115", "53.9, 27.56", "Zzyzx Springs", "Zzyzx Springs, NE",
                      "Hanford, VT", "Qwertyuiopville", "   ", "1120 SW 5th Ave, Portland, OR 97204"] {
            let expected = blocking(blocked, query)
            do {
                let found = try await awaited.resolve(query, zones: true)
                #expect(Result<GeocodeResult, ClinicError>.success(found) == expected, "\(query)")
            } catch let error as ClinicError {
                guard case .failure(let wanted) = expected else { Issue.record("\(query): \(error)"); continue }
                #expect(error.key == wanted.key && error.arguments == wanted.arguments, "\(query)")
            }
        }
        #expect(try await awaited.resolve("Vincennes").alternatives.first?.country == "FR", "a name's places come with it")
    }

    @Test func theAwaitedRememberCachesAndCountsHits() async throws {
        let system = try makeSystem()
        _ = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nZZ1,Desert,Zzyzx Springs,CA,35.14,-116.1\n".utf8))
        let geocoder = service(system)
        let before = try fingerprint(system)
        let first = try await geocoder.resolve("Zzyzx Springs")
        #expect(first.source == "directory" && !first.cached)
        #expect(try fingerprint(system) == before, "resolving writes nothing")
        _ = try await geocoder.geocode("Zzyzx Springs")
        #expect(try storedInt(system, "SELECT hits FROM geocode_cache WHERE query = 'zzyzx springs'") == 0)
        let again = try await geocoder.geocode("ZZYZX springs")
        #expect(again.cached && again.source == "directory" && again.coordinate == first.coordinate)
        #expect(try storedInt(system, "SELECT hits FROM geocode_cache WHERE query = 'zzyzx springs'") == 1)
        // The gazetteer's answers and typed coordinates are not kept.
        _ = try await geocoder.geocode("Minsk")
        _ = try await geocoder.geocode("53.9, 27.56")
        #expect(try storedInt(system, "SELECT count(*) FROM geocode_cache") == 1)
    }

    @Test func aStreetAddressIsAskedOfTheAwaitedGeocoderOnce() async throws {
        let server = try TestHTTPServer { _ in
            (0, #"[{"lat":"45.5152","lon":"-122.6784","place_rank":30,"display_name":"1120 SW 5th Ave, Portland"}]"#)
        }
        defer { server.stop() }
        let system = try makeSystem()
        let geocoder = service(system, remote: NominatimGeocoder(baseURL: server.baseURL, timeout: 5, interval: 0))
        let found = try await geocoder.geocode("1120 SW 5th Ave, Portland, OR 97204")
        #expect(found.source == "nominatim" && found.precision == "address" && found.coordinate.latitude == 45.5152)
        let request = try #require(server.requests.first)
        #expect(request.path.contains("format=jsonv2") && request.headers["user-agent"]?.hasPrefix("clinic/") == true)
        let again = try await service(system, remote: NominatimGeocoder(baseURL: server.baseURL, timeout: 5, interval: 0))
            .resolve("1120 sw 5th ave, portland, or 97204")
        #expect(again.cached && again.source == "nominatim" && server.requests.count == 1, "the second time from the cache")
    }

    @Test func theAwaitedGeocoderTimesOutAndReportsGarbage() async throws {
        // The server answers "nobody knows it" after 3 s: an error says the geocoder gave up
        // first. (No clock is read here: the task resumes whenever a thread of the test
        // process's pool is free, which says nothing about when the timeout fired.)
        let slow = try TestHTTPServer { _ in (3, "[]") }
        defer { slow.stop() }
        #expect(await refusal(NominatimGeocoder(baseURL: slow.baseURL, timeout: 0.5, interval: 0)) == .geocoderTimeout)
        let garbage = try TestHTTPServer { _ in (0, "<html>") }
        defer { garbage.stop() }
        #expect(await refusal(NominatimGeocoder(baseURL: garbage.baseURL, timeout: 5, interval: 0)) == .geocoderBadAnswer)
        #expect(try await NominatimGeocoder(baseURL: slow.baseURL, timeout: 5, interval: 0).lookUp("Nowhere") == nil,
                "an empty answer: nobody knows the place")
    }
}
