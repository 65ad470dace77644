import Foundation
@testable import ClinicStoreSQLite
import GRDB
import Testing

/// Where things really are, through the `clinic` binary: ambiguous places said, qualifiers
/// binding, ZIP codes, zones from boundaries and the zone migration's list.
@Suite struct PlacesEndToEndTests {
    let password = "correct-horse-42\n"

    @Test func ambiguousPlacesAreSaidAndQualifiersBind() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let human = try cli.run(["geocode", "Vincennes"])
        #expect(human.status == 0)
        #expect(human.stdout.contains("Vincennes, Indiana, US") && human.stdout.contains("America/Indiana/Vincennes"), "\(human.stdout)")
        #expect(human.stdout.contains("Using Vincennes, Indiana, US; also: Vincennes, Île-de-France, FR — type 'Vincennes, FR'"),
                "\(human.stdout)")
        let json = try #require(try cli.run(["geocode", "Vincennes", "--json"]).json() as? [String: Any])
        #expect(json["name"] as? String == "Vincennes, Indiana, US" && json["admin1"] as? String == "Indiana")
        let alternatives = try #require(json["alternatives"] as? [[String: Any]])
        #expect(alternatives.first?["country"] as? String == "FR" && alternatives.first?["timeZone"] as? String == "Europe/Paris")
        #expect(alternatives.first?["lat"] is Double && alternatives.first?["lon"] is Double)

        // Any command that geocoded an ambiguous name says which place it used, on stderr.
        let nearest = try cli.run(["clinics", "nearest", "--address", "Vincennes"])
        #expect(nearest.status == 0 && nearest.stderr.contains("Using Vincennes, Indiana, US"), "\(nearest.stderr)")
        let quiet = try cli.run(["clinics", "nearest", "--address", "Vincennes, FR"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "a qualified name is not ambiguous: \(quiet.stderr)")

        let stowe = try #require(try cli.run(["geocode", "Stowe, VT", "--json"]).json() as? [String: Any])
        #expect(stowe["admin1"] as? String == "Vermont" && stowe["timeZone"] as? String == "America/New_York")
        let hanford = try cli.run(["geocode", "Hanford, VT", "--json"])
        #expect(hanford.errorCode == "geocode_failed" && hanford.stderr.contains("Did you mean"), "\(hanford.stderr)")
        let zip = try #require(try cli.run(["geocode", "02115", "--json"]).json() as? [String: Any])
        #expect(zip["precision"] as? String == "postcode" && zip["name"] as? String == "Boston, MA 02115, US")
    }

    /// A street address finds its city even where the gazetteer names the city otherwise than
    /// people type it ("Washington" of the District of Columbia, a name shared with a state).
    @Test func aStreetAddressFindsItsCity() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let address = "1600 Pennsylvania Ave NW, Washington, DC"
        let found = try cli.run(["geocode", address, "--json"])
        #expect(found.status == 0, "\(found.stderr)")
        let json = try #require(found.json() as? [String: Any])
        #expect(json["admin1"] as? String == "District of Columbia" && json["source"] as? String == "gazetteer", "\(json)")
        let latitude = try #require(json["lat"] as? Double), longitude = try #require(json["lon"] as? Double)
        #expect(abs(latitude - 38.9072) < 0.3 && abs(longitude + 77.0369) < 0.3, "near the District's centre: \(json)")
        let nearest = try cli.run(["clinics", "nearest", "--address", address])
        #expect(nearest.status == 0, "\(nearest.stderr)")
    }

    /// Off a terminal, registration takes the first place and says which; the city is kept as typed.
    @Test func registrationOffATerminalSaysWhichPlace() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let registered = try cli.run(["register", "--login", "vera", "--name", "Vera", "--surname", "Lane", "--street", "Main Street",
                                      "--house", "3", "--city", "Vincennes", "--accept-privacy", "--password-stdin"], input: password)
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(registered.stderr.contains("Using Vincennes, Indiana, US"), "\(registered.stderr)")
    }

    /// A database whose Reno clinic was given Chicago's zone by the old rule, with an
    /// appointment booked: the first command after the upgrade moves the clinic to its real
    /// zone, says so, and `admin check` lists the appointment.
    @Test(.sqliteOnly) func theZoneMigrationIsToldAndListed() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        #expect(try cli.run(["register", "--login", "rita", "--name", "Rita", "--surname", "Moss", "--street", "Main Street",
                             "--house", "3", "--city", "Reno, NV", "--accept-privacy", "--password-stdin"], input: password).status == 0)
        #expect(try cli.run(["login", "--login", "rita", "--password-stdin"], input: password).status == 0)
        let departments = try #require(try cli.run(["departments", "3", "--json"]).json() as? [[String: Any]])
        let department = try #require(departments.first?["id"] as? Int)
        let booked = try cli.run(["book", "--department", String(department), "--at", "\(nextMonday(plus: 7)) 09:20", "--json"])
        #expect(booked.status == 0, "\(booked.stderr)")
        let appointmentId = try #require((booked.json() as? [String: Any])?["id"] as? Int)

        #expect(try cli.run(["admin", "migrate", "--to", "6"]).status == 0)
        let queue = try DatabaseQueue(path: cli.databasePath)
        try queue.write { db in
            try db.execute(sql: "UPDATE clinics SET time_zone = 'America/Chicago' WHERE external_id = 'RN1'")
            try db.execute(sql: "UPDATE appointments SET updated_at = updated_at - 60")
        }
        try queue.close()

        let first = try cli.run(["clinics", "show", "3", "--json"])
        #expect(first.status == 0 && (first.json() as? [String: Any])?["timeZone"] as? String == "America/Los_Angeles")
        #expect(first.stderr.contains("1 appointment booked before the change"), "\(first.stderr)")
        let check = try cli.run(["admin", "check", "--json"])
        #expect(check.status == 0, "zone changes are a list for staff, not a fault: \(check.stdout)")
        let changes = try #require((check.json() as? [String: Any])?["zoneChanges"] as? [[String: Any]])
        #expect(changes.count == 1 && changes.first?["appointmentId"] as? Int == appointmentId)
        #expect(changes.first?["oldZone"] as? String == "America/Chicago" && changes.first?["newZone"] as? String == "America/Los_Angeles")
        let human = try cli.run(["admin", "check"])
        #expect(human.stdout.contains("appointment \(appointmentId) at Renown Regional"), "\(human.stdout)")
        let again = try cli.run(["clinics", "show", "3"])
        #expect(!again.stderr.contains("booked before the change"), "said once, when the migration ran")
    }
}

