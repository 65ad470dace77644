import ClinicKit
import Foundation
import PostgresNIO

// A clinic admin's changes awaited (issue 56: `ClinicAdminChangesStore`): one transaction on a
// leased connection, each statement awaited; what is written is ClinicKit's decision.

extension PostgresTransaction {
    /// The clinic of department `$1`.
    static let departmentClinicSQL = "SELECT clinic_id FROM departments WHERE id = $1"
}

extension PostgresStore {
    /// BEGIN; the type (its row locked) with its department's clinic, or a new type's
    /// department's clinic (one statement); the change's check; the insert, update or
    /// deactivation; the audit row; the type read back; COMMIT.
    public func changeVisitType(_ change: VisitTypeChange) async throws -> VisitType {
        let sent = statementsSent, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            var type: VisitType?, departmentClinic: Int64?
            if let typeId = change.typeId {
                if let row = try await tx.rows("""
                    SELECT t.*, d.clinic_id AS department_clinic FROM visit_types t JOIN departments d ON d.id = t.department_id
                    WHERE t.id = $1 FOR UPDATE OF t
                    """, [typeId]).first.map(PostgresTransaction.row) {
                    type = try VisitType(row: row)
                    departmentClinic = try row.value("department_clinic", in: "departments")
                }
            } else if let departmentId = change.departmentId {
                departmentClinic = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.departmentClinicSQL, [departmentId]))
            }
            try change.check(type: type, departmentClinic: departmentClinic)
            let id: Int64
            switch change.kind {
            case .add(let departmentId, let fields):
                guard let inserted = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.insertVisitTypeSQL, [
                    departmentId, fields.nameEn, fields.nameRu, fields.durationMinutes, fields.priceCents])) else {
                    throw ClinicError(.internalError, .storageFailure, "a visit type stored without an id")
                }
                id = inserted
            case .update(let typeId, let fields):
                id = typeId
                _ = try await tx.rows(PostgresTransaction.updateVisitTypeSQL,
                                      [fields.nameEn, fields.nameRu, fields.durationMinutes, fields.priceCents, typeId])
            case .remove(let typeId):
                id = typeId
                _ = try await tx.rows(PostgresTransaction.deactivateVisitTypeSQL, [typeId])
            }
            try await Self.append(change.audit(id: id), tx, ring: ring)
            guard let changed = try await tx.rows(PostgresTransaction.visitTypeSQL, [id]).first
                .map({ try VisitType(row: PostgresTransaction.row($0)) }) else {
                throw ClinicError(.internalError, .storageFailure, "visit type")
            }
            return changed
        }
    }
}

extension PostgresStore {
    /// BEGIN; the department's clinic; the addition's check; the doctor, their hours (one
    /// statement, when any); the audit row; COMMIT.
    public func addDoctor(_ addition: DoctorAddition) async throws -> Doctor {
        let sent = statementsSent, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            try addition.check(departmentClinic: try tx.value(Int64.self, try await tx.rows(PostgresTransaction.departmentClinicSQL,
                                                                                             [addition.departmentId])))
            guard let id = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.insertDoctorSQL,
                                                                      [addition.departmentId, addition.name, false])) else {
                throw ClinicError(.internalError, .storageFailure, "a doctor stored without an id")
            }
            if !addition.hours.isEmpty {
                _ = try await tx.rows(PostgresTransaction.insertWorkingHoursSQL, PostgresTransaction.workingHoursBinds(
                    ofDoctor: id, addition.hours.map { ($0.weekday, $0.startMinute, $0.endMinute, $0.slotMinutes) }))
            }
            try await Self.append(addition.audit(doctorId: id), tx, ring: ring)
            return addition.doctor(id: id)
        }
    }
}

