import ClinicKit
import Foundation
import PostgresNIO

// The appointment area of the seam on PostgreSQL (SQLiteTransaction+Appointments.swift's
// behaviour). Text sort keys are compared bytewise (COLLATE "C"), as SQLite compares them.

// `AppointmentStatus.activeCondition` is the same text as the exclusion constraints' WHERE of
// Migrations/postgres/0001_schema.sql, so that the planner can use their indexes.

extension PostgresTransaction {
    /// The namespace of the advisory locks on a patient (`activeAppointmentCount`), before the
    /// patient's id: 'clinic.client:42'. Whatever else locks a patient takes this same key.
    static let clientAdvisoryLockNamespace = "clinic.client:"
    /// The namespace of the advisory locks on a doctor's time (`doctorIsTaken` in a write):
    /// 'clinic.doctor:7'.
    static let doctorAdvisoryLockNamespace = "clinic.doctor:"

    func storedAppointment(id: Int64) throws -> Appointment? {
        try row(Self.storedAppointmentSQL, [id]).map(Appointment.init(row:))
    }

    static let storedAppointmentSQL = "SELECT * FROM appointments WHERE id = $1"

    func storedAppointmentNotes(sealed: Bool) throws -> [(id: Int64, notes: String)] {
        // The notes in clear are looked for after every migrate (each command's start): the
        // partial index appointments_plain_notes (migration 6) holds just those, so the query
        // reads an index that is empty but for a moment, not the table. Its condition is
        // written out as the index's, for the planner to match.
        let condition = sealed ? "left(notes, 1) = chr(1)" : "left(notes, 1) <> chr(1)"
        return try rows("SELECT id, notes FROM appointments WHERE notes <> '' AND \(condition) ORDER BY id").map {
            (try $0.decode(Int64.self, forColumn: "id"), try $0.decode(String.self, forColumn: "notes"))
        }
    }

    func storedAppointments(ofClient clientId: Int64) throws -> [Appointment] {
        try rows("SELECT * FROM appointments WHERE client_id = $1 ORDER BY starts_at, id", [clientId]).map(Appointment.init(row:))
    }

    func appointmentEvents(of appointmentIds: [Int64]) throws -> [AppointmentEvent] {
        guard !appointmentIds.isEmpty else { return [] }
        return try rows(Self.eventsOfAppointmentsSQL, [DirectoryIdArray(appointmentIds)]).map(AppointmentEvent.init(row:))
    }

    static let eventsOfAppointmentsSQL = "SELECT * FROM appointment_events WHERE appointment_id = ANY($1::bigint[]) ORDER BY id"

    func activeAppointmentSpans(doctorId: Int64, overlapping span: Range<Date>) throws -> [Range<Date>] {
        try rows("""
            SELECT starts_at, ends_at FROM appointments
            WHERE doctor_id = $1 AND \(AppointmentStatus.activeCondition) AND \(Self.overlapping("$3", "$2"))
            ORDER BY starts_at
            """, [doctorId, span.upperBound, span.lowerBound]).map { row in
            let start = try row.instant("starts_at", in: "appointments"), end = try row.instant("ends_at", in: "appointments")
            return start..<max(start, end)
        }
    }

    func doctorIsBooked(_ doctorId: Int64, overlapping span: Range<Date>, except: Int64?) throws -> Bool {
        try value(Bool.self, Self.doctorIsBookedSQL, [doctorId, span.upperBound, span.lowerBound, except ?? -1]) ?? true
    }

    /// $1 the doctor, $3..<$2 the span, $4 an appointment left out or -1.
    static let doctorIsBookedSQL = """
        SELECT EXISTS (SELECT 1 FROM appointments WHERE doctor_id = $1 AND \(AppointmentStatus.activeCondition)
                       AND \(overlapping("$3", "$2")) AND id <> $4)
        """

    func activeAppointment(ofClient clientId: Int64, overlapping span: Range<Date>, except: Int64?) throws -> Int64? {
        try value(Int64.self, Self.activeAppointmentSQL, [clientId, span.upperBound, span.lowerBound, except ?? -1])
    }

    /// $1 the patient, $3..<$2 the span, $4 an appointment left out or -1.
    static let activeAppointmentSQL = """
        SELECT id FROM appointments WHERE client_id = $1 AND \(AppointmentStatus.activeCondition)
        AND \(overlapping("$3", "$2")) AND id <> $4 LIMIT 1
        """

