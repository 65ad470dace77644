import Foundation
import GRDB

// Clinic administration: doctors, their weekly hours and exceptions (clinic admins only).

extension StaffController {
    /// A clinic admin, and the doctor is of their clinic (else `not_found`).
    func checkAdmin(_ db: Database, _ member: StaffMember, doctorId: Int64) throws {
        guard member.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        guard try DepartmentController.clinicId(db, doctorId: doctorId) == member.clinicId else {
            throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
        }
    }

    /// The clinic's doctors with their departments (any staff member of the clinic).
    public func doctors(_ member: StaffMember) throws -> [(doctor: Doctor, department: Department)] {
        try database.read { db in
            try database.getDepartmentsByClinicId(db, member.clinicId).flatMap { department in
                try database.getDoctorsByDepartmentId(db, department.id ?? 0).map { ($0, department) }
            }
        }
    }

    /// A new doctor in a department of the admin's clinic, with weekly hours.
    public func addDoctor(_ member: StaffMember, departmentId: Int64, name: String, hours: [WorkingHours],
                          requestId: String? = nil) throws -> Doctor {
        guard member.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        let now = self.now()
        return try database.writeJoined { db in
            guard let department = try database.getDepartmentById(db, departmentId), department.clinicId == member.clinicId else {
                throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
            }
            let doctor = try DepartmentController(database: database).addDoctor(departmentId: departmentId, name: name, hours: hours)
            try AuditLog.append(db, by: member.auditActor, action: "doctor.add", requestId: requestId,
                                detail: "doctor \(doctor.id ?? 0) department \(departmentId)", now: now)
            return doctor
        }
    }

    /// Deactivates a doctor of the admin's clinic: no longer offered, booked or listed. Their
    /// upcoming appointments refuse it (`hours_conflict`) unless `force`, which cancels them
    /// for the clinic with the reason.
    public func deactivateDoctor(_ member: StaffMember, doctorId: Int64, force: Bool = false, reason: String? = nil,
                                 requestId: String? = nil) throws -> [Appointment] {
        let now = self.now()
        return try database.writeJoined { db in
            try checkAdmin(db, member, doctorId: doctorId)
            try db.execute(sql: "UPDATE doctors SET is_active = 0 WHERE id = ?", arguments: [doctorId])
            try AuditLog.append(db, by: member.auditActor, action: "doctor.deactivate", requestId: requestId,
                                detail: "doctor \(doctorId)", now: now)
            return try settle(db, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now,
                              keepingNone: true)
        }
    }

    /// A doctor's weekly hours (any staff member of the clinic).
    public func hours(_ member: StaffMember, doctorId: Int64) throws -> [WorkingHours] {
        try database.read { db in
            guard try DepartmentController.clinicId(db, doctorId: doctorId) == member.clinicId else {
                throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
            }
            return try database.getWorkingHours(db, doctorId: doctorId)
        }
    }

    /// Replaces a doctor's hours on one weekday (`intervals` empty: not working that day).
    /// Booked appointments the new hours no longer hold refuse the change (`hours_conflict`,
    /// with their ids), unless `force`: then they are cancelled for the clinic, with a reason.
    public func setHours(_ member: StaffMember, doctorId: Int64, weekday: Int, intervals: [DoctorSchedule.Interval],
                         force: Bool = false, reason: String? = nil, requestId: String? = nil) throws -> [Appointment] {
        guard (1...7).contains(weekday) else { throw ClinicError.invalid(.workingHoursInvalid) }
        for (index, interval) in intervals.enumerated() {
            guard interval.isValid, !intervals[..<index].contains(where: { $0.overlaps(interval) }) else {
                throw ClinicError.invalid(.workingHoursInvalid)
            }
        }
        let now = self.now()
        return try database.writeJoined { db in
            try checkAdmin(db, member, doctorId: doctorId)
            try db.execute(sql: "DELETE FROM working_hours WHERE doctor_id = ? AND weekday = ?", arguments: [doctorId, weekday])
            for interval in intervals {
                var row = WorkingHours(id: nil, doctorId: doctorId, weekday: weekday, startMinute: interval.startMinute,
                                       endMinute: interval.endMinute, slotMinutes: interval.slotMinutes)
                try row.insert(db)
            }
            let text = intervals.map { "\($0.startMinute)-\($0.endMinute)/\($0.slotMinutes)" }.joined(separator: ",")
            try AuditLog.append(db, by: member.auditActor, action: "hours.set", requestId: requestId,
                                detail: "doctor \(doctorId) weekday \(weekday) " + (text.isEmpty ? "off" : text), now: now)
            return try settle(db, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now)
        }
    }

