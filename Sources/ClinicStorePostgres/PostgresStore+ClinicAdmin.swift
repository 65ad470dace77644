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
