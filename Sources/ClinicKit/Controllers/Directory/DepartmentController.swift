import Foundation

/// The UML's `DepartmentController`: departments of a clinic, and the doctors who work in them.
public final class DepartmentController: Sendable {
    let database: any ClinicStore
    let now: @Sendable () -> Date

    public init(database: any ClinicStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.now = now
    }

    public func addDepartment(clinicId: Int64, specialization: String) throws -> Department {
        guard Text.checkedLabel(specialization, maximum: 100) != nil else { throw ClinicError.invalid(.specializationInvalid) }
        let key = Specialization.key(for: specialization)
        guard !key.isEmpty, key.count <= 100 else { throw ClinicError.invalid(.specializationInvalid) }
        return try database.writing { tx in
            guard try tx.clinic(id: clinicId) != nil else {
                throw ClinicError(.notFound, .clinicNotFound, String(clinicId))
            }
            if try tx.departmentExists(clinicId: clinicId, specialization: key) {
                throw ClinicError.invalid(.departmentExists, key)
            }
            return try tx.insertDepartment(Department(id: nil, clinicId: clinicId, specialization: key, isDemo: false))
        }
    }

    /// A doctor with weekly working hours (intervals in local minutes, per ISO weekday).
    public func addDoctor(departmentId: Int64, name: String, hours: [WorkingHours]) throws -> Doctor {
        let name = try Self.checkedDoctor(name: name, hours: hours)
        return try database.writing { tx in
            guard try tx.department(id: departmentId) != nil else {
                throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
            }
            return try Self.insertDoctor(tx, departmentId: departmentId, name: name, hours: hours)
        }
    }

    /// A new doctor's name (trimmed) and hours checked: valid intervals, none overlapping another
    /// of the same weekday (a start would belong to two intervals, and its slot length to
    /// whichever came first).
    static func checkedDoctor(name: String, hours: [WorkingHours]) throws -> String {
        guard let name = Text.checkedPersonName(name, maximum: 200) else { throw ClinicError.invalid(.doctorNameInvalid) }
        let intervals = hours.map { (weekday: $0.weekday, interval: DoctorSchedule.Interval(
            startMinute: $0.startMinute, endMinute: $0.endMinute, slotMinutes: $0.slotMinutes)) }
        for (index, item) in intervals.enumerated() {
            guard (1...7).contains(item.weekday), item.interval.isValid,
                  !intervals[..<index].contains(where: { $0.weekday == item.weekday && $0.interval.overlaps(item.interval) })
            else { throw ClinicError.invalid(.workingHoursInvalid) }
        }
        return name
    }

    /// The doctor and their hours written in the caller's transaction.
    static func insertDoctor(_ tx: any StoreWriting, departmentId: Int64, name: String, hours: [WorkingHours]) throws -> Doctor {
        let doctor = try tx.insertDoctor(Doctor(id: nil, departmentId: departmentId, name: name, isDemo: false))
        try tx.insertWorkingHours(hours, ofDoctor: doctor.id ?? 0)
        return doctor
    }

    public func getDepartmentsByClinicId(_ clinicId: Int64) throws -> [Department] {
        try database.reading { tx in
            guard try tx.clinic(id: clinicId) != nil else {
                throw ClinicError(.notFound, .clinicNotFound, String(clinicId))
            }
            return try tx.departments(ofClinic: clinicId)
        }
    }

    public func getDepartmentById(_ id: Int64) throws -> Department {
        guard let department = try database.reading({ tx in try tx.department(id: id) }) else {
            throw ClinicError(.notFound, .departmentNotFound, String(id))
        }
        return department
    }

    public func getDoctorsByDepartmentId(_ departmentId: Int64) throws -> [Doctor] {
        try database.reading { tx in
            guard try tx.department(id: departmentId) != nil else {
                throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
            }
            return try tx.activeDoctors(inDepartment: departmentId)
        }
    }

    public func getWorkingHours(doctorId: Int64) throws -> [WorkingHours] {
        try database.reading { tx in try tx.workingHours(ofDoctor: doctorId) }
    }
}

extension DepartmentController {
    /// The operator adds a day off (`hours` nil) or other hours on a local date for any
    /// clinic's doctor, by the clinic admin's rule (`ScheduleChange`: no overlap with another
    /// exception of the date; upcoming visits the change leaves outside the hours refuse it,
    /// `hours_conflict`, unless `force`, which cancels them for the patients with `reason`).
    /// One awaited change of the store (`ClinicAdminChangesStore.changeSchedule`), in the audit
    /// trail by the operator.
    public func addException(doctorId: Int64, day: LocalDateTime, hours: DoctorSchedule.Interval?, force: Bool = false,
                             reason: String? = nil) async throws -> (exception: WorkingException, cancelled: [Appointment]) {
        try StaffController.added(try await database.changeSchedule(ScheduleChange(
            .addException(doctorId: doctorId, day: day, hours), by: nil, force: force, reason: reason, requestId: nil, now: now())))
    }

    /// A doctor's exceptions (any clinic's doctor; `not_found` for none), by day.
    public func exceptions(doctorId: Int64) async throws -> [WorkingException] {
        guard let week = try await database.doctorWeek(doctorId: doctorId) else {
            throw ClinicError(.notFound, .doctorUnknown, String(doctorId))
        }
        return week.exceptions
    }

    /// The operator removes an exception, by the same rule as `addException` (the hours it gave
    /// may hold appointments); the appointments it cancelled.
    @discardableResult
    public func removeException(_ id: Int64, force: Bool = false, reason: String? = nil) async throws -> [Appointment] {
        try await database.changeSchedule(ScheduleChange(.removeException(id: id), by: nil, force: force, reason: reason,
                                                         requestId: nil, now: now())).cancelled
    }
}
