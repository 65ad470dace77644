@testable import ClinicKit
import Foundation
import Testing
@testable import clinic

/// The session's input reader and the terminal's output rules, without a terminal.
@Suite struct TerminalOutputTests {
    /// Lines read from a pipe holding `bytes`.
    func lines(_ bytes: [UInt8]) throws -> [LineReader.Line] {
        var descriptors: [Int32] = [0, 0]
        try #require(pipe(&descriptors) == 0)
        _ = bytes.withUnsafeBytes { write(descriptors[1], $0.baseAddress, $0.count) }
        close(descriptors[1])
        defer { close(descriptors[0]) }
        let reader = LineReader(descriptor: descriptors[0])
        var result: [LineReader.Line] = []
        while true {
            let line = reader.next()
            result.append(line)
            if line == .end { return result }
        }
    }

    @Test func theReaderTellsLinesFromNoise() throws {
        let long = [UInt8](repeating: 0x61, count: LineReader.maximumLength + 1)
        let exact = [UInt8](repeating: 0x62, count: LineReader.maximumLength)
        var input: [UInt8] = Array("1\r\n  q \n\tМинск\n".utf8)
        input += [0xFF, 0x0A] + Array("a\u{7}b\n".utf8) + long + [0x0A] + exact + [0x0A]
        input += [UInt8](repeating: 0x63, count: 10_000) + [0x0A] + Array("last".utf8)
        let read = try lines(input)
        #expect(read == [.text("1"), .text("  q "), .text(" Минск"), .unreadable, .unreadable, .tooLong,
                         .text(String(repeating: "b", count: LineReader.maximumLength)), .tooLong, .text("last"), .end])
        #expect(try lines([]) == [.end])
        #expect(try lines(long) == [.tooLong, .end], "an overlong last line without a newline")
    }

    @Test func backWordsInBothLanguages() {
        for word in ["q", "Q", "й", "назад", "quit"] { #expect(Prompt.isBack(word), "\(word)") }
        for word in ["1", "qq", "", "yes"] { #expect(!Prompt.isBack(word), "\(word)") }
    }

    @Test func tablesAreCutToTheTerminalWidth() {
        let rows = [["1", "Kaweah Delta Mental Health Hospital D/P APH", "Visalia", "26.7 km"],
                    ["2", "Детская больница имени Святого Луки", "Москва", "1.0 km"]]
        let full = Output.table(["#", "Name", "City", "Distance"], rows, width: nil, style: .plain)
        #expect(full.contains("Kaweah Delta Mental Health Hospital D/P APH") && !full.contains("…"))
        let cut = Output.table(["#", "Name", "City", "Distance"], rows, width: 40, style: .plain)
        let lines = cut.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { Output.displayWidth($0) <= 40 }, "\(cut)")
        #expect(lines[2].hasPrefix("1  Kaweah Delta") && lines[2].contains("…") && lines[2].hasSuffix("26.7 km"))
        #expect(lines[3].contains("Москва"), "the narrow columns keep their text")
        #expect(Output.truncate("東京都立病院", to: 7) == "東京都…", "wide characters count two columns")
        #expect(Output.truncate("short", to: 5) == "short")
        #expect(Output.fit([10, 50, 8], into: 40) == [10, 18, 8])
        #expect(Output.fit([10, 10], into: 5) == [4, 4], "no column goes below 4")
        #expect(Output.fit([10, 30, 30], into: 50, flexible: [1]) == [10, 6, 30], "names give way before times")
        #expect(Output.fit([10, 30, 30], into: 30, flexible: [1]) == [10, 4, 12], "then the others")
    }

    @Test func colourOnlyOnATerminalAndNeverWithNoColor() {
        #expect(Style.allowed(isTerminal: true, environment: [:]))
        #expect(!Style.allowed(isTerminal: false, environment: [:]))
        #expect(!Style.allowed(isTerminal: true, environment: ["NO_COLOR": "1"]))
        #expect(Style.allowed(isTerminal: true, environment: ["NO_COLOR": ""]), "no-color.org: an empty NO_COLOR is unset")
        #expect(!Style.allowed(isTerminal: true, environment: ["TERM": "dumb"]))
        #expect(Style(enabled: true).red("x") == "\u{1B}[31mx\u{1B}[0m" && Style(enabled: false).red("x") == "x")
    }

    @Test func aCommandLineWithOnlyGlobalOptionsHasNoCommand() {
        #expect(Arguments.onlyGlobal(Arguments.normalize([])))
        #expect(Arguments.onlyGlobal(Arguments.normalize(["--lang", "ru", "--db", "x.sqlite", "--json"])))
        #expect(!Arguments.onlyGlobal(Arguments.normalize(["--lang", "ru", "whoami"])))
        #expect(!Arguments.onlyGlobal(Arguments.normalize(["--help"])))
        #expect(!Arguments.onlyGlobal(Arguments.normalize(["--lang"])), "an option without its value is a parse error, not a session")
    }

    @Test func theZoneIsNamedOnlyWhenItDiffersFromTheUsers() throws {
        var options = GlobalOptions()
        options.lang = .en
        let context = Context(options, environment: [:])
        let clinic = Clinic(id: 1, externalId: "X", name: "X", address: "", city: "", cityKey: "", state: "NY", zip: "",
                            description: "", category: "", lat: 40.7, lon: -74, isPediatric: false, isHospital: true,
                            timeZone: "America/New_York", phone: "", website: "")
        let date = Date(timeIntervalSince1970: 1_795_000_000) // November 2026: EST
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        let detroit = try #require(TimeZone(identifier: "America/Detroit"))
        let chicago = try #require(TimeZone(identifier: "America/Chicago"))
        #expect(!localTime(date, clinic, context, userZone: newYork).contains("EST"))
        #expect(!localTime(date, clinic, context, userZone: detroit).contains("EST"), "same clock, another name")
        #expect(localTime(date, clinic, context, userZone: chicago).hasSuffix(" EST"))
    }
}
