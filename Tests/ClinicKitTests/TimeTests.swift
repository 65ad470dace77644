import Foundation
import Testing
@testable import ClinicKit

@Suite(.storeFree) struct TimeTests {
    let newYork = TimeZone(identifier: "America/New_York")!
    let minsk = TimeZone(identifier: "Europe/Minsk")!

    @Test func isoTimesWithOffsetsAreInstants() throws {
        #expect(try TimeInput.parse("2026-11-23T09:20:00Z") == .instant(Date(timeIntervalSince1970: 1_795_425_600)))
        #expect(try TimeInput.parse("2026-11-23T04:20:00-05:00") == .instant(Date(timeIntervalSince1970: 1_795_425_600)))
        #expect(try TimeInput.parse("2026-11-23T12:20+0300") == .instant(Date(timeIntervalSince1970: 1_795_425_600)))
        #expect(try TimeInput.parse("2026-11-23T09:20:00.000Z") == .instant(Date(timeIntervalSince1970: 1_795_425_600)))
    }

    @Test func wallTimesAreLocal() throws {
        #expect(try TimeInput.parse("2026-11-23 09:20") == .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!))
        #expect(try TimeInput.parse("2026-11-23T09:20") == .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!))
    }

    @Test func badTimesAreInvalidInput() {
        for text in ["", "tomorrow", "2026-13-01 10:00", "2026-02-29 10:00", "2026-11-23 24:00", "2026-11-23 10:60",
                     "2026-11-23T10:00:00+25:00", "2026-11-23T10:00:00Zjunk", "2026-11-23 10:00 PM", "２０２６-11-23 10:00",
                     "'; DROP TABLE appointments; --"] {
            #expect(expectError(.invalidInput) { _ = try TimeInput.parse(text) } != nil, "\(text)")
        }
    }

    @Test func secondsAreKeptOrRefusedNeverDropped() throws {
        #expect(expectError(.invalidInput) { _ = try TimeInput.parse("2026-11-30 09:40:30") }?.key == .timeHasSeconds)
        #expect(expectError(.invalidInput) { _ = try TimeInput.parse("2026-11-30 09:40:00.5") }?.key == .timeHasSeconds)
        #expect(try TimeInput.parse("2026-11-30 09:40:00") == .local(LocalDateTime(year: 2026, month: 11, day: 30, hour: 9, minute: 40)!))
        #expect(try TimeInput.parse("2026-11-30T09:40:00.25Z") == .instant(Date(timeIntervalSince1970: 1_796_031_600.25)))
    }

    @Test func springForwardGapHasNoInstant() {
        // 2027-03-14 02:30 does not exist in New York.
        let gap = LocalDateTime(year: 2027, month: 3, day: 14, hour: 2, minute: 30)!
        #expect(gap.instants(in: newYork).isEmpty)
        #expect(expectError(.invalidInput) { _ = try TimeInput.resolve("2027-03-14 02:30", in: newYork) } != nil)
    }

    @Test func fallBackOverlapHasTwoInstantsFirstChosen() throws {
        // 2026-11-01 01:30 happens twice in New York: at 05:30Z (EDT) and 06:30Z (EST).
        let overlap = LocalDateTime(year: 2026, month: 11, day: 1, hour: 1, minute: 30)!
        #expect(overlap.instants(in: newYork) == [utc("2026-11-01T05:30:00Z"), utc("2026-11-01T06:30:00Z")])
        #expect(try TimeInput.resolve("2026-11-01 01:30", in: newYork) == utc("2026-11-01T05:30:00Z"))
    }

    @Test func minskHasNoDaylightSaving() {
        for month in 1...12 {
            let wall = LocalDateTime(year: 2026, month: month, day: 15, hour: 2, minute: 30)!
            let instants = wall.instants(in: minsk)
            #expect(instants.count == 1)
            #expect(instants.first.map { minsk.secondsFromGMT(for: $0) } == 3 * 3600)
        }
    }

    @Test func civilCalendarRoundTrips() {
        var day = LocalDateTime(year: 1999, month: 12, day: 25)!
        for _ in 0..<3000 {
            let next = day.adding(days: 1)
            #expect(next.daysSinceEpoch == day.daysSinceEpoch + 1)
            #expect(LocalDateTime(year: next.year, month: next.month, day: next.day) == next)
            #expect(next.weekday == day.weekday % 7 + 1)
            day = next
        }
        #expect(LocalDateTime(year: 2026, month: 11, day: 23)!.weekday == 1) // a Monday
        #expect(LocalDateTime.of(utc("2026-11-23T04:59:00Z"), in: newYork).description == "2026-11-22 23:59")
    }

    /// The arithmetic ISO 8601 text equals Foundation's formatter, for random instants across
    /// the years 1583…9999 (negative epoch seconds and a few fractions included) and the formatter's
    /// own answer before (Julian dates).
    @Test func isoTextMatchesFoundationsFormatter() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        let fixed: [Double] = [0, -1, -0.5, 86_399.9, 1_795_425_600, -12_212_553_600, -12_212_553_601,
                               -62_135_596_800, 253_402_300_799]
        // Whole seconds (what the program formats): far from 1970 the formatter rounds a
        // fraction a hair below the next second up, the arithmetic truncates.
        let random = (0..<2000).map { _ in Double.random(in: -62_135_596_800..<253_402_300_799, using: &generator).rounded(.down) }
        for seconds in fixed + random {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(DateText.iso8601(date) == formatter.string(from: date), "\(seconds)")
        }
        #expect(LocalDateTime(year: 7, month: 3, day: 9, hour: 5, minute: 4)!.description == "0007-03-09 05:04")
    }
}
