import Foundation
import Testing
@testable import ClinicKit

/// Working hours as a person reads them (issue 46: `clinic doctors` printed 200 characters).
@Suite(.storeFree) struct HoursTextTests {
    let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    func hours(_ days: [Int], _ spans: [(Int, Int)], slot: Int = 20) -> [WorkingHours] {
        days.flatMap { day in spans.map { WorkingHours(id: nil, doctorId: 1, weekday: day, startMinute: $0.0, endMinute: $0.1, slotMinutes: slot) } }
    }

    @Test func daysAlikeAreSaidOnceAndRunsAreRanges() {
        let week = hours([1, 2, 3, 4, 5], [(780, 1020), (480, 720)])
        #expect(HoursText.compact(week, weekdays: days, and: "and", minutes: "min") == "Mon–Fri 08:00–12:00 and 13:00–17:00 (20 min)")
        let mixed = hours([1, 3], [(480, 720)]) + hours([2], [(600, 900)], slot: 30) + hours([6, 7], [(540, 660)])
        #expect(HoursText.compact(mixed, weekdays: days, and: "and", minutes: "min")
                == "Mon, Wed 08:00–12:00 (20 min); Tue 10:00–15:00 (30 min); Sat, Sun 09:00–11:00 (20 min)")
        #expect(HoursText.compact([], weekdays: days, and: "and", minutes: "min") == "")
        let russian = hours([1, 2, 3, 4], [(480, 720)])
        #expect(HoursText.compact(russian, weekdays: ["Пн", "Вт", "Ср", "Чт", "Пт", "Сб", "Вс"], and: "и", minutes: "мин")
                == "Пн–Чт 08:00–12:00 (20 мин)")
    }
}
