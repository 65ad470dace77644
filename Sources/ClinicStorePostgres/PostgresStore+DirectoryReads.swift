import ClinicKit
import Foundation

// The directory's reads awaited (issue 56, `DirectoryReadsStore`): each in one read-only
// snapshot (REPEATABLE READ) awaited on a leased connection, with the statements the seam's
// reads send (PostgresTransaction+Appointments.swift, +Directory.swift).

extension PostgresStore {
    /// One statement.
    public func clinics(matching filter: ClinicFilter) async throws -> [Clinic] {
        let (sql, binds) = PostgresTransaction.clinicsQuery(filter)
        return try await awaitedRows(sql, binds).map(Clinic.init(row:))
    }

    public func clinicWithDepartments(id: Int64) async throws -> (clinic: Clinic, departments: [Department])? {
        try await readAwaited { tx in
            guard let clinic = try await tx.rows(PostgresTransaction.clinicSQL, [id]).first else { return nil }
            let departments = try await tx.rows(PostgresTransaction.departmentsOfClinicSQL, [id])
            return (try Clinic(row: try PostgresTransaction.row(clinic)),
                    try departments.map { try Department(row: try PostgresTransaction.row($0)) })
        }
    }

    /// One statement.
    public func visitType(id: Int64) async throws -> VisitType? {
        try await awaitedRows(PostgresTransaction.visitTypeSQL, [id]).first.map(VisitType.init(row:))
    }

    /// One statement: the setting.
    public func setting(_ key: String) async throws -> String? {
        try await awaitedRows(PostgresTransaction.settingSQL, [key]).first.flatMap { try $0.value("value", in: "settings") }
    }

    /// Two statements in one snapshot: the directory's version, the departments' tally.
    public func mapVersionFacts() async throws -> MapVersionFacts {
        try await readAwaited { tx in try await Self.mapVersionFacts(tx) }
    }

    /// Four statements in one snapshot: the version's two, the departments, the clinics.
    public func mapSnapshot() async throws -> (version: MapVersionFacts, clinics: [MapClinic]) {
        try await readAwaited { tx in
            let version = try await Self.mapVersionFacts(tx)
            let departments = try await tx.rows(PostgresTransaction.mapDepartmentsSQL, []).map(PostgresTransaction.row)
            let clinics = try await tx.rows(PostgresTransaction.mapClinicsSQL, []).map(PostgresTransaction.row)
            return (version, try PostgresTransaction.mapClinics(departments: departments, clinics: clinics))
        }
    }

    private static func mapVersionFacts(_ tx: AwaitedConnection) async throws -> MapVersionFacts {
        let tally = try PostgresTransaction.departmentTally(try await tx.rows(PostgresTransaction.departmentTallySQL, [])
            .map(PostgresTransaction.row))
        return MapVersionFacts(directoryVersion: try await directoryVersion(tx), departments: tally.count, lastDepartmentId: tally.lastId)
    }

    /// Two statements in one snapshot: the department, its clinic.
    public func departmentWithClinic(id: Int64) async throws -> (department: Department, clinic: Clinic)? {
        try await readAwaited { tx in
            guard let department = try await tx.rows(PostgresTransaction.departmentSQL, [id]).first
                .map({ try Department(row: try PostgresTransaction.row($0)) }),
                  let clinic = try await tx.rows(PostgresTransaction.clinicSQL, [department.clinicId]).first else { return nil }
            return (department, try Clinic(row: try PostgresTransaction.row(clinic)))
        }
    }

    /// The doctor, their department, its clinic, the doctor's hours: four statements in one snapshot.
    public func doctorPlace(id: Int64) async throws -> DoctorPlace? {
        try await readAwaited { tx in
            guard let doctor = try await tx.rows(PostgresTransaction.doctorSQL, [id]).first.map({ try Doctor(row: try PostgresTransaction.row($0)) }),
                  let department = try await tx.rows(PostgresTransaction.departmentSQL, [doctor.departmentId]).first
                    .map({ try Department(row: try PostgresTransaction.row($0)) }),
                  let clinic = try await tx.rows(PostgresTransaction.clinicSQL, [department.clinicId]).first
                    .map({ try Clinic(row: try PostgresTransaction.row($0)) }) else { return nil }
            let hours = try await tx.rows(PostgresTransaction.doctorHoursSQL, [id]).map { try WorkingHours(row: try PostgresTransaction.row($0)) }
            return DoctorPlace(doctor: doctor, department: department, clinic: clinic, hours: hours)
        }
    }

