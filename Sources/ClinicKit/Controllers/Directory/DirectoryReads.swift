import Foundation

// The directory's reads awaited (issue 56: `DirectoryReadsStore`): what a server's public
// routes answer with, with no thread waiting for the store; the same answers and refusals as
// the synchronous reads.

extension ClinicController {
    /// `getAllClinics` awaited: the clinics `filter` matches, in its order (name, then id).
    public func getAllClinics(_ filter: ClinicFilter = ClinicFilter()) async throws -> [Clinic] {
        if let limit = filter.limit, limit < 1 { throw ClinicError.invalid(.limitRange, String(limit)) }
        return try await database.clinics(matching: filter)
    }

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

extension ClinicStore {
    /// Each department of `places` with its clinic, awaited: each clinic read once, with its
    /// departments (`clinic_not_found`, `department_not_found` for one gone). What a list of
    /// appointments or waitlist entries is shown with.
    package func departmentsWithClinics(_ places: [(clinicId: Int64, departmentId: Int64)]) async throws
        -> [Int64: (department: Department, clinic: Clinic)] {
        var read: [Int64: (clinic: Clinic, departments: [Department])] = [:]
        var found: [Int64: (department: Department, clinic: Clinic)] = [:]
        for (clinicId, departmentId) in places where found[departmentId] == nil {
            let clinic: (clinic: Clinic, departments: [Department])
            if let known = read[clinicId] {
                clinic = known
            } else {
                guard let known = try await clinicWithDepartments(id: clinicId) else {
                    throw ClinicError(.notFound, .clinicNotFound, String(clinicId))
                }
                clinic = known
                read[clinicId] = clinic
            }
            guard let department = clinic.departments.first(where: { $0.id == departmentId }) else {
                throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
            }
            found[departmentId] = (department, clinic.clinic)
        }
        return found
    }
}
