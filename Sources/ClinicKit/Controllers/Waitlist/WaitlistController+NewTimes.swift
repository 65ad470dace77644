import Foundation

/// Times a change to a doctor's hours gives (issue 45): new weekly hours, an exception that
/// adds hours, an exception removed. They are queued for the waitlist as a cancellation's time
/// is, in the change's transaction, only when someone waits at the doctor's department, and
/// only the slots the schedule did not have before, within the days the waiting entries ask
/// for (at most `newTimesDays` ahead, within the booking horizon).
extension WaitlistController {
    /// How far ahead new hours are looked at for the waitlist.
    static let newTimesDays = 62

    /// What a change to a doctor's hours is compared over: the doctor's department, its
    /// clinic's zone, the days, and the schedule over them before the change. Nil when nobody
    /// waits for that doctor's department.
    struct NewTimesWindow {
        let departmentId: Int64
        let zone: TimeZone
        let first: LocalDateTime
        let last: LocalDateTime
        let before: DoctorSchedule
    }

    /// Taken before the change, in its transaction.
    func newTimesWindow(_ tx: any StoreReading, doctorId: Int64, now: Date) throws -> NewTimesWindow? {
        guard let doctor = try tx.doctor(id: doctorId), let department = try tx.department(id: doctor.departmentId),
              let clinic = try tx.clinic(id: department.clinicId) else { return nil }
        let waiting = try tx.waitlistEntries(ofClinic: department.clinicId, departmentId: doctor.departmentId)
            .filter { $0.status == .waiting && ($0.doctorId == nil || $0.doctorId == doctorId) }
        guard let lastAsked = waiting.map(\.lastDay).max() else { return nil }
        let policy = try BookingPolicy.load(tx)
        let today = LocalDateTime.of(now, in: clinic.zone)
        let bound = today.adding(days: min(Self.newTimesDays, policy.horizonDays))
        let asked = try TimeInput.parseDay(lastAsked)
        let last = asked.dayText < bound.dayText ? asked : bound
        guard today.dayText <= last.dayText else { return nil }
        return NewTimesWindow(departmentId: doctor.departmentId, zone: clinic.zone, first: today, last: last,
                              before: try DoctorSchedule.load(tx, doctorId: doctorId, from: today, through: last))
    }

    /// After the change, in its transaction: queues each slot the schedule has now and did not
    /// have before (a later start than now). Returns how many.
    @discardableResult
    func queueNewTimes(_ tx: any StoreWriting, doctorId: Int64, _ window: NewTimesWindow?, now: Date) throws -> Int {
        guard let window else { return 0 }
        let after = try DoctorSchedule.load(tx, doctorId: doctorId, from: window.first, through: window.last)
        var queued = 0
        var day = window.first
        while day.dayText <= window.last.dayText {
            let had = Set(window.before.slots(on: day, zone: window.zone).map(\.start))
            for slot in after.slots(on: day, zone: window.zone) where slot.start > now && !had.contains(slot.start) {
                try tx.queueFreedTime(departmentId: window.departmentId, doctorId: doctorId, span: slot.start..<slot.end, at: now)
                queued += 1
            }
            day = day.adding(days: 1)
        }
        return queued
    }
}
