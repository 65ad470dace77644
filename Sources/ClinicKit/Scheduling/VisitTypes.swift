import Foundation

/// What a department offers to book (migration 12): "First visit, 30 min", "Follow-up,
/// 15 min". A visit takes `durationMinutes`, which must be a whole number of a doctor's slots
/// for that doctor to offer it; a department without visit types books single slots.
public struct VisitType: Sendable, Equatable {
    public let id: Int64
    public let departmentId: Int64
    public let nameEn: String
    public let nameRu: String
    public let durationMinutes: Int
    /// In cents of the clinic's currency; nil when not given.
    public let priceCents: Int?
    public let isActive: Bool

    public init(row: some StoredRow) throws {
        let table = "visit_types"
        id = try row.value("id", in: table); departmentId = try row.value("department_id", in: table)
        nameEn = try row.value("name_en", in: table); nameRu = try row.value("name_ru", in: table)
        durationMinutes = try row.value("duration_minutes", in: table); priceCents = try row.value("price_cents", in: table)
        isActive = try row.value("is_active", in: table)
    }

    public func name(_ language: Language) -> String { language == .ru ? nameRu : nameEn }

    /// The active visit type of a department, for booking or slots; `not_found` otherwise.
    static func offered(_ tx: any StoreReading, id: Int64, departmentId: Int64) throws -> VisitType {
        try offered(try tx.visitType(id: id), id: id, departmentId: departmentId)
    }

    /// The visit type read for `id`, when it is the department's and offered.
    static func offered(_ type: VisitType?, id: Int64, departmentId: Int64) throws -> VisitType {
        guard let type, type.departmentId == departmentId, type.isActive else {
            throw ClinicError(.notFound, .visitTypeNotFound, String(id))
        }
        return type
    }

    /// Checked fields of a new or changed visit type.
    static func checked(nameEn: String, nameRu: String, durationMinutes: Int, priceCents: Int?) throws -> (String, String) {
        guard let en = Text.checkedLabel(nameEn, maximum: 100), let ru = Text.checkedLabel(nameRu, maximum: 100) else {
            throw ClinicError.invalid(.visitTypeNameInvalid)
        }
        guard (5...480).contains(durationMinutes), durationMinutes % 5 == 0 else {
            throw ClinicError.invalid(.visitTypeDurationInvalid, String(durationMinutes))
        }
        if let priceCents, !(0...100_000_000).contains(priceCents) { throw ClinicError.invalid(.visitTypePriceInvalid) }
        return (en, ru)
    }
}

extension DepartmentController {
    /// A department's active visit types, shortest first (empty: it books single slots).
    public func visitTypes(departmentId: Int64) throws -> [VisitType] {
        try database.reading { tx in
            guard try tx.department(id: departmentId) != nil else {
                throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
            }
            return try tx.visitTypes(ofDepartment: departmentId, includingInactive: false)
        }
    }
}

extension StaffController {
    /// The department, of the member's clinic, for a clinic admin.
    /// A department's visit types, inactive ones too (any staff member of the clinic).
    public func visitTypes(_ member: StaffMember, departmentId: Int64) throws -> [VisitType] {
        try database.reading { tx in
            guard let department = try tx.department(id: departmentId), department.clinicId == member.clinicId else {
                throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
            }
            return try tx.visitTypes(ofDepartment: departmentId, includingInactive: true)
        }
    }

    /// `visitTypes` awaited (issue 56: `ClinicAdminReadsStore.everyVisitType`, one snapshot).
    public func visitTypes(_ member: StaffMember, departmentId: Int64) async throws -> [VisitType] {
        guard let found = try await database.everyVisitType(departmentId: departmentId), found.clinicId == member.clinicId else {
            throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
        }
        return found.types
    }

    public func addVisitType(_ member: StaffMember, departmentId: Int64, nameEn: String, nameRu: String, durationMinutes: Int,
                             priceCents: Int? = nil, requestId: String? = nil) throws -> VisitType {
        let fields = try VisitTypeFields(nameEn: nameEn, nameRu: nameRu, durationMinutes: durationMinutes, priceCents: priceCents)
        return try changeVisitType(.add(departmentId: departmentId, fields), member, requestId: requestId)
    }

    /// `addVisitType` awaited (issue 56: `ClinicAdminChangesStore.changeVisitType`).
    public func addVisitType(_ member: StaffMember, departmentId: Int64, nameEn: String, nameRu: String, durationMinutes: Int,
                             priceCents: Int? = nil, requestId: String? = nil) async throws -> VisitType {
        let fields = try VisitTypeFields(nameEn: nameEn, nameRu: nameRu, durationMinutes: durationMinutes, priceCents: priceCents)
        return try await database.changeVisitType(VisitTypeChange(.add(departmentId: departmentId, fields), by: member, requestId: requestId,
                                                                  now: now()))
    }

    /// Changes a visit type's names, duration or price; booked appointments keep their times.
    public func updateVisitType(_ member: StaffMember, id: Int64, nameEn: String, nameRu: String, durationMinutes: Int,
                                priceCents: Int?, requestId: String? = nil) throws -> VisitType {
        let fields = try VisitTypeFields(nameEn: nameEn, nameRu: nameRu, durationMinutes: durationMinutes, priceCents: priceCents)
        return try changeVisitType(.update(id: id, fields), member, requestId: requestId)
    }

    /// `updateVisitType` awaited (issue 56: `ClinicAdminChangesStore.changeVisitType`).
    public func updateVisitType(_ member: StaffMember, id: Int64, nameEn: String, nameRu: String, durationMinutes: Int,
                                priceCents: Int?, requestId: String? = nil) async throws -> VisitType {
        let fields = try VisitTypeFields(nameEn: nameEn, nameRu: nameRu, durationMinutes: durationMinutes, priceCents: priceCents)
        return try await database.changeVisitType(VisitTypeChange(.update(id: id, fields), by: member, requestId: requestId, now: now()))
    }

    /// No longer offered (kept for the appointments that name it).
    public func removeVisitType(_ member: StaffMember, id: Int64, requestId: String? = nil) throws -> VisitType {
        try changeVisitType(.remove(id: id), member, requestId: requestId)
    }

    /// `removeVisitType` awaited (issue 56: `ClinicAdminChangesStore.changeVisitType`).
    public func removeVisitType(_ member: StaffMember, id: Int64, requestId: String? = nil) async throws -> VisitType {
        try await database.changeVisitType(VisitTypeChange(.remove(id: id), by: member, requestId: requestId, now: now()))
    }

    /// A visit type's change in one write (the CLI's).
    func changeVisitType(_ kind: VisitTypeChange.Kind, _ member: StaffMember, requestId: String?) throws -> VisitType {
        let change = VisitTypeChange(kind, by: member, requestId: requestId, now: now())
        return try database.writing { tx in try change.apply(tx) }
    }
}
