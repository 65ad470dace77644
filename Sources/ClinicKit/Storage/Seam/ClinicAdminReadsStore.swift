import Foundation

// The clinic admin's reads awaited (issue 56): the clinic's doctors with their weekly hours, one
// doctor's hours and exceptions, a department's visit types, the staff accounts. Each is one snapshot of the store
// (on PostgreSQL an awaited read-only transaction) with no thread waiting for it; whether what
// was read is of the member's clinic is `StaffController`'s rule.

/// The awaited reads of a clinic's admin a `ClinicStore` offers.
public protocol ClinicAdminReadsStore: Sendable {
    /// The clinic's active doctors department by department (by specialization, then id), each
    /// by id, with their weekly hours.
    func clinicDoctors(clinicId: Int64) async throws -> [ClinicDoctor]
    /// A doctor's (active or not) clinic, weekly hours and exceptions; nil when there is no such doctor.
    func doctorWeek(doctorId: Int64) async throws -> DoctorWeek?
    /// A department's clinic and every visit type of it, offered or not (the shortest first);
    /// nil when there is no such department.
    func everyVisitType(departmentId: Int64) async throws -> (clinicId: Int64, types: [VisitType])?
    /// The clinic's staff accounts (disabled ones too), by id.
    func staffAccounts(clinicId: Int64) async throws -> [StaffMember]
}

/// A doctor of a clinic with their department and weekly hours.
public struct ClinicDoctor: Sendable, Equatable {
    public let doctor: Doctor
    public let department: Department
    public let hours: [WorkingHours]

    public init(doctor: Doctor, department: Department, hours: [WorkingHours]) {
        self.doctor = doctor; self.department = department; self.hours = hours
    }

    /// The read as the seam's, in the caller's snapshot (what SQLite runs).
    package static func read(_ tx: any StoreReading, clinicId: Int64) throws -> [ClinicDoctor] {
        try tx.departments(ofClinic: clinicId).flatMap { department in
            try tx.activeDoctors(inDepartment: department.id ?? 0).map { doctor in
                ClinicDoctor(doctor: doctor, department: department, hours: try tx.workingHours(ofDoctor: doctor.id ?? 0))
            }
        }
    }
}

/// A doctor's week as their clinic's admin sees it.
public struct DoctorWeek: Sendable, Equatable {
    /// The doctor's clinic (their department's).
    public let clinicId: Int64
    /// By weekday, then start.
    public let hours: [WorkingHours]
    /// By day, a day off first.
    public let exceptions: [WorkingException]

    public init(clinicId: Int64, hours: [WorkingHours], exceptions: [WorkingException]) {
        self.clinicId = clinicId; self.hours = hours; self.exceptions = exceptions
    }

    /// The read as the seam's, in the caller's snapshot (what SQLite runs).
    package static func read(_ tx: any StoreReading, doctorId: Int64) throws -> DoctorWeek? {
        guard let clinicId = try tx.clinicId(ofDoctor: doctorId) else { return nil }
        return DoctorWeek(clinicId: clinicId, hours: try tx.workingHours(ofDoctor: doctorId),
                          exceptions: try tx.workingExceptions(ofDoctor: doctorId))
    }
}
