import ClinicKit
import Foundation
import PostgresNIO

// The front desk's day awaited (issue 56: `FrontDeskStore`): one transaction on a leased
// connection, each statement awaited, with the seam's own statements. The plan and the audit
// rows are ClinicKit's; the notes and the patients are opened here under the stored key check.

extension PostgresStore {
    /// BEGIN, the clinic, its departments, their active doctors (one statement), the doctor
    /// asked for's clinic, the plan, the day's appointments, the key check (when there are any), their patients (one
    /// statement), the audit rows; COMMIT.
    public func deskDay(clinicId: Int64, doctorAsked: Int64?, plan: @escaping @Sendable (DeskDayPlace) throws -> DeskDayPlan,
                        audit: @escaping @Sendable (DeskDayFacts) -> [AuditAsk]) async throws -> DeskDayFacts {
        let sent = statementsSent, key = personalDataKey, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let clinic = try await tx.rows(PostgresTransaction.clinicSQL, [clinicId]).first.map { try Clinic(row: PostgresTransaction.row($0)) }
            let departments = try await tx.rows(PostgresTransaction.departmentsOfClinicSQL, [clinicId])
                .map { try Department(row: PostgresTransaction.row($0)) }
            let doctors = departments.isEmpty ? [] : try await tx.rows(
                PostgresTransaction.activeDoctorsOfDepartmentsSQL, [DirectoryIdArray(departments.compactMap(\.id))])
                .map { try Doctor(row: PostgresTransaction.row($0)) }
            let byDepartment = Dictionary(grouping: doctors, by: \.departmentId)
            var askedClinic: Int64?
            if let doctorAsked {
                askedClinic = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.clinicOfDoctorSQL, [doctorAsked]))
            }
            let place = DeskDayPlace(clinic: clinic, departments: departments,
                                     doctors: departments.flatMap { department in (byDepartment[department.id ?? 0] ?? []).map { ($0, department) } },
                                     doctorAskedClinicId: askedClinic)
            let planned = try plan(place)
            let appointments = try await tx.rows(PostgresTransaction.appointmentsOfClinicDaySQL, [
                clinicId, planned.span.lowerBound, planned.span.upperBound, planned.departmentId, planned.doctorId,
            ]).map { try Appointment(row: PostgresTransaction.row($0)) }
            let clientIds = Array(Set(appointments.compactMap(\.clientId))).sorted()
            var patients: [Int64: Client] = [:]
            // The key check for the notes and the patients (a day with no appointment reads nothing more).
            var check: String?
            if !appointments.isEmpty {
                check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL, [PostgresTransaction.clientsKeyCheckSetting]))
            }
            if !clientIds.isEmpty {
                for row in try await tx.rows("SELECT * FROM clients WHERE id = ANY($1::bigint[])", [DirectoryIdArray(clientIds)]) {
                    let stored = try PostgresTransaction.storedClientOfRow(PostgresTransaction.row(row))
                    let client = stored.personal == nil ? stored.client : try stored.opened(with: try key.cipher(keyCheck: check))
                    if let id = client.id { patients[id] = client }
                }
            }
            let facts = DeskDayFacts(place: place, plan: planned,
                                     appointments: try appointments.map { try Self.opened($0, key: key, check: check) }, patients: patients)
            for ask in audit(facts) { try await Self.append(ask, tx, ring: ring) }
            return facts
        }
    }
}
