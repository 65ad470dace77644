import Foundation

/// The UML's `DepartmentController`: departments of a clinic, and the doctors who work in them.
public final class DepartmentController: Sendable {
    let database: any ClinicStore

    public init(database: any ClinicStore) { self.database = database }

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
    /// Adds a day off (`hours` nil) or changed hours for a doctor on a local date.
    /// Adds an exception (a day off when `hours` is nil); recorded in the audit trail by `actor`.
    public func addException(doctorId: Int64, day: LocalDateTime, hours: DoctorSchedule.Interval?,
                             by actor: AuditActor = .operator) throws -> WorkingException {
        if let hours, !hours.isValid { throw ClinicError.invalid(.exceptionInvalid) }
        return try database.writing { tx in
            guard try tx.doctor(id: doctorId) != nil else {
                throw ClinicError(.notFound, .doctorUnknown, String(doctorId))
            }
            let key = DoctorSchedule.dayKey(day)
            let existing = try tx.workingExceptions(ofDoctor: doctorId, from: key, through: key)
            let clash = existing.contains { other in
                guard let hours, let start = other.startMinute, let end = other.endMinute else { return true } // a day off
                return hours.overlaps(DoctorSchedule.Interval(startMinute: start, endMinute: end, slotMinutes: other.slotMinutes ?? 0))
            }
            if clash { throw ClinicError.invalid(.exceptionOverlaps, key) }
            let exception = try tx.insertWorkingException(WorkingException(
                id: nil, doctorId: doctorId, day: DoctorSchedule.dayKey(day), startMinute: hours?.startMinute,
                endMinute: hours?.endMinute, slotMinutes: hours?.slotMinutes))
            try AuditLog.append(tx, by: actor, action: .exceptionAdd, clinicId: try tx.clinicId(ofDoctor: doctorId),
                                detail: "doctor \(doctorId) \(exception.day) " + (hours.map { "\($0.startMinute)-\($0.endMinute)" } ?? "off"),
                                now: Date())
            return exception
        }
    }

    public func exceptions(doctorId: Int64) throws -> [WorkingException] {
        try database.reading { tx in
            guard try tx.doctor(id: doctorId) != nil else {
                throw ClinicError(.notFound, .doctorUnknown, String(doctorId))
            }
            return try tx.workingExceptions(ofDoctor: doctorId)
        }
    }

    /// Removes an exception; recorded in the audit trail by `actor`.
    public func removeException(_ id: Int64, by actor: AuditActor = .operator) throws {
        try database.writing { tx in
            guard let exception = try tx.workingException(id: id) else {
                throw ClinicError(.notFound, .exceptionNotFound, String(id))
            }
            try tx.deleteWorkingException(id: id)
            try AuditLog.append(tx, by: actor, action: .exceptionRemove,
                                clinicId: try tx.clinicId(ofDoctor: exception.doctorId),
                                detail: "doctor \(exception.doctorId) \(exception.day)", now: Date())
        }
    }
}
