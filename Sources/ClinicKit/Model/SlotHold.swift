import Foundation

/// A free slot held for a patient for a few minutes (`booking.hold_seconds`) while they finish
/// a booking: until `expiresAt` nobody else can book or hold it (FHIR's `Appointment/$hold`).
/// A hold is not an appointment: no history, no inbox message; it ends by itself, when its
/// patient books it, releases it, or holds another slot (one hold per patient at a time).
public struct SlotHold: Hashable, Sendable, Codable {
    public var id: Int64?
    public var clientId: Int64
    public var clinicId: Int64
    public var departmentId: Int64
    public var doctorId: Int64
    public var visitTypeId: Int64?
    public var startsAt: Date
    public var endsAt: Date
    public var expiresAt: Date
    public var createdAt: Date

    public init(id: Int64? = nil, clientId: Int64, clinicId: Int64, departmentId: Int64, doctorId: Int64, visitTypeId: Int64?,
                startsAt: Date, endsAt: Date, expiresAt: Date, createdAt: Date) {
        self.id = id; self.clientId = clientId; self.clinicId = clinicId; self.departmentId = departmentId
        self.doctorId = doctorId; self.visitTypeId = visitTypeId; self.startsAt = startsAt; self.endsAt = endsAt
        self.expiresAt = expiresAt; self.createdAt = createdAt
    }

    public init(row: some StoredRow) throws {
        let table = "slot_holds"
        id = try row.value("id", in: table); clientId = try row.value("client_id", in: table)
        clinicId = try row.value("clinic_id", in: table); departmentId = try row.value("department_id", in: table)
        doctorId = try row.value("doctor_id", in: table); visitTypeId = try row.value("visit_type_id", in: table)
        startsAt = try row.instant("starts_at", in: table); endsAt = try row.instant("ends_at", in: table)
        expiresAt = try row.instant("expires_at", in: table); createdAt = try row.instant("created_at", in: table)
    }
}
