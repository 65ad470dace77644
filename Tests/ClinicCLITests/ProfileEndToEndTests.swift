import Foundation
import Testing

@Suite struct ProfileEndToEndTests {
    /// A directory, and patient "pat" of Reno registered and logged in (password correct-horse-42).
    static func signedInPat() throws -> CLIHarness {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        #expect(try cli.run(["register", "--login", "pat", "--name", "Pat", "--surname", "Smith", "--street", "Main Street", "--house", "1",
                             "--city", "Reno", "--accept-privacy", "--password-stdin"], input: "correct-horse-42\n").status == 0)
        #expect(try cli.run(["login", "--login", "pat", "--password-stdin"], input: "correct-horse-42\n").status == 0)
        return cli
    }

    @Test func profileShowEditPasswordExportDelete() throws {
        let cli = try Self.signedInPat()
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

    /// `clinic profile phone` on either store: no number without a texting gateway (nothing
    /// changed); with one, a number waits for its code, a wrong code is refused, what comes by
    /// text is chosen, and the number is removed (then there is nothing to choose for).
    @Test func aMobileNumberIsSetRefusedAWrongCodeAndRemoved() throws {
        let cli = try Self.signedInPat()
        let number = "+1 775 555 0143"
        let before = try cli.fingerprint(excluding: ["sessions"])
        #expect(try cli.run(["profile", "phone", "set", number, "--json"]).errorCode == "texts_unavailable")
        #expect(try cli.fingerprint(excluding: ["sessions"]) == before, "a refusal changes nothing")
        #expect(try cli.run(["profile", "phone", "confirm", "123456", "--json"]).errorCode == "not_found", "no code pending")

        // A gateway seen a moment ago (what `clinic serve` with CLINIC_SMS_URL records).
        try cli.execute("INSERT INTO settings (key, value) VALUES ('texts.gateway_seen_at', ?)", [String(Int(Date().timeIntervalSince1970))])
        let set = try cli.run(["profile", "phone", "set", number, "--json"])
        let pending = try #require(set.json() as? [String: Any], "\(set.stderr)")
        #expect(pending["phone"] as? String == "+17755550143" && pending["phoneConfirmed"] as? Bool == false, "\(pending)")
        #expect(try cli.run(["profile", "phone"]).stdout.contains("+17755550143"))
        #expect(try cli.run(["profile", "phone", "confirm", "000000", "--json"]).errorCode == "invalid_input")
        let chosen = try cli.run(["profile", "phone", "texts", "--offers", "off", "--json"])
        #expect((chosen.json() as? [String: Any])?["textOffers"] as? Bool == false, "kept for when it is confirmed: \(chosen.stderr)")
        #expect(try cli.run(["profile", "phone", "remove"]).status == 0)
        #expect(try cli.run(["profile", "phone", "texts", "--offers", "on", "--json"]).errorCode == "not_found", "no number")
        #expect((try cli.run(["profile", "phone", "--json"]).json() as? [String: Any])?["phone"] == nil)
    }
}
