import Foundation
import GRDB

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
}

extension DatabaseManager {
    /// Gives every clinic the zone at its point, recording each change (migration 7, and
    /// whatever the boundaries say later). A database with clinics needs the zone data.
    func recomputeZones(_ db: Database, now: Date) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT id, lat, lon, time_zone FROM clinics ORDER BY id")
        guard !rows.isEmpty else { return }
        guard let zones else { throw ClinicError(.storage, .gazetteerMissing, "Data/timezones.db") }
        for row in rows {
            let id = try row.decode(Int64.self, forColumn: "id"), old = try row.decode(String.self, forColumn: "time_zone")
            guard let point = Coordinate(latitude: try row.decode(Double.self, forColumn: "lat"),
                                         longitude: try row.decode(Double.self, forColumn: "lon")) else { continue }
            let zone = try zones.timeZone(at: point)
            guard zone != old else { continue }
            try db.execute(sql: "UPDATE clinics SET time_zone = ? WHERE id = ?", arguments: [zone, id])
            try Self.recordZoneChange(db, clinicId: id, from: old, to: zone, at: now)
        }
    }

    static func recordZoneChange(_ db: Database, clinicId: Int64, from old: String, to new: String, at now: Date) throws {
        try db.execute(sql: "INSERT INTO clinic_zone_changes (clinic_id, old_zone, new_zone, changed_at) VALUES (?, ?, ?, ?)",
                       arguments: [clinicId, old, new, now.seconds])
        // Tell the patients booked there (not during the migrations before the inboxes existed).
        guard try db.tableExists("messages") else { return }
        let upcoming = try Appointment.fetchAll(db, sql: """
            SELECT * FROM appointments WHERE clinic_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at >= ?
            AND client_id IS NOT NULL ORDER BY starts_at
            """, arguments: [clinicId, now.seconds])
        for appointment in upcoming {
            try Inbox.about(db, appointment, kind: .clinicChanged, zones: (old, new), now: now)
        }
    }

    /// The upcoming active appointments booked (or last moved) before their clinic's latest
    /// zone change, soonest first.
    public func appointmentsAfterZoneChanges(now: Date = Date()) throws -> [ZoneChangedAppointment] {
        try read { db in try Self.appointmentsAfterZoneChanges(db, now: now) }
    }

    static func appointmentsAfterZoneChanges(_ db: Database, now: Date) throws -> [ZoneChangedAppointment] {
        guard try db.tableExists("clinic_zone_changes") else { return [] }
        return try Row.fetchAll(db, sql: """
            SELECT a.id, a.clinic_id, c.name, a.starts_at, z.old_zone, z.new_zone
            FROM appointments a
            JOIN clinics c ON c.id = a.clinic_id
            JOIN clinic_zone_changes z ON z.id = (SELECT max(id) FROM clinic_zone_changes WHERE clinic_id = a.clinic_id)
            WHERE a.\(AppointmentStatus.activeCondition) AND a.starts_at >= ? AND a.updated_at < z.changed_at
            ORDER BY a.starts_at, a.id
            """, arguments: [now.seconds]).map { row in
            ZoneChangedAppointment(appointmentId: try row.decode(Int64.self, forColumn: "id"),
                                   clinicId: try row.decode(Int64.self, forColumn: "clinic_id"),
                                   clinicName: try row.decode(String.self, forColumn: "name"),
                                   start: Date(seconds: try row.decode(Int64.self, forColumn: "starts_at")),
                                   oldZone: try row.decode(String.self, forColumn: "old_zone"),
                                   newZone: try row.decode(String.self, forColumn: "new_zone"))
        }
    }
}
