import Foundation

// Clinic administration: doctors, their weekly hours and exceptions (clinic admins only).

extension StaffController {
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
    /// for the clinic with the reason (`ScheduleChange`).
    public func deactivateDoctor(_ member: StaffMember, doctorId: Int64, force: Bool = false, reason: String? = nil,
                                 requestId: String? = nil) throws -> [Appointment] {
        try changing(ScheduleChange(.deactivate(doctorId: doctorId), by: member, force: force, reason: reason, requestId: requestId,
                                    now: now())).cancelled
    }

    /// `deactivateDoctor` awaited (issue 56: `ClinicAdminChangesStore.changeSchedule`).
    public func deactivateDoctor(_ member: StaffMember, doctorId: Int64, force: Bool = false, reason: String? = nil,
                                 requestId: String? = nil) async throws -> [Appointment] {
        try await database.changeSchedule(ScheduleChange(.deactivate(doctorId: doctorId), by: member, force: force, reason: reason,
                                                         requestId: requestId, now: now())).cancelled
    }

    /// A change of working time in one write transaction of the seam (the blocking path).
    func changing(_ change: ScheduleChange) throws -> ScheduleOutcome {
        try database.writing { tx in try change.apply(tx) }
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
    /// Times the new hours give are queued for the waitlist (`ScheduleChange`).
    public func setHours(_ member: StaffMember, doctorId: Int64, weekday: Int, intervals: [DoctorSchedule.Interval],
                         force: Bool = false, reason: String? = nil, requestId: String? = nil) throws -> [Appointment] {
        try changing(ScheduleChange(.hours(doctorId: doctorId, weekday: weekday, intervals), by: member, force: force, reason: reason,
                                    requestId: requestId, now: now())).cancelled
    }

    /// `setHours` awaited (issue 56: `ClinicAdminChangesStore.changeSchedule`).
    public func setHours(_ member: StaffMember, doctorId: Int64, weekday: Int, intervals: [DoctorSchedule.Interval],
                         force: Bool = false, reason: String? = nil, requestId: String? = nil) async throws -> [Appointment] {
        try await database.changeSchedule(ScheduleChange(.hours(doctorId: doctorId, weekday: weekday, intervals), by: member, force: force,
                                                         reason: reason, requestId: requestId, now: now())).cancelled
    }

    /// Adds an exception (a day off when `hours` is nil) for a doctor of the admin's clinic,
    /// with `setHours`' rule for the appointments it would leave outside the doctor's hours.
    public func addException(_ member: StaffMember, doctorId: Int64, day: LocalDateTime, hours: DoctorSchedule.Interval?,
                             force: Bool = false, reason: String? = nil,
                             requestId: String? = nil) throws -> (exception: WorkingException, cancelled: [Appointment]) {
        try Self.added(changing(ScheduleChange(.addException(doctorId: doctorId, day: day, hours), by: member, force: force,
                                               reason: reason, requestId: requestId, now: now())))
    }

    /// `addException` awaited (issue 56: `ClinicAdminChangesStore.changeSchedule`).
    public func addException(_ member: StaffMember, doctorId: Int64, day: LocalDateTime, hours: DoctorSchedule.Interval?,
                             force: Bool = false, reason: String? = nil,
                             requestId: String? = nil) async throws -> (exception: WorkingException, cancelled: [Appointment]) {
        try Self.added(try await database.changeSchedule(ScheduleChange(.addException(doctorId: doctorId, day: day, hours), by: member,
                                                                        force: force, reason: reason, requestId: requestId, now: now())))
    }

    static func added(_ outcome: ScheduleOutcome) throws -> (exception: WorkingException, cancelled: [Appointment]) {
        guard let exception = outcome.exception else { throw ClinicError(.internalError, .storageFailure, "the exception added") }
        return (exception, outcome.cancelled)
    }

    /// Removes an exception of a doctor of the admin's clinic (the same rule: extra hours it
    /// gave may hold appointments).
    public func removeException(_ member: StaffMember, exceptionId: Int64, force: Bool = false, reason: String? = nil,
                                requestId: String? = nil) throws -> [Appointment] {
        try changing(ScheduleChange(.removeException(id: exceptionId), by: member, force: force, reason: reason, requestId: requestId,
                                    now: now())).cancelled
    }

    /// `removeException` awaited (issue 56: `ClinicAdminChangesStore.changeSchedule`).
    public func removeException(_ member: StaffMember, exceptionId: Int64, force: Bool = false, reason: String? = nil,
                                requestId: String? = nil) async throws -> [Appointment] {
        try await database.changeSchedule(ScheduleChange(.removeException(id: exceptionId), by: member, force: force, reason: reason,
                                                         requestId: requestId, now: now())).cancelled
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
