import ClinicKit
import CSQLite
import Foundation
import GRDB

// The directory area of the seam on SQLite. The inserts an import repeats for every clinic
// (the demo departments, doctors and hours: some 300,000 rows for the default directory) run
// cached statements, prepared once per connection.

extension SQLiteTransaction {
    func clinics(matching filter: ClinicFilter) throws -> [Clinic] {
        var request = Clinic.all()
        if let city = filter.city { request = request.filter(Column("city_key") == Clinic.key(forCity: city)) }
        if filter.pediatricOnly { request = request.filter(Column("is_pediatric") == true) }
        if filter.hospitalOnly { request = request.filter(Column("is_hospital") == true) }
        if let after = filter.after {
            request = request.filter(Column("name") > after.key || (Column("name") == after.key && Column("id") > after.id))
        }
        request = request.order(Column("name"), Column("id"))
        if let limit = filter.limit { request = request.limit(limit) }
        return try request.fetchAll(db)
    }

    func allClinics() throws -> [Clinic] {
        try Clinic.fetchAll(db, sql: "SELECT * FROM clinics ORDER BY id")
    }

    func clinics(ids: [Int64]) throws -> [Clinic] {
        try Clinic.fetchAll(db, keys: ids)
    }

    func clinicCount() throws -> Int {
        try Clinic.fetchCount(db)
    }

    func clinic(externalId: String) throws -> Clinic? {
        try Clinic.fetchOne(db.cachedStatement(sql: "SELECT * FROM clinics WHERE external_id = ?"), arguments: [externalId])
    }

    func clinicPoints() throws -> [ClinicPoint] {
        var points: [ClinicPoint] = []
        // Read from SQLite's columns as they are stepped: a one-shot `clinic clinics nearest`
        // reads all 7,146 rows, and through `Row` values that took 5 ms (issue 55).
        let statement = try db.makeStatement(sql: "SELECT id, lat, lon, is_pediatric, is_hospital FROM clinics ORDER BY id")
        let raw = statement.sqliteStatement
        points.reserveCapacity(8192)
        let rows = try Row.fetchCursor(statement)
        while let row = try rows.next() {
            // A position edited into text would stop every search if it threw, and read as 0°
            // through a plain Double decode: only numbers are positions, the rest is left out.
            guard let latitude = Self.number(raw, 1), let longitude = Self.number(raw, 2) else { continue }
            // Integers as stored; anything else is read (and refused) as every other row is.
            func integer(_ index: Int32, _ column: String) throws -> Int64 {
                sqlite3_column_type(raw, index) == SQLITE_INTEGER ? sqlite3_column_int64(raw, index)
                    : try row.value(atIndex: Int(index), column, in: "clinics")
            }
            func flag(_ index: Int32, _ column: String) throws -> Bool {
                let value = sqlite3_column_type(raw, index) == SQLITE_INTEGER ? sqlite3_column_int64(raw, index) : -1
                return value == 0 || value == 1 ? value == 1 : try row.value(atIndex: Int(index), column, in: "clinics")
            }
            points.append(ClinicPoint(id: try integer(0, "id"), latitude: latitude, longitude: longitude,
                                      isPediatric: try flag(3, "is_pediatric"), isHospital: try flag(4, "is_hospital")))
        }
        return points
    }

    func clinicZones() throws -> [ClinicZone] {
        try Row.fetchAll(db, sql: "SELECT id, lat, lon, time_zone FROM clinics ORDER BY id").map { row in
            ClinicZone(id: try row.value("id", in: "clinics"), latitude: try row.value("lat", in: "clinics"),
                       longitude: try row.value("lon", in: "clinics"), timeZone: try row.value("time_zone", in: "clinics"))
        }
    }

