import Foundation

// The directory as a patient's app reads it, awaited (issue 56): a clinic with its departments,
// a department's doctors with their weekly hours, its visit types. Each read is one snapshot of
// the store (on PostgreSQL an awaited read-only transaction) with no thread waiting for it.

/// The awaited reads of the directory a `ClinicStore` offers.
public protocol DirectoryReadsStore: Sendable {
    /// The clinic with its departments (by specialization, then id); nil when there is no such clinic.
    func clinicWithDepartments(id: Int64) async throws -> (clinic: Clinic, departments: [Department])?
    /// The department's active doctors (by id), each with their weekly hours (by weekday, then
    /// start); nil when there is no such department.
    func departmentDoctors(id: Int64) async throws -> [DoctorWithHours]?
    /// The department's offered (active) visit types, the shortest first; nil when there is no
    /// such department.
    func departmentVisitTypes(id: Int64) async throws -> [VisitType]?
    /// The clinics `filter` matches, in its order (name, then id), as `StoreReading.clinics(matching:)`.
    func clinics(matching filter: ClinicFilter) async throws -> [Clinic]
    /// The department with its clinic; nil when there is no such department.
    func departmentWithClinic(id: Int64) async throws -> (department: Department, clinic: Clinic)?
    /// The doctor (active or not) with their department, its clinic and their weekly hours;
    /// nil when there is no such doctor.
    func doctorPlace(id: Int64) async throws -> DoctorPlace?
    /// The visit type (offered or not); nil when there is no such visit type.
    func visitType(id: Int64) async throws -> VisitType?
    /// The value of a setting (`directory_initialized`: how the directory was first filled),
    /// nil when it was never set.
    func setting(_ key: String) async throws -> String?
    /// What the web map's markers depend on (`ClinicController.mapVersion`), in one snapshot.
    func mapVersionFacts() async throws -> MapVersionFacts
    /// Every clinic with its departments' specializations, by id (`DirectoryReading.mapClinics`),
    /// with `mapVersionFacts` read in the same snapshot.
    func mapSnapshot() async throws -> (version: MapVersionFacts, clinics: [MapClinic])
}

/// The directory's version and the departments' tally: equal facts, equal map.
public struct MapVersionFacts: Sendable, Equatable {
    public let directoryVersion: Int64
    public let departments: Int64
    public let lastDepartmentId: Int64

    public init(directoryVersion: Int64, departments: Int64, lastDepartmentId: Int64) {
        self.directoryVersion = directoryVersion; self.departments = departments; self.lastDepartmentId = lastDepartmentId
    }

    /// The facts through the seam's reads, in the caller's snapshot.
    package static func read(_ tx: any StoreReading) throws -> MapVersionFacts {
        let tally = try tx.departmentTally()
        return MapVersionFacts(directoryVersion: try tx.directoryVersion(), departments: tally.count, lastDepartmentId: tally.lastId)
    }

    /// The version as the map's cache keeps it.
    public var text: String { "\(directoryVersion).\(departments).\(lastDepartmentId)" }
}

/// A doctor with their weekly hours, as a department's list shows them.
public struct DoctorWithHours: Sendable, Equatable {
    public let doctor: Doctor
    public let hours: [WorkingHours]

    public init(doctor: Doctor, hours: [WorkingHours]) { self.doctor = doctor; self.hours = hours }

    /// The read as the seam's, in the caller's read transaction (what SQLite runs); nil when there
    /// is no such department.
    public static func read(_ tx: any StoreReading, departmentId: Int64) throws -> [DoctorWithHours]? {
        guard try tx.department(id: departmentId) != nil else { return nil }
        return try tx.activeDoctors(inDepartment: departmentId).map { doctor in
            DoctorWithHours(doctor: doctor, hours: try tx.workingHours(ofDoctor: doctor.id ?? 0))
        }
    }
}
