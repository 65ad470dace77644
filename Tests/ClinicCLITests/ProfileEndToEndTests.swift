import Foundation
import Testing

@Suite struct ProfileEndToEndTests {
    @Test func profileShowEditPasswordExportDelete() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        #expect(try cli.run(["register", "--login", "pat", "--name", "Pat", "--surname", "Smith", "--street", "Main Street", "--house", "1",
                             "--city", "Reno", "--accept-privacy", "--password-stdin"], input: "correct-horse-42\n").status == 0)
        #expect(try cli.run(["login", "--login", "pat", "--password-stdin"], input: "correct-horse-42\n").status == 0)
        #expect((try cli.run(["profile", "--json"]).json() as? [String: Any])?["login"] as? String == "pat", "show is the default")
        let edited = try #require(try cli.run(["profile", "edit", "--street", "Oak Street", "--lang", "ru", "--json"]).json() as? [String: Any])
        #expect(edited["street"] as? String == "Oak Street" && edited["language"] as? String == "ru")
        #expect(try cli.run(["profile", "edit", "--name", "P4t", "--json"]).errorCode == "invalid_input")
        let changed = try cli.run(["profile", "password", "--password-stdin", "--json"], input: "correct-horse-42\npurple-monkey-dishwasher\n")
        #expect(changed.status == 0, "\(changed.stderr)")
        let export = try #require(try cli.run(["profile", "export"]).json() as? [String: Any])
        #expect(((export["account"] as? [String: Any])?["profile"] as? [String: Any])?["street"] as? String == "Oak Street")
        #expect(export["appointments"] is [Any] && export["sessions"] is [Any])
        #expect(try cli.run(["profile", "delete", "--password-stdin", "--json"], input: "correct-horse-42\n").errorCode == "invalid_credentials")
        let deleted = try cli.run(["profile", "delete", "--password-stdin", "--json"], input: "purple-monkey-dishwasher\n")
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.sessionPath))
        #expect(try cli.run(["login", "--login", "pat", "--password-stdin", "--json"], input: "purple-monkey-dishwasher\n").errorCode
                == "invalid_credentials")
    }
}
