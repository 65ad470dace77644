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

    /// One statement.
    public func slotHold(id: Int64) async throws -> SlotHold? {
        try await awaitedRows(PostgresTransaction.slotHoldSQL, [id]).first.map(SlotHold.init(row:))
    }

    /// One statement: the token's patient with each of their appointments (none: one row whose
    /// appointment columns are NULL) and its count of changes.
    public func calendarFeed(tokenHash: String) async throws -> CalendarFeedFacts? {
        let rows = try await awaitedRows("""
            SELECT c.preferred_language, a.*,
                   (SELECT count(*) FROM appointment_events e
                    WHERE e.appointment_id = a.id AND e.event IN ('rescheduled', 'cancelled')) AS changes
            FROM calendar_feeds f JOIN clients c ON c.id = f.client_id LEFT JOIN appointments a ON a.client_id = f.client_id
            WHERE f.token_hash = $1 ORDER BY a.starts_at, a.id
            """, [tokenHash])
        guard let first = rows.first else { return nil }
        let language: String = try first.value("preferred_language", in: "clients")
        let appointments = try rows.filter { try $0.value("id", in: "appointments") as Int64? != nil }.map { row in
            (try Appointment(row: row), Int(try row.value("changes", in: "appointment_events") as Int64))
        }
        return CalendarFeedFacts(language: Language(rawValue: language) ?? .en, appointments: appointments)
    }

    /// One read-only snapshot: the entries still waiting or offered with their clinic's zone and
    /// the status of the appointment each waits to come before, then the open offers.
    public func patientWaitlist(clientId: Int64) async throws -> PatientWaitlistFacts {
        try await readAwaited { tx in
            let entries = try await Self.waitlistEntryFacts(ofClient: clientId, tx)
            let offers = try await tx.rows(PostgresTransaction.openOffersOfClientSQL, [clientId])
                .map { try WaitlistOffer(row: try PostgresTransaction.row($0)) }
            return PatientWaitlistFacts(entries: entries, offers: offers)
        }
    }

    /// One statement: the offer of an unused link with its department and clinic.
    public func offerByLink(hash: String) async throws -> OfferLinkFacts? {
        try await readAwaited { tx in
            try await tx.rows("""
                SELECT o.*, row_to_json(p)::text AS department, row_to_json(c)::text AS clinic FROM waitlist_offers o
                LEFT JOIN departments p ON p.id = o.department_id LEFT JOIN clinics c ON c.id = p.clinic_id
                WHERE o.link_hash = $1 AND o.link_used_at IS NULL
                """, [hash]).first.map { found in
                let row = try PostgresTransaction.row(found)
                func json(_ column: String) throws -> String? { try row.value(column, in: "offer link") }
                return OfferLinkFacts(offer: try WaitlistOffer(row: row),
                                      department: try json("department").map { try Department(row: try JSONRows.row($0)) },
                                      clinic: try json("clinic").map { try Clinic(row: try JSONRows.row($0)) })
            }
        }
    }

    /// The patient's entries still waiting or offered, by id, with their clinic's zone and the
    /// status of the appointment each waits to come before: one statement.
    static func waitlistEntryFacts(ofClient clientId: Int64, _ tx: AwaitedConnection) async throws -> [WaitlistEntryFacts] {
        try await tx.rows("""
            SELECT e.*, c.time_zone AS clinic_zone, a.status AS before_status FROM waitlist_entries e
            LEFT JOIN clinics c ON c.id = e.clinic_id LEFT JOIN appointments a ON a.id = e.before_appointment_id
            WHERE e.client_id = $1 AND e.status IN ('waiting', 'offered') ORDER BY e.id
            """, [clientId]).map { raw in
            let row = try PostgresTransaction.row(raw), entry = try WaitlistEntry(row: row)
            let before: String? = try row.value("before_status", in: "appointments")
            return WaitlistEntryFacts(entry: entry, clinicZone: try row.value("clinic_zone", in: "clinics"),
                                      beforeIsActive: entry.beforeAppointmentId.map { _ in
                                          before.flatMap(AppointmentStatus.init(rawValue:))?.isActive == true
                                      })
        }
    }
}
