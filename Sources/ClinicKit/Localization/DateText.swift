import Foundation

/// Human date formatting: the language's conventions, in the clinic's time zone.
public enum DateText {
    /// "Nov 22, 2026 at 2:30 PM" (en) or "22.11.2026, 14:30" (ru).
    public static func dateTime(_ date: Date, timeZone: TimeZone, language: Language) -> String {
        let formatter = DateFormatter()
        formatter.locale = language.locale
        formatter.timeZone = timeZone
        switch language {
        case .en:
            formatter.dateFormat = "MMM d, yyyy 'at' h:mm a"
        case .ru:
            formatter.dateFormat = "dd.MM.yyyy, HH:mm"
        }
        return formatter.string(from: date)
    }

    /// The day heading of a slot list: "Mon, Nov 23, 2026" (en), "пн, 23.11.2026" (ru).
    public static func day(_ date: Date, timeZone: TimeZone, language: Language) -> String {
        let formatter = DateFormatter()
        formatter.locale = language.locale
        formatter.timeZone = timeZone
        formatter.dateFormat = language == .ru ? "EEEEEE, dd.MM.yyyy" : "EEE, MMM d, yyyy"
        return formatter.string(from: date)
    }

    /// A time of day: "9:20 AM" (en), "09:20" (ru).
    public static func time(_ date: Date, timeZone: TimeZone, language: Language) -> String {
        let formatter = DateFormatter()
        formatter.locale = language.locale
        formatter.timeZone = timeZone
        formatter.dateFormat = language == .ru ? "HH:mm" : "h:mm a"
        return formatter.string(from: date)
    }

    /// The zone's short name at that date in the language ("PST", "GMT-8"), else its identifier.
    public static func zoneName(_ date: Date, timeZone: TimeZone, language: Language) -> String {
        let formatter = DateFormatter()
        formatter.locale = language.locale
        formatter.timeZone = timeZone
        formatter.dateFormat = "zzz"
        let name = formatter.string(from: date)
        return name.isEmpty ? timeZone.identifier : name
    }

    /// ISO 8601 in UTC with `Z`, as used in JSON output.
    public static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