    /// The department, its active doctors, then all their hours in one statement.
    public func departmentDoctors(id: Int64) async throws -> [DoctorWithHours]? {
        try await readAwaited { tx in
            guard try await !tx.rows(PostgresTransaction.departmentSQL, [id]).isEmpty else { return nil }
            let doctors = try await tx.rows(PostgresTransaction.activeDoctorsSQL, [id]).map { try Doctor(row: try PostgresTransaction.row($0)) }
            guard !doctors.isEmpty else { return [] }
            let hours = try await tx.rows(PostgresTransaction.hoursOfDoctorsSQL, [DirectoryIdArray(doctors.compactMap(\.id))]).map { try WorkingHours(row: try PostgresTransaction.row($0)) }
            let byDoctor = Dictionary(grouping: hours, by: \.doctorId)
            return doctors.map { DoctorWithHours(doctor: $0, hours: byDoctor[$0.id ?? 0] ?? []) }
        }
    }

    public func departmentVisitTypes(id: Int64) async throws -> [VisitType]? {
        try await readAwaited { tx in
            guard try await !tx.rows(PostgresTransaction.departmentSQL, [id]).isEmpty else { return nil }
            return try await tx.rows(PostgresTransaction.visitTypesSQL(includingInactive: false), [id])
                .map { try VisitType(row: try PostgresTransaction.row($0)) }
        }
    }

    /// One read-only snapshot, its statements awaited on a leased connection.
    func readAwaited<T: Sendable>(_ body: @escaping @Sendable (AwaitedConnection) async throws -> T) async throws -> T {
        let sent = statementsSent, logger = self.logger
        return try await withConnection { connection in
            try await Self.inTransaction(connection, logger: logger, sent: sent, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                connection, logger in
                try await body(AwaitedConnection(connection: connection, logger: logger, sent: sent))
            }
        }
    }
}

// The nearest-clinic search's reads awaited (`NearestSearchStore`), with the seam's statements
// (PostgresTransaction+Directory.swift).
extension PostgresStore {
    /// The kept facts, else one hot statement awaited (kept as the blocking look-up's are).
    public func searchFacts(specialization key: String?) async throws -> NearestSearchFacts {
        if let facts = keptLookups.search(key) { return facts }
        let generation = keptLookups.generation()
        let facts = try PostgresTransaction.nearestSearchFacts(try await awaitedStatement(NearestSearchStatement([key])),
                                                               specialization: key)
        if let generation { keptLookups.keep(facts, for: key, readIn: generation) }
        return facts
    }

    /// Two statements in one snapshot: the points, the version.
    public func directoryPoints() async throws -> DirectorySnapshot<ClinicPoint> {
        try await readAwaited { tx in
            let points = try await tx.rows(PostgresTransaction.clinicPointsSQL, []).map { try PostgresTransaction.clinicPoint(PostgresTransaction.row($0)) }
            return DirectorySnapshot(rows: points, version: try await Self.directoryVersion(tx))
        }
    }

    /// Two statements in one snapshot: the clinics, the version.
    public func directoryClinics() async throws -> DirectorySnapshot<Clinic> {
        try await readAwaited { tx in
            let clinics = try await tx.rows(PostgresTransaction.allClinicsSQL, []).map { try Clinic(row: PostgresTransaction.row($0)) }
            return DirectorySnapshot(rows: clinics, version: try await Self.directoryVersion(tx))
        }
    }

    public func searchedClinics(ids: [Int64]) async throws -> [Clinic] {
        guard !ids.isEmpty else { return [] }
        return try await awaitedRows(PostgresTransaction.clinicsOfIdsSQL, [DirectoryIdArray(ids)]).map(Clinic.init(row:))
    }