    func activeAppointmentCount(ofClient clientId: Int64, startingFrom start: Date) throws -> Int {
        if isWrite {
            // The count decides whether the patient may book one more (the active-appointment
            // limit). Two servers booking for one patient at once would both count before either
            // committed and both pass the limit; so a write transaction first takes the
            // patient's advisory lock, held until it commits or rolls back. The second waits
            // here, and under READ COMMITTED its count (a new snapshot per statement) then sees
            // the first's committed booking. A read transaction takes no lock.
            try execute("SELECT pg_advisory_xact_lock(hashtextextended($1 || $2::text, 0))",
                        [Self.clientAdvisoryLockNamespace, clientId])
        }
        return try value(Int.self, """
            SELECT count(*) FROM appointments WHERE client_id = $1 AND \(AppointmentStatus.activeCondition) AND starts_at >= $2
            """, [clientId, start]) ?? 0
    }

    func clinic(id: Int64) throws -> Clinic? {
        try row(Self.clinicSQL, [id]).map(Clinic.init(row:))
    }

    func department(id: Int64) throws -> Department? {
        try row(Self.departmentSQL, [id]).map(Department.init(row:))
    }

    /// In a write (a booking, a move): the doctors' rows are share-locked, so a change of their
    /// hours or exceptions on another server (`lockDoctor`) waits for this booking to commit,
    /// and this booking waits for such a change and then reads the new hours.
    func activeDoctors(inDepartment departmentId: Int64) throws -> [Doctor] {
        try rows(Self.activeDoctorsSQL + (isWrite ? " FOR SHARE" : ""),
                 [departmentId]).map(Doctor.init(row:))
    }

    func departmentsByClinic(specialization key: String) throws -> [Int64: Int64] {
        try Self.departmentsByClinic(rows(Self.departmentsByClinicSQL, [key]))
    }

    static let departmentsByClinicSQL = "SELECT clinic_id, id FROM departments WHERE specialization = $1 ORDER BY id"

    /// Clinic id to its first department's id, from `departmentsByClinicSQL`'s rows.
    static func departmentsByClinic(_ rows: [StoredRowValues]) throws -> [Int64: Int64] {
        try Dictionary(rows.map { (try $0.decode(Int64.self, forColumn: "clinic_id"), try $0.decode(Int64.self, forColumn: "id")) },
                       uniquingKeysWith: { first, _ in first })
    }

    func specializationExists(_ key: String) throws -> Bool {
        try value(Bool.self, "SELECT EXISTS (SELECT 1 FROM departments WHERE specialization = $1)", [key]) ?? false
    }

    func specializationKeys() throws -> [String] {
        try values(String.self, Self.specializationKeysSQL)
    }

    func longestWorkingStretch(specialization key: String) throws -> Int {
        try value(Int.self, Self.longestStretchSQL, [key]) ?? 0
    }

    static let longestStretchSQL = """
            SELECT MAX(length) FROM (
                SELECT h.end_minute - h.start_minute AS length FROM departments p
                    JOIN doctors d ON d.department_id = p.id JOIN working_hours h ON h.doctor_id = d.id
                    WHERE p.specialization = $1
                UNION ALL
                SELECT e.end_minute - e.start_minute FROM departments p
                    JOIN doctors d ON d.department_id = p.id JOIN working_exceptions e ON e.doctor_id = d.id
                    WHERE p.specialization = $1 AND e.start_minute IS NOT NULL) AS stretches
            """

    func workingHours(ofDoctor doctorId: Int64) throws -> [WorkingHours] {
        try rows(Self.doctorHoursSQL, [doctorId]).map(WorkingHours.init(row:))
    }

    func workingExceptions(ofDoctor doctorId: Int64, from first: String, through last: String) throws -> [WorkingException] {
        // SQLite names no order (it reads them by its (doctor_id, day) index): by day, then id.
        try rows("SELECT * FROM working_exceptions WHERE doctor_id = $1 AND day >= $2::date AND day <= $3::date ORDER BY day, id",
                 [doctorId, first, last]).map(WorkingException.init(row:))
    }

    func visitType(id: Int64) throws -> VisitType? {
        try row(Self.visitTypeSQL, [id]).map(VisitType.init(row:))
    }

    static let visitTypeSQL = "SELECT * FROM visit_types WHERE id = $1"

    func visitTypes(ofDepartment departmentId: Int64, includingInactive: Bool) throws -> [VisitType] {
        try rows(Self.visitTypesSQL(includingInactive: includingInactive), [departmentId]).map(VisitType.init(row:))
    }

