import ClinicKit
import Foundation

// A patient's appointments read awaited (issue 56, `PatientAppointmentsStore`): one statement
// each, the personal-data key check read beside the rows (notes are opened under it).

extension PostgresStore {
    public func patientAppointments(clientId: Int64) async throws -> [Appointment] {
        let rows = try await awaitedRows("""
            SELECT a.*, (SELECT value FROM settings WHERE key = $2) AS key_check
            FROM appointments a WHERE a.client_id = $1 ORDER BY a.starts_at, a.id
            """, [clientId, PostgresTransaction.clientsKeyCheckSetting])
        // One cipher for the list, made at the first sealed note (as the seam's `openedNotes`).
        let key = personalDataKey
        var cipher: FieldCipher?
        return try rows.map { row in
            try AppointmentNotes.opened(try Appointment(row: row)) {
                if let cipher { return cipher }
                let made = try key.cipher(keyCheck: try row.value("key_check", in: "settings", key: "key"))
                cipher = made
                return made
            }
        }
    }

    /// The appointment with its history as a JSON list beside it (instants as epoch seconds, as
    /// the booking's gather sends holds).
    public func appointmentWithHistory(id: Int64) async throws -> (appointment: Appointment, history: [AppointmentEvent])? {
        guard let row = try await awaitedRows("""
            SELECT a.*, (SELECT value FROM settings WHERE key = $2) AS key_check,
                   (SELECT coalesce(json_agg(json_build_object(
                               'id', e.id, 'appointment_id', e.appointment_id, 'event', e.event, 'actor', e.actor,
                               'at', floor(extract(epoch FROM e.at))::bigint,
                               'starts_at', floor(extract(epoch FROM e.starts_at))::bigint,
                               'doctor_id', e.doctor_id, 'reason', e.reason, 'staff_id', e.staff_id) ORDER BY e.id), '[]')::text
                    FROM appointment_events e WHERE e.appointment_id = a.id) AS history
            FROM appointments a WHERE a.id = $1
            """, [id, PostgresTransaction.clientsKeyCheckSetting]).first else { return nil }
        let appointment = try Self.opened(try Appointment(row: row), key: personalDataKey,
                                          check: try row.value("key_check", in: "settings", key: "key"))
        let history = try JSONRows.rows(try row.value("history", in: "appointment_events")).map(AppointmentEvent.init(row:))
        return (appointment, history)
    }
}
