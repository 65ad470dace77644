import Foundation
import Testing

@Suite(.sqliteOnly) struct BackupEndToEndTests {
    @Test func backupRestoreAndCheckFromTheCommandLine() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        let copy = cli.folder.appendingPathComponent("copy.sqlite").path
        let backup = try #require(try cli.run(["admin", "backup", copy, "--json"]).json() as? [String: Any])
        #expect(backup["path"] as? String == copy)
        let registered = try cli.run(["register", "--login", "late", "--name", "Lee", "--surname", "Late", "--street", "Main Street",
                                      "--house", "1", "--city", "Reno", "--accept-privacy", "--password-stdin"],
                                     input: "correct-horse-42\n")
        #expect(registered.status == 0, "\(registered.stderr)")
        let check = try #require(try cli.run(["admin", "check", "--json"]).json() as? [String: Any])
        #expect(check["ok"] as? Bool == true && check["integrity"] as? [String] == ["ok"])
        let restored = try #require(try cli.run(["admin", "restore", copy, "--json"]).json() as? [String: Any])
        let aside = try #require(restored["replacedKeptAt"] as? String)
        #expect(FileManager.default.fileExists(atPath: aside))
        let login = try cli.run(["login", "--login", "late", "--password-stdin", "--json"], input: "correct-horse-42\n")
        #expect(login.errorCode == "invalid_credentials", "the patient registered after the backup is gone")
        #expect(try cli.run(["admin", "backup", copy, "--json"]).errorCode == "invalid_input", "never overwrites")
        let garbage = cli.folder.appendingPathComponent("garbage.sqlite").path
        try "garbage".write(toFile: garbage, atomically: true, encoding: .utf8)
        let before = try cli.fingerprint()
        #expect(try cli.run(["admin", "restore", garbage, "--json"]).errorCode == "invalid_input")
        #expect(try cli.fingerprint() == before)
    }
}