    static let clinicSQL = "SELECT * FROM clinics WHERE id = $1"
    static let doctorSQL = "SELECT * FROM doctors WHERE id = $1"
    /// A doctor's (`$1`) weekly hours, by weekday, then start.
    static let doctorHoursSQL = "SELECT * FROM working_hours WHERE doctor_id = $1 ORDER BY weekday, start_minute"
    static let departmentSQL = "SELECT * FROM departments WHERE id = $1"
    /// A department's active doctors (`$1`), by id.
    static let activeDoctorsSQL = "SELECT * FROM doctors WHERE department_id = $1 AND is_active ORDER BY id"
    /// The active doctors of departments (`$1`, an array), by id.
    static let activeDoctorsOfDepartmentsSQL = "SELECT * FROM doctors WHERE department_id = ANY($1::bigint[]) AND is_active ORDER BY id"
    /// The weekly hours of doctors (`$1`, an array), by doctor, weekday, then start.
    static let hoursOfDoctorsSQL = "SELECT * FROM working_hours WHERE doctor_id = ANY($1::bigint[]) ORDER BY doctor_id, weekday, start_minute"
    /// A department's (`$1`) visit types, the shortest first.
    static func visitTypesSQL(includingInactive: Bool) -> String {
        "SELECT * FROM visit_types WHERE department_id = $1" + (includingInactive ? "" : " AND is_active") + " ORDER BY duration_minutes, id"
    }

    func settings(prefix: String) throws -> [String: String] {
        try Self.settings(try rows(Self.settingsSQL, [prefix]))
    }

    /// The settings whose keys start with $1, as SQLite's substr(key, 1, length(prefix)) = prefix.
    static let settingsSQL = "SELECT key, value FROM settings WHERE starts_with(key, $1)"

    /// Key to value, from `settingsSQL`'s rows.
    static func settings(_ rows: [StoredRowValues]) throws -> [String: String] {
        var settings: [String: String] = [:]
        for row in rows {
            settings[try row.decode(String.self, forColumn: "key")] = try row.decode(String.self, forColumn: "value")
        }
        return settings
    }

    func setting(_ key: String) throws -> String? {
        try value(String.self, Self.settingSQL, [key])
    }

    // MARK: Writes

    /// A refused insert leaves the transaction usable, as on SQLite: `ON CONFLICT DO NOTHING`
    /// takes the exclusion constraints as arbiters (waiting, as any insert does, for a
    /// transaction that holds a conflicting row, then seeing whether it committed), and when no
    /// row was written the transaction asks which slot is held.
    func insertStoredAppointment(_ appointment: Appointment) throws -> Appointment {
        var appointment = appointment
        let id = try value(Int64.self, """
            INSERT INTO appointments (client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at, status,
                                      notes, created_at, updated_at, visit_type_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            ON CONFLICT DO NOTHING RETURNING id
            """, [appointment.clientId, appointment.clinicId, appointment.departmentId, appointment.doctorId, appointment.doctorName,
                  appointment.startsAt, appointment.endsAt, appointment.status.rawValue, appointment.notes, appointment.createdAt,
                  appointment.updatedAt, appointment.visitTypeId])
        guard let id else {
            let span = appointment.startsAt..<max(appointment.startsAt, appointment.endsAt)
            if try doctorIsBooked(appointment.doctorId, overlapping: span, except: nil) { throw ClinicError(.slotTaken, .slotTaken) }
            if let client = appointment.clientId, try activeAppointment(ofClient: client, overlapping: span, except: nil) != nil {
                throw ClinicError(.overlappingAppointment, .overlappingUnknown)
            }
            throw ClinicError(.storage, .storageFailure, "an appointment was neither stored nor refused by a held slot")
        }
        appointment.id = id
        return appointment
    }

    func setStoredNotes(_ notes: String, ofAppointment id: Int64) throws {
        try execute("UPDATE appointments SET notes = $1 WHERE id = $2", [notes, id])
    }

