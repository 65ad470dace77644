import Foundation
import GRDB

/// A clinic near the patient and its earliest free slot for a specialization.
public struct FreeSlotNearby: Sendable, Equatable {
    public let clinic: NearbyClinic
    public let departmentId: Int64
    public let slot: Slot
}

extension AppointmentController {
    /// The `limit` nearest clinics that have a department of the specialization with a free
    /// slot starting before `before` (default: within 14 days), nearest first, each with its
    /// earliest free slot. Clinics are taken in order of distance from the finder, in growing
    /// batches, and the walk stops as soon as `limit` clinics with a slot are found: every
    /// clinic nearer than the last one found has been looked at.
    public func findFreeSlots(specialization: String, near point: Coordinate, before: Date? = nil, limit: Int = 1,
                              pediatricOnly: Bool = false, clinics: ClinicController) throws -> [FreeSlotNearby] {
        guard (1...NearestQuery.maximumLimit).contains(limit) else {
            throw ClinicError.invalid(.limitBetween, String(limit), "1", String(NearestQuery.maximumLimit))
        }
        let now = self.now()
        let deadline = before ?? now.addingTimeInterval(14 * 86_400)
        guard deadline > now else { throw ClinicError.invalid(.beforeInPast) }
        let key = Specialization.key(for: specialization)
        let departments = try database.read { db in
            try Dictionary(Row.fetchAll(db, sql: "SELECT clinic_id, id FROM departments WHERE specialization = ?", arguments: [key])
                .map { (($0["clinic_id"] as Int64), ($0["id"] as Int64)) }, uniquingKeysWith: { first, _ in first })
        }
        guard !departments.isEmpty else { return [] }
        let finder = try clinics.finder()
        let filter = NearestClinicFinder.Filter(pediatricOnly: pediatricOnly, clinicIds: Set(departments.keys))
        var found: [FreeSlotNearby] = []
        var examined = 0
        var batch = max(8, limit * 2)
        while true {
            let matches = try finder.nearest(to: point, limit: batch, filter: filter)
            for match in matches.dropFirst(examined) {
                guard let departmentId = departments[match.clinicId] else { continue }
                if let slot = try earliestFreeSlot(departmentId: departmentId, before: deadline, now: now) {
                    let clinic = try clinics.getClinicById(match.clinicId)
                    found.append(FreeSlotNearby(clinic: NearbyClinic(clinic: clinic, distance: match.distance),
                                                departmentId: departmentId, slot: slot))
                    if found.count == limit { return found }
                }
            }
            examined = matches.count
            if matches.count < batch { return found } // every matching clinic has been looked at
            batch *= 4
        }
    }

    /// The first bookable slot of a department starting before `deadline`, a week at a time.
    func earliestFreeSlot(departmentId: Int64, before deadline: Date, now: Date) throws -> Slot? {
        try database.read { db in
            let policy = try BookingPolicy.load(db)
            let (department, clinic) = try departmentAndClinic(db, departmentId)
            let doctors = try database.getDoctorsByDepartmentId(db, department.id ?? 0)
            var first = LocalDateTime.of(now, in: clinic.zone).at(minuteOfDay: 0)
            let lastDay = LocalDateTime.of(deadline, in: clinic.zone)
            while first <= lastDay {
                let slots = try Self.slots(db, doctors: doctors, zone: clinic.zone, first: first, days: 7, now: now, policy: policy)
                if let slot = slots.first(where: { $0.isAvailable && $0.start < deadline }) { return slot }
                first = first.adding(days: 7)
            }
            return nil
        }
    }
}
