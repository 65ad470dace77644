import Foundation
import GRDB

/// A clinic near the patient and its earliest free slot for a specialization.
public struct FreeSlotNearby: Sendable, Equatable {
    public let clinic: NearbyClinic
    public let departmentId: Int64
    public let slot: Slot
}

extension AppointmentController {
    /// How far ahead `findFreeSlots` looks without `before`.
    public static let findWindow: TimeInterval = 14 * 86_400
    /// How far ahead it looks at most: a later `before` is cut to this, so that a department
    /// whose doctors have no hours is not walked week by week for centuries.
    public static let findMaximumWindow: TimeInterval = 366 * 86_400

    /// The `limit` nearest clinics that have a department of the specialization with a free
    /// slot starting before `before` (default: within 14 days, at most a year), nearest first, each with its
    /// earliest free slot. Clinics are taken in order of distance from the finder, in growing
    /// batches, and the walk stops as soon as `limit` clinics with a slot are found: every
    /// clinic nearer than the last one found has been looked at.
    /// With `minutes`, a visit of that length: a free time where it fits (the rules of a visit
    /// type's slots), at any clinic, whatever visit types each department defines; a visit type
    /// belongs to one department, so a search across clinics asks for a length instead.
    public func findFreeSlots(specialization: String, near point: Coordinate, before: Date? = nil, limit: Int = 1,
                              pediatricOnly: Bool = false, minutes: Int? = nil, clinics: ClinicController) throws -> [FreeSlotNearby] {
        try NearestQuery.checkLimit(limit)
        if let minutes, !(5...480).contains(minutes) || minutes % 5 != 0 {
            throw ClinicError.invalid(.visitTypeDurationInvalid, String(minutes))
        }
        let now = self.now()
        let deadline = min(before ?? now.addingTimeInterval(Self.findWindow), now.addingTimeInterval(Self.findMaximumWindow))
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
                if let (slot, clinic) = try earliestFreeSlot(departmentId: departmentId, before: deadline, now: now, minutes: minutes) {
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

    /// The first bookable slot of a department starting before `deadline`, a week at a time,
    /// with the department's clinic.
    func earliestFreeSlot(departmentId: Int64, before deadline: Date, now: Date, minutes: Int? = nil) throws -> (Slot, Clinic)? {
        try database.read { db in
            let policy = try BookingPolicy.load(db)
            let (department, clinic) = try departmentAndClinic(db, departmentId)
            let doctors = try database.getDoctorsByDepartmentId(db, department.id ?? 0)
            var first = LocalDateTime.of(now, in: clinic.zone).at(minuteOfDay: 0)
            let lastDay = LocalDateTime.of(deadline, in: clinic.zone)
            while first <= lastDay {
                let slots = try Self.slots(db, doctors: doctors, zone: clinic.zone, first: first, days: 7, now: now, policy: policy,
                                           duration: minutes)
                if let slot = slots.first(where: { $0.isAvailable && $0.start < deadline }) { return (slot, clinic) }
                first = first.adding(days: 7)
            }
            return nil
        }
    }
}
