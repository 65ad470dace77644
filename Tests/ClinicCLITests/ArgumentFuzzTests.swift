import Foundation
import Testing
import ClinicKit
@testable import clinic

/// Random command lines through the same path as the program's (`Arguments.normalize`, then
/// the parser): none may crash, and every failure must map to a stable code, never to
/// `internal_error`.
@Suite struct ArgumentFuzzTests {
    static let tokens = ["clinics", "list", "show", "nearest", "book", "slots", "find", "register", "login", "admin", "migrate",
                         "import-clinics", "backup", "restore", "exception", "add", "settings", "set", "appointments", "cancel",
                         "--lat", "--lon", "--at", "--address", "--limit", "--within-km", "--department", "--doctor", "--days",
                         "--from", "--to", "--json", "--lang", "ru", "en", "xx", "--db", "/tmp/x", "--help", "-h", "--version",
                         "-13.8", "171.8", "-5", "0", "101", "9999999999999999999999", "abc", "", " ", "--", "-", "---x", "--lat=",
                         "--lat=-1", "2026-11-23 09:20", "'; DROP TABLE clients; --", "Минск", "🙂", "\u{0000}", "nan", "-.5",
                         "--specialization", "кардиология", "--pediatric", "--me", "--format", "hifld", "--off", "--date"]

    /// 12,000 command lines in four chunks that run in parallel. The parser takes about six
    /// milliseconds of a core per line in a debug build: the 100,000 lines this test once tried
    /// took ten of the sixteen minutes of processor time of the whole Swift suite.
    @Test(arguments: [UInt64(11), 12, 13, 14])
    func randomCommandLines(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var bugs: [String] = []
        var parsed = 0
        for _ in 0..<3_000 {
            let arguments = (0..<Int.random(in: 0..<8, using: &random)).map { _ in Self.tokens.randomElement(using: &random) ?? "" }
            do {
                _ = try ClinicCommand.parseAsRoot(Arguments.normalize(arguments))
                parsed += 1
            } catch {
                if Entry.code(for: error) == .internalError { bugs.append("\(arguments): \(error)") }
            }
        }
        #expect(bugs.isEmpty, "\(bugs.prefix(5))")
        #expect(parsed > 100, "some command lines are valid: \(parsed)")
    }

    @Test func negativeNumbersAndGlobalsAreRewrittenOnlyWhereMeant() {
        #expect(Arguments.normalize(["clinics", "nearest", "--lat", "-13.8", "--lon", "-171.8"])
                == ["clinics", "nearest", "--lat=-13.8", "--lon=-171.8"])
        #expect(Arguments.normalize(["--json", "--lang", "ru", "clinics", "list"]) == ["clinics", "list", "--json", "--lang=ru"])
        #expect(Arguments.normalize(["geocode", "--", "-13.8 -171.8"]) == ["geocode", "--", "-13.8 -171.8"])
        #expect(Arguments.normalize(["book", "--notes", "-hello"]) == ["book", "--notes", "-hello"], "not a number")
        #expect(Arguments.normalize(["--json", "geocode", "--", "Hanford"]) == ["geocode", "--json", "--", "Hanford"],
                "globals go before --, where they are still options")
        #expect(Arguments.normalize(["geocode", "--json", "-33.8,151.2"]) == ["geocode", "--json", "-33.8,151.2"],
                "a flag takes no value")
    }
}