    func updateStoredAppointment(_ appointment: Appointment) throws {
        // As GRDB's `update` on SQLite: every column, but the visit type only when the
        // appointment has one (Appointment.encode leaves it out otherwise); a row that is gone
        // is an error. In a savepoint (UPDATE has no ON CONFLICT): a refusal by the exclusion
        // constraints is rolled back to it, and the transaction stays usable.
        try execute("SAVEPOINT appointment_change")
        let changed: Int
        do {
            changed = try execute("""
                UPDATE appointments SET client_id = $2, clinic_id = $3, department_id = $4, doctor_id = $5, doctor_name = $6,
                    starts_at = $7, ends_at = $8, status = $9, notes = $10, created_at = $11, updated_at = $12,
                    visit_type_id = COALESCE($13, visit_type_id)
                WHERE id = $1
                """, [appointment.id, appointment.clientId, appointment.clinicId, appointment.departmentId, appointment.doctorId,
                      appointment.doctorName, appointment.startsAt, appointment.endsAt, appointment.status.rawValue, appointment.notes,
                      appointment.createdAt, appointment.updatedAt, appointment.visitTypeId])
        } catch let error as PSQLError where error.code == .server && error.serverInfo?[.sqlState] == "23P01" {
            try execute("ROLLBACK TO SAVEPOINT appointment_change")
            try execute("RELEASE SAVEPOINT appointment_change")
            throw PostgresErrorMapping.clinicError(error)
        }
        try execute("RELEASE SAVEPOINT appointment_change")
        if changed == 0 {
            throw ClinicError(.storage, .storageFailure, "appointments row \(appointment.id.map(String.init) ?? "without an id") not found")
        }
    }

    func takenSpans(doctorId: Int64, overlapping span: Range<Date>, at now: Date, exceptAppointment: Int64?,
                    exceptHold: Int64?) throws -> [Range<Date>] {
        try rows("""
            SELECT starts_at, ends_at FROM appointments
            WHERE doctor_id = $1 AND \(AppointmentStatus.activeCondition) AND \(Self.overlapping("$3", "$2")) AND id <> $5
            UNION ALL
            SELECT starts_at, ends_at FROM slot_holds
            WHERE doctor_id = $1 AND \(Self.overlapping("$3", "$2")) AND expires_at > $4 AND id <> $6
            ORDER BY starts_at
            """, [doctorId, span.upperBound, span.lowerBound, now, exceptAppointment ?? -1, exceptHold ?? -1]).map { row in
            let start = try row.instant("starts_at", in: "appointments"), end = try row.instant("ends_at", in: "appointments")
            return start..<max(start, end)
        }
    }

    func activeAppointmentSpans(ofClient clientId: Int64, inDepartment departmentId: Int64?, overlapping span: Range<Date>) throws -> [PatientSpan] {
        try rows("""
            SELECT id, starts_at, ends_at FROM appointments
            WHERE client_id = $1 AND \(AppointmentStatus.activeCondition) AND \(Self.overlapping("$3", "$2"))
                  AND ($4::bigint IS NULL OR department_id = $4::bigint)
            ORDER BY starts_at, id
            """, [clientId, span.upperBound, span.lowerBound, departmentId]).map { row in
            let start = try row.instant("starts_at", in: "appointments"), end = try row.instant("ends_at", in: "appointments")
            return PatientSpan(appointmentId: try row.value("id", in: "appointments"), span: start..<max(start, end))
        }
    }

    func doctorIsTaken(_ doctorId: Int64, overlapping span: Range<Date>, exceptAppointment: Int64?, exceptHold: Int64?,
                       at now: Date) throws -> Bool {
        if isWrite {
            // A booking and a hold of one doctor's time live in two tables, which no exclusion
            // constraint spans: two servers, one booking and one holding the same time, would
            // both find it free and both write. So a write first takes the doctor's advisory
            // lock (held to COMMIT): the second waits here, and under READ COMMITTED the look
            // below, a statement of its own, then sees the first's committed row. Two bookings,
            // or two holds, are also refused by their table's exclusion constraint.
            try execute("SELECT pg_advisory_xact_lock(hashtextextended($1 || $2::text, 0))",
                        [Self.doctorAdvisoryLockNamespace, doctorId])
        }
        return try value(Bool.self, """
            SELECT EXISTS (SELECT 1 FROM appointments WHERE doctor_id = $1 AND \(AppointmentStatus.activeCondition)
                           AND \(Self.overlapping("$3", "$2")) AND id <> $4)
                OR EXISTS (SELECT 1 FROM slot_holds WHERE doctor_id = $1 AND \(Self.overlapping("$3", "$2")) AND expires_at > $5
                           AND id <> $6)
            """, [doctorId, span.upperBound, span.lowerBound, exceptAppointment ?? -1, now, exceptHold ?? -1]) ?? true
    }

    func slotHold(id: Int64) throws -> SlotHold? {
        try row(Self.slotHoldSQL, [id]).map(SlotHold.init(row:))
    }

    func liveSlotHolds(doctorId: Int64, overlapping span: Range<Date>, at now: Date) throws -> [SlotHold] {
        try rows("""
            SELECT * FROM slot_holds WHERE doctor_id = $1 AND \(Self.overlapping("$3", "$2")) AND expires_at > $4 ORDER BY starts_at, id
            """, [doctorId, span.upperBound, span.lowerBound, now]).map(SlotHold.init(row:))
    }