    /// Adds an exception (a day off when `hours` is nil) for a doctor of the admin's clinic,
    /// with `setHours`' rule for the appointments it would leave outside the doctor's hours.
    public func addException(_ member: StaffMember, doctorId: Int64, day: LocalDateTime, hours: DoctorSchedule.Interval?,
                             force: Bool = false, reason: String? = nil,
                             requestId: String? = nil) throws -> (exception: WorkingException, cancelled: [Appointment]) {
        let now = self.now()
        return try database.writeJoined { db in
            try checkAdmin(db, member, doctorId: doctorId)
            let exception = try DepartmentController(database: database).addException(doctorId: doctorId, day: day, hours: hours,
                                                                                      by: member.auditActor)
            return (exception, try settle(db, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now))
        }
    }

    /// Removes an exception of a doctor of the admin's clinic (the same rule: extra hours it
    /// gave may hold appointments).
    public func removeException(_ member: StaffMember, exceptionId: Int64, force: Bool = false, reason: String? = nil,
                                requestId: String? = nil) throws -> [Appointment] {
        let now = self.now()
        return try database.writeJoined { db in
            guard let exception = try WorkingException.fetchOne(db, key: exceptionId),
                  try DepartmentController.clinicId(db, doctorId: exception.doctorId) == member.clinicId else {
                throw ClinicError(.notFound, .exceptionNotFound, String(exceptionId))
            }
            try checkAdmin(db, member, doctorId: exception.doctorId)
            try DepartmentController(database: database).removeException(exceptionId, by: member.auditActor)
            return try settle(db, member, doctorId: exception.doctorId, force: force, reason: reason, requestId: requestId, now: now)
        }
    }

    /// After a change to a doctor's hours, in its transaction: the doctor's active future
    /// appointments whose slot the new schedule no longer has. None: nothing to do. Some:
    /// `hours_conflict` with their ids (the change rolls back), or with `force` they are
    /// cancelled for the clinic with the reason (history and audit trail).
    func settle(_ db: Database, _ member: StaffMember, doctorId: Int64, force: Bool, reason: String?, requestId: String?,
                now: Date, keepingNone: Bool = false) throws -> [Appointment] {
        guard let clinic = try database.getClinicById(db, member.clinicId) else { return [] }
        let zone = clinic.zone
        let future = try Appointment.fetchAll(db, sql: """
            SELECT * FROM appointments WHERE doctor_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at >= ? ORDER BY starts_at
            """, arguments: [doctorId, now.seconds])
        var outside: [Appointment] = []
        // A visit under way (in progress) is left alone: hours change around it.
        for appointment in future where appointment.status.canMove(to: .cancelled) {
            let day = LocalDateTime.of(appointment.startsAt, in: zone)
            let schedule = try DoctorSchedule.load(db, doctorId: doctorId, from: day, through: day)
            let duration = try appointment.visitTypeId.flatMap { try VisitType.fetch(db, id: $0)?.durationMinutes }
            if keepingNone || schedule.slotEnd(startingAt: appointment.startsAt, zone: zone, duration: duration) != appointment.endsAt {
                outside.append(appointment)
            }
        }
        guard !outside.isEmpty else { return [] }
        guard force else {
            throw ClinicError(.hoursConflict, .staffHoursConflict, outside.map { String($0.id ?? 0) }.joined(separator: ", "))
        }
        let given = try Self.checkedReason(reason)
        let why = given ?? Strings.text(.staffHoursChanged, .en, [])
        return try outside.map { appointment in
            let cancelled = try AppointmentController.move(db, database, appointment, to: .cancelled, by: .staff, now: now,
                                                           reason: why, staffId: member.id)
            try AuditLog.append(db, by: member.auditActor, action: "appointment.cancel", clientId: appointment.clientId,
                                appointmentId: appointment.id, requestId: requestId, detail: "hours changed: \(why)", now: now)
            // The patient reads the reason in their language when the clinic gave none.
            try Inbox.about(db, cancelled, kind: .clinicCancelled, reason: given, defaultReason: .staffHoursChanged,
                            staffId: member.id, now: now)
            return cancelled
        }
    }

    /// A reason the clinic gives a patient (a cancellation, a forced hours change): trimmed,
    /// nil when blank, `invalid_input` past 500 characters or with control characters.
    static func checkedReason(_ reason: String?) throws -> String? {
        guard let reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines), !reason.isEmpty else { return nil }
        guard reason.count <= 500, !reason.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw ClinicError.invalid(.staffReasonInvalid)
        }
        return reason
    }
}
