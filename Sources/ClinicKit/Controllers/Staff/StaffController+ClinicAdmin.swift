import Foundation

// Clinic administration: doctors, their weekly hours and exceptions (clinic admins only).

extension StaffController {
    /// A clinic admin, and the doctor is of their clinic (else `not_found`).
    func checkAdmin(_ tx: any StoreReading, _ member: StaffMember, doctorId: Int64) throws {
        guard member.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        guard try tx.clinicId(ofDoctor: doctorId) == member.clinicId else {
            throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
        }
    }

    /// The clinic's doctors with their departments (any staff member of the clinic).
    public func doctors(_ member: StaffMember) throws -> [(doctor: Doctor, department: Department)] {
        try database.reading { tx in
            try tx.departments(ofClinic: member.clinicId).flatMap { department in
                try tx.activeDoctors(inDepartment: department.id ?? 0).map { ($0, department) }
            }
        }
    }

    /// The clinic's doctors with their departments and weekly hours, awaited (issue 56:
    /// `ClinicAdminReadsStore.clinicDoctors`, one snapshot; any staff member of the clinic).
    public func doctorsWithHours(_ member: StaffMember) async throws -> [ClinicDoctor] {
        try await database.clinicDoctors(clinicId: member.clinicId)
    }

    /// A doctor's weekly hours and exceptions, awaited in one snapshot (`ClinicAdminReadsStore.doctorWeek`).
    public func doctorWeek(_ member: StaffMember, doctorId: Int64) async throws -> DoctorWeek {
        try Self.ownDoctorWeek(try await database.doctorWeek(doctorId: doctorId), member, doctorId: doctorId)
    }

    /// The week of a doctor of the member's clinic: one of another clinic is `not_found`, as one
    /// that does not exist.
    static func ownDoctorWeek(_ week: DoctorWeek?, _ member: StaffMember, doctorId: Int64) throws -> DoctorWeek {
        guard let week, week.clinicId == member.clinicId else { throw ClinicError(.notFound, .doctorNotFound, String(doctorId)) }
        return week
    }

    /// A new doctor in a department of the admin's clinic, with weekly hours.
    public func addDoctor(_ member: StaffMember, departmentId: Int64, name: String, hours: [WorkingHours],
                          requestId: String? = nil) throws -> Doctor {
        let addition = try DoctorAddition(member, departmentId: departmentId, name: name, hours: hours, requestId: requestId, now: now())
        return try database.writing { tx in try addition.apply(tx) }
    }

    /// `addDoctor` awaited (issue 56: `ClinicAdminChangesStore.addDoctor`).
    public func addDoctor(_ member: StaffMember, departmentId: Int64, name: String, hours: [WorkingHours],
                          requestId: String? = nil) async throws -> Doctor {
        try await database.addDoctor(try DoctorAddition(member, departmentId: departmentId, name: name, hours: hours, requestId: requestId,
                                                        now: now()))
    }

    /// Deactivates a doctor of the admin's clinic: no longer offered, booked or listed. Their
    /// upcoming appointments refuse it (`hours_conflict`) unless `force`, which cancels them
    /// for the clinic with the reason.
    public func deactivateDoctor(_ member: StaffMember, doctorId: Int64, force: Bool = false, reason: String? = nil,
                                 requestId: String? = nil) throws -> [Appointment] {
        let now = self.now()
        return try database.writing { tx in
            try checkAdmin(tx, member, doctorId: doctorId)
            try tx.deactivateDoctor(id: doctorId)
            try AuditLog.append(tx, by: member.auditActor, action: .doctorDeactivate, requestId: requestId,
                                detail: "doctor \(doctorId)", now: now)
            return try settle(tx, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now,
                              keepingNone: true)
        }
    }

