import Foundation

// A clinic admin's changes awaited (issue 56). A visit type added, changed or no longer
// offered: its fields checked before any transaction (`VisitTypeChange`), then one transaction
// in which the store reads the type (its row locked) and the clinic of the department concerned,
// `VisitTypeChange.check` decides, and the store writes the change and its audit row. A doctor
// added: the name and hours checked first (`DoctorAddition`), then the department's clinic
// read, checked, and the doctor, their hours and the audit row written in one transaction. A
// doctor's working time changed, or the doctor deactivated: `ScheduleChange`.

/// The awaited changes of a clinic admin a `ClinicStore` offers.
public protocol ClinicAdminChangesStore: Sendable {
    /// One transaction: for a new type, its department's clinic; for a change, the type (its row
    /// locked) and its department's clinic; `change.check`; the insert, update or deactivation;
    /// the audit row (`change.audit`); the type as it is now.
    func changeVisitType(_ change: VisitTypeChange) async throws -> VisitType
    /// One transaction: the department's clinic, `addition.check`, the doctor and their hours,
    /// the audit row (`addition.audit`); the doctor.
    func addDoctor(_ addition: DoctorAddition) async throws -> Doctor
    /// One transaction: for an exception's removal, the exception; the doctor locked against
    /// bookings in flight and other changes of theirs; `ScheduleFacts`; `change.decide`; the
    /// change's write and its audit row; each visit of `ScheduleDecision.cancelling` read with
    /// its row locked (`AppointmentChangeFacts`), `change.cancellation` and its write; the new
    /// times queued for the waitlist.
    func changeSchedule(_ change: ScheduleChange) async throws -> ScheduleOutcome
}

/// A clinic admin's new doctor, name and hours checked: decided on the department's clinic.
public struct DoctorAddition: Sendable {
    public let departmentId: Int64
    public let name: String
    public let hours: [WorkingHours]
    let member: StaffMember
    let requestId: String?
    let now: Date

    /// Only a clinic admin may (`forbidden`, before anything else); the name and hours checked.
    init(_ member: StaffMember, departmentId: Int64, name: String, hours: [WorkingHours], requestId: String?, now: Date) throws {
        guard member.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        self.name = try DepartmentController.checkedDoctor(name: name, hours: hours)
        self.departmentId = departmentId; self.hours = hours; self.member = member; self.requestId = requestId; self.now = now
    }

    /// The department must be one of the admin's clinic (another's, or none, is `not_found`).
    public func check(departmentClinic: Int64?) throws {
        guard departmentClinic == member.clinicId else { throw ClinicError(.notFound, .departmentNotFound, String(departmentId)) }
    }

    /// The doctor as added, of the id the store gave.
    public func doctor(id: Int64) -> Doctor { Doctor(id: id, departmentId: departmentId, name: name, isDemo: false) }

    /// The audit row of the doctor added.
    public func audit(doctorId: Int64) -> AuditAsk {
        AuditAsk(by: member.auditActor, action: .doctorAdd, requestId: requestId, detail: "doctor \(doctorId) department \(departmentId)",
                 now: now)
    }

    /// The addition in the caller's write transaction (the blocking path, and SQLite's).
    package func apply(_ tx: any StoreWriting) throws -> Doctor {
        try check(departmentClinic: try tx.department(id: departmentId)?.clinicId)
        let doctor = try DepartmentController.insertDoctor(tx, departmentId: departmentId, name: name, hours: hours)
        try AuditLog.append(tx, audit(doctorId: doctor.id ?? 0))
        return doctor
    }
}

/// A visit type's fields, checked (`VisitType.checked`).
public struct VisitTypeFields: Sendable, Equatable {
    public let nameEn: String
    public let nameRu: String
    public let durationMinutes: Int
    public let priceCents: Int?