extension PostgresStore {
    /// BEGIN; for a removal, the exception; the doctor locked (`FOR NO KEY UPDATE`, as the
    /// seam's `lockDoctor`: a booking in flight with them holds `FOR SHARE` and is waited for,
    /// and so is another change of theirs) with their department's clinic and its zone; their
    /// weekly hours, exceptions, upcoming visits with their lengths, the department's waiting
    /// entries and the booking settings; `change.decide`; the change's write; its audit row;
    /// each visit cancelled (its row locked, its facts read, `change.cancellation`, its one
    /// write with the history, the message and its text, its audit row); the new times queued;
    /// COMMIT.
    public func changeSchedule(_ change: ScheduleChange) async throws -> ScheduleOutcome {
        let sent = statementsSent, key = personalDataKey, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            var removed: WorkingException?
            if let id = change.exceptionId {
                removed = try await tx.rows("SELECT * FROM working_exceptions WHERE id = $1", [id]).first
                    .map { try WorkingException(row: try PostgresTransaction.row($0)) }
            }
            var facts: ScheduleFacts?
            if let doctorId = change.doctorId ?? removed?.doctorId {
                facts = try await Self.scheduleFacts(doctorId: doctorId, now: change.now, tx)
            }
            let decision = try change.decide(facts, removed: removed)
            var exception: WorkingException?
            switch decision.write {
            case .hours(let doctorId, let weekday, let intervals):
                _ = try await tx.rows("DELETE FROM working_hours WHERE doctor_id = $1 AND weekday = $2", [doctorId, weekday])
                if !intervals.isEmpty {
                    _ = try await tx.rows(PostgresTransaction.insertWorkingHoursSQL, PostgresTransaction.workingHoursBinds(
                        ofDoctor: doctorId, intervals.map { (weekday, $0.startMinute, $0.endMinute, $0.slotMinutes) }))
                }
            case .addException(var new):
                guard let id = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.insertExceptionSQL, [
                    new.doctorId, new.day, new.startMinute, new.endMinute, new.slotMinutes])) else {
                    throw ClinicError(.internalError, .storageFailure, "a working exception stored without an id")
                }
                new.id = id
                exception = new
            case .removeException(let id):
                _ = try await tx.rows("DELETE FROM working_exceptions WHERE id = $1", [id])
            case .deactivate(let doctorId):
                _ = try await tx.rows(PostgresTransaction.deactivateDoctorSQL, [doctorId])
            }
            try await Self.append(decision.audit, tx, ring: ring)
            var cancelled: [Appointment] = []
            for id in decision.cancelling {
                _ = try await tx.rows("SELECT 1 FROM appointments WHERE id = $1 FOR UPDATE", [id])
                let facts = try await Self.changeFacts(id, tx)
                guard let cancellation = try change.cancellation(facts) else { continue }
                try await Self.write(cancellation, tx, ring: ring, key: key, keyCheck: facts?.personalDataKeyCheck)
                cancelled.append(try Self.opened(cancellation.appointment, key: key, check: facts?.personalDataKeyCheck))
            }
            for span in decision.newTimes {
                _ = try await tx.rows(PostgresTransaction.queueFreedSQL,
                                      [decision.departmentId, decision.doctorId, span.lowerBound, span.upperBound, change.now])
            }
            return ScheduleOutcome(exception: exception, cancelled: cancelled)
        }
    }

    /// A change of working time's facts, the doctor locked first; nil for no such doctor.
    static func scheduleFacts(doctorId: Int64, now: Date, _ tx: AwaitedConnection) async throws -> ScheduleFacts? {
        guard let found = try await tx.rows("""
            SELECT d.department_id, p.clinic_id, c.time_zone FROM doctors d JOIN departments p ON p.id = d.department_id
            JOIN clinics c ON c.id = p.clinic_id WHERE d.id = $1 FOR NO KEY UPDATE OF d
            """, [doctorId]).first.map(PostgresTransaction.row) else { return nil }
        let departmentId: Int64 = try found.value("department_id", in: "doctors")
        let clinicId: Int64 = try found.value("clinic_id", in: "departments")
        let timeZone: String = try found.value("time_zone", in: "clinics")
        let weekly = try await tx.rows(PostgresTransaction.doctorHoursSQL, [doctorId])
            .map { try WorkingHours(row: try PostgresTransaction.row($0)) }
        let exceptions = try await tx.rows("SELECT * FROM working_exceptions WHERE doctor_id = $1 AND day >= $2::date ORDER BY day, id",
                                           [doctorId, ScheduleFacts.firstExceptionDay(now)])
            .map { try WorkingException(row: try PostgresTransaction.row($0)) }
        // `id` breaks ties of equal starts, as the seam's `futureActiveAppointments`.
        let future = try await tx.rows("""
            SELECT a.id, a.starts_at, a.ends_at, a.status, v.duration_minutes FROM appointments a
            LEFT JOIN visit_types v ON v.id = a.visit_type_id
            WHERE a.doctor_id = $1 AND a.\(AppointmentStatus.activeCondition) AND a.starts_at >= $2 ORDER BY a.starts_at, a.id
            """, [doctorId, now]).map { raw in
            let row = try PostgresTransaction.row(raw), table = "appointments"
            let id: Int64 = try row.value("id", in: table), status: String = try row.value("status", in: table)
            guard let known = AppointmentStatus(rawValue: status) else { throw ClinicError(.storage, .storageFailure, "appointment \(id)") }
            return ScheduledVisit(id: id, startsAt: try row.instant("starts_at", in: table), endsAt: try row.instant("ends_at", in: table),
                                  status: known, durationMinutes: try row.value("duration_minutes", in: "visit_types"))
        }
        let waiting = try await tx.rows(PostgresTransaction.clinicWaitlistSQL, [clinicId, departmentId])
            .map { try WaitlistEntry(row: try PostgresTransaction.row($0)) }
        return ScheduleFacts(departmentId: departmentId, clinicId: clinicId, timeZone: timeZone, weekly: weekly, exceptions: exceptions,
                             future: future, waiting: waiting, bookingSettings: try await bookingSettings(tx))
    }

    /// The `booking.` settings, by key (one statement).
    static func bookingSettings(_ tx: AwaitedConnection) async throws -> [String: String] {
        var settings: [String: String] = [:]
        for raw in try await tx.rows("SELECT key, value FROM settings WHERE starts_with(key, 'booking.')", []) {
            let row = try PostgresTransaction.row(raw)
            settings[try row.value("key", in: "settings")] = try row.value("value", in: "settings", key: "key")
        }
        return settings
    }
}
