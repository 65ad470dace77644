import Foundation

/// An upcoming appointment at a clinic whose time zone changed after it was booked or last
/// moved: its instant is kept, but the local time the patient was shown is not that instant's
/// local time any more. Staff tell these patients.
public struct ZoneChangedAppointment: Sendable, Equatable {
    public let appointmentId: Int64
    public let clinicId: Int64
    public let clinicName: String
    public let start: Date
    public let oldZone: String
    public let newZone: String

    /// What a store makes of its rows (public: a store may live in a module of its own).
    public init(appointmentId: Int64, clinicId: Int64, clinicName: String, start: Date, oldZone: String, newZone: String) {
        self.appointmentId = appointmentId; self.clinicId = clinicId; self.clinicName = clinicName; self.start = start
        self.oldZone = oldZone; self.newZone = newZone
    }
}

/// A clinic's change of zone, on any store: recorded, and the patients booked there told.
package enum ZoneChanges {
    /// Records a clinic's change of zone and tells the patients booked there from `now` on
    /// (every path that changes a clinic's zone: an import, `recomputeZones`).
    static func record(_ tx: any StoreWriting, clinicId: Int64, from old: String, to new: String, at now: Date) throws {
        try tx.recordZoneChange(clinicId: clinicId, from: old, to: new, at: now)
        // Tell the patients booked there (not during the migrations before the inboxes existed).
        guard try tx.keepsInboxes() else { return }
        for appointment in try tx.upcomingPatientAppointments(atClinic: clinicId, startingFrom: now) {
            try Inbox.about(tx, appointment, kind: .clinicChanged, zones: (old, new), now: now)
        }
    }
}

extension ZoneChanges {
    /// Gives every clinic the zone at its point, recording each change (migration 7, and
    /// whatever the boundaries say later). A database with clinics needs the zone data.
    package static func recomputeZones(_ tx: any StoreWriting, zones: (any ZoneResolver)?, now: Date) throws {
        let clinics = try tx.clinicZones()
        guard !clinics.isEmpty else { return }
        guard let zones else { throw ClinicError(.storage, .gazetteerMissing, "Data/timezones.db") }
        for clinic in clinics {
            guard let point = Coordinate(latitude: clinic.latitude, longitude: clinic.longitude) else { continue }
            let zone = try zones.timeZone(at: point)
            guard zone != clinic.timeZone else { continue }
            try tx.setTimeZone(ofClinic: clinic.id, to: zone)
            try ZoneChanges.record(tx, clinicId: clinic.id, from: clinic.timeZone, to: zone, at: now)
        }
    }
}