    init(nameEn: String, nameRu: String, durationMinutes: Int, priceCents: Int?) throws {
        (self.nameEn, self.nameRu) = try VisitType.checked(nameEn: nameEn, nameRu: nameRu, durationMinutes: durationMinutes,
                                                           priceCents: priceCents)
        self.durationMinutes = durationMinutes; self.priceCents = priceCents
    }
}

/// A clinic admin's change of a visit type, decided on what the store reads.
public struct VisitTypeChange: Sendable {
    public enum Kind: Sendable {
        /// A new type of the department.
        case add(departmentId: Int64, VisitTypeFields)
        /// The type's names, duration or price (booked appointments keep their times).
        case update(id: Int64, VisitTypeFields)
        /// No longer offered (kept for the appointments that name it).
        case remove(id: Int64)
    }

    public let kind: Kind
    let member: StaffMember
    let requestId: String?
    let now: Date

    init(_ kind: Kind, by member: StaffMember, requestId: String?, now: Date) {
        self.kind = kind; self.member = member; self.requestId = requestId; self.now = now
    }

    /// The type changed; nil for a new one.
    public var typeId: Int64? {
        switch kind {
        case .add: nil
        case .update(let id, _), .remove(let id): id
        }
    }

    /// The department of a new type; nil for a change (its type's).
    public var departmentId: Int64? {
        if case .add(let departmentId, _) = kind { return departmentId }
        return nil
    }

    /// Decided on `type` (the type changed, nil for none or for a new one) and `departmentClinic`
    /// (the clinic of the department concerned, nil for none): a change of no type is
    /// `not_found`; only a clinic admin may (`forbidden`), of their own clinic's department
    /// (another's is `not_found`, as none).
    public func check(type: VisitType?, departmentClinic: Int64?) throws {
        if let typeId, type == nil { throw ClinicError(.notFound, .visitTypeNotFound, String(typeId)) }
        guard member.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        guard departmentClinic == member.clinicId else {
            if let typeId { throw ClinicError(.notFound, .visitTypeNotFound, String(typeId)) }
            throw ClinicError(.notFound, .departmentNotFound, String(departmentId ?? 0))
        }
    }

    /// The audit row of the change made to the type `id`.
    public func audit(id: Int64) -> AuditAsk {
        switch kind {
        case .add(let departmentId, let fields):
            AuditAsk(by: member.auditActor, action: .visitTypeAdd, requestId: requestId,
                     detail: "\(id) department \(departmentId) \(fields.durationMinutes) min", now: now)
        case .update(_, let fields):
            AuditAsk(by: member.auditActor, action: .visitTypeUpdate, requestId: requestId, detail: "\(id) \(fields.durationMinutes) min",
                     now: now)
        case .remove:
            AuditAsk(by: member.auditActor, action: .visitTypeRemove, requestId: requestId, detail: String(id), now: now)
        }
    }

    /// The change in the caller's write transaction (the blocking path, and SQLite's).
    package func apply(_ tx: any StoreWriting) throws -> VisitType {
        let type = try typeId.flatMap { try tx.visitType(id: $0) }
        let department = try (type?.departmentId ?? departmentId).flatMap { try tx.department(id: $0) }
        try check(type: type, departmentClinic: department?.clinicId)
        let id: Int64
        switch kind {
        case .add(let departmentId, let fields):
            id = try tx.insertVisitType(departmentId: departmentId, nameEn: fields.nameEn, nameRu: fields.nameRu,
                                        durationMinutes: fields.durationMinutes, priceCents: fields.priceCents)
        case .update(let typeId, let fields):
            id = typeId
            try tx.updateVisitType(id: id, nameEn: fields.nameEn, nameRu: fields.nameRu, durationMinutes: fields.durationMinutes,
                                   priceCents: fields.priceCents)
        case .remove(let typeId):
            id = typeId
            try tx.deactivateVisitType(id: id)
        }
        try AuditLog.append(tx, audit(id: id))
        return try tx.visitType(id: id) ?? { throw ClinicError(.internalError, .storageFailure, "visit type") }()
    }
}
