import ClinicKit
import Foundation
import PostgresNIO

// The directory area of the seam on PostgreSQL (`DirectoryReading`, `DirectoryWriting`), as
// SQLiteTransaction+Directory.swift does it. Text is ordered and compared as SQLite's BINARY
// collation does (`COLLATE "C"`: bytewise, whatever the database's collation). The directory's
// version is the trigger's on `clinics` (Migrations/postgres): no write here bumps it.

extension PostgresTransaction {
    func clinics(matching filter: ClinicFilter) throws -> [Clinic] {
        let (sql, binds) = Self.clinicsQuery(filter)
        return try rows(sql, binds).map(Clinic.init(row:))
    }

    /// The statement of `clinics(matching:)` and its binds.
    static func clinicsQuery(_ filter: ClinicFilter) -> (sql: String, binds: [any PostgresBindable]) {
        var conditions: [String] = []
        var binds: [any PostgresBindable] = []
        func placeholder(_ value: any PostgresBindable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        if let city = filter.city { conditions.append("city_key = " + placeholder(Clinic.key(forCity: city))) }
        if filter.pediatricOnly { conditions.append("is_pediatric") }
        if filter.hospitalOnly { conditions.append("is_hospital") }
        if let after = filter.after {
            let key = placeholder(after.key), id = placeholder(after.id)
            conditions.append("(name COLLATE \"C\" > \(key) OR (name = \(key) AND id > \(id)))")
        }
        var sql = "SELECT * FROM clinics"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY name COLLATE \"C\", id"
        // SQLite takes a negative limit for none; PostgreSQL refuses one.
        if let limit = filter.limit, limit >= 0 { sql += " LIMIT " + placeholder(Int64(limit)) }
        return (sql, binds)
    }

    func allClinics() throws -> [Clinic] {
        try rows(Self.allClinicsSQL).map(Clinic.init(row:))
    }

    func clinics(ids: [Int64]) throws -> [Clinic] {
        guard !ids.isEmpty else { return [] }
        return try rows(Self.clinicsOfIdsSQL, [DirectoryIdArray(ids)]).map(Clinic.init(row:))
    }

    func clinicCount() throws -> Int {
        Int(try value(Int64.self, "SELECT count(*) FROM clinics") ?? 0)
    }

    func clinic(externalId: String) throws -> Clinic? {
        try row("SELECT * FROM clinics WHERE external_id = $1", [externalId]).map(Clinic.init(row:))
    }

    func clinicPoints() throws -> [ClinicPoint] {
        try rows(Self.clinicPointsSQL).map(Self.clinicPoint)
    }

    static let clinicPointsSQL = "SELECT id, lat, lon, is_pediatric, is_hospital FROM clinics ORDER BY id"
    static let allClinicsSQL = "SELECT * FROM clinics ORDER BY id"
    static let clinicsOfIdsSQL = "SELECT * FROM clinics WHERE id = ANY($1::bigint[])"
    static let directoryVersionSQL = "SELECT version FROM directory_version WHERE id = 1"
    static let specializationKeysSQL = "SELECT specialization FROM departments GROUP BY specialization ORDER BY specialization COLLATE \"C\""

    static func clinicPoint(_ row: StoredRowValues) throws -> ClinicPoint {
        // The columns are double precision NOT NULL: always numbers (SQLite may hold text there).
        ClinicPoint(id: try row.value("id", in: "clinics"), latitude: try row.value("lat", in: "clinics"),
                    longitude: try row.value("lon", in: "clinics"),
                    isPediatric: try row.value("is_pediatric", in: "clinics"),
                    isHospital: try row.value("is_hospital", in: "clinics"))
    }

    func clinicZones() throws -> [ClinicZone] {
        try rows("SELECT id, lat, lon, time_zone FROM clinics ORDER BY id").map { row in
            ClinicZone(id: try row.value("id", in: "clinics"), latitude: try row.value("lat", in: "clinics"),
                       longitude: try row.value("lon", in: "clinics"), timeZone: try row.value("time_zone", in: "clinics"))
        }
    }

    func clinicIdsAndZones() throws -> [String: (id: Int64, timeZone: String)] {
        try Dictionary(
            rows("SELECT external_id, id, time_zone FROM clinics").map { row -> (String, (id: Int64, timeZone: String)) in
                (try row.value("external_id", in: "clinics"),
                 (try row.value("id", in: "clinics"), try row.value("time_zone", in: "clinics")))
            }, uniquingKeysWith: { first, _ in first })
    }

    func clinicsWithoutDepartments() throws -> [Clinic] {
        try rows("""
            SELECT * FROM clinics
            WHERE NOT EXISTS (SELECT 1 FROM departments WHERE departments.clinic_id = clinics.id)
            ORDER BY id
            """).map(Clinic.init(row:))
    }

    func directoryVersion() throws -> Int64 {
        try value(Int64.self, Self.directoryVersionSQL) ?? 0
    }

    /// The directory's version and a specialization's clinics in one statement (`PostgresStore.nearestSearchFacts`).
    func nearestSearchFacts(specialization key: String?) throws -> NearestSearchFacts {
        try Self.nearestSearchFacts(try row(NearestSearchStatement([key])), specialization: key)
    }

    /// The facts of `NearestSearchStatement`'s row.
    static func nearestSearchFacts(_ row: StoredRowValues?, specialization key: String?) throws -> NearestSearchFacts {
        let version = try row.flatMap { try $0.value("version", in: "directory_version") as Int64? } ?? 0
        guard key != nil else { return NearestSearchFacts(directoryVersion: version, clinicIds: nil) }
        let text: String = try row?.value("clinic_ids", in: "departments") ?? ""
        var ids = Set<Int64>()
        for part in text.split(separator: ",") {
            guard let id = Int64(part) else { throw ClinicError(.storage, .storedValueUnreadable, "departments.clinic_id", String(part)) }
            ids.insert(id)
        }
        return NearestSearchFacts(directoryVersion: version, clinicIds: ids)
    }

    func departmentTally() throws -> (count: Int64, lastId: Int64) {
        try Self.departmentTally(try rows(Self.departmentTallySQL))
    }

    static let departmentTallySQL = "SELECT count(*) AS count, coalesce(max(id), 0) AS last_id FROM departments"

    /// The departments' count and last id, from `departmentTallySQL`'s row.
    static func departmentTally(_ rows: [StoredRowValues]) throws -> (count: Int64, lastId: Int64) {
        guard let tally = rows.first else { return (0, 0) }
        return (try tally.decode(Int64?.self, forColumn: "count") ?? 0, try tally.decode(Int64?.self, forColumn: "last_id") ?? 0)
    }

    func mapClinics() throws -> [MapClinic] {
        try Self.mapClinics(departments: try rows(Self.mapDepartmentsSQL), clinics: try rows(Self.mapClinicsSQL))
    }

    static let mapDepartmentsSQL = "SELECT clinic_id, specialization FROM departments ORDER BY clinic_id, specialization COLLATE \"C\""
    static let mapClinicsSQL = "SELECT id, name, lat, lon, is_pediatric, is_hospital FROM clinics ORDER BY id"

    /// The map's markers from `mapDepartmentsSQL`'s and `mapClinicsSQL`'s rows.
    static func mapClinics(departments: [StoredRowValues], clinics: [StoredRowValues]) throws -> [MapClinic] {
        var specializations: [Int64: [String]] = [:]
        for row in departments {
            let clinicId: Int64 = try row.value("clinic_id", in: "departments", key: "clinic_id")
            specializations[clinicId, default: []].append(try row.value("specialization", in: "departments", key: "clinic_id"))
        }
        return try clinics.map { row in
            let id: Int64 = try row.value("id", in: "clinics")
            return MapClinic(id: id, name: try row.value("name", in: "clinics"), lat: try row.value("lat", in: "clinics"),
                             lon: try row.value("lon", in: "clinics"),
                             isPediatric: try row.value("is_pediatric", in: "clinics"),
                             isHospital: try row.value("is_hospital", in: "clinics"),
                             specializations: specializations[id] ?? [])
        }
    }

    func departments(ofClinic clinicId: Int64) throws -> [Department] {
        try rows(Self.departmentsOfClinicSQL, [clinicId]).map(Department.init(row:))
    }

    /// A clinic's (`$1`) departments by specialization (bytewise, as SQLite orders text), then id.
    static let departmentsOfClinicSQL = "SELECT * FROM departments WHERE clinic_id = $1 ORDER BY specialization COLLATE \"C\", id"

    func departmentExists(clinicId: Int64, specialization key: String) throws -> Bool {
        try value(Bool.self, "SELECT EXISTS (SELECT 1 FROM departments WHERE clinic_id = $1 AND specialization = $2)",
                  [clinicId, key]) ?? false
    }

    func doctor(id: Int64) throws -> Doctor? {
        try row(Self.doctorSQL, [id]).map(Doctor.init(row:))
    }

    func clinicId(ofDoctor doctorId: Int64) throws -> Int64? {
        try value(Int64.self, Self.clinicOfDoctorSQL, [doctorId])
    }

    static let clinicOfDoctorSQL = """
        SELECT departments.clinic_id FROM doctors JOIN departments ON departments.id = doctors.department_id
        WHERE doctors.id = $1
        """

    func workingExceptions(ofDoctor doctorId: Int64) throws -> [WorkingException] {
        // A day off (NULL start) first, as SQLite orders NULLs.
        try rows(Self.doctorExceptionsSQL, [doctorId]).map(WorkingException.init(row:))
    }

    static let doctorExceptionsSQL = "SELECT * FROM working_exceptions WHERE doctor_id = $1 ORDER BY day, start_minute NULLS FIRST"

    func workingException(id: Int64) throws -> WorkingException? {
        try row("SELECT * FROM working_exceptions WHERE id = $1", [id]).map(WorkingException.init(row:))
    }

    func appointmentsAfterZoneChanges(from now: Date) throws -> [ZoneChangedAppointment] {
        try rows("""
            SELECT a.id, a.clinic_id, c.name, a.starts_at, z.old_zone, z.new_zone
            FROM appointments a
            JOIN clinics c ON c.id = a.clinic_id
            JOIN clinic_zone_changes z ON z.id = (SELECT max(id) FROM clinic_zone_changes WHERE clinic_id = a.clinic_id)
            WHERE a.\(AppointmentStatus.activeCondition) AND a.starts_at >= $1 AND a.updated_at < z.changed_at
            ORDER BY a.starts_at, a.id
            """, [now]).map { row in
            ZoneChangedAppointment(appointmentId: try row.decode(Int64.self, forColumn: "id"),
                                   clinicId: try row.decode(Int64.self, forColumn: "clinic_id"),
                                   clinicName: try row.decode(String.self, forColumn: "name"),
                                   start: try row.instant("starts_at", in: "appointments"),
                                   oldZone: try row.decode(String.self, forColumn: "old_zone"),
                                   newZone: try row.decode(String.self, forColumn: "new_zone"))
        }
    }

    func storedUpcomingPatientAppointments(atClinic clinicId: Int64, startingFrom start: Date) throws -> [Appointment] {
        // `id` breaks ties of equal starts (SQLite returns them in its index's, i.e. id, order).
        try rows("""
            SELECT * FROM appointments WHERE clinic_id = $1 AND \(AppointmentStatus.activeCondition) AND starts_at >= $2
            AND client_id IS NOT NULL ORDER BY starts_at, id
            """, [clinicId, start]).map(Appointment.init(row:))
    }

    // MARK: Writes
    // The directory's version moves by itself: the statement trigger on `clinics`.

    func insertClinic(_ clinic: Clinic) throws -> Clinic {
        // The id is the identity's (a new clinic; `GENERATED ALWAYS` takes none from a caller).
        guard let id = try value(Int64.self, """
            INSERT INTO clinics (external_id, name, address, city, city_key, state, zip, description, category, lat, lon,
                                 is_pediatric, is_hospital, time_zone, phone, website)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id
            """, clinicBinds(clinic)) else {
            throw ClinicError(.internalError, .storageFailure, "a clinic stored without an id")
        }
        var clinic = clinic
        clinic.id = id
        return clinic
    }

    func updateClinic(_ clinic: Clinic) throws {
        // As GRDB's `update`: no row of that id is a failure, not a silent no-op.
        guard let id = clinic.id, try execute("""
            UPDATE clinics SET external_id = $1, name = $2, address = $3, city = $4, city_key = $5, state = $6, zip = $7,
                description = $8, category = $9, lat = $10, lon = $11, is_pediatric = $12, is_hospital = $13,
                time_zone = $14, phone = $15, website = $16
            WHERE id = $17
            """, clinicBinds(clinic) + [id]) > 0 else {
            throw ClinicError(.storage, .storageFailure, "no clinic \(clinic.id.map { String($0) } ?? "without an id") to update")
        }
    }

    private func clinicBinds(_ clinic: Clinic) -> [any PostgresBindable] {
        [clinic.externalId, clinic.name, clinic.address, clinic.city, clinic.cityKey, clinic.state, clinic.zip,
         clinic.description, clinic.category, clinic.lat, clinic.lon, clinic.isPediatric, clinic.isHospital,
         clinic.timeZone, clinic.phone, clinic.website]
    }

    func setTimeZone(ofClinic clinicId: Int64, to zone: String) throws {
        try execute("UPDATE clinics SET time_zone = $1 WHERE id = $2", [zone, clinicId])
    }

    func recordZoneChange(clinicId: Int64, from old: String, to new: String, at now: Date) throws {
        try execute("INSERT INTO clinic_zone_changes (clinic_id, old_zone, new_zone, changed_at) VALUES ($1, $2, $3, $4)",
                    [clinicId, old, new, now])
    }

    func insertDepartment(_ department: Department) throws -> Department {
        guard let id = try value(Int64.self, "INSERT INTO departments (clinic_id, specialization, is_demo) VALUES ($1, $2, $3) RETURNING id",
                                 [department.clinicId, department.specialization, department.isDemo]) else {
            throw ClinicError(.internalError, .storageFailure, "a department stored without an id")
        }
        var department = department
        department.id = id
        return department
    }

    func insertDoctor(_ doctor: Doctor) throws -> Doctor {
        // As SQLite's: a new doctor is active (the column's default), whatever `isActive` says.
        guard let id = try value(Int64.self, Self.insertDoctorSQL, [doctor.departmentId, doctor.name, doctor.isDemo]) else {
            throw ClinicError(.internalError, .storageFailure, "a doctor stored without an id")
        }
        var doctor = doctor
        doctor.id = id
        return doctor
    }

    /// A doctor of department `$1`, named `$2`, demo or not `$3`; their id.
    static let insertDoctorSQL = "INSERT INTO doctors (department_id, name, is_demo) VALUES ($1, $2, $3) RETURNING id"

    func insertWorkingHours(_ hours: [WorkingHours], ofDoctor doctorId: Int64) throws {
        try insertWorkingHourRows(ofDoctor: doctorId, hours.map { ($0.weekday, $0.startMinute, $0.endMinute, $0.slotMinutes) })
    }

    /// Weekly hours of a doctor in one statement (an import adds some 300,000): the columns as
    /// arrays, unnested in their order, so that ids follow it as SQLite's row-by-row inserts do.
    func insertWorkingHourRows(ofDoctor doctorId: Int64,
                               _ hours: [(weekday: Int, startMinute: Int, endMinute: Int, slotMinutes: Int)]) throws {
        guard !hours.isEmpty else { return }
        try execute(Self.insertWorkingHoursSQL, Self.workingHoursBinds(ofDoctor: doctorId, hours))
    }

    /// Doctor `$1`'s working hours: weekdays `$2`, starts `$3`, ends `$4` and slot lengths `$5`, in their order.
    static let insertWorkingHoursSQL = """
        INSERT INTO working_hours (doctor_id, weekday, start_minute, end_minute, slot_minutes)
        SELECT $1, h.weekday, h.start_minute, h.end_minute, h.slot_minutes
        FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])
            WITH ORDINALITY AS h (weekday, start_minute, end_minute, slot_minutes, position)
        ORDER BY h.position
        """

    static func workingHoursBinds(ofDoctor doctorId: Int64,
                                  _ hours: [(weekday: Int, startMinute: Int, endMinute: Int, slotMinutes: Int)]) -> [any PostgresBindable] {
        [doctorId, DirectoryIdArray(hours.map { Int64($0.weekday) }), DirectoryIdArray(hours.map { Int64($0.startMinute) }),
         DirectoryIdArray(hours.map { Int64($0.endMinute) }), DirectoryIdArray(hours.map { Int64($0.slotMinutes) })]
    }

    // The many rows of an import or a first fill, one statement per kind: each column as an
    // array, unnested in its order. An identity hands out its values in the order rows are
    // inserted, so the ids, sorted, are those of the rows in the order given (other writers'
    // rows may fall between them, never swap them), as SQLite's row-by-row inserts give them.
    // A handful of statements instead of some 86,000 make PostgreSQL's first fill of the 7,146
    // clinics take 12 s instead of 117 s (a debug build on two cores).

    func insertClinics(_ clinics: [Clinic]) throws -> [Int64] {
        try insertUnnested(into: "clinics", count: clinics.count, [
            ("external_id", "text", ColumnArray(clinics.map(\.externalId))), ("name", "text", ColumnArray(clinics.map(\.name))),
            ("address", "text", ColumnArray(clinics.map(\.address))), ("city", "text", ColumnArray(clinics.map(\.city))),
            ("city_key", "text", ColumnArray(clinics.map(\.cityKey))), ("state", "text", ColumnArray(clinics.map(\.state))),
            ("zip", "text", ColumnArray(clinics.map(\.zip))), ("description", "text", ColumnArray(clinics.map(\.description))),
            ("category", "text", ColumnArray(clinics.map(\.category))), ("lat", "float8", ColumnArray(clinics.map(\.lat))),
            ("lon", "float8", ColumnArray(clinics.map(\.lon))), ("is_pediatric", "boolean", ColumnArray(clinics.map(\.isPediatric))),
            ("is_hospital", "boolean", ColumnArray(clinics.map(\.isHospital))),
            ("time_zone", "text", ColumnArray(clinics.map(\.timeZone))), ("phone", "text", ColumnArray(clinics.map(\.phone))),
            ("website", "text", ColumnArray(clinics.map(\.website))),
        ])
    }

    func insertDepartments(_ departments: [Department]) throws -> [Int64] {
        try insertUnnested(into: "departments", count: departments.count, [
            ("clinic_id", "bigint", ColumnArray(departments.map(\.clinicId))),
            ("specialization", "text", ColumnArray(departments.map(\.specialization))),
            ("is_demo", "boolean", ColumnArray(departments.map(\.isDemo))),
        ])
    }

    func insertDoctors(_ doctors: [Doctor]) throws -> [Int64] {
        // As `insertDoctor`: a new doctor is active (the column's default).
        try insertUnnested(into: "doctors", count: doctors.count, [
            ("department_id", "bigint", ColumnArray(doctors.map(\.departmentId))), ("name", "text", ColumnArray(doctors.map(\.name))),
            ("is_demo", "boolean", ColumnArray(doctors.map(\.isDemo))),
        ])
    }

    /// `count` rows into `table`, a column from each array in the order given; their ids,
    /// ascending (see above). The table's and columns' names are this file's own.
    private func insertUnnested(into table: String, count: Int,
                                _ columns: [(name: String, type: String, values: any PostgresBindable)]) throws -> [Int64] {
        guard count > 0 else { return [] }
        let names = columns.map(\.name).joined(separator: ", ")
        let arrays = columns.indices.map { "$\($0 + 1)::\(columns[$0].type)[]" }.joined(separator: ", ")
        let ids = try values(Int64.self, """
            INSERT INTO \(table) (\(names))
            SELECT \(names) FROM unnest(\(arrays)) WITH ORDINALITY AS given (\(names), position)
            ORDER BY position RETURNING id
            """, columns.map(\.values)).sorted()
        guard ids.count == count else {
            throw ClinicError(.internalError, .storageFailure, "\(count) rows inserted, \(ids.count) ids returned")
        }
        return ids
    }

    func insertWorkingHours(_ hours: [WorkingHours], ofDoctors doctorIds: [Int64]) throws {
        // Doctors times hours, made by PostgreSQL: a first fill's 346,000 rows are 35,000 ids
        // and ten intervals to send.
        guard !hours.isEmpty, !doctorIds.isEmpty else { return }
        try execute("""
            INSERT INTO working_hours (doctor_id, weekday, start_minute, end_minute, slot_minutes)
            SELECT d.id, h.weekday, h.start_minute, h.end_minute, h.slot_minutes
            FROM unnest($1::bigint[]) WITH ORDINALITY AS d (id, position)
            CROSS JOIN unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])
                WITH ORDINALITY AS h (weekday, start_minute, end_minute, slot_minutes, position)
            ORDER BY d.position, h.position
            """, [ColumnArray(doctorIds), ColumnArray(hours.map { Int64($0.weekday) }),
                  ColumnArray(hours.map { Int64($0.startMinute) }), ColumnArray(hours.map { Int64($0.endMinute) }),
                  ColumnArray(hours.map { Int64($0.slotMinutes) })])
    }

    func insertWorkingException(_ exception: WorkingException) throws -> WorkingException {
        try lockDoctor(exception.doctorId)
        guard let id = try value(Int64.self, Self.insertExceptionSQL, [exception.doctorId, exception.day, exception.startMinute, exception.endMinute, exception.slotMinutes]) else {
            throw ClinicError(.internalError, .storageFailure, "a working exception stored without an id")
        }
        var exception = exception
        exception.id = id
        return exception
    }

    /// A working exception: doctor `$1`, day `$2`, `$3`…`$4` with slots of `$5` (NULLs: a day
    /// off); returns its id.
    static let insertExceptionSQL = """
        INSERT INTO working_exceptions (doctor_id, day, start_minute, end_minute, slot_minutes)
        VALUES ($1, $2::date, $3, $4, $5) RETURNING id
        """

    func deleteWorkingException(id: Int64) throws {
        try execute("SELECT 1 FROM doctors WHERE id = (SELECT doctor_id FROM working_exceptions WHERE id = $1) FOR NO KEY UPDATE", [id])
        try execute("DELETE FROM working_exceptions WHERE id = $1", [id])
    }

    /// Before a change of a doctor's hours or exceptions: waits for the bookings in flight with
    /// this doctor (their `FOR SHARE`, `activeDoctors`) and for another change of the same
    /// doctor, so that what follows (the replacement, `settle`'s look at the appointments) sees
    /// them committed: two servers changing one doctor's hours at once leave one set, and a
    /// booking never commits into hours being removed. `NO KEY UPDATE`: new appointments'
    /// foreign-key checks are not held up.
    func lockDoctor(_ doctorId: Int64) throws {
        try execute("SELECT 1 FROM doctors WHERE id = $1 FOR NO KEY UPDATE", [doctorId])
    }

    func setSettingIfAbsent(_ key: String, to value: String) throws {
        try execute("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [key, value])
    }

    /// An advisory lock for the transaction; the wait may outlast the session's `lock_timeout`
    /// (a first fill of the default directory takes a minute), so this transaction waits up to
    /// ten minutes.
    func lockDirectoryForImport() throws {
        try execute("SET LOCAL lock_timeout = '10min'")
        try execute("SELECT pg_advisory_xact_lock($1)", [Self.directoryImportLock])
    }

    /// The advisory lock key of directory imports ("clinic directory" as a number).
    static let directoryImportLock: Int64 = 0x636c_6469_7200
}


/// Integers bound as one `bigint[]` (write `$n::bigint[]`).
/// A column's values as one array parameter (`unnest($n::type[])`).
struct ColumnArray<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable & Sendable>: PostgresBindable {
    let values: [Element]
    init(_ values: [Element]) { self.values = values }
    func bind(into bindings: inout PostgresBindings) { bindings.append(values) }
    static var dataType: PostgresDataType { Element.psqlArrayType }
}

struct DirectoryIdArray: PostgresBindable {
    let values: [Int64]
    init(_ values: [Int64]) { self.values = values }
    func bind(into bindings: inout PostgresBindings) { bindings.append(values) }
    static var dataType: PostgresDataType { .int8Array }
}

