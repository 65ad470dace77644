import Foundation

/// A change to a doctor's weekly hours on one local date: a day off (no hours), or hours that
/// replace the weekly ones that day.
public struct WorkingException: Hashable, Sendable {

    public var id: Int64?
    public var doctorId: Int64
    /// The clinic's local date, "YYYY-MM-DD".
    public var day: String
    public var startMinute: Int?
    public var endMinute: Int?
    public var slotMinutes: Int?

    public var isDayOff: Bool { startMinute == nil }

    public init(id: Int64?, doctorId: Int64, day: String, startMinute: Int?, endMinute: Int?, slotMinutes: Int?) {
        self.id = id; self.doctorId = doctorId; self.day = day
        self.startMinute = startMinute; self.endMinute = endMinute; self.slotMinutes = slotMinutes
    }
}

/// One doctor's working time: weekly hours with dated exceptions, in the clinic's zone.
public struct DoctorSchedule: Sendable {
    public struct Interval: Equatable, Sendable {
        public let startMinute: Int
        public let endMinute: Int
        public let slotMinutes: Int

        public init(startMinute: Int, endMinute: Int, slotMinutes: Int) {
            self.startMinute = startMinute
            self.endMinute = endMinute
            self.slotMinutes = slotMinutes
        }

        /// The slot length when staff set hours without one.
        public static let defaultSlotMinutes = 20

        /// Hours as every front takes them: `off` (a day off: nil), or a start and an end
        /// ("HH:MM" local) with a slot length (default `defaultSlotMinutes`);
        /// `invalid_input` (`exceptionInvalid`) for anything else.
        public static func parse(off: Bool, start: String?, end: String?, slotMinutes: Int?) throws -> Interval? {
            switch (off, start, end) {
            case (true, nil, nil): return nil
            case (false, let start?, let end?):
                guard let from = Shapes.minutes(start), let to = Shapes.minutes(end) else { throw ClinicError.invalid(.exceptionInvalid) }
                return Interval(startMinute: from, endMinute: to, slotMinutes: slotMinutes ?? defaultSlotMinutes)
            default: throw ClinicError.invalid(.exceptionInvalid)
            }
        }

        /// Within one day, start before end, slots of 5 to 480 minutes.
        public var isValid: Bool {
            startMinute >= 0 && endMinute <= 1440 && startMinute < endMinute && (5...480).contains(slotMinutes)
        }

        /// Whether the two share a minute.
        public func overlaps(_ other: Interval) -> Bool {
            startMinute < other.endMinute && other.startMinute < endMinute
        }

        /// Whether a slot may start at `minute` (local minutes after midnight).
        public func hasSlot(startingAt minute: Int) -> Bool {
            minute >= startMinute && minute + slotMinutes <= endMinute && (minute - startMinute) % slotMinutes == 0
        }
    }

    let weekly: [WorkingHours]
    let exceptions: [String: [WorkingException]]

    public init(weekly: [WorkingHours], exceptions: [WorkingException]) {
        self.weekly = weekly
        self.exceptions = Dictionary(grouping: exceptions, by: \.day)
    }

    static func dayKey(_ day: LocalDateTime) -> String { day.dayText }

    /// The working intervals of a local date: the exceptions of that date if there are any
    /// (none at all for a day off), else the weekly hours of its weekday.
    public func intervals(on day: LocalDateTime) -> [Interval] {
        if let changed = exceptions[Self.dayKey(day)] {
            if changed.contains(where: \.isDayOff) { return [] }
            return changed.compactMap { exception in
                guard let start = exception.startMinute, let end = exception.endMinute, let slot = exception.slotMinutes
                else { return nil }
                return Interval(startMinute: start, endMinute: end, slotMinutes: slot)
            }.sorted { $0.startMinute < $1.startMinute }
        }
        return weekly.filter { $0.weekday == day.weekday }
            .map { Interval(startMinute: $0.startMinute, endMinute: $0.endMinute, slotMinutes: $0.slotMinutes) }
            .sorted { $0.startMinute < $1.startMinute }
    }

    /// The slots of a local date as instants, earliest first. A wall time the zone skips is not
    /// offered; one it shows twice is offered at both occurrences (issue 55: a doctor who works
    /// by the wall clock through the fall-back change is there for the repeated hour too, and
    /// the two are told apart by their zone's name, "1:20 AM PDT" and "1:20 AM PST"). With `duration`
    /// (a visit type's minutes), a visit starts on a slot boundary and must end within the
    /// same interval, and only intervals whose slot length divides the duration offer it.
    public func slots(on day: LocalDateTime, zone: TimeZone, duration: Int? = nil) -> [(start: Date, end: Date)] {
        var result: [(start: Date, end: Date)] = []
        for interval in intervals(on: day) {
            let length = duration ?? interval.slotMinutes
            guard length > 0, length % interval.slotMinutes == 0 else { continue }
            var minute = interval.startMinute
            while minute + length <= interval.endMinute {
                for start in day.at(minuteOfDay: minute).instants(in: zone) {
                    result.append((start, start.addingTimeInterval(TimeInterval(length * 60))))
                }
                minute += interval.slotMinutes
            }
        }
        return result.sorted { $0.start < $1.start }
    }

    /// The slot's end if a slot starts at `start`: on a whole minute, at an occurrence of its
    /// wall time, on a slot boundary of that date's intervals.
    public func slotEnd(startingAt start: Date, zone: TimeZone, duration: Int? = nil) -> Date? {
        let seconds = start.timeIntervalSince1970
        guard seconds == seconds.rounded(.down), Int64(seconds) % 60 == 0 else { return nil }
        let local = LocalDateTime.of(start, in: zone)
        guard local.instants(in: zone).contains(start) else { return nil }
        let minute = local.minuteOfDay
        guard let interval = intervals(on: local).first(where: { $0.hasSlot(startingAt: minute) }) else { return nil }
        let length = duration ?? interval.slotMinutes
        guard length > 0, length % interval.slotMinutes == 0, minute + length <= interval.endMinute else { return nil }
        return start.addingTimeInterval(TimeInterval(length * 60))
    }