    /// The exclusion constraint is the arbiter, as for appointments: a concurrent hold of an
    /// overlapping slot makes this one write nothing.
    func insertSlotHold(_ hold: SlotHold) throws -> SlotHold {
        guard let id = try value(Int64.self, InsertHoldStatement(Self.insertHoldBinds(hold))) else {
            throw ClinicError(.slotTaken, .slotTaken)
        }
        var hold = hold
        hold.id = id
        return hold
    }

    func deleteSlotHold(id: Int64) throws {
        try execute(Self.deleteHoldSQL, [id])
    }

    /// `InsertHoldStatement`'s binds: the hold's fields.
    static func insertHoldBinds(_ hold: SlotHold) -> [any PostgresBindable] {
        [hold.clientId, hold.clinicId, hold.departmentId, hold.doctorId, hold.visitTypeId, hold.startsAt, hold.endsAt,
         hold.expiresAt, hold.createdAt]
    }

    /// Hold `$1` read; hold `$1` deleted.
    static let slotHoldSQL = "SELECT * FROM slot_holds WHERE id = $1"
    static let deleteHoldSQL = "DELETE FROM slot_holds WHERE id = $1"

    func deleteSlotHolds(ofClient clientId: Int64) throws {
        if isWrite {
            // One hold per patient (a hold releases the earlier one): two servers holding for one
            // patient at once would each delete nothing the other has not committed yet and both
            // insert. The patient's lock orders them; the later one then deletes the earlier's
            // hold. The unique index slot_holds_one_per_client (migration 7) is the last line.
            try execute("SELECT pg_advisory_xact_lock(hashtextextended($1 || $2::text, 0))",
                        [Self.clientAdvisoryLockNamespace, clientId])
        }
        // An offer's hold (the waitlist's) is not the patient's own: it stays.
        try execute("DELETE FROM slot_holds WHERE client_id = $1 AND NOT for_offer", [clientId])
    }

    func deleteExpiredSlotHolds(at now: Date) throws {
        try execute(Self.deleteExpiredHoldsSQL, [now])
    }

    /// The holds run out by `$1` deleted.
    static let deleteExpiredHoldsSQL = "DELETE FROM slot_holds WHERE expires_at <= $1"

    func insertAppointmentEvent(_ event: AppointmentEvent) throws {
        try execute("""
            INSERT INTO appointment_events (appointment_id, event, actor, at, starts_at, doctor_id, reason, staff_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """, [event.appointmentId, event.event, event.actor, event.at, event.startsAt, event.doctorId, event.reason, event.staffId])
    }

    func insertVisitType(departmentId: Int64, nameEn: String, nameRu: String, durationMinutes: Int, priceCents: Int?) throws -> Int64 {
        guard let id = try value(Int64.self, Self.insertVisitTypeSQL, [departmentId, nameEn, nameRu, durationMinutes, priceCents]) else {
            throw ClinicError(.internalError, .storageFailure, "a visit type stored without an id")
        }
        return id
    }

    /// A visit type of department `$1`: its names `$2`, `$3`, duration `$4` and price `$5`; its id.
    static let insertVisitTypeSQL = """
        INSERT INTO visit_types (department_id, name_en, name_ru, duration_minutes, price_cents) VALUES ($1, $2, $3, $4, $5)
        RETURNING id
        """

    func updateVisitType(id: Int64, nameEn: String, nameRu: String, durationMinutes: Int, priceCents: Int?) throws {
        try execute(Self.updateVisitTypeSQL, [nameEn, nameRu, durationMinutes, priceCents, id])
    }

    /// Visit type `$5`'s names `$1`, `$2`, duration `$3` and price `$4`.
    static let updateVisitTypeSQL = "UPDATE visit_types SET name_en = $1, name_ru = $2, duration_minutes = $3, price_cents = $4 WHERE id = $5"

    func deactivateVisitType(id: Int64) throws {
        try execute(Self.deactivateVisitTypeSQL, [id])
    }

    static let deactivateVisitTypeSQL = "UPDATE visit_types SET is_active = false WHERE id = $1"

    func setSetting(_ key: String, to value: String) throws {
        try execute(Self.setSettingSQL, [key, value])
    }

    /// A setting's value: $1 its key.
    static let settingSQL = "SELECT value FROM settings WHERE key = $1"
    /// A setting stored: $1 its key, $2 its value.
    static let setSettingSQL = "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
}
