import Foundation

/// Human date formatting: the language's conventions, in the clinic's time zone.
public enum DateText {
    /// Formatters by pattern, zone and language: making one costs more than using it, and a
    /// slot table formats a few times per row.
    private static let formatters = LockedBox<[String: DateFormatter]>([:])
    private static let iso = LockedBox({
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter
    }())

    /// A date in a zone, with the pattern of the language (`en`, `ru`).
    static func format(_ date: Date, _ timeZone: TimeZone, _ language: Language, en: String, ru: String) -> String {
        let pattern = language == .ru ? ru : en
        let key = pattern + "\u{1F}" + timeZone.identifier + "\u{1F}" + language.rawValue
        return formatters.withLock { cache in
            if let formatter = cache[key] { return formatter.string(from: date) }
            let formatter = DateFormatter()
            formatter.locale = language.locale
            formatter.timeZone = timeZone
            formatter.dateFormat = pattern
            cache[key] = formatter
            return formatter.string(from: date)
        }
    }

    /// "Nov 22, 2026 at 2:30 PM" (en) or "22.11.2026, 14:30" (ru).
    public static func dateTime(_ date: Date, timeZone: TimeZone, language: Language) -> String {
        format(date, timeZone, language, en: "MMM d, yyyy 'at' h:mm a", ru: "dd.MM.yyyy, HH:mm")
    }

    /// The day heading of a slot list: "Mon, Nov 23, 2026" (en), "пн, 23.11.2026" (ru).
    public static func day(_ date: Date, timeZone: TimeZone, language: Language) -> String {
        format(date, timeZone, language, en: "EEE, MMM d, yyyy", ru: "EEEEEE, dd.MM.yyyy")
    }

    /// A day given by its key "YYYY-MM-DD" as the pages say a date: "Nov 30, 2026" (en),
    /// "30.11.2026" (ru); the key as it is when it is not a day.
    public static func day(key: String, language: Language) -> String {
        guard let local = try? TimeInput.parseDay(key), let noon = local.at(minuteOfDay: 720).firstInstant(in: .gmt) else { return key }
        return format(noon, .gmt, language, en: "MMM d, yyyy", ru: "dd.MM.yyyy")
    }

    /// A month: "November 2026" (en), "ноябрь 2026" (ru).
    public static func monthName(year: Int, month: Int, language: Language) -> String {
        guard let middle = LocalDateTime(year: year, month: month, day: 15, hour: 12)?.firstInstant(in: .gmt) else {
            return String(format: "%04d-%02d", year, month)
        }
        return format(middle, .gmt, language, en: "LLLL yyyy", ru: "LLLL yyyy")
    }

    /// A time of day: "9:20 AM" (en), "09:20" (ru).
    public static func time(_ date: Date, timeZone: TimeZone, language: Language) -> String {
        format(date, timeZone, language, en: "h:mm a", ru: "HH:mm")
    }

    /// The zone's short name at that date in the language ("PST", "GMT-8"), else its identifier.
    public static func zoneName(_ date: Date, timeZone: TimeZone, language: Language) -> String {
        let name = format(date, timeZone, language, en: "zzz", ru: "zzz")
        return name.isEmpty ? timeZone.identifier : name
    }

    /// `dateTime` with the zone named after a space: "Nov 27, 2026 at 4:57 PM EST" (en),
    /// "27.11.2026, 16:57 GMT-5" (ru): for a time whose zone the reader cannot guess.
    public static func dateTimeWithZone(_ date: Date, timeZone: TimeZone, language: Language) -> String {
        dateTime(date, timeZone: timeZone, language: language) + " " + zoneName(date, timeZone: timeZone, language: language)
    }

    /// ISO 8601 in UTC with `Z`, as used in JSON output.
    public static func iso8601(_ date: Date) -> String {
        // By arithmetic for the years 1583…9999 (every slot and log line goes through here; the
        // formatter costs microseconds and a lock), the formatter beyond: before 1583 it
        // counts in the Julian calendar, which the arithmetic (Gregorian) does not.
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds >= -12_212_553_600, seconds < 253_402_300_800 else {
            return iso.withLock { formatter in formatter.string(from: date) }
        }
        let total = Int64(seconds)
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let inDay = Int(total - days * 86_400)
        let wall = LocalDateTime(daysSinceEpoch: days, minuteOfDay: inDay / 60)
        return "\(wall.dayText)T\(LocalDateTime.padded(wall.hour, 2)):\(LocalDateTime.padded(wall.minute, 2)):\(LocalDateTime.padded(inDay % 60, 2))Z"
    }
}
