import ClinicKit
import Foundation
import PostgresNIO

// A clinic admin's changes awaited (issue 56: `ClinicAdminChangesStore`): one transaction on a
// leased connection, each statement awaited; what is written is ClinicKit's decision.

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
                departmentClinic = try tx.value(Int64.self, try await tx.rows("SELECT clinic_id FROM departments WHERE id = $1", [departmentId]))
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
