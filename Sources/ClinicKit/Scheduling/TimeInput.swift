import Foundation

/// Parses the times people type: ISO 8601 with an offset or `Z` (an instant), or
/// `YYYY-MM-DD HH:MM` (a wall time, read in the clinic's zone).
public enum TimeInput {
    public enum Parsed: Equatable, Sendable {
        case instant(Date)
        case local(LocalDateTime)
    }

    public static func parse(_ text: String) throws -> Parsed {
        let invalid = ClinicError.invalid(.invalidTime, text)
        let s = Array(text.trimmingCharacters(in: .whitespaces).utf8)
        guard s.count >= 16, s.count <= 40 else { throw invalid }
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= s.count else { return nil }
            var value = 0
            for index in range {
                let byte = s[index]
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0..<4), s[4] == UInt8(ascii: "-"), let month = number(5..<7),
              s[7] == UInt8(ascii: "-"), let day = number(8..<10),
              s[10] == UInt8(ascii: "T") || s[10] == UInt8(ascii: " ") || s[10] == UInt8(ascii: "t"),
              let hour = number(11..<13), s[13] == UInt8(ascii: ":"), let minute = number(14..<16)
        else { throw invalid }
        var index = 16
        var second = 0
        var fraction = 0.0
        if index < s.count, s[index] == UInt8(ascii: ":") {
            guard let value = number(17..<19), value <= 59 else { throw invalid }
            second = value
            index = 19
            if index < s.count, s[index] == UInt8(ascii: ".") || s[index] == UInt8(ascii: ",") {
                index += 1
                let start = index
                var scale = 0.1
                while index < s.count, (48...57).contains(s[index]) {
                    fraction += Double(s[index] - 48) * scale
                    scale /= 10
                    index += 1
                }
                guard index > start else { throw invalid }
            }
        }
        guard let local = LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute) else {
            throw invalid
        }
        if index == s.count {
            // Wall times name a slot to the minute; a stray second must not be dropped silently.
            guard second == 0, fraction == 0 else { throw ClinicError.invalid(.timeHasSeconds, text) }
            return .local(local)
        }
        var offsetSeconds = 0
        switch s[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == s.count else { throw invalid }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = s[index] == UInt8(ascii: "-") ? -1 : 1
            let rest = s.count - index - 1
            let hours: Int?, minutes: Int?
            switch rest {
            case 2: hours = number(index + 1 ..< index + 3); minutes = 0
            case 4: hours = number(index + 1 ..< index + 3); minutes = number(index + 3 ..< index + 5)
            case 5:
                guard s[index + 3] == UInt8(ascii: ":") else { throw invalid }
                hours = number(index + 1 ..< index + 3); minutes = number(index + 4 ..< index + 6)
            default: throw invalid
            }
            // ±18:00 at most, as ISO 8601 and Foundation's TimeZone allow.
            guard let hours, let minutes, minutes <= 59, hours * 60 + minutes <= 18 * 60 else { throw invalid }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        default:
            throw invalid
        }
        let seconds = local.wallSeconds + Int64(second) - Int64(offsetSeconds)
        return .instant(Date(timeIntervalSince1970: TimeInterval(seconds) + fraction))
    }

    /// The instant a typed time names in a zone. A wall time that the zone skips (a
    /// spring-forward gap) is refused; one it shows twice means its first occurrence.
    public static func resolve(_ text: String, in zone: TimeZone) throws -> Date {
        try resolve(parse(text), in: zone)
    }

    public static func resolve(_ parsed: Parsed, in zone: TimeZone) throws -> Date {
        switch parsed {
        case .instant(let date):
            return date
        case .local(let local):
            guard let date = local.firstInstant(in: zone) else {
                throw ClinicError.invalid(.timeDoesNotExist, local.description, zone.identifier)
            }
            return date
        }
    }

    /// A calendar day "YYYY-MM-DD".
    public static func parseDay(_ text: String) throws -> LocalDateTime {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              let local = LocalDateTime(year: year, month: month, day: day)
        else { throw ClinicError.invalid(.invalidDay, text) }
        return local
    }
}
