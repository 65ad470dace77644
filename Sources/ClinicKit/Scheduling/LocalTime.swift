import Foundation

/// A wall-clock date and time with no zone ("2026-11-23 09:20").
public struct LocalDateTime: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int
    public let hour: Int
    public let minute: Int

    /// Fails for impossible dates ("2026-02-30") and times ("24:00").
    public init?(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0) {
        guard (1...9999).contains(year), (1...12).contains(month),
              (1...Self.daysIn(month: month, year: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.year = year; self.month = month; self.day = day; self.hour = hour; self.minute = minute
    }

    /// The local date `days` after 1970-01-01 (proleptic Gregorian), at a minute of that day.
    public init(daysSinceEpoch days: Int64, minuteOfDay: Int) {
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        year = Int(yoe + era * 400 + (m <= 2 ? 1 : 0))
        month = Int(m)
        day = Int(d)
        hour = minuteOfDay / 60
        minute = minuteOfDay % 60
    }

    static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    public var daysSinceEpoch: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64(month > 2 ? month - 3 : month + 9)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// ISO weekday, 1 = Monday … 7 = Sunday.
    public var weekday: Int {
        let days = daysSinceEpoch
        return Int(((days % 7) + 7 + 3) % 7) + 1 // 1970-01-01 was a Thursday (4).
    }

    public var minuteOfDay: Int { hour * 60 + minute }

    /// Seconds since the epoch if this wall time were UTC.
    var wallSeconds: Int64 { daysSinceEpoch * 86_400 + Int64(minuteOfDay) * 60 }

    public func adding(days: Int) -> LocalDateTime {
        LocalDateTime(daysSinceEpoch: daysSinceEpoch + Int64(days), minuteOfDay: minuteOfDay)
    }

    public func at(minuteOfDay: Int) -> LocalDateTime {
        LocalDateTime(daysSinceEpoch: daysSinceEpoch, minuteOfDay: minuteOfDay)
    }

    public static func < (a: LocalDateTime, b: LocalDateTime) -> Bool { a.wallSeconds < b.wallSeconds }

    public var description: String { "\(dayText) \(Self.padded(hour, 2)):\(Self.padded(minute, 2))" }

    /// The calendar day, 'YYYY-MM-DD' (read on every schedule load: no `String(format:)`).
    public var dayText: String { "\(Self.padded(year, 4))-\(Self.padded(month, 2))-\(Self.padded(day, 2))" }

    static func padded(_ value: Int, _ width: Int) -> String {
        if value < 0 { return "-" + padded(-value, width - 1) }
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// The wall time of an instant in a zone (seconds are dropped).
    public static func of(_ date: Date, in zone: TimeZone) -> LocalDateTime {
        let offset = Int64(zone.secondsFromGMT(for: date))
        let wall = Int64(date.timeIntervalSince1970.rounded(.down)) + offset
        let days = wall >= 0 ? wall / 86_400 : (wall - 86_399) / 86_400
        let minute = Int((wall - days * 86_400) / 60)
        return LocalDateTime(daysSinceEpoch: days, minuteOfDay: minute)
    }

    /// Every instant at which a zone's clocks show this wall time, earliest first: none on a
    /// spring-forward gap, two in a fall-back overlap, one otherwise.
    public func instants(in zone: TimeZone) -> [Date] {
        let wall = wallSeconds
        var offsets: [Int] = []
        for probe in [wall - 86_400, wall, wall + 86_400] {
            let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(probe)))
            if !offsets.contains(offset) { offsets.append(offset) }
        }
        var result: [Date] = []
        for offset in offsets {
            let candidate = Date(timeIntervalSince1970: TimeInterval(wall - Int64(offset)))
            if zone.secondsFromGMT(for: candidate) == offset, !result.contains(candidate) {
                result.append(candidate)
            }
        }
        return result.sorted()
    }

    /// The first instant showing this wall time, nil when it does not exist in the zone.
    public func firstInstant(in zone: TimeZone) -> Date? { instants(in: zone).first }
}