    /// A doctor's schedule with the exceptions between two local dates (inclusive).
    static func load(_ tx: any StoreReading, doctorId: Int64, from first: LocalDateTime, through last: LocalDateTime) throws -> DoctorSchedule {
        DoctorSchedule(weekly: try tx.workingHours(ofDoctor: doctorId),
                       exceptions: try tx.workingExceptions(ofDoctor: doctorId, from: dayKey(first), through: dayKey(last)))
    }

}

/// The booking rules an operator can tune (`clinic admin settings`), stored in `settings`.
public struct BookingPolicy: Sendable, Equatable {
    /// A slot starting sooner than this cannot be booked.
    public var leadMinutes = 30
    /// Patients cannot cancel or move an appointment starting sooner than this.
    public var cutoffMinutes = 120
    /// How many active future appointments a patient may hold.
    public var maxActive = 5
    /// Reminders: hours before an appointment (0: none). Two, the longer first.
    public var reminderFirstHours = 24
    public var reminderSecondHours = 2
    /// How far ahead an appointment may be booked, in days.
    public var horizonDays = 365
    /// How long a hold (FHIR's `$hold`) keeps a slot for its patient, in seconds.
    public var holdSeconds = 300
    /// How many of one doctor's times of a day other patients may hold at once: holds are
    /// free to take, so without a bound a few accounts could hold a whole day, again and again.
    public var holdsPerDoctorDay = 3
    /// How many days after an appointment is cancelled its patient may still write about it
    /// (the clinic may still answer): a cancelled visit's conversation does not stay open forever.
    public var threadDaysAfterCancel = 30
    /// How long a time offered from the waitlist is held for the patient it is offered to, in minutes.
    public var waitlistOfferMinutes = 15
    /// How many waitlists (one per department) a patient may be on at once.
    public var waitlistEntries = 5
    /// How many days apart (by the clinic's calendar) a patient's active visits in one
    /// department must be, by booking or by moving (`too_close`); 0: no such rule.
    public var departmentDaysBetween = 0
    var horizon: TimeInterval { TimeInterval(horizonDays) * 86_400 }

    public init() {}

    public static var keys: [(key: String, path: WritableKeyPath<BookingPolicy, Int>, range: ClosedRange<Int>)] { [
        ("booking.lead_minutes", \.leadMinutes, 0...10_080),
        ("booking.cutoff_minutes", \.cutoffMinutes, 0...10_080),
        ("booking.max_active", \.maxActive, 1...1000),
        ("booking.reminder_first_hours", \.reminderFirstHours, 0...336),
        ("booking.reminder_second_hours", \.reminderSecondHours, 0...336),
        ("booking.horizon_days", \.horizonDays, 1...3660),
        ("booking.hold_seconds", \.holdSeconds, 10...3600),
        ("booking.holds_per_doctor_day", \.holdsPerDoctorDay, 1...1000),
        ("booking.thread_days_after_cancel", \.threadDaysAfterCancel, 0...3650),
        ("booking.waitlist_offer_minutes", \.waitlistOfferMinutes, 1...1440),
        ("booking.waitlist_entries", \.waitlistEntries, 1...100),
        ("booking.department_days_between", \.departmentDaysBetween, 0...365),
    ] }

    static func load(_ tx: any StoreReading) throws -> BookingPolicy {
        BookingPolicy(settings: try tx.settings(prefix: prefix))
    }

    /// The keys of the booking rules start with this.
    static let prefix = "booking."

    /// The policy of the stored `booking.` settings: a value out of its range, or not a
    /// number, leaves the default.
    init(settings: [String: String]) {
        for (key, text) in settings {
            if let entry = Self.keys.first(where: { $0.key == key }), let value = Int(text), entry.range.contains(value) {
                self[keyPath: entry.path] = value
            }
        }
    }

    /// The value to store for one setting: a rule of `keys`, a whole number in its range.
    static func checked(key: String, value: String) throws -> String {
        guard let entry = keys.first(where: { $0.key == key }) else {
            throw ClinicError.invalid(.settingUnknown, key, keys.map(\.key).joined(separator: ", "))
        }
        guard let number = Int(value.trimmingCharacters(in: .whitespaces)), entry.range.contains(number) else {
            throw ClinicError.invalid(.settingRange, key, String(entry.range.lowerBound), String(entry.range.upperBound))
        }
        return String(number)
    }
}

extension AppointmentStatus {
    /// Every allowed change of status, in one place: booked appointments are `scheduled`;
    /// clinic staff confirm them, check the patient in (`arrived`), the doctor starts the visit
    /// (`in_progress`); they end `completed`, `cancelled` or `no_show`. A check-in made by
    /// mistake goes back to `scheduled` until the visit starts (`StaffAction.undoCheckIn`).
    public static let transitions: [AppointmentStatus: Set<AppointmentStatus>] = [
        .scheduled: [.confirmed, .arrived, .cancelled, .noShow],
        .confirmed: [.arrived, .completed, .cancelled, .noShow],
        .arrived: [.scheduled, .inProgress, .completed, .cancelled, .noShow],
        .inProgress: [.completed],
    ]

    public func canMove(to next: AppointmentStatus) -> Bool {
        Self.transitions[self]?.contains(next) ?? false
    }
}
