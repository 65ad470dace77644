import ClinicKit
import Foundation
import GRDB

// The appointment area of the seam on SQLite. The look-ups on the booking path use cached
// statements: preparing SQL (and GRDB's query generation with its authorizer) cost more than
// running it.

extension SQLiteTransaction {
    func storedAppointment(id: Int64) throws -> Appointment? {
        try Appointment.fetchOne(db.cachedStatement(sql: "SELECT * FROM appointments WHERE id = ?"), arguments: [id])
    }

    func storedAppointmentNotes(sealed: Bool) throws -> [(id: Int64, notes: String)] {
        try Row.fetchAll(db, sql: """
            SELECT id, notes FROM appointments WHERE notes <> '' AND (substr(notes, 1, 1) = char(1)) = ? ORDER BY id
            """, arguments: [sealed]).map {
            (try $0.decode(Int64.self, forColumn: "id"), try $0.decode(String.self, forColumn: "notes"))
        }
    }

    func storedAppointments(ofClient clientId: Int64) throws -> [Appointment] {
        try Appointment.fetchAll(db.cachedStatement(sql: "SELECT * FROM appointments WHERE client_id = ? ORDER BY starts_at, id"),
                                 arguments: [clientId])
    }

    func appointmentEvents(of appointmentIds: [Int64]) throws -> [AppointmentEvent] {
        guard !appointmentIds.isEmpty else { return [] }
        return try AppointmentEvent.filter(appointmentIds.contains(Column("appointment_id"))).order(Column("id")).fetchAll(db)
    }

