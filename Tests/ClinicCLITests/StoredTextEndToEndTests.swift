import Foundation
@testable import ClinicStoreSQLite
import GRDB
import Testing

/// Issue 23, item 17: control characters in a doctor's name. A clinic admin's new doctor with
/// one is refused; a name stored before the check (or by an older version) is shown with the
/// character replaced, never sent to the terminal, a calendar file or an e-mail as it is.
@Suite struct StoredTextEndToEndTests {
    static let hostile = "Dr \u{1B}[2J\u{1B}[31mEvil\u{07}\u{0B}\u{85}\u{202E}Name"

    @Test func aDoctorsNameWithControlCharactersIsRefusedAndAnOldOneIsShownHarmless() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let clinics = try #require(try cli.run(["clinics", "list", "--json"]).json() as? [[String: Any]])
        let clinicId = try #require(clinics.first?["id"] as? Int)
        let departments = try #require(try cli.run(["departments", String(clinicId), "--json"]).json() as? [[String: Any]])
        let departmentId = try #require(departments.first?["id"] as? Int)
        let password = "kettle-harbor-lantern"
        let added = try cli.run(["admin", "staff", "add", "--login", "boss", "--name", "Sam", "--surname", "Lee", "--role",
                                 "clinic-admin", "--clinic", String(clinicId), "--password-stdin"], input: password + "\n")
        #expect(added.status == 0, "\(added.stderr)")
        let staffSession = cli.folder.appendingPathComponent("staff-session").path
        let login = try cli.run(["staff", "login", "--login", "boss", "--password-stdin"], input: password + "\n",
                                environment: ["CLINIC_STAFF_SESSION": staffSession])
        #expect(login.status == 0, "\(login.stderr)")
        let before = try cli.fingerprint()
        let refused = try cli.run(["staff", "doctors", "add", "--department", String(departmentId), "--name", Self.hostile, "--json"],
                                  environment: ["CLINIC_STAFF_SESSION": staffSession])
        #expect(refused.status == 2 && refused.errorCode == "invalid_input", "\(refused.stderr)")
        #expect(try cli.fingerprint() == before)

        // A name stored before the check: shown, never obeyed.
        try cli.execute("UPDATE doctors SET name = ? WHERE department_id = CAST(? AS BIGINT)", [Self.hostile, String(departmentId)])
        let shown = try cli.run(["doctors", String(departmentId)])
        #expect(shown.status == 0, "\(shown.stderr)")
        for control in ["\u{1B}", "\u{07}", "\u{0B}", "\u{85}", "\u{202E}"] {
            #expect(!shown.stdout.contains(control), "\(control.unicodeScalars.first?.value ?? 0) reached the terminal")
        }
        #expect(shown.stdout.contains("Evil"))
    }
}
