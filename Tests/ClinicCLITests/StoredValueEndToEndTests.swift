import Foundation
@testable import ClinicStoreSQLite
import GRDB
import Testing

/// A stored value of another type than its column's (a file edited by hand, damaged, or
/// written by something else): the command reports a storage error (exit 6) naming the table,
/// the column and the row, and does not crash (issue 23, item 6).
@Suite(.sqliteOnly) struct StoredValueEndToEndTests {
    let password = "correct-horse-42\n"

    /// Runs `statements` on the database with CHECK constraints off (they would refuse the edit).
    static func edit(_ path: String, _ statements: [String]) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            for statement in statements { try db.execute(sql: statement) }
        }
    }

    func registerAndLogIn(_ cli: CLIHarness, _ login: String) throws {
        let registered = try cli.run(["register", "--login", login, "--name", "Anna", "--surname", "Smith",
                                      "--street", "Main Street", "--house", "12", "--city", "Reno",
                                      "--accept-privacy", "--password-stdin"], input: password)
        #expect(registered.status == 0, "\(registered.stderr)")
        let loggedIn = try cli.run(["login", "--login", login, "--password-stdin"], input: password)
        #expect(loggedIn.status == 0, "\(loggedIn.stderr)")
    }

    /// Reading a patient goes through a copied row, where GRDB's subscript traps.
    @Test func aPatientsUnreadableCreationTimeIsReportedNotACrash() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        try registerAndLogIn(cli, "anna")
        let id = try #require((try cli.run(["whoami", "--json"]).json() as? [String: Any])?["id"] as? Int)
        try Self.edit(cli.databasePath, ["UPDATE clients SET created_at = 'x' WHERE id = \(id)"])

        let whoami = try cli.run(["whoami"])
        #expect(whoami.status == 6, "status \(whoami.status): \(whoami.stderr)")
        #expect(!whoami.stderr.contains("Fatal error"), "\(whoami.stderr)")
        #expect(whoami.stderr.contains("A stored value cannot be read: clients.created_at in row id \(id)"), "\(whoami.stderr)")
        let json = try cli.run(["whoami", "--json"])
        #expect(json.status == 6 && json.errorCode == "storage_error", "status \(json.status): \(json.stderr)")
        let russian = try cli.run(["whoami", "--lang", "ru"])
        #expect(russian.stderr.contains("Сохранённое значение не читается: clients.created_at"), "\(russian.stderr)")

        // The directory, which does not read the patient, still answers.
        #expect(try cli.run(["clinics", "list", "--json"]).status == 0)
    }

    /// Reading the directory goes through rows GRDB reads from the statement, where SQLite
    /// turned 'x' into 0 (a clinic in the Atlantic): now a storage error too.
    @Test func aClinicsUnreadableLatitudeIsReportedNotReadAsZero() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let reno = try #require(try cli.run(["clinics", "list", "--city", "Reno", "--json"]).json() as? [[String: Any]])
        let renoId = try #require(reno.first?["id"] as? Int)
        let losAngeles = try #require(try cli.run(["clinics", "list", "--city", "Los Angeles", "--json"]).json() as? [[String: Any]])
        let otherId = try #require(losAngeles.first?["id"] as? Int)
        try Self.edit(cli.databasePath, ["UPDATE clinics SET lat = 'x' WHERE id = \(renoId)"])

        let list = try cli.run(["clinics", "list"])
        #expect(list.status == 6, "status \(list.status): \(list.stdout) \(list.stderr)")
        #expect(!list.stderr.contains("Fatal error"), "\(list.stderr)")
        #expect(list.stderr.contains("A stored value cannot be read: clinics.lat in row id \(renoId)"), "\(list.stderr)")
        let shown = try cli.run(["clinics", "show", String(renoId), "--json"])
        #expect(shown.status == 6 && shown.errorCode == "storage_error", "status \(shown.status): \(shown.stdout) \(shown.stderr)")
        // Another clinic reads as before.
        let other = try cli.run(["clinics", "show", String(otherId), "--json"])
        #expect(other.status == 0, "\(other.stderr)")
        #expect((other.json() as? [String: Any])?["lat"] as? Double == 34.05 || (other.json() as? [String: Any])?["lat"] as? Double == 34.10)
    }
}