    public func knownSpecializations() async throws -> [String] {
        try await awaitedRows(PostgresTransaction.specializationKeysSQL, []).map { row in
            try row.value("specialization", in: "departments", key: "specialization") as String
        }
    }

    public func specializationDepartments(_ key: String) async throws -> [Int64: Int64] {
        try PostgresTransaction.departmentsByClinic(try await awaitedRows(PostgresTransaction.departmentsByClinicSQL, [key]))
    }

    public func longestStretch(specialization key: String) async throws -> Int {
        let sent = statementsSent
        return try await withConnection { connection in
            let tx = AwaitedConnection(connection: connection, logger: self.logger, sent: sent)
            return try tx.value(Int.self, try await tx.rows(PostgresTransaction.longestStretchSQL, [key])) ?? 0
        }
    }

    private static func directoryVersion(_ tx: AwaitedConnection) async throws -> Int64 {
        try tx.value(Int64.self, try await tx.rows(PostgresTransaction.directoryVersionSQL, [])) ?? 0
    }
}

// The clinic admin's reads awaited (`ClinicAdminReadsStore`), with the seam's statements.
extension PostgresStore {
    /// Three statements in one snapshot: the departments, their active doctors, all their hours.
    public func clinicDoctors(clinicId: Int64) async throws -> [ClinicDoctor] {
        try await readAwaited { tx in
            let departments = try await tx.rows(PostgresTransaction.departmentsOfClinicSQL, [clinicId])
                .map { try Department(row: PostgresTransaction.row($0)) }
            guard !departments.isEmpty else { return [] }
            let doctors = try await tx.rows(PostgresTransaction.activeDoctorsOfDepartmentsSQL, [DirectoryIdArray(departments.compactMap(\.id))])
                .map { try Doctor(row: PostgresTransaction.row($0)) }
            guard !doctors.isEmpty else { return [] }
            let hours = try await tx.rows(PostgresTransaction.hoursOfDoctorsSQL, [DirectoryIdArray(doctors.compactMap(\.id))])
                .map { try WorkingHours(row: PostgresTransaction.row($0)) }
            let doctorsOf = Dictionary(grouping: doctors, by: \.departmentId), hoursOf = Dictionary(grouping: hours, by: \.doctorId)
            return departments.flatMap { department in
                (doctorsOf[department.id ?? 0] ?? []).map { ClinicDoctor(doctor: $0, department: department, hours: hoursOf[$0.id ?? 0] ?? []) }
            }
        }
    }

    /// Three statements in one snapshot: the doctor's clinic, hours, exceptions.
    public func doctorWeek(doctorId: Int64) async throws -> DoctorWeek? {
        try await readAwaited { tx in
            guard let clinicId = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.clinicOfDoctorSQL, [doctorId])) else { return nil }
            let hours = try await tx.rows(PostgresTransaction.doctorHoursSQL, [doctorId]).map { try WorkingHours(row: PostgresTransaction.row($0)) }
            let exceptions = try await tx.rows(PostgresTransaction.doctorExceptionsSQL, [doctorId])
                .map { try WorkingException(row: PostgresTransaction.row($0)) }
            return DoctorWeek(clinicId: clinicId, hours: hours, exceptions: exceptions)
        }
    }

    /// One statement.
    public func staffAccounts(clinicId: Int64) async throws -> [StaffMember] {
        try await awaitedRows(PostgresTransaction.staffOfClinicSQL, [clinicId]).map(PostgresTransaction.staffMember(row:))
    }

    /// Two statements in one snapshot: the department, its visit types.
    public func everyVisitType(departmentId: Int64) async throws -> (clinicId: Int64, types: [VisitType])? {
        try await readAwaited { tx in
            guard let department = try await tx.rows(PostgresTransaction.departmentSQL, [departmentId]).first
                .map({ try Department(row: PostgresTransaction.row($0)) }) else { return nil }
            let types = try await tx.rows(PostgresTransaction.visitTypesSQL(includingInactive: true), [departmentId])
                .map { try VisitType(row: PostgresTransaction.row($0)) }
            return (department.clinicId, types)
        }
    }
}
