import Foundation

/// A doctor with the department and clinic they work in.
public struct DoctorPlace: Sendable {
    public let doctor: Doctor
    public let department: Department
    public let clinic: Clinic
    /// The doctor's weekly hours.
    public let hours: [WorkingHours]

    public init(doctor: Doctor, department: Department, clinic: Clinic, hours: [WorkingHours]) {
        self.doctor = doctor; self.department = department; self.clinic = clinic; self.hours = hours
    }

    /// `DirectoryReadsStore.doctorPlace` as the seam's reads, in the caller's read transaction
    /// (what SQLite runs).
    public static func read(_ tx: any StoreReading, doctorId: Int64) throws -> DoctorPlace? {
        guard let doctor = try tx.doctor(id: doctorId), let department = try tx.department(id: doctor.departmentId),
              let clinic = try tx.clinic(id: department.clinicId) else { return nil }
        return DoctorPlace(doctor: doctor, department: department, clinic: clinic, hours: try tx.workingHours(ofDoctor: doctorId))
    }
}

/// The hours a clinic is open on a weekday: from the earliest start of any of its active
/// doctors to the latest end (ISO weekday, minutes after local midnight).
public struct OpeningHours: Sendable, Equatable {
    public let weekday: Int
    public let startMinute: Int
    public let endMinute: Int
}

extension ClinicSystem {
    /// A doctor, their department and clinic, and their weekly hours (`doctor_not_found` for
    /// none), awaited (`DirectoryReadsStore.doctorPlace`).
    public func doctorPlace(_ id: Int64) async throws -> DoctorPlace {
        guard let place = try await database.doctorPlace(id: id) else { throw ClinicError(.notFound, .doctorNotFound, String(id)) }
        return place
    }

    /// The active doctors of a department with their hours, awaited.
    public func doctorPlaces(departmentId: Int64) async throws -> [DoctorPlace] {
        let (department, clinic) = try await departmentWithClinic(departmentId)
        return try await departments.doctorsWithHours(departmentId: departmentId).map { found in
            DoctorPlace(doctor: found.doctor, department: department, clinic: clinic, hours: found.hours)
        }
    }

    /// A department with its clinic (`department_not_found`), awaited.
    public func departmentWithClinic(_ id: Int64) async throws -> (department: Department, clinic: Clinic) {
        guard let found = try await database.departmentWithClinic(id: id) else {
            throw ClinicError(.notFound, .departmentNotFound, String(id))
        }
        return found
    }

    /// When a clinic is open, per weekday, from its active doctors' weekly hours, with the
    /// clinic itself (`clinic_not_found`): awaited reads of `DirectoryReadsStore`, the clinic with
    /// its departments, then each department's doctors with their hours.
    public func clinicWithOpeningHours(_ clinicId: Int64) async throws -> (clinic: Clinic, hours: [OpeningHours]) {
        let (clinic, list) = try await clinics.clinicWithDepartments(clinicId)
        var hours: [WorkingHours] = []
        for department in list {
            hours += try await departments.doctorsWithHours(departmentId: department.id ?? 0).flatMap(\.hours)
        }
        return (clinic, OpeningHours.of(hours))
    }
}

extension OpeningHours {
    /// Per weekday, from the earliest start to the latest end of `hours`, by weekday.
    public static func of(_ hours: [WorkingHours]) -> [OpeningHours] {
        var days: [Int: (Int, Int)] = [:]
        for hours in hours {
            let current = days[hours.weekday] ?? (hours.startMinute, hours.endMinute)
            days[hours.weekday] = (min(current.0, hours.startMinute), max(current.1, hours.endMinute))
        }
        return days.keys.sorted().compactMap { day in days[day].map { OpeningHours(weekday: day, startMinute: $0.0, endMinute: $0.1) } }
    }
}

extension Specialization {
    /// Each specialization's SNOMED CT clinical specialty (a descendant of 394658006, the IHE
    /// ITI Scheduling profile's value set; all but pediatrics and emergency medicine are in
    /// HL7's c80 practice-setting codes too), for health IT (FHIR). docs/FHIR.md lists them.
    public static let snomed: [String: (code: String, display: String)] = [
        "therapy": ("419192003", "Internal medicine"),
        "cardiology": ("394579002", "Cardiology"),
        "surgery": ("394609007", "General surgery"),
        "neurology": ("394591006", "Neurology"),
        "ophthalmology": ("394594003", "Ophthalmology"),
        "pediatrics": ("394537008", "Pediatric specialty"),
        "pediatric surgery": ("394539006", "Pediatric surgery"),
        "psychiatry": ("394587001", "Psychiatry"),
        "psychotherapy": ("394913002", "Psychotherapy"),
        "geriatrics": ("394811001", "Geriatric medicine"),
        "rehabilitation": ("394602003", "Rehabilitation - specialty"),
        "orthopedics": ("394801008", "Trauma and orthopedics"),
        "oncology": ("394593009", "Medical oncology"),
        "gynecology": ("394586005", "Gynecology"),
        "obstetrics": ("408470005", "Obstetrics"),
        "pulmonology": ("418112009", "Pulmonary medicine"),
        "emergency medicine": ("773568002", "Emergency medicine"),
    ]

    /// The key of a SNOMED CT specialty code; nil for a code none of ours has.
    public static func key(snomed code: String) -> String? {
        snomed.first { $0.value.code == code }?.key
    }
}
