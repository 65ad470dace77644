import Foundation

/// Whether an instant starts a bookable slot of a doctor: on a whole minute, at the first
/// occurrence of its wall time in the clinic's zone, inside a working interval of that
/// weekday and on one of its slot boundaries.
public enum SlotRules {
    /// The slot's end, or nil when no slot starts at `start`.
    public static func slotEnd(startingAt start: Date, hours: [WorkingHours], zone: TimeZone) -> Date? {
        let seconds = start.timeIntervalSince1970
        guard seconds == seconds.rounded(.down), Int64(seconds) % 60 == 0 else { return nil }
        let local = LocalDateTime.of(start, in: zone)
        // The second pass through a fall-back hour shows the same wall time: not a new slot.
        guard local.firstInstant(in: zone) == start else { return nil }
        guard let interval = hours.first(where: { $0.weekday == local.weekday && $0.hasSlot(startingAt: local.minuteOfDay) })
        else { return nil }
        return start.addingTimeInterval(TimeInterval(interval.slotMinutes * 60))
    }
}
