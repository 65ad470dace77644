import Foundation
import Testing
@testable import ClinicKit

/// Random and mutated inputs for every parser of outside input: none may crash, and every
/// rejection must be a `ClinicError` (with its stable code), never anything else.
@Suite(.storeFree) struct FuzzTests {
    static let iterations = 100_000

    static let alphabet: [String] = ["0", "1", "5", "9", ".", ",", "-", "+", " ", "N", "S", "E", "W", "n", "°", ":", "T", "Z", "z",
                                     "e", "x", "\"", "'", ";", "\n", "\r", "\t", "\u{0000}", "\u{001E}", "\u{200E}", "é", "ё", "日",
                                     "🙂", "nan", "inf", "1e9", "0x1F", "--", "DROP TABLE", "\u{FEFF}", "\u{FFFD}", "%", "\\"]

    /// One of the seeds, mutated a few times: characters replaced, inserted, deleted,
    /// duplicated; sometimes pure noise, sometimes very long.
    static func mutate(_ seeds: [String], _ random: inout SeededGenerator) -> String {
        if Int.random(in: 0..<20, using: &random) == 0 {
            return (0..<Int.random(in: 0..<60, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? "" }.joined()
        }
        var characters = Array(seeds.randomElement(using: &random) ?? "")
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let piece = Array(alphabet.randomElement(using: &random) ?? "")
            let position = characters.isEmpty ? 0 : Int.random(in: 0..<characters.count, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0 where !characters.isEmpty: characters.replaceSubrange(position...position, with: piece)
            case 1: characters.insert(contentsOf: piece, at: position)
            case 2 where !characters.isEmpty: characters.remove(at: position)
            case 3: characters += characters
            default: characters.insert(contentsOf: piece, at: characters.count)
            }
        }
        if Int.random(in: 0..<200, using: &random) == 0 { characters += Array(repeating: "9", count: 5_000) }
        return String(characters)
    }

    /// Runs `body` on every input; returns the descriptions of errors that were not ClinicErrors.
    static func run(_ inputs: (inout SeededGenerator) -> String, seed: UInt64, _ body: (String) throws -> Void) -> (accepted: Int, foreign: [String]) {
        var random = SeededGenerator(seed: seed)
        var accepted = 0, foreign: [String] = []
        for _ in 0..<iterations {
            let input = inputs(&random)
            do {
                try body(input)
                accepted += 1
            } catch let error as ClinicError {
                if error.code.rawValue.isEmpty || error.message(in: .en).isEmpty { foreign.append("empty: \(input)") }
            } catch {
                foreign.append("\(error) for \(input.debugDescription)")
            }
        }
        return (accepted, foreign)
    }

    @Test func coordinates() {
        let seeds = ["53.9,27.56", "-13.8, -171.8", "53.9N 27.56E", "N53.9 E27.56", "53.9° N, 27.56° E", "90,180", "0 0", "27.56E 53.9N"]
        let (accepted, foreign) = Self.run({ Self.mutate(seeds, &$0) }, seed: 1) { text in
            let point = try CoordinateParser.parse(text)
            guard abs(point.latitude) <= 90, abs(point.longitude) <= 180 else { throw FuzzFailure.outOfRange(text) }
        }
        #expect(foreign.isEmpty, "\(foreign.prefix(5))")
        #expect(accepted > 1_000 && accepted < Self.iterations, "both kinds of outcome were exercised: \(accepted)")
    }

    @Test func times() {
        let seeds = ["2026-11-23 09:20", "2026-11-23T09:20:00Z", "2026-11-23T04:20:00-05:00", "2026-11-23T12:20+0300",
                     "2026-02-28 23:59", "2026-11-23T09:20:00.5Z", "2026-11-23"]
        let (accepted, foreign) = Self.run({ Self.mutate(seeds, &$0) }, seed: 2) { text in
            if text.count == 10 { _ = try TimeInput.parseDay(text) } else { _ = try TimeInput.parse(text) }
        }
        #expect(foreign.isEmpty, "\(foreign.prefix(5))")
        #expect(accepted > 50 && accepted < Self.iterations, "both outcomes were exercised: \(accepted)")
    }

    @Test func directoryRows() {
        let header = "external_id,name,address,city,state,lat,lon,is_pediatric,time_zone\n"
        let seeds = ["A1,Good Clinic,\"1 Main St, Suite 2\",Reno,NV,39.5,-119.8,0,", "B2,Kids,Elm,Reno,NV,39.6,-119.7,1,America/Los_Angeles",
                     "C3,\"Say \"\"hi\"\"\",x,y,z,0,0,no,"]
        let (accepted, foreign) = Self.run({ random in
            (0..<Int.random(in: 1...3, using: &random)).map { _ in Self.mutate(seeds, &random) }.joined(separator: "\n")
        }, seed: 3) { rows in
            let parsed = try ClinicDirectory.parse(Data((header + rows).utf8))
            for clinic in parsed.clinics where !(abs(clinic.coordinate.latitude) <= 90) || clinic.name.isEmpty {
                throw FuzzFailure.outOfRange(rows)
            }
        }
        #expect(foreign.isEmpty, "\(foreign.prefix(5))")
        #expect(accepted == Self.iterations, "row problems are reported per row, not thrown: \(accepted)")
    }

    @Test func rawBytesAsDirectories() {
        var random = SeededGenerator(seed: 4)
        var foreign: [String] = []
        for _ in 0..<Self.iterations {
            let bytes = (0..<Int.random(in: 0..<80, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            for format in ClinicDirectory.Format.allCases {
                do { _ = try ClinicDirectory.parse(Data("external_id,name,lat,lon,id,latitude,longitude,status\n".utf8) + Data(bytes), format: format) }
                catch is ClinicError {} catch { foreign.append("\(error)") }
            }
        }
        #expect(foreign.isEmpty, "\(foreign.prefix(5))")
    }

    enum FuzzFailure: Error { case outOfRange(String) }
}
