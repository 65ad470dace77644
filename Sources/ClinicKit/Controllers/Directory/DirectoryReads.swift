import Foundation

// The directory's reads awaited (issue 56: `DirectoryReadsStore`): what a server's public
// routes answer with, with no thread waiting for the store; the same answers and refusals as
// the synchronous reads.

extension ClinicController {
    /// The clinic with its departments (`getClinicById` and `getDepartmentsByClinicId` in one read).
    public func clinicWithDepartments(_ id: Int64) async throws -> (clinic: Clinic, departments: [Department]) {
        guard let found = try await database.clinicWithDepartments(id: id) else {
            throw ClinicError(.notFound, .clinicNotFound, String(id))
        }
        return found
    }
}

extension DepartmentController {
    /// The department's active doctors with their weekly hours, in one read.
    public func doctorsWithHours(departmentId: Int64) async throws -> [DoctorWithHours] {
        guard let doctors = try await database.departmentDoctors(id: departmentId) else {
            throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
        }
        return doctors
    }

    /// `visitTypes` awaited.
    public func visitTypes(departmentId: Int64) async throws -> [VisitType] {
        guard let types = try await database.departmentVisitTypes(id: departmentId) else {
            throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
        }
        return types
    }
}
