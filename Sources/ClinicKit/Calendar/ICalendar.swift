import Foundation

/// An appointment as an iCalendar event (RFC 5545), with what it needs to be shown.
public struct CalendarEvent: Sendable {
    public let appointment: Appointment
    public let clinic: Clinic
    public let specialization: String
    /// Raised by every reschedule and by the cancellation (RFC 5545 3.8.7.4).
    public let sequence: Int

    public init(appointment: Appointment, clinic: Clinic, specialization: String, sequence: Int) {
        self.appointment = appointment; self.clinic = clinic; self.specialization = specialization; self.sequence = sequence
    }
}

/// Writes iCalendar documents: each event's start and end in its clinic's zone (`TZID`), with
/// a `VTIMEZONE` written from that zone's real transitions around the events (not a rule
/// guessed from today's), so a calendar without the IANA database reads the same instant.
public enum ICalendar {
    /// The product identifier of every document.
    static let productId = "-//Clinic appointments//ClinicKit//EN"

    /// A document with the events; `method` PUBLISH for a file or a feed.
    public static func document(_ events: [CalendarEvent], language: Language, now: Date, name: String? = nil) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:\(productId)", "CALSCALE:GREGORIAN", "METHOD:PUBLISH"]
        if let name { lines.append("X-WR-CALNAME:" + escape(name)) }
        var zones: [String: (TimeZone, Date, Date)] = [:]
        for event in events {
            let zone = event.clinic.zone
            let (low, high) = zones[zone.identifier].map { ($0.1, $0.2) } ?? (event.appointment.startsAt, event.appointment.endsAt)
            zones[zone.identifier] = (zone, min(low, event.appointment.startsAt), max(high, event.appointment.endsAt))
        }
        for (_, (zone, low, high)) in zones.sorted(by: { $0.key < $1.key }) {
            lines += timeZone(zone, from: low.addingTimeInterval(-400 * 86_400), to: high.addingTimeInterval(400 * 86_400))
        }
        for event in events { lines += self.event(event, language: language, now: now) }
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    /// The stable identifier of an appointment's event: the same in every file and feed.
    public static func uid(_ appointment: Appointment) -> String {
        "appointment-\(appointment.id ?? 0)-\(appointment.createdAt.seconds)@clinic"
    }

    static func event(_ event: CalendarEvent, language: Language, now: Date) -> [String] {
        let appointment = event.appointment, clinic = event.clinic, zone = clinic.zone
        let department = Specialization.displayName(event.specialization, language)
        let summary = Strings.text(.icsSummary, language, [department, clinic.name])
        let place = [clinic.name, clinic.address, clinic.city, "\(clinic.state) \(clinic.zip)"].filter { !$0.isEmpty }.joined(separator: ", ")
        var lines = [
            "BEGIN:VEVENT",
            "UID:" + uid(appointment),
            "DTSTAMP:" + utc(now),
            "CREATED:" + utc(appointment.createdAt),
            "LAST-MODIFIED:" + utc(appointment.updatedAt),
            "SEQUENCE:\(event.sequence)",
            "DTSTART;TZID=\(zone.identifier):" + local(appointment.startsAt, zone),
            "DTEND;TZID=\(zone.identifier):" + local(appointment.endsAt, zone),
            "SUMMARY:" + escape(summary),
            "LOCATION:" + escape(place),
            String(format: "GEO:%.6f;%.6f", clinic.lat, clinic.lon),
            "DESCRIPTION:" + escape(Strings.text(.icsDescription, language, [appointment.doctorName, String(appointment.id ?? 0)])),
            "STATUS:" + (appointment.status == .cancelled ? "CANCELLED" : "CONFIRMED"),
            "TRANSP:OPAQUE",
        ]
        if !clinic.phone.isEmpty { lines.append("CONTACT:" + escape(clinic.phone)) }
        if appointment.status.isActive {
            lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-P1D",
                      "DESCRIPTION:" + escape(Strings.text(.icsAlarm, language, [summary])), "END:VALARM"]
        }
        lines.append("END:VEVENT")
        return lines
    }

    /// A VTIMEZONE with one observance for the offset in force at `from` and one per
    /// transition until `to`, each with its exact onset (no RRULE to extrapolate).
    static func timeZone(_ zone: TimeZone, from: Date, to: Date) -> [String] {
        var lines = ["BEGIN:VTIMEZONE", "TZID:" + zone.identifier]
        func observance(at onset: Date, from before: Int, to after: Int) {
            let kind = zone.isDaylightSavingTime(for: onset) ? "DAYLIGHT" : "STANDARD"
            // The onset is written in the local time that was in force before it.
            lines += ["BEGIN:\(kind)", "DTSTART:" + local(onset, offset: before), "TZOFFSETFROM:" + offset(before),
                      "TZOFFSETTO:" + offset(after)]
            if let name = zone.abbreviation(for: onset), !name.isEmpty { lines.append("TZNAME:" + escape(name)) }
            lines.append("END:\(kind)")
        }
        let first = zone.secondsFromGMT(for: from)
        observance(at: from, from: first, to: first)
        var cursor = from
        while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next < to, next > cursor {
            observance(at: next, from: zone.secondsFromGMT(for: next.addingTimeInterval(-1)), to: zone.secondsFromGMT(for: next))
            cursor = next
        }
        lines.append("END:VTIMEZONE")
        return lines
    }

    // MARK: Values

    static func utc(_ date: Date) -> String { local(date, offset: 0) + "Z" }

    static func local(_ date: Date, _ zone: TimeZone) -> String { local(date, offset: zone.secondsFromGMT(for: date)) }

    /// "20270313T090000": the wall-clock time at an offset from UTC.
    static func local(_ date: Date, offset: Int) -> String {
        let time = LocalDateTime.of(date.addingTimeInterval(TimeInterval(offset)), in: .gmt)
        let second = Int(date.timeIntervalSince1970.rounded(.down)) % 60
        return String(format: "%04d%02d%02dT%02d%02d%02d", time.year, time.month, time.day, time.hour, time.minute,
                      second < 0 ? second + 60 : second)
    }

    /// "+0530", "-1000".
    static func offset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+", value = abs(seconds)
        let hours = value / 3600, minutes = value % 3600 / 60, rest = value % 60
        return sign + String(format: "%02d%02d", hours, minutes) + (rest == 0 ? "" : String(format: "%02d", rest))
    }

    /// TEXT escaping (RFC 5545 3.3.11).
    static func escape(_ text: String) -> String {
        var result = ""
        for character in text.withoutControls(keeping: ["\n", "\r"]) {
            switch character {
            case "\\": result += "\\\\"
            case ";": result += "\\;"
            case ",": result += "\\,"
            case "\n", "\r\n": result += "\\n"
            case "\r": continue
            default: result.append(character)
            }
        }
        return result
    }

    /// Folds a content line at 75 octets, never inside a UTF-8 sequence (RFC 5545 3.1).
    static func fold(_ line: String) -> String {
        guard line.utf8.count > 75 else { return line }
        var parts: [String] = [], current = "", size = 0, limit = 75
        for scalar in line.unicodeScalars {
            let width = String(scalar).utf8.count
            if size + width > limit {
                parts.append(current)
                current = ""; size = 0; limit = 74
            }
            current.unicodeScalars.append(scalar)
            size += width
        }
        parts.append(current)
        return parts.joined(separator: "\r\n ")
    }
}