    func clinicIdsAndZones() throws -> [String: (id: Int64, timeZone: String)] {
        try Dictionary(
            Row.fetchAll(db, sql: "SELECT external_id, id, time_zone FROM clinics").map { row -> (String, (id: Int64, timeZone: String)) in
                (try row.value("external_id", in: "clinics"),
                 (try row.value("id", in: "clinics"), try row.value("time_zone", in: "clinics")))
            }, uniquingKeysWith: { first, _ in first })
    }

    func clinicsWithoutDepartments() throws -> [Clinic] {
        try Clinic.fetchAll(db, sql: """
            SELECT * FROM clinics
            WHERE NOT EXISTS (SELECT 1 FROM departments WHERE departments.clinic_id = clinics.id)
            ORDER BY id
            """)
    }

    func directoryVersion() throws -> Int64 {
        do {
            return try Int64.fetchOne(db.cachedStatement(sql: "SELECT version FROM directory_version WHERE id = 1")) ?? 0
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            // Before migration 8 there is no such table; any other error is the error.
            if try db.tableExists("directory_version") { throw error }
            return 0
        }
    }

    func departmentTally() throws -> (count: Int64, lastId: Int64) {
        let row = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(max(id), 0) FROM departments")
        return (row?[0] as Int64? ?? 0, row?[1] as Int64? ?? 0)
    }

    func mapClinics() throws -> [MapClinic] {
        var specializations: [Int64: [String]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT clinic_id, specialization FROM departments ORDER BY clinic_id, specialization") {
            let clinicId: Int64 = try row.value("clinic_id", in: "departments", key: "clinic_id")
            specializations[clinicId, default: []].append(try row.value("specialization", in: "departments", key: "clinic_id"))
        }
        return try Row.fetchAll(db, sql: "SELECT id, name, lat, lon, is_pediatric, is_hospital FROM clinics ORDER BY id").map { row in
            let id: Int64 = try row.value("id", in: "clinics")
            return MapClinic(id: id, name: try row.value("name", in: "clinics"), lat: try row.value("lat", in: "clinics"),
                             lon: try row.value("lon", in: "clinics"), isPediatric: try row.value("is_pediatric", in: "clinics"),
                             isHospital: try row.value("is_hospital", in: "clinics"), specializations: specializations[id] ?? [])
        }
    }

    func departments(ofClinic clinicId: Int64) throws -> [Department] {
        try Department.fetchAll(db.cachedStatement(sql: "SELECT * FROM departments WHERE clinic_id = ? ORDER BY specialization, id"),
                                arguments: [clinicId])
    }