    /// A doctor's weekly hours (any staff member of the clinic).
    public func hours(_ member: StaffMember, doctorId: Int64) throws -> [WorkingHours] {
        try database.reading { tx in
            guard try tx.clinicId(ofDoctor: doctorId) == member.clinicId else {
                throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
            }
            return try tx.workingHours(ofDoctor: doctorId)
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
        return try database.writing { tx in
            try checkAdmin(tx, member, doctorId: doctorId)
            let window = try waitlist.newTimesWindow(tx, doctorId: doctorId, now: now)
            try tx.replaceWorkingHours(ofDoctor: doctorId, weekday: weekday, with: intervals)
            let text = intervals.map { "\($0.startMinute)-\($0.endMinute)/\($0.slotMinutes)" }.joined(separator: ",")
            try AuditLog.append(tx, by: member.auditActor, action: .hoursSet, requestId: requestId,
                                detail: "doctor \(doctorId) weekday \(weekday) " + (text.isEmpty ? "off" : text), now: now)
            let cancelled = try settle(tx, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now)
            try waitlist.queueNewTimes(tx, doctorId: doctorId, window, now: now)
            return cancelled
        }
    }

    /// Adds an exception (a day off when `hours` is nil) for a doctor of the admin's clinic,
    /// with `setHours`' rule for the appointments it would leave outside the doctor's hours.
    public func addException(_ member: StaffMember, doctorId: Int64, day: LocalDateTime, hours: DoctorSchedule.Interval?,
                             force: Bool = false, reason: String? = nil,
                             requestId: String? = nil) throws -> (exception: WorkingException, cancelled: [Appointment]) {
        let now = self.now()
        // Joined: `DepartmentController.addException`'s own write commits with what `settle` does.
        return try writingJoined { tx in
            try checkAdmin(tx, member, doctorId: doctorId)
            let window = try waitlist.newTimesWindow(tx, doctorId: doctorId, now: now)
            let exception = try DepartmentController(database: database).addException(doctorId: doctorId, day: day, hours: hours,
                                                                                      by: member.auditActor)
            let cancelled = try settle(tx, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now)
            try waitlist.queueNewTimes(tx, doctorId: doctorId, window, now: now)
            return (exception, cancelled)
        }
    }

    /// Removes an exception of a doctor of the admin's clinic (the same rule: extra hours it
    /// gave may hold appointments).
    public func removeException(_ member: StaffMember, exceptionId: Int64, force: Bool = false, reason: String? = nil,
                                requestId: String? = nil) throws -> [Appointment] {
        let now = self.now()
        // Joined: `DepartmentController.removeException`'s own write commits with what `settle` does.
        return try writingJoined { tx in
            guard let doctorId = try tx.doctorId(ofWorkingException: exceptionId),
                  try tx.clinicId(ofDoctor: doctorId) == member.clinicId else {
                throw ClinicError(.notFound, .exceptionNotFound, String(exceptionId))
            }
            try checkAdmin(tx, member, doctorId: doctorId)
            let window = try waitlist.newTimesWindow(tx, doctorId: doctorId, now: now)
            try DepartmentController(database: database).removeException(exceptionId, by: member.auditActor)
            let cancelled = try settle(tx, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now)
            try waitlist.queueNewTimes(tx, doctorId: doctorId, window, now: now)
            return cancelled
        }
    }

    /// After a change to a doctor's hours, in its transaction: the doctor's active future
    /// appointments whose slot the new schedule no longer has. None: nothing to do. Some:
    /// `hours_conflict` with their ids (the change rolls back), or with `force` they are
    /// cancelled for the clinic with the reason (history and audit trail).
    func settle(_ tx: any StoreWriting, _ member: StaffMember, doctorId: Int64, force: Bool, reason: String?, requestId: String?,
                now: Date, keepingNone: Bool = false) throws -> [Appointment] {
        guard let clinic = try tx.clinic(id: member.clinicId) else { return [] }
        let zone = clinic.zone
        let future = try tx.futureActiveAppointments(ofDoctor: doctorId, from: now)
        var outside: [Appointment] = []
        // A visit under way (in progress) is left alone: hours change around it.
        for appointment in future where appointment.status.canMove(to: .cancelled) {
            let day = LocalDateTime.of(appointment.startsAt, in: zone)
            let schedule = try DoctorSchedule.load(tx, doctorId: doctorId, from: day, through: day)
            let duration = try appointment.visitTypeId.flatMap { try tx.visitType(id: $0)?.durationMinutes }
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
            let cancelled = try AppointmentController.move(tx, appointment, to: .cancelled, by: .staff, now: now,
                                                           reason: why, staffId: member.id)
            try AuditLog.append(tx, by: member.auditActor, action: .appointmentCancel, clientId: appointment.clientId,
                                appointmentId: appointment.id, requestId: requestId, detail: "hours changed: \(why)", now: now)
            // The patient reads the reason in their language when the clinic gave none.
            try Inbox.about(tx, cancelled, kind: .clinicCancelled, reason: given, defaultReason: .staffHoursChanged,
                            staffId: member.id, now: now)
            return cancelled
        }
    }

    /// One write transaction in which the writes other controllers open on this thread
    /// (`DepartmentController`'s, `AppointmentController.createAppointment`) join, as savepoints,
    /// so that they commit with what the staff use case writes beside them or not at all. Only
    /// until those use cases take the seam's transaction themselves (issue #25): then this is
    /// `database.writing` with them called on `tx`.
    func writingJoined<T>(_ body: (any StoreWriting) throws -> T) throws -> T {
        try database.writingJoined(body)
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