@Suite struct PlaceChoiceTerminalTests {
    /// `register` on a terminal asks which place an ambiguous city is, and keeps the answer's
    /// unambiguous form; `profile edit --city` asks the same way.
    @Test func registerAsksWhichPlace() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let terminal = try PseudoTerminal(cli, ["register", "--login", "vera", "--name", "Vera", "--surname", "Lane",
                                                "--street", "Main Street", "--house", "3", "--city", "Vincennes", "--accept-privacy"],
                                          environment: ["NO_COLOR": "1"])
        try terminal.expect("Password: ")
        terminal.type("correct-horse-42")
        try terminal.expect("Password again: ")
        terminal.type("correct-horse-42")
        let which = try terminal.expect("Place [1-")
        #expect(which.contains("Which Vincennes?") && which.contains("Vincennes, Indiana, US")
                && which.contains("Vincennes, Île-de-France, FR"), "\(which)")
        terminal.type("2")
        try terminal.expect("Home clinic [1-")
        terminal.type("")
        try terminal.expect("Registered vera")
        #expect(terminal.finish() == 0)
        let login = try cli.run(["login", "--login", "vera", "--password-stdin"], input: "correct-horse-42\n")
        #expect(login.status == 0, "\(login.stderr)")
        let whoami = try #require(try cli.run(["whoami", "--json"]).json() as? [String: Any])
        #expect(whoami["city"] as? String == "Vincennes, FR")
        #expect(abs((whoami["lat"] as? Double ?? 0) - 48.85) < 0.05, "the French one: \(whoami)")
    }
}
