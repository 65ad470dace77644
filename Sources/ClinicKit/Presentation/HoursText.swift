import Foundation

/// Working hours as a person reads them: "Mon–Fri 08:00–12:00 and 13:00–17:00 (20 min)".
/// Days with the same hours are one group; consecutive days are a range, others a list
/// ("Mon, Wed"); groups are apart by "; ". The slot length is said once per group.
public enum HoursText {
    /// `weekdays`: the seven day names, Monday first; `and`: the word between two intervals;
    /// `minutes`: the unit after the slot length ("min").
    public static func compact(_ hours: [WorkingHours], weekdays: [String], and: String, minutes: String) -> String {
        func name(_ weekday: Int) -> String { (1...7).contains(weekday) && weekdays.count == 7 ? weekdays[weekday - 1] : String(weekday) }
        var byDay: [Int: [WorkingHours]] = [:]
        for interval in hours { byDay[interval.weekday, default: []].append(interval) }
        // A day's hours as text, its intervals in time order.
        func dayText(_ intervals: [WorkingHours]) -> String {
            let sorted = intervals.sorted { $0.startMinute < $1.startMinute }
            let spans = sorted.map { Shapes.minutesText($0.startMinute) + "–" + Shapes.minutesText($0.endMinute) }
            let slots = Set(sorted.map(\.slotMinutes)).sorted().map(String.init).joined(separator: "/")
            return spans.joined(separator: " \(and) ") + " (\(slots) \(minutes))"
        }
        // Groups in the order of their first day.
        var groups: [(text: String, days: [Int])] = []
        for day in byDay.keys.sorted() {
            let text = dayText(byDay[day] ?? [])
            if let index = groups.firstIndex(where: { $0.text == text }) { groups[index].days.append(day) } else { groups.append((text, [day])) }
        }
        return groups.map { group in
            // Runs of consecutive days: "Mon–Fri"; a run of two is "Sat, Sun".
            var runs: [[Int]] = []
            for day in group.days {
                if let last = runs.last?.last, last + 1 == day { runs[runs.count - 1].append(day) } else { runs.append([day]) }
            }
            let days = runs.map { run in
                run.count > 2 ? name(run[0]) + "–" + name(run[run.count - 1]) : run.map(name).joined(separator: ", ")
            }.joined(separator: ", ")
            return days + " " + group.text
        }.joined(separator: "; ")
    }
}
