import Foundation
@testable import ClinicStoreSQLite
import GRDB
import Testing

@Suite struct GeoEndToEndTests {
    func nearest(_ cli: CLIHarness, _ arguments: [String]) throws -> [[String: Any]]? {
        try cli.run(["clinics", "nearest"] + arguments + ["--json"]).json() as? [[String: Any]]
    }

    @Test func nearestPrintsClinicsWithDistancesNearestFirst() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let found = try #require(try nearest(cli, ["--lat", "34.0", "--lon", "-118.2", "--limit", "3"]))
        #expect(found.map { $0["name"] as? String } == ["Adventist Medical Center", "Children's Hospital", "Renown Regional"])
        #expect(Set(found[0].keys) == ["id", "name", "address", "city", "lat", "lon", "isPediatric", "isHospital", "timeZone", "distanceMeters"])
        let distances = found.compactMap { $0["distanceMeters"] as? Double }
        #expect(distances.count == 3 && distances == distances.sorted())
        #expect(abs(distances[0] - 7_215) < 50, "Adventist is about 7.2 km away: \(distances[0])")
        let pediatric = try #require(try nearest(cli, ["--at", "34.0,-118.2", "--limit", "5", "--pediatric"]))
        #expect(pediatric.map { $0["name"] as? String } == ["Children's Hospital"])
        let near = try #require(try nearest(cli, ["--at", "34.0,-118.2", "--limit", "5", "--within-km", "15"]))
        #expect(near.count == 2)
        let surgery = try #require(try nearest(cli, ["--at", "34.0,-118.2", "--specialization", "emergency medicine"]))
        #expect(surgery.map { $0["name"] as? String } == ["Renown Regional"])
        let human = try cli.run(["clinics", "nearest", "--lat", "34.0", "--lon", "-118.2"])
        #expect(human.stdout.contains("4.5 mi"), "\(human.stdout)")  // 7.2 km, in miles in English
    }

    @Test func negativeCoordinatesWorkHoweverTheyAreTyped() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let forms: [[String]] = [
            ["--lat", "-13.8", "--lon", "-171.8"], ["--lat=-13.8", "--lon=-171.8"], ["--lat", "-13.8", "--lon=-171.8"],
            ["--lat=-13.8", "--lon", "-171.8"], ["--lon", "-171.8", "--lat", "-13.8"], ["--at", "-13.8,-171.8"],
            ["--at=-13.8,-171.8"], ["--at", "-13.8 -171.8"], ["--at", "13.8S 171.8W"], ["--json", "--lat", "-13.8", "--lon", "-171.8"],
        ]
        var answers: [String] = []
        for form in forms {
            let result = try cli.run(["clinics", "nearest", "--limit", "2"] + form + ["--json"])
            #expect(result.status == 0, "\(form): \(result.stderr)")
            answers.append(result.stdout)
        }
        #expect(Set(answers).count == 1, "every form gives the same answer")
        let first = try #require((try nearest(cli, forms[0] + ["--limit", "1"]))?.first)
        #expect(first["name"] as? String == "Adventist Medical Center", "from Samoa, Los Angeles is nearer than Reno")
    }

    @Test func addressesAndGeocodeUseTheGazetteerAndTheCache() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let byAddress = try #require(try nearest(cli, ["--address", "1 Main Street, Reno, NV"]))
        #expect(byAddress.first?["name"] as? String == "Renown Regional")
        let first = try #require(try cli.run(["geocode", "Минск", "--json"]).json() as? [String: Any])
        #expect(Set(first.keys) == ["query", "lat", "lon", "precision", "source", "cached", "name", "admin1", "country", "timeZone",
                                    "hint", "alternatives"])
        #expect(first["source"] as? String == "gazetteer" && first["precision"] as? String == "city")
        #expect(first["cached"] as? Bool == false && first["timeZone"] as? String == "Europe/Minsk" && first["country"] as? String == "BY")
        #expect(abs((first["lat"] as? Double ?? 0) - 53.9) < 0.01)
        // A town only the directory knows is cached; the gazetteer is asked before the cache.
        try cli.execute("UPDATE clinics SET city = 'Qwerton Falls', city_key = 'qwerton falls' WHERE city = 'Reno'")
        let town = try #require(try cli.run(["geocode", "Qwerton Falls", "--json"]).json() as? [String: Any])
        #expect(town["source"] as? String == "directory" && town["cached"] as? Bool == false)
        let second = try #require(try cli.run(["geocode", "qwerton falls", "--json"]).json() as? [String: Any])
        #expect(second["cached"] as? Bool == true && second["timeZone"] as? String == "America/Los_Angeles")
        let hanford = try #require(try cli.run(["geocode", "1025 North Douty Street, Hanford, CA", "--json"]).json() as? [String: Any])
        #expect(abs((hanford["lat"] as? Double ?? 0) - 36.33) < 0.01 && hanford["precision"] as? String == "city")
    }

    @Test func badLocationsAreRefusedAndChangeNothing() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let cases: [(String, [String])] = [
            ("geocode_failed", ["clinics", "nearest", "--address", "Qwertyuiopville"]),
            ("geocode_failed", ["geocode", "Qwertyuiopville"]),
            ("invalid_input", ["clinics", "nearest", "--lat", "91", "--lon", "0"]),
            ("invalid_input", ["clinics", "nearest", "--lat", "abc", "--lon", "0"]),
            ("invalid_input", ["clinics", "nearest", "--lat", "nan", "--lon", "0"]),
            ("invalid_input", ["clinics", "nearest", "--lat", "10"]),
            ("invalid_input", ["clinics", "nearest", "--at", "10,10", "--address", "Reno"]),
            ("invalid_input", ["clinics", "nearest"]),
            ("invalid_input", ["clinics", "nearest", "--at", "10,10", "--limit", "0"]),
            ("invalid_input", ["clinics", "nearest", "--at", "10,10", "--limit", "101"]),
            ("invalid_input", ["clinics", "nearest", "--at", "10,10", "--within-km", "-1"]),
            ("not_logged_in", ["clinics", "nearest", "--me"]),
        ]
        for (code, arguments) in cases {
            let before = try cli.fingerprint()
            let result = try cli.run(arguments + ["--json"])
            #expect(result.errorCode == code, "\(arguments): \(result.stderr)")
            #expect(result.status != 0)
            #expect(try cli.fingerprint() == before, "\(arguments) changed the database")
        }
        #expect(try cli.run(["geocode", "Qwertyuiopville"]).status == 4)
    }

    @Test func registrationGeocodesTheAddressAndPicksTheNearestClinic() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let registered = try cli.run(["register", "--login", "rita", "--name", "Rita", "--surname", "Reyes", "--street", "Mill Street",
                                      "--house", "1155", "--city", "Reno", "--accept-privacy", "--password-stdin", "--json"],
                                     input: "correct-horse-42\n")
        let client = try #require(registered.json() as? [String: Any], "\(registered.stderr)")
        #expect(abs((client["lat"] as? Double ?? 0) - 39.53) < 0.05)
        let reno = try #require(try nearest(cli, ["--address", "Reno, NV"])?.first?["id"] as? Int)
        #expect(client["homeClinicId"] as? Int == reno)
        #expect(try cli.run(["login", "--login", "rita", "--password-stdin"], input: "correct-horse-42\n").status == 0)
        let mine = try #require(try nearest(cli, ["--me"]))
        #expect(mine.first?["id"] as? Int == reno)

        let unknown = try cli.run(["register", "--login", "otto", "--name", "Otto", "--surname", "Q", "--street", "Main Street",
                                   "--house", "1", "--city", "Qwertyuiopville", "--accept-privacy", "--password-stdin", "--json"],
                                  input: "correct-horse-42\n")
        #expect(unknown.errorCode == "invalid_input")
        #expect(unknown.stderr.contains("Qwertyuiopville"))
    }
}
