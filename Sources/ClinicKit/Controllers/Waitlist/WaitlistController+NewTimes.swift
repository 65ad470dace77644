import Foundation

/// Times a change to a doctor's hours gives (issue 45): new weekly hours, an exception that
/// adds hours, an exception removed. They are queued for the waitlist as a cancellation's time
/// is, in the change's transaction, only when someone waits at the doctor's department, and
/// only the slots the schedule did not have before, within the days the waiting entries ask
/// for (at most `newTimesDays` ahead, within the booking horizon): `ScheduleChange.newTimes`.
extension WaitlistController {
    /// How far ahead new hours are looked at for the waitlist.
    static let newTimesDays = 62
}