    func activeAppointmentSpans(doctorId: Int64, overlapping span: Range<Date>) throws -> [Range<Date>] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT starts_at, ends_at FROM appointments
            WHERE doctor_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at < ? AND ends_at > ?
            ORDER BY starts_at
            """), arguments: [doctorId, span.upperBound.seconds, span.lowerBound.seconds]).map(Self.span)
    }

    func doctorIsBooked(_ doctorId: Int64, overlapping span: Range<Date>, except: Int64?) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM appointments WHERE doctor_id = ? AND \(AppointmentStatus.activeCondition)
                           AND starts_at < ? AND ends_at > ? AND id <> ?)
            """), arguments: [doctorId, span.upperBound.seconds, span.lowerBound.seconds, except ?? -1]) ?? true
    }

    func activeAppointment(ofClient clientId: Int64, overlapping span: Range<Date>, except: Int64?) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT id FROM appointments WHERE client_id = ? AND \(AppointmentStatus.activeCondition)
            AND starts_at < ? AND ends_at > ? AND id <> ? LIMIT 1
            """), arguments: [clientId, span.upperBound.seconds, span.lowerBound.seconds, except ?? -1])
    }

    func activeAppointmentCount(ofClient clientId: Int64, startingFrom start: Date) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: """
            SELECT count(*) FROM appointments WHERE client_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at >= ?
            """), arguments: [clientId, start.seconds]) ?? 0
    }

    func clinic(id: Int64) throws -> Clinic? {
        try Clinic.fetchOne(db.cachedStatement(sql: "SELECT * FROM clinics WHERE id = ?"), arguments: [id])
    }

    func department(id: Int64) throws -> Department? {
        try Department.fetchOne(db.cachedStatement(sql: "SELECT * FROM departments WHERE id = ?"), arguments: [id])
    }

    func activeDoctors(inDepartment departmentId: Int64) throws -> [Doctor] {
        // Filtered here, not in SQL: the library also runs on a database before migration 12
        // (the upgrade tests), which has no `is_active` column.
        try Doctor.fetchAll(db.cachedStatement(sql: "SELECT * FROM doctors WHERE department_id = ? ORDER BY id"),
                            arguments: [departmentId]).filter(\.isActive)
    }

    func departmentsByClinic(specialization key: String) throws -> [Int64: Int64] {
        let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT clinic_id, id FROM departments WHERE specialization = ? ORDER BY id"),
                                    arguments: [key])
        return try Dictionary(rows.map { (try $0.value("clinic_id", in: "departments") as Int64, try $0.value("id", in: "departments") as Int64) },
                              uniquingKeysWith: { first, _ in first })
    }

    func specializationExists(_ key: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM departments WHERE specialization = ?)"),
                          arguments: [key]) ?? false
    }

    func specializationKeys() throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: "SELECT DISTINCT specialization FROM departments ORDER BY 1"))
    }

    func longestWorkingStretch(specialization key: String) throws -> Int {
        try Int.fetchOne(db, sql: """
            SELECT MAX(length) FROM (
                SELECT h.end_minute - h.start_minute AS length FROM departments p
                    JOIN doctors d ON d.department_id = p.id JOIN working_hours h ON h.doctor_id = d.id
                    WHERE p.specialization = ?1
                UNION ALL
                SELECT e.end_minute - e.start_minute FROM departments p
                    JOIN doctors d ON d.department_id = p.id JOIN working_exceptions e ON e.doctor_id = d.id
                    WHERE p.specialization = ?1 AND e.start_minute IS NOT NULL)
            """, arguments: [key]) ?? 0
    }

    func workingHours(ofDoctor doctorId: Int64) throws -> [WorkingHours] {
        try WorkingHours.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM working_hours WHERE doctor_id = ? ORDER BY weekday, start_minute"),
            arguments: [doctorId])
    }

    func workingExceptions(ofDoctor doctorId: Int64, from first: String, through last: String) throws -> [WorkingException] {
        try WorkingException.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM working_exceptions WHERE doctor_id = ? AND day >= ? AND day <= ?"),
            arguments: [doctorId, first, last])
    }

    func visitType(id: Int64) throws -> VisitType? {
        guard try db.tableExists("visit_types") else { return nil }
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM visit_types WHERE id = ?"), arguments: [id]).map { try VisitType(row: SQLiteRow($0)) }
    }

    func visitTypes(ofDepartment departmentId: Int64, includingInactive: Bool) throws -> [VisitType] {
        guard try db.tableExists("visit_types") else { return [] }
        return try Row.fetchAll(db, sql: "SELECT * FROM visit_types WHERE department_id = ?" + (includingInactive ? "" : " AND is_active = 1")
                                + " ORDER BY duration_minutes, id", arguments: [departmentId]).map { try VisitType(row: SQLiteRow($0)) }
    }

    func settings(prefix: String) throws -> [String: String] {
        let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT key, value FROM settings WHERE substr(key, 1, length(?1)) = ?1"),
                                    arguments: [prefix]) // length and substr both count characters
        var settings: [String: String] = [:]
        for row in rows {
            settings[try row.value("key", in: "settings", key: "key")] = try row.value("value", in: "settings", key: "key") as String
        }
        return settings
    }

    func setting(_ key: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM settings WHERE key = ?"), arguments: [key])
    }

    // MARK: Writes

    func insertStoredAppointment(_ appointment: Appointment) throws -> Appointment {
        var appointment = appointment
        try refusingDoubleBooking(appointment) { try appointment.insert(db) }
        return appointment
    }

    func updateStoredAppointment(_ appointment: Appointment) throws {
        try refusingDoubleBooking(appointment) { try appointment.update(db) }
    }

    func setStoredNotes(_ notes: String, ofAppointment id: Int64) throws {
        try db.execute(sql: "UPDATE appointments SET notes = ? WHERE id = ?", arguments: [notes, id])
    }

    /// SQLite's partial unique indexes on (doctor_id, starts_at) and (client_id, starts_at) of
    /// active appointments are the last word on a lost race. A violation does not say which
    /// index (only its message names the columns, and no code reads messages): the failed
    /// statement changed nothing, so the transaction asks which slot is held.
    private func refusingDoubleBooking(_ appointment: Appointment, _ change: () throws -> Void) throws {
        do {
            try change()
        } catch let error as DatabaseError
                    where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE && appointment.status.isActive {
            let doctorHeld = try Bool.fetchOne(db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM appointments WHERE doctor_id = ? AND starts_at = ?
                               AND \(AppointmentStatus.activeCondition) AND id <> ?)
                """), arguments: [appointment.doctorId, appointment.startsAt.seconds, appointment.id ?? -1]) ?? false
            if doctorHeld { throw ClinicError(.slotTaken, .slotTaken) }
            let patientHeld = try Bool.fetchOne(db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM appointments WHERE client_id = ? AND starts_at = ?
                               AND \(AppointmentStatus.activeCondition) AND id <> ?)
                """), arguments: [appointment.clientId, appointment.startsAt.seconds, appointment.id ?? -1]) ?? false
            if patientHeld { throw ClinicError(.overlappingAppointment, .overlappingUnknown) }
            // Neither slot is held: another constraint, not a double booking.
            throw error
        }
    }

    func takenSpans(doctorId: Int64, overlapping span: Range<Date>, at now: Date, exceptAppointment: Int64?,
                    exceptHold: Int64?) throws -> [Range<Date>] {
        guard try db.tableExists("slot_holds") else {
            return try Row.fetchAll(db.cachedStatement(sql: """
                SELECT starts_at, ends_at FROM appointments
                WHERE doctor_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at < ? AND ends_at > ? AND id <> ?
                ORDER BY starts_at
                """), arguments: [doctorId, span.upperBound.seconds, span.lowerBound.seconds, exceptAppointment ?? -1]).map(Self.span)
        }
        return try Row.fetchAll(db.cachedStatement(sql: """
            SELECT starts_at, ends_at FROM appointments
            WHERE doctor_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at < ? AND ends_at > ? AND id <> ?
            UNION ALL
            SELECT starts_at, ends_at FROM slot_holds
            WHERE doctor_id = ? AND starts_at < ? AND ends_at > ? AND expires_at > ? AND id <> ?
            ORDER BY starts_at
            """), arguments: [doctorId, span.upperBound.seconds, span.lowerBound.seconds, exceptAppointment ?? -1,
                              doctorId, span.upperBound.seconds, span.lowerBound.seconds, now.seconds, exceptHold ?? -1]).map(Self.span)
    }

    /// A row's `starts_at` and `ends_at` (an end before the start read as the start).
    private static func span(_ row: Row) throws -> Range<Date> {
        let start: Int64 = try row.value("starts_at", in: "appointments"), end: Int64 = try row.value("ends_at", in: "appointments")
        return Date(seconds: start)..<Date(seconds: max(start, end))
    }

    func activeAppointmentSpans(ofClient clientId: Int64, inDepartment departmentId: Int64?, overlapping span: Range<Date>) throws -> [PatientSpan] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT id, starts_at, ends_at FROM appointments
            WHERE client_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at < ? AND ends_at > ?
                  AND (? IS NULL OR department_id = ?)
            ORDER BY starts_at, id
            """), arguments: [clientId, span.upperBound.seconds, span.lowerBound.seconds, departmentId, departmentId]).map { row in
            PatientSpan(appointmentId: try row.value("id", in: "appointments"), span: try Self.span(row))
        }
    }

    func doctorIsTaken(_ doctorId: Int64, overlapping span: Range<Date>, exceptAppointment: Int64?, exceptHold: Int64?,
                       at now: Date) throws -> Bool {
        guard try db.tableExists("slot_holds") else {
            return try doctorIsBooked(doctorId, overlapping: span, except: exceptAppointment)
        }
        return try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM appointments WHERE doctor_id = ? AND \(AppointmentStatus.activeCondition)
                           AND starts_at < ? AND ends_at > ? AND id <> ?)
                OR EXISTS (SELECT 1 FROM slot_holds WHERE doctor_id = ? AND starts_at < ? AND ends_at > ? AND expires_at > ?
                           AND id <> ?)
            """), arguments: [doctorId, span.upperBound.seconds, span.lowerBound.seconds, exceptAppointment ?? -1,
                              doctorId, span.upperBound.seconds, span.lowerBound.seconds, now.seconds, exceptHold ?? -1]) ?? true
    }

    // A database before migration 15 has no holds (the table check is GRDB's cached schema).
    func slotHold(id: Int64) throws -> SlotHold? {
        guard try db.tableExists("slot_holds") else { return nil }
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM slot_holds WHERE id = ?"), arguments: [id]).map { try SlotHold(row: SQLiteRow($0)) }
    }

    func liveSlotHolds(doctorId: Int64, overlapping span: Range<Date>, at now: Date) throws -> [SlotHold] {
        guard try db.tableExists("slot_holds") else { return [] }
        return try Row.fetchAll(db.cachedStatement(sql: """
            SELECT * FROM slot_holds WHERE doctor_id = ? AND starts_at < ? AND ends_at > ? AND expires_at > ? ORDER BY starts_at, id
            """), arguments: [doctorId, span.upperBound.seconds, span.lowerBound.seconds, now.seconds]).map { try SlotHold(row: SQLiteRow($0)) }
    }

    func insertSlotHold(_ hold: SlotHold) throws -> SlotHold {
        // Writers are one at a time on SQLite: the overlap is checked by the statement itself.
        try db.execute(sql: """
            INSERT INTO slot_holds (client_id, clinic_id, department_id, doctor_id, visit_type_id, starts_at, ends_at, expires_at,
                                    created_at)
            SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?
            WHERE NOT EXISTS (SELECT 1 FROM slot_holds WHERE doctor_id = ? AND starts_at < ? AND ends_at > ?)
            """, arguments: [hold.clientId, hold.clinicId, hold.departmentId, hold.doctorId, hold.visitTypeId, hold.startsAt.seconds,
                             hold.endsAt.seconds, hold.expiresAt.seconds, hold.createdAt.seconds,
                             hold.doctorId, hold.endsAt.seconds, hold.startsAt.seconds])
        guard db.changesCount == 1 else { throw ClinicError(.slotTaken, .slotTaken) }
        var hold = hold
        hold.id = db.lastInsertedRowID
        return hold
    }

    func deleteSlotHold(id: Int64) throws {
        try db.execute(sql: "DELETE FROM slot_holds WHERE id = ?", arguments: [id])
    }

    func deleteSlotHolds(ofClient clientId: Int64) throws {
        // An offer's hold (the waitlist's) is not the patient's own: it stays.
        try db.execute(sql: "DELETE FROM slot_holds WHERE client_id = ? AND for_offer = 0", arguments: [clientId])
    }

    func deleteExpiredSlotHolds(at now: Date) throws {
        try db.execute(sql: "DELETE FROM slot_holds WHERE expires_at <= ?", arguments: [now.seconds])
    }

    func insertAppointmentEvent(_ event: AppointmentEvent) throws {
        var event = event
        try event.insert(db)
    }

    func insertVisitType(departmentId: Int64, nameEn: String, nameRu: String, durationMinutes: Int, priceCents: Int?) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO visit_types (department_id, name_en, name_ru, duration_minutes, price_cents) VALUES (?, ?, ?, ?, ?)
            """, arguments: [departmentId, nameEn, nameRu, durationMinutes, priceCents])
        return db.lastInsertedRowID
    }

    func updateVisitType(id: Int64, nameEn: String, nameRu: String, durationMinutes: Int, priceCents: Int?) throws {
        try db.execute(sql: "UPDATE visit_types SET name_en = ?, name_ru = ?, duration_minutes = ?, price_cents = ? WHERE id = ?",
                       arguments: [nameEn, nameRu, durationMinutes, priceCents, id])
    }

    func deactivateVisitType(id: Int64) throws {
        try db.execute(sql: "UPDATE visit_types SET is_active = 0 WHERE id = ?", arguments: [id])
    }

    func setSetting(_ key: String, to value: String) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", arguments: [key, value])
    }
}