    func departmentExists(clinicId: Int64, specialization key: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM departments WHERE clinic_id = ? AND specialization = ?)
            """), arguments: [clinicId, key]) ?? false
    }

    func doctor(id: Int64) throws -> Doctor? {
        try Doctor.fetchOne(db.cachedStatement(sql: "SELECT * FROM doctors WHERE id = ?"), arguments: [id])
    }

    func clinicId(ofDoctor doctorId: Int64) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT departments.clinic_id FROM doctors JOIN departments ON departments.id = doctors.department_id
            WHERE doctors.id = ?
            """), arguments: [doctorId])
    }

    func workingExceptions(ofDoctor doctorId: Int64) throws -> [WorkingException] {
        try WorkingException.fetchAll(db, sql: "SELECT * FROM working_exceptions WHERE doctor_id = ? ORDER BY day, start_minute",
                                      arguments: [doctorId])
    }

    func workingException(id: Int64) throws -> WorkingException? {
        try WorkingException.fetchOne(db, sql: "SELECT * FROM working_exceptions WHERE id = ?", arguments: [id])
    }

    func appointmentsAfterZoneChanges(from now: Date) throws -> [ZoneChangedAppointment] {
        guard try db.tableExists("clinic_zone_changes") else { return [] }
        return try Row.fetchAll(db, sql: """
            SELECT a.id, a.clinic_id, c.name, a.starts_at, z.old_zone, z.new_zone
            FROM appointments a
            JOIN clinics c ON c.id = a.clinic_id
            JOIN clinic_zone_changes z ON z.id = (SELECT max(id) FROM clinic_zone_changes WHERE clinic_id = a.clinic_id)
            WHERE a.\(AppointmentStatus.activeCondition) AND a.starts_at >= ? AND a.updated_at < z.changed_at
            ORDER BY a.starts_at, a.id
            """, arguments: [now.seconds]).map { row in
            ZoneChangedAppointment(appointmentId: try row.decode(Int64.self, forColumn: "id"),
                                   clinicId: try row.decode(Int64.self, forColumn: "clinic_id"),
                                   clinicName: try row.decode(String.self, forColumn: "name"),
                                   start: Date(seconds: try row.decode(Int64.self, forColumn: "starts_at")),
                                   oldZone: try row.decode(String.self, forColumn: "old_zone"),
                                   newZone: try row.decode(String.self, forColumn: "new_zone"))
        }
    }

    func storedUpcomingPatientAppointments(atClinic clinicId: Int64, startingFrom start: Date) throws -> [Appointment] {
        try Appointment.fetchAll(db, sql: """
            SELECT * FROM appointments WHERE clinic_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at >= ?
            AND client_id IS NOT NULL ORDER BY starts_at
            """, arguments: [clinicId, start.seconds])
    }

    // MARK: Writes
    // The directory's version moves by itself: the triggers on `clinics` (migrations 8 and 9).

    func insertClinic(_ clinic: Clinic) throws -> Clinic {
        var clinic = clinic
        try clinic.insert(db)
        return clinic
    }

    func updateClinic(_ clinic: Clinic) throws {
        try clinic.update(db)
    }

    func setTimeZone(ofClinic clinicId: Int64, to zone: String) throws {
        try db.execute(sql: "UPDATE clinics SET time_zone = ? WHERE id = ?", arguments: [zone, clinicId])
    }

    func recordZoneChange(clinicId: Int64, from old: String, to new: String, at now: Date) throws {
        try db.execute(sql: "INSERT INTO clinic_zone_changes (clinic_id, old_zone, new_zone, changed_at) VALUES (?, ?, ?, ?)",
                       arguments: [clinicId, old, new, now.seconds])
    }

    func insertDepartment(_ department: Department) throws -> Department {
        try db.cachedStatement(sql: "INSERT INTO departments (clinic_id, specialization, is_demo) VALUES (?, ?, ?)")
            .execute(arguments: [department.clinicId, department.specialization, department.isDemo])
        var department = department
        department.id = db.lastInsertedRowID
        return department
    }

    func insertDoctor(_ doctor: Doctor) throws -> Doctor {
        try db.cachedStatement(sql: "INSERT INTO doctors (department_id, name, is_demo) VALUES (?, ?, ?)")
            .execute(arguments: [doctor.departmentId, doctor.name, doctor.isDemo])
        var doctor = doctor
        doctor.id = db.lastInsertedRowID
        return doctor
    }

    func insertWorkingHours(_ hours: [WorkingHours], ofDoctor doctorId: Int64) throws {
        let insert = try db.cachedStatement(sql: """
            INSERT INTO working_hours (doctor_id, weekday, start_minute, end_minute, slot_minutes) VALUES (?, ?, ?, ?, ?)
            """)
        for interval in hours {
            try insert.execute(arguments: [doctorId, interval.weekday, interval.startMinute, interval.endMinute, interval.slotMinutes])
        }
    }

    func insertWorkingException(_ exception: WorkingException) throws -> WorkingException {
        var exception = exception
        try exception.insert(db)
        return exception
    }

    func deleteWorkingException(id: Int64) throws {
        _ = try WorkingException.deleteOne(db, key: id)
    }

    func setSettingIfAbsent(_ key: String, to value: String) throws {
        try db.execute(sql: "INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)", arguments: [key, value])
    }

    func lockDirectoryForImport() throws {} // the writer lock is held already
}
