import ClinicKit
@testable import ClinicStoreSQLite
import ClinicTestPostgres
import Foundation
import GRDB
import Testing
@testable import ClinicStorePostgres

/// The directory and staff areas of the storage seam on PostgreSQL
/// (PostgresTransaction+Directory.swift, +Staff.swift): what SQLite's do, row for row.
@Suite struct PostgresDirectorySeamTests {
    // MARK: Fixtures

    static func clinic(_ externalId: String, name: String, city: String = "Reno", pediatric: Bool = false,
                       hospital: Bool = false, lat: Double = 39.5296, lon: Double = -119.8138,
                       zone: String = "America/Los_Angeles") throws -> Clinic {
        try Clinic(row: Row([
            "id": nil, "external_id": externalId, "name": name, "address": "1 Main St, \(name)", "city": city,
            "city_key": Clinic.key(forCity: city), "state": "NV", "zip": "89501", "description": "About \(name)",
            "category": "GENERAL ACUTE CARE", "lat": lat, "lon": lon, "is_pediatric": pediatric, "is_hospital": hospital,
            "time_zone": zone, "phone": "+1 775 555 0100", "website": "https://example.org/\(externalId)",
        ]))
    }

    static func department(clinic: Int64, _ specialization: String, demo: Bool = false) throws -> Department {
        try Department(row: Row(["id": nil, "clinic_id": clinic, "specialization": specialization, "is_demo": demo]))
    }

    static func doctor(department: Int64, _ name: String, demo: Bool = false) throws -> Doctor {
        try Doctor(row: Row(["id": nil, "department_id": department, "name": name, "is_demo": demo, "is_active": true]))
    }

    static func hours(_ weekday: Int, _ start: Int, _ end: Int, _ slot: Int) throws -> WorkingHours {
        try WorkingHours(row: Row(["id": 999, "doctor_id": 999, "weekday": weekday, "start_minute": start,
                                   "end_minute": end, "slot_minutes": slot]))
    }

    static func exception(doctor: Int64, _ day: String, _ start: Int?, _ end: Int?, _ slot: Int?) throws -> WorkingException {
        try WorkingException(row: Row(["id": nil, "doctor_id": doctor, "day": day, "start_minute": start,
                                       "end_minute": end, "slot_minutes": slot]))
    }

    static func storedHours(_ tx: PostgresTransaction, doctor: Int64) throws -> [WorkingHours] {
        try tx.rows("SELECT * FROM working_hours WHERE doctor_id = $1 ORDER BY id", [doctor]).map(WorkingHours.init(row:))
    }

    static func client(_ tx: PostgresTransaction, _ login: String, language: String = "en") throws -> Int64 {
        guard let id = try tx.value(Int64.self, """
            INSERT INTO clients (login, login_key, password_hash, name, surname, street, house, city, preferred_language, created_at)
            VALUES ($1, $1, 'x', 'N', 'S', 'Main', '1', 'Reno', $2, now()) RETURNING id
            """, [login, language]) else { throw ClinicError(.internalError, .internalError, "no client") }
        return id
    }

    static func appointment(_ tx: PostgresTransaction, client: Int64?, clinic: Int64, department: Int64, doctor: Int64,
                            start: Date, status: String = "scheduled", updated: Date = base) throws -> Int64 {
        guard let id = try tx.value(Int64.self, """
            INSERT INTO appointments (client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at, status,
                                      created_at, updated_at)
            VALUES ($1, $2, $3, $4, 'Dr', $5, $6, $7, $8, $8) RETURNING id
            """, [client, clinic, department, doctor, start, start.addingTimeInterval(1800), status, updated]) else {
            throw ClinicError(.internalError, .internalError, "no appointment")
        }
        return id
    }

    /// A whole second, as the stores keep instants.
    static let base = Date(timeIntervalSince1970: 1_900_000_000)

    /// SQLite's BINARY order: bytewise on UTF-8.
    static func bytewise(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    // MARK: Clinics

    @Test func clinicsRoundTripEveryFieldAndListInSQLitesOrder() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            try await onOwnThread {
                let names = ["beta", "Alpha", "alpha", "Zeta", "Émile", "Ärzte", "_under", "apple", "beta", "Eve", "%pct"]
                let inserted: [Clinic] = try store.writeTransaction { tx in
                    try names.enumerated().map { index, name in
                        try tx.insertClinic(Self.clinic("ext-\(index)", name: name, city: index % 2 == 0 ? "Saint Étienne" : "Reno",
                                                        pediatric: index % 3 == 0, hospital: index % 4 == 0,
                                                        lat: 10.123456789 + Double(index), lon: -20.987654321 - Double(index),
                                                        zone: index % 2 == 0 ? "Europe/Paris" : "America/Los_Angeles"))
                    }
                }
                #expect(inserted.allSatisfy { $0.id != nil })
                #expect(Set(inserted.compactMap(\.id)).count == names.count)
                let expectedOrder = inserted.sorted { a, b in
                    a.name == b.name ? a.id! < b.id! : Self.bytewise(a.name, b.name)
                }
                try store.readTransaction { tx in
                    // Every field as written.
                    for clinic in inserted {
                        #expect(try tx.clinic(externalId: clinic.externalId) == clinic)
                    }
                    #expect(try tx.clinic(externalId: "nope") == nil)
                    #expect(try tx.clinicCount() == names.count)
                    #expect(try tx.allClinics() == inserted.sorted { $0.id! < $1.id! })

                    // (name, id), bytewise: upper case before lower, "_" between, non-ASCII last.
                    let all = try tx.clinics(matching: ClinicFilter())
                    #expect(all.map(\.id) == expectedOrder.map(\.id))
                    #expect(all.map(\.name) == ["%pct", "Alpha", "Eve", "Zeta", "_under", "alpha", "apple", "beta", "beta",
                                                "Ärzte", "Émile"])

                    // City by its key (case and accents folded), flags, limit.
                    let paris = try tx.clinics(matching: ClinicFilter(city: "SAINT ETIENNE"))
                    #expect(paris.map(\.id) == expectedOrder.filter { $0.city == "Saint Étienne" }.map(\.id))
                    #expect(!paris.isEmpty)
                    let pediatric = try tx.clinics(matching: ClinicFilter(pediatricOnly: true))
                    #expect(pediatric.map(\.id) == expectedOrder.filter(\.isPediatric).map(\.id))
                    let hospitals = try tx.clinics(matching: ClinicFilter(hospitalOnly: true))
                    #expect(hospitals.map(\.id) == expectedOrder.filter(\.isHospital).map(\.id))
                    let both = try tx.clinics(matching: ClinicFilter(city: "reno", pediatricOnly: true))
                    #expect(both.map(\.id) == [inserted[9].id, inserted[3].id])
                    #expect(try tx.clinics(matching: ClinicFilter(pediatricOnly: true, hospitalOnly: true)).map(\.id)
                            == [inserted[0].id])
                    #expect(try tx.clinics(matching: ClinicFilter(limit: 3)).map(\.id) == expectedOrder.prefix(3).map(\.id))
                    #expect(try tx.clinics(matching: ClinicFilter(limit: 0)).isEmpty)

                    // Pages after a position: the whole order, each once (the two "beta" by id).
                    var paged: [Int64] = []
                    var after: PagePosition?
                    while true {
                        let page = try tx.clinics(matching: ClinicFilter(limit: 2, after: after))
                        if page.isEmpty { break }
                        paged += page.compactMap(\.id)
                        after = PagePosition(key: page.last!.name, id: page.last!.id!)
                    }
                    #expect(paged == expectedOrder.compactMap(\.id))
                    let firstBeta = expectedOrder.first { $0.name == "beta" }!
                    let afterBeta = try tx.clinics(matching: ClinicFilter(after: PagePosition(key: "beta", id: firstBeta.id!)))
                    #expect(afterBeta.map(\.name) == ["beta", "Ärzte", "Émile"])

                    // By ids (unknown ones left out), points, zones, ids and zones.
                    let some = [inserted[0].id!, inserted[5].id!, 999_999]
                    #expect(Set(try tx.clinics(ids: some)) == Set([inserted[0], inserted[5]]))
                    #expect(try tx.clinics(ids: []).isEmpty)
                    let points = try tx.clinicPoints()
                    #expect(points == inserted.map {
                        ClinicPoint(id: $0.id!, latitude: $0.lat, longitude: $0.lon, isPediatric: $0.isPediatric, isHospital: $0.isHospital)
                    })
                    #expect(points.contains { $0.isPediatric } && points.contains { !$0.isPediatric })
                    #expect(try tx.clinicZones() == inserted.map {
                        ClinicZone(id: $0.id!, latitude: $0.lat, longitude: $0.lon, timeZone: $0.timeZone)
                    })
                    let idsAndZones = try tx.clinicIdsAndZones()
                    #expect(idsAndZones.count == names.count)
                    for clinic in inserted {
                        #expect(idsAndZones[clinic.externalId]?.id == clinic.id)
                        #expect(idsAndZones[clinic.externalId]?.timeZone == clinic.timeZone)
                    }
                }
            }
        }
    }

    @Test func theDirectoryVersionMovesWithClinicsOnly() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            try await onOwnThread {
                let start = try store.readTransaction { tx in try tx.directoryVersion() }
                #expect(start == 0)
                let clinic = try store.writeTransaction { tx in
                    let clinic = try tx.insertClinic(Self.clinic("v1", name: "Versioned"))
                    #expect(try tx.directoryVersion() > start, "in the same transaction")
                    return clinic
                }
                let afterInsert = try store.readTransaction { tx in try tx.directoryVersion() }
                #expect(afterInsert > start)

                var changed = clinic
                changed.name = "Renamed"
                changed.lat = -33.5
                changed.isHospital = true
                try store.writeTransaction { tx in try tx.updateClinic(changed) }
                let afterUpdate = try store.readTransaction { tx in
                    #expect(try tx.clinic(externalId: "v1") == changed)
                    return try tx.directoryVersion()
                }
                #expect(afterUpdate > afterInsert)

                try store.writeTransaction { tx in try tx.setTimeZone(ofClinic: clinic.id!, to: "Asia/Tokyo") }
                let afterZone = try store.readTransaction { tx in
                    #expect(try tx.clinic(externalId: "v1")?.timeZone == "Asia/Tokyo")
                    return try tx.directoryVersion()
                }
                #expect(afterZone > afterUpdate)

                // Departments, doctors, hours and settings leave it where it is.
                try store.writeTransaction { tx in
                    let department = try tx.insertDepartment(Self.department(clinic: clinic.id!, "cardiology"))
                    let doctor = try tx.insertDoctor(Self.doctor(department: department.id!, "Dr Who"))
                    try tx.insertWorkingHours([Self.hours(1, 540, 600, 20)], ofDoctor: doctor.id!)
                    try tx.setSettingIfAbsent("k", to: "v")
                }
                #expect(try store.readTransaction { tx in try tx.directoryVersion() } == afterZone)

                // An update of a clinic that is not there is refused, and moves nothing.
                var ghost = changed
                ghost.id = 424_242
                #expect(clinicError { try store.writeTransaction { tx in try tx.updateClinic(ghost) } }?.code == .storage)
                #expect(try store.readTransaction { tx in try tx.directoryVersion() } == afterZone)
            }
        }
    }

    /// An import's and a first fill's many rows go in one statement per kind on PostgreSQL
    /// (`insertClinics`, `insertDepartments`, `insertDoctors`, `insertWorkingHours(_:ofDoctors:)`):
    /// the same rows with the same ids as SQLite's, which inserts them one by one (the seam's
    /// defaults); an import of the same file twice updates and adds none.
    @Test func manyRowsAtOnceAreTheRowsOfOneByOne() async throws {
        let csv = #"""
            external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
            LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE,0,1,America/Los_Angeles
            LA2,"Children's Hospital, ""East""",4650 Sunset Blvd,LOS ANGELES,CA,34.10,-118.29,CHILDREN,1,1,America/Los_Angeles
            MN1,Минская больница,пр. Независимости,Минск,,53.90,27.56,PSYCHIATRIC,0,0,Europe/Minsk
            RN1,Renown Regional,1155 Mill Street,Reno,NV,39.52,-119.80,CRITICAL ACCESS,0,1,America/Los_Angeles
            HI1,Queen's,1301 Punchbowl St,Honolulu,HI,21.31,-157.86,,0,1,Pacific/Honolulu
            """#
        let hasher = PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-bulk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sqlite = try SQLiteStore.open(path: folder + "/one-by-one.sqlite",
                                              migrations: try Migration.load(from: TestPostgres.projectRoot.appendingPathComponent("Migrations")))
        let sqliteSystem = ClinicSystem(store: sqlite, resources: nil, hasher: hasher)
        let first = try sqliteSystem.clinics.importClinics(Data(csv.utf8), demo: true)
        #expect(first.inserted == 5 && first.demoFilled == 5)
        let tables = ["clinics": "id, external_id, name, address, city, city_key, state, zip, description, category, lat, lon, is_pediatric, is_hospital, time_zone, phone, website",
                      "departments": "id, clinic_id, specialization, is_demo", "doctors": "id, department_id, name, is_demo, is_active",
                      "working_hours": "id, doctor_id, weekday, start_minute, end_minute, slot_minutes"]
        let expected = try sqlite.read { db in
            Dictionary(uniqueKeysWithValues: try tables.map { table, columns in
                (table, try Row.fetchAll(db, sql: "SELECT \(columns) FROM \(table) ORDER BY id").map { row in
                    Dictionary(uniqueKeysWithValues: row.columnNames.map { ($0, row.cell($0) ?? .null) })
                })
            })
        }
        #expect((expected["working_hours"]?.count ?? 0) > 50)

        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            try await onOwnThread {
                let system = ClinicSystem(store: store, resources: nil, hasher: hasher)
                let report = try system.clinics.importClinics(Data(csv.utf8), demo: true)
                #expect(report.inserted == 5 && report.demoFilled == 5)
                try store.readTransaction { tx in
                    for (table, columns) in tables {
                        let stored = try tx.rows("SELECT \(columns) FROM \(table) ORDER BY id")
                        let want = expected[table] ?? []
                        #expect(stored.count == want.count, "\(table)")
                        for (got, row) in zip(stored, want) {
                            for (column, wanted) in row {
                                let value = got.cell(column) ?? .null
                                // SQLite keeps a boolean as 0 or 1.
                                #expect(value == wanted || Bool(storedCell: value).map { $0 == Bool(storedCell: wanted) } == true,
                                        "\(table).\(column): \(got) against \(row)")
                            }
                        }
                    }
                }
                let again = try system.clinics.importClinics(Data(csv.utf8), demo: true)
                #expect(again.inserted == 0 && again.updated == 5 && again.demoFilled == 0)

                // Each at once, straight: ids ascend in the order given; nothing for nothing.
                try store.writeTransaction { tx in
                    #expect(try tx.insertClinics([]) == [] && tx.insertDepartments([]) == [] && tx.insertDoctors([]) == [])
                    try tx.insertWorkingHours([], ofDoctors: [1])
                    try tx.insertWorkingHours([Self.hours(1, 540, 600, 20)], ofDoctors: [])
                    let clinicIds = try tx.insertClinics([Self.clinic("b2", name: "Bee"), Self.clinic("b1", name: "Ant")])
                    #expect(clinicIds.count == 2 && clinicIds[0] < clinicIds[1])
                    #expect(try tx.clinic(id: clinicIds[0])?.externalId == "b2" && tx.clinic(id: clinicIds[1])?.externalId == "b1")
                    let departmentIds = try tx.insertDepartments([Self.department(clinic: clinicIds[1], "surgery"),
                                                                  Self.department(clinic: clinicIds[0], "cardiology")])
                    #expect(try tx.departments(ofClinic: clinicIds[1]).map(\.id) == [departmentIds[0]])
                    let doctorIds = try tx.insertDoctors([Self.doctor(department: departmentIds[1], "Dr Z"),
                                                          Self.doctor(department: departmentIds[1], "Dr A")])
                    #expect(try tx.doctor(id: doctorIds[0])?.name == "Dr Z" && tx.doctor(id: doctorIds[1])?.isActive == true)
                    let weekly = [try Self.hours(3, 600, 660, 15), try Self.hours(1, 540, 600, 20)]
                    try tx.insertWorkingHours(weekly, ofDoctors: doctorIds.reversed())
                    let a = try Self.storedHours(tx, doctor: doctorIds[1]), z = try Self.storedHours(tx, doctor: doctorIds[0])
                    #expect(a.map(\.weekday) == [3, 1] && z.map(\.weekday) == [3, 1] && a.map(\.slotMinutes) == [15, 20])
                    #expect((a.compactMap(\.id).max() ?? 0) < (z.compactMap(\.id).min() ?? 0), "doctor by doctor, as given")
                }
                // A refused row refuses them all.
                let before = try store.readTransaction { tx in try tx.clinicCount() }
                #expect(clinicError {
                    try store.writeTransaction { tx in _ = try tx.insertClinics([Self.clinic("new", name: "New"), Self.clinic("b1", name: "Twin")]) }
                } != nil)
                #expect(try store.readTransaction { tx in try tx.clinicCount() } == before)
            }
        }
    }

    @Test func departmentsDoctorsHoursExceptionsAndTheMap() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            try await onOwnThread {
                try store.writeTransaction { tx in
                    let first = try tx.insertClinic(Self.clinic("m1", name: "First", pediatric: true))
                    let second = try tx.insertClinic(Self.clinic("m2", name: "Second", hospital: true))
                    let empty = try tx.insertClinic(Self.clinic("m3", name: "Empty"))
                    let none = try tx.departmentTally()
                    #expect(none.count == 0 && none.lastId == 0)
                    #expect(try tx.clinicsWithoutDepartments() == [first, second, empty])

                    var departments: [Department] = []
                    for key in ["surgery", "Zoology", "cardiology", "éclair", "_misc"] {
                        let department = try tx.insertDepartment(Self.department(clinic: first.id!, key, demo: key == "surgery"))
                        #expect(department.id != nil && department.clinicId == first.id && department.specialization == key)
                        departments.append(department)
                    }
                    let other = try tx.insertDepartment(Self.department(clinic: second.id!, "dermatology"))
                    #expect(try tx.departments(ofClinic: first.id!).map(\.specialization)
                            == ["Zoology", "_misc", "cardiology", "surgery", "éclair"])
                    #expect(try tx.departments(ofClinic: first.id!).first { $0.specialization == "surgery" }?.isDemo == true)
                    #expect(try tx.departments(ofClinic: second.id!) == [other])
                    #expect(try tx.departmentExists(clinicId: first.id!, specialization: "cardiology"))
                    #expect(try !tx.departmentExists(clinicId: second.id!, specialization: "cardiology"))
                    #expect(try !tx.departmentExists(clinicId: first.id!, specialization: "Cardiology"))
                    #expect(try tx.clinicsWithoutDepartments() == [empty])
                    let tally = try tx.departmentTally()
                    #expect(tally.count == 6 && tally.lastId == other.id)

                    let map = try tx.mapClinics()
                    #expect(map == [
                        MapClinic(id: first.id!, name: "First", lat: first.lat, lon: first.lon, isPediatric: true, isHospital: false,
                                  specializations: ["Zoology", "_misc", "cardiology", "surgery", "éclair"]),
                        MapClinic(id: second.id!, name: "Second", lat: second.lat, lon: second.lon, isPediatric: false,
                                  isHospital: true, specializations: ["dermatology"]),
                        MapClinic(id: empty.id!, name: "Empty", lat: empty.lat, lon: empty.lon, isPediatric: false,
                                  isHospital: false, specializations: []),
                    ])

                    let doctor = try tx.insertDoctor(Self.doctor(department: departments[0].id!, "Dr Ärztin", demo: true))
                    let colleague = try tx.insertDoctor(Self.doctor(department: other.id!, "Dr Other"))
                    #expect(try tx.doctor(id: doctor.id!) == doctor)
                    #expect(try tx.doctor(id: doctor.id!)?.isDemo == true)
                    #expect(try tx.doctor(id: 777_777) == nil)
                    #expect(try tx.clinicId(ofDoctor: doctor.id!) == first.id)
                    #expect(try tx.clinicId(ofDoctor: colleague.id!) == second.id)
                    #expect(try tx.clinicId(ofDoctor: 777_777) == nil)

                    // Hours: one statement, in their order, their own ids and doctor ids not read.
                    let weekly = try [Self.hours(3, 600, 720, 30), Self.hours(1, 540, 600, 20), Self.hours(1, 780, 1020, 15),
                                      Self.hours(7, 0, 1440, 480)]
                    try tx.insertWorkingHours(weekly, ofDoctor: doctor.id!)
                    try tx.insertWorkingHours([], ofDoctor: doctor.id!)
                    let stored = try Self.storedHours(tx, doctor: doctor.id!)
                    #expect(stored.map { [$0.weekday, $0.startMinute, $0.endMinute, $0.slotMinutes] }
                            == weekly.map { [$0.weekday, $0.startMinute, $0.endMinute, $0.slotMinutes] })
                    #expect(stored.allSatisfy { $0.doctorId == doctor.id && $0.id != 999 })
                    // Many at once (an import's size per doctor and more).
                    let many = try (0..<700).map { try Self.hours($0 % 7 + 1, $0 % 1000, $0 % 1000 + 30, 5 + $0 % 400) }
                    try tx.insertWorkingHours(many, ofDoctor: colleague.id!)
                    #expect(try Self.storedHours(tx, doctor: colleague.id!).map(\.slotMinutes) == many.map(\.slotMinutes))

                    // Replacing one weekday's hours leaves the others.
                    try tx.replaceWorkingHours(ofDoctor: doctor.id!, weekday: 1, with: [
                        DoctorSchedule.Interval(startMinute: 480, endMinute: 540, slotMinutes: 10),
                        DoctorSchedule.Interval(startMinute: 900, endMinute: 960, slotMinutes: 60),
                    ])
                    try tx.replaceWorkingHours(ofDoctor: doctor.id!, weekday: 7, with: [])
                    let replaced = try Self.storedHours(tx, doctor: doctor.id!)
                    #expect(replaced.map { [$0.weekday, $0.startMinute, $0.endMinute, $0.slotMinutes] }
                            == [[3, 600, 720, 30], [1, 480, 540, 10], [1, 900, 960, 60]])
                    #expect(try Self.storedHours(tx, doctor: colleague.id!).count == 700)

                    // Exceptions: by (day, start), a day off first; deleting one.
                    let later = try tx.insertWorkingException(Self.exception(doctor: doctor.id!, "2031-03-02", 600, 660, 15))
                    let dayOff = try tx.insertWorkingException(Self.exception(doctor: doctor.id!, "2031-03-01", nil, nil, nil))
                    let afternoon = try tx.insertWorkingException(Self.exception(doctor: doctor.id!, "2031-03-02", 780, 840, 20))
                    let morning = try tx.insertWorkingException(Self.exception(doctor: doctor.id!, "2031-03-02", 480, 540, 10))
                    #expect([later, dayOff, afternoon, morning].allSatisfy { $0.id != nil })
                    #expect(try tx.workingExceptions(ofDoctor: doctor.id!) == [dayOff, morning, later, afternoon])
                    // On one day, a day off before hours (SQLite's NULLs first).
                    let hoursThatDay = try tx.insertWorkingException(Self.exception(doctor: colleague.id!, "2031-03-03", 60, 120, 30))
                    let offThatDay = try tx.insertWorkingException(Self.exception(doctor: colleague.id!, "2031-03-03", nil, nil, nil))
                    #expect(try tx.workingExceptions(ofDoctor: colleague.id!) == [offThatDay, hoursThatDay])
                    #expect(try tx.workingException(id: dayOff.id!) == dayOff)
                    #expect(try tx.workingException(id: dayOff.id!)?.isDayOff == true)
                    #expect(try tx.doctorId(ofWorkingException: later.id!) == doctor.id)
                    try tx.deleteWorkingException(id: later.id!)
                    #expect(try tx.workingException(id: later.id!) == nil)
                    #expect(try tx.doctorId(ofWorkingException: later.id!) == nil)
                    #expect(try tx.workingExceptions(ofDoctor: doctor.id!) == [dayOff, morning, afternoon])

                    // Deactivating a doctor keeps the row.
                    try tx.deactivateDoctor(id: doctor.id!)
                    #expect(try tx.doctor(id: doctor.id!)?.isActive == false)
                    #expect(try tx.doctor(id: colleague.id!)?.isActive == true)

                    // Settings: only when absent.
                    try tx.setSettingIfAbsent("directory.seeded", to: "first")
                    try tx.setSettingIfAbsent("directory.seeded", to: "second")
                    #expect(try tx.value(String.self, "SELECT value FROM settings WHERE key = 'directory.seeded'") == "first")
                }
            }
        }
    }

    /// Two servers set one doctor's hours of one weekday at once: one set is left, the later
    /// one (the second waits for the first's lock on the doctor, then replaces what it wrote).
    /// Before, the second's delete did not see the first's new rows, and both sets stayed,
    /// overlapping.
    @Test func twoChangesOfOneDoctorsHoursAtOnceLeaveOneSet() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            let doctor = try await onOwnThread { () -> Int64 in
                try store.writeTransaction { tx in
                    let clinic = try tx.insertClinic(Self.clinic("h1", name: "Hours"))
                    let department = try tx.insertDepartment(Self.department(clinic: clinic.id ?? 0, "therapy"))
                    let doctor = try tx.insertDoctor(Self.doctor(department: department.id ?? 0, "Dr. Hours"))
                    try tx.insertWorkingHours([Self.hours(1, 480, 600, 30)], ofDoctor: doctor.id ?? 0)
                    return doctor.id ?? 0
                }
            }
            let firstWrote = DispatchSemaphore(value: 0)
            async let first: Void = onOwnThread {
                try store.writeTransaction { tx in
                    try tx.replaceWorkingHours(ofDoctor: doctor, weekday: 1, with: [DoctorSchedule.Interval(startMinute: 540, endMinute: 720, slotMinutes: 30)])
                    firstWrote.signal()
                    Thread.sleep(forTimeInterval: 0.5) // the second starts meanwhile
                }
            }
            async let second: Void = onOwnThread {
                firstWrote.wait()
                try store.writeTransaction { tx in
                    try tx.replaceWorkingHours(ofDoctor: doctor, weekday: 1, with: [DoctorSchedule.Interval(startMinute: 600, endMinute: 900, slotMinutes: 20)])
                }
            }
            _ = try await (first, second)
            let left = try await onOwnThread {
                try store.readTransaction { tx in try Self.storedHours(tx, doctor: doctor).map { [$0.weekday, $0.startMinute, $0.endMinute] } }
            }
            #expect(left == [[1, 600, 900]], "\(left)")
        }
    }

    @Test func zoneChangesAndUpcomingAppointments() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            try await onOwnThread {
                try store.writeTransaction { tx in
                    let clinic = try tx.insertClinic(Self.clinic("z1", name: "Zoned"))
                    let calm = try tx.insertClinic(Self.clinic("z2", name: "Calm"))
                    let department = try tx.insertDepartment(Self.department(clinic: clinic.id!, "cardiology"))
                    let calmDepartment = try tx.insertDepartment(Self.department(clinic: calm.id!, "cardiology"))
                    let doctor = try tx.insertDoctor(Self.doctor(department: department.id!, "Dr A"))
                    let second = try tx.insertDoctor(Self.doctor(department: department.id!, "Dr B"))
                    let calmDoctor = try tx.insertDoctor(Self.doctor(department: calmDepartment.id!, "Dr C"))
                    let ann = try Self.client(tx, "ann"), bob = try Self.client(tx, "bob"), cid = try Self.client(tx, "cid")
                    let now = Self.base
                    let hour: TimeInterval = 3600
                    // Before the change: booked at base - 1 day.
                    let booked = now.addingTimeInterval(-86_400)
                    let past = try Self.appointment(tx, client: ann, clinic: clinic.id!, department: department.id!, doctor: doctor.id!,
                                                    start: now.addingTimeInterval(-5 * hour), updated: booked)
                    let soon = try Self.appointment(tx, client: ann, clinic: clinic.id!, department: department.id!, doctor: doctor.id!,
                                                    start: now.addingTimeInterval(2 * hour), updated: booked)
                    let sameStart = try Self.appointment(tx, client: bob, clinic: clinic.id!, department: department.id!,
                                                         doctor: second.id!, start: now.addingTimeInterval(2 * hour), updated: booked)
                    let atNow = try Self.appointment(tx, client: cid, clinic: clinic.id!, department: department.id!, doctor: second.id!,
                                                     start: now, updated: booked)
                    let cancelled = try Self.appointment(tx, client: bob, clinic: clinic.id!, department: department.id!,
                                                         doctor: doctor.id!, start: now.addingTimeInterval(4 * hour), status: "cancelled",
                                                         updated: booked)
                    let movedAfter = try Self.appointment(tx, client: cid, clinic: clinic.id!, department: department.id!,
                                                          doctor: doctor.id!, start: now.addingTimeInterval(6 * hour),
                                                          updated: now.addingTimeInterval(-hour / 2))
                    let noPatient = try Self.appointment(tx, client: nil, clinic: clinic.id!, department: department.id!,
                                                         doctor: doctor.id!, start: now.addingTimeInterval(8 * hour), updated: booked)
                    let arrived = try Self.appointment(tx, client: bob, clinic: clinic.id!, department: department.id!,
                                                       doctor: second.id!, start: now.addingTimeInterval(10 * hour), status: "arrived",
                                                       updated: booked)
                    _ = try Self.appointment(tx, client: ann, clinic: calm.id!, department: calmDepartment.id!, doctor: calmDoctor.id!,
                                             start: now.addingTimeInterval(12 * hour), updated: booked)

                    #expect(try tx.appointmentsAfterZoneChanges(from: now).isEmpty, "no zone change yet")
                    // Two changes: the latest one counts.
                    try tx.recordZoneChange(clinicId: clinic.id!, from: "America/Denver", to: "America/Chicago",
                                            at: now.addingTimeInterval(-2 * hour))
                    try tx.recordZoneChange(clinicId: clinic.id!, from: "America/Chicago", to: "America/Los_Angeles",
                                            at: now.addingTimeInterval(-hour))
                    let changed = try tx.appointmentsAfterZoneChanges(from: now)
                    #expect(changed.map(\.appointmentId) == [atNow, soon, sameStart, noPatient, arrived])
                    #expect(changed.first == ZoneChangedAppointment(appointmentId: atNow, clinicId: clinic.id!, clinicName: "Zoned",
                                                                    start: now, oldZone: "America/Chicago",
                                                                    newZone: "America/Los_Angeles"))
                    #expect(!changed.contains { [past, cancelled, movedAfter].contains($0.appointmentId) })

                    let upcoming = try tx.upcomingPatientAppointments(atClinic: clinic.id!, startingFrom: now)
                    #expect(upcoming.map(\.id) == [atNow, soon, sameStart, movedAfter, arrived])
                    #expect(upcoming.first?.startsAt == now && upcoming.first?.clientId == cid)
                    #expect(upcoming.last?.status == .arrived)
                    #expect(try tx.upcomingPatientAppointments(atClinic: clinic.id!, startingFrom: now.addingTimeInterval(1))
                        .map(\.id) == [soon, sameStart, movedAfter, arrived])
                }
            }
        }
    }

    // MARK: Staff

    @Test func staffAccountsAndLoginTaken() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            try await onOwnThread {
                let (clinic, other, doctor) = try store.writeTransaction { tx in
                    let clinic = try tx.insertClinic(Self.clinic("s1", name: "Staffed"))
                    let other = try tx.insertClinic(Self.clinic("s2", name: "Other"))
                    let department = try tx.insertDepartment(Self.department(clinic: clinic.id!, "cardiology"))
                    let doctor = try tx.insertDoctor(Self.doctor(department: department.id!, "Dr S"))
                    return (clinic.id!, other.id!, doctor.id!)
                }
                let created = Self.base.addingTimeInterval(0.75)
                let (admin, desk, doc) = try store.writeTransaction { tx in
                    let admin = try tx.insertStaffMember(login: "Admin.One", loginKey: "admin.one", passwordHash: "hash-admin",
                                                         name: "Ada", surname: "Ärger", role: .clinicAdmin, clinicId: clinic,
                                                         doctorId: nil, createdAt: created)
                    // A taken key inside a transaction: refused, and the transaction goes on.
                    let taken = clinicError {
                        _ = try tx.insertStaffMember(login: "ADMIN.one", loginKey: "admin.one", passwordHash: "h", name: "X",
                                                     surname: "Y", role: .receptionist, clinicId: other, doctorId: nil,
                                                     createdAt: created)
                    }
                    #expect(taken?.code == .loginTaken)
                    #expect(taken?.arguments == ["ADMIN.one"])
                    let desk = try tx.insertStaffMember(login: "desk", loginKey: "desk", passwordHash: "hash-desk", name: "Dee",
                                                        surname: "Sk", role: .receptionist, clinicId: clinic, doctorId: nil,
                                                        createdAt: created)
                    let doc = try tx.insertStaffMember(login: "doc", loginKey: "doc", passwordHash: "hash-doc", name: "Do",
                                                       surname: "Ctor", role: .doctor, clinicId: clinic, doctorId: doctor,
                                                       createdAt: created)
                    return (admin, desk, doc)
                }
                #expect(admin == StaffMember(id: admin.id, login: "Admin.One", name: "Ada", surname: "Ärger", role: .clinicAdmin,
                                             clinicId: clinic, doctorId: nil, isActive: true, createdAt: Self.base))
                #expect(doc.doctorId == doctor && doc.role == .doctor && desk.role == .receptionist)

                // Across transactions too: the error escapes the transaction as login_taken.
                let escaped = clinicError {
                    _ = try store.writeTransaction { tx in
                        try tx.insertStaffMember(login: "Desk", loginKey: "desk", passwordHash: "h", name: "X", surname: "Y",
                                                 role: .receptionist, clinicId: clinic, doctorId: nil, createdAt: created)
                    }
                }
                #expect(escaped?.code == .loginTaken && escaped?.arguments == ["Desk"])

                try store.writeTransaction { tx in
                    #expect(try tx.staffMember(id: admin.id) == admin)
                    #expect(try tx.staffMember(id: 999_999) == nil)
                    #expect(try tx.staffMembers(ofClinic: clinic) == [admin, desk, doc])
                    #expect(try tx.staffMembers(ofClinic: other).isEmpty)
                    let credentials = try tx.staffCredentials(loginKey: "desk")
                    #expect(credentials?.member == desk && credentials?.passwordHash == "hash-desk")
                    #expect(try tx.staffCredentials(loginKey: "Desk") == nil)

                    try tx.deactivateStaffMember(id: desk.id)
                    #expect(try tx.staffMember(id: desk.id)?.isActive == false)
                    #expect(try tx.staffCredentials(loginKey: "desk")?.member.isActive == false)
                    #expect(try tx.staffMember(id: admin.id)?.isActive == true)
                }
            }
        }
    }

    @Test func staffSessions() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            try await onOwnThread {
                let t0 = Self.base
                let (admin, desk) = try store.writeTransaction { tx in
                    let clinic = try tx.insertClinic(Self.clinic("ss", name: "Sessions")).id!
                    let admin = try tx.insertStaffMember(login: "a", loginKey: "a", passwordHash: "h", name: "A", surname: "A",
                                                         role: .clinicAdmin, clinicId: clinic, doctorId: nil, createdAt: t0)
                    let desk = try tx.insertStaffMember(login: "d", loginKey: "d", passwordHash: "h", name: "D", surname: "D",
                                                        role: .receptionist, clinicId: clinic, doctorId: nil, createdAt: t0)
                    try tx.insertStaffSession(staffId: admin.id, tokenHash: "tok-a1", at: t0)
                    try tx.insertStaffSession(staffId: admin.id, tokenHash: "tok-a2", at: t0.addingTimeInterval(10))
                    try tx.insertStaffSession(staffId: desk.id, tokenHash: "tok-d1", at: t0.addingTimeInterval(20))
                    return (admin, desk)
                }
                try store.writeTransaction { tx in
                    // Used at or after the bound.
                    #expect(try tx.activeStaffSession(tokenHash: "tok-a1").flatMap { $0.lastUsedAt >= t0 ? $0.member : nil } == admin)
                    #expect(try tx.activeStaffSession(tokenHash: "tok-a1").flatMap { $0.lastUsedAt >= t0.addingTimeInterval(1) ? $0.member : nil } == nil)
                    #expect(try tx.activeStaffSession(tokenHash: "nope").flatMap { $0.lastUsedAt >= .distantPast ? $0.member : nil } == nil)

                    // A use moves the last use forward, never back.
                    try tx.touchStaffSession(tokenHash: "tok-a1", at: t0.addingTimeInterval(100))
                    #expect(try tx.activeStaffSession(tokenHash: "tok-a1").flatMap { $0.lastUsedAt >= t0.addingTimeInterval(100) ? $0.member : nil } == admin)
                    try tx.touchStaffSession(tokenHash: "tok-a1", at: t0.addingTimeInterval(50))
                    #expect(try tx.activeStaffSession(tokenHash: "tok-a1").flatMap { $0.lastUsedAt >= t0.addingTimeInterval(100) ? $0.member : nil } == admin)
                    #expect(try tx.activeStaffSession(tokenHash: "tok-a1").flatMap { $0.lastUsedAt >= t0.addingTimeInterval(101) ? $0.member : nil } == nil)

                    // A disabled account's sessions are not active.
                    #expect(try tx.activeStaffSession(tokenHash: "tok-d1").flatMap { $0.lastUsedAt >= t0 ? $0.member : nil } == desk)
                    try tx.deactivateStaffMember(id: desk.id)
                    #expect(try tx.activeStaffSession(tokenHash: "tok-d1").flatMap { $0.lastUsedAt >= t0 ? $0.member : nil } == nil)

                    // Forgetting the sessions last used before a cutoff: tok-a2 (t0+10) and tok-d1 (t0+20), not tok-a1.
                    try tx.deleteStaffSessions(lastUsedBefore: t0.addingTimeInterval(21))
                    #expect(try tx.activeStaffSession(tokenHash: "tok-a2").flatMap { $0.lastUsedAt >= .distantPast ? $0.member : nil } == nil)
                    #expect(try tx.activeStaffSession(tokenHash: "tok-a1").flatMap { $0.lastUsedAt >= .distantPast ? $0.member : nil } == admin)
                    #expect(try tx.value(Int64.self, "SELECT count(*) FROM staff_sessions") == 1)

                    // Ending one, then every one of an account.
                    try tx.insertStaffSession(staffId: admin.id, tokenHash: "tok-a3", at: t0)
                    try tx.insertStaffSession(staffId: desk.id, tokenHash: "tok-d2", at: t0)
                    #expect(try tx.deleteStaffSession(tokenHash: "tok-a3"))
                    #expect(try !tx.deleteStaffSession(tokenHash: "tok-a3"))
                    try tx.deleteStaffSessions(ofStaff: admin.id)
                    #expect(try tx.activeStaffSession(tokenHash: "tok-a1").flatMap { $0.lastUsedAt >= .distantPast ? $0.member : nil } == nil)
                    #expect(try tx.values(String.self, "SELECT token_hash FROM staff_sessions") == ["tok-d2"])
                }
                // Stored instants are whole seconds: a touch at t0+100.9 counts as t0+100.
                try store.writeTransaction { tx in
                    try tx.insertStaffSession(staffId: admin.id, tokenHash: "tok-f", at: t0)
                    try tx.touchStaffSession(tokenHash: "tok-f", at: t0.addingTimeInterval(100.9))
                    #expect(try tx.activeStaffSession(tokenHash: "tok-f").flatMap { $0.lastUsedAt >= t0.addingTimeInterval(100) ? $0.member : nil } == admin)
                    #expect(try tx.activeStaffSession(tokenHash: "tok-f").flatMap { $0.lastUsedAt >= t0.addingTimeInterval(101) ? $0.member : nil } == nil)
                    // A web session's own idle limit is kept with it (issue 55); the API's has none.
                    try tx.insertStaffSession(staffId: admin.id, tokenHash: "tok-web", at: t0, idleSeconds: 900)
                    #expect(try tx.activeStaffSession(tokenHash: "tok-web")?.idleSeconds == 900)
                    #expect(try tx.activeStaffSession(tokenHash: "tok-f")?.idleSeconds == nil)
                }
            }
        }
    }

    @Test func theClinicsDayAsStaffReadIt() async throws {
        let migrations = try TestPostgres.migrations()
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            try await onOwnThread {
                try store.writeTransaction { tx in
                    let clinic = try tx.insertClinic(Self.clinic("d1", name: "Day")).id!
                    let elsewhere = try tx.insertClinic(Self.clinic("d2", name: "Elsewhere")).id!
                    let cardio = try tx.insertDepartment(Self.department(clinic: clinic, "cardiology")).id!
                    let derma = try tx.insertDepartment(Self.department(clinic: clinic, "dermatology")).id!
                    let away = try tx.insertDepartment(Self.department(clinic: elsewhere, "cardiology")).id!
                    let drA = try tx.insertDoctor(Self.doctor(department: cardio, "A")).id!
                    let drB = try tx.insertDoctor(Self.doctor(department: cardio, "B")).id!
                    let drC = try tx.insertDoctor(Self.doctor(department: derma, "C")).id!
                    let drAway = try tx.insertDoctor(Self.doctor(department: away, "Z")).id!
                    let ann = try Self.client(tx, "ann", language: "ru")
                    let bob = try Self.client(tx, "bob")
                    let cid = try Self.client(tx, "cid")
                    let day = Self.base
                    let hour: TimeInterval = 3600
                    let a1 = try Self.appointment(tx, client: ann, clinic: clinic, department: cardio, doctor: drA,
                                                  start: day.addingTimeInterval(hour))
                    let b1 = try Self.appointment(tx, client: bob, clinic: clinic, department: cardio, doctor: drB,
                                                  start: day.addingTimeInterval(hour))
                    let c1 = try Self.appointment(tx, client: cid, clinic: clinic, department: derma, doctor: drC,
                                                  start: day)
                    let cancelled = try Self.appointment(tx, client: cid, clinic: clinic, department: cardio, doctor: drA,
                                                         start: day.addingTimeInterval(3 * hour), status: "cancelled")
                    let orphan = try Self.appointment(tx, client: nil, clinic: clinic, department: cardio, doctor: drA,
                                                      start: day.addingTimeInterval(5 * hour))
                    let nextDay = try Self.appointment(tx, client: ann, clinic: clinic, department: cardio, doctor: drA,
                                                       start: day.addingTimeInterval(24 * hour))
                    let done = try Self.appointment(tx, client: bob, clinic: clinic, department: cardio, doctor: drA,
                                                    start: day.addingTimeInterval(-hour), status: "completed")
                    _ = try Self.appointment(tx, client: bob, clinic: elsewhere, department: away, doctor: drAway,
                                             start: day.addingTimeInterval(2 * hour))
                    let span = day..<day.addingTimeInterval(24 * hour)

                    #expect(try tx.appointments(ofClinic: clinic, startingIn: span, departmentId: nil, doctorId: nil).map(\.id)
                            == [c1, a1, b1, cancelled, orphan])
                    #expect(try tx.appointments(ofClinic: clinic, startingIn: span, departmentId: cardio, doctorId: nil).map(\.id)
                            == [a1, b1, cancelled, orphan])
                    #expect(try tx.appointments(ofClinic: clinic, startingIn: span, departmentId: nil, doctorId: drA).map(\.id)
                            == [a1, cancelled, orphan])
                    #expect(try tx.appointments(ofClinic: clinic, startingIn: span, departmentId: derma, doctorId: drA).isEmpty)
                    let full = try tx.appointments(ofClinic: clinic, startingIn: span, departmentId: cardio, doctorId: drB)
                    #expect(full.count == 1)
                    #expect(full.first.map { [$0.clientId, $0.clinicId, $0.departmentId, $0.doctorId] } == [bob, clinic, cardio, drB])
                    #expect(full.first?.startsAt == day.addingTimeInterval(hour) && full.first?.endsAt == day.addingTimeInterval(hour + 1800))
                    #expect(full.first?.status == .scheduled && full.first?.doctorName == "Dr")

                    #expect(try tx.activePatients(ofClinic: clinic, startingIn: span, departmentId: nil) == [ann, bob, cid].sorted())
                    #expect(try tx.activePatients(ofClinic: clinic, startingIn: span, departmentId: cardio) == [ann, bob].sorted())
                    #expect(try tx.activePatients(ofClinic: clinic, startingIn: span, departmentId: derma) == [cid])
                    #expect(try tx.activePatients(ofClinic: elsewhere, startingIn: span, departmentId: nil) == [bob])

                    #expect(try tx.isPatient(bob, ofClinic: elsewhere))
                    #expect(try !tx.isPatient(ann, ofClinic: elsewhere))
                    #expect(try tx.isPatient(cid, ofClinic: clinic))

                    #expect(try tx.messageLanguage(ofClient: ann) == .ru)
                    #expect(try tx.messageLanguage(ofClient: bob) == .en)
                    #expect(try tx.messageLanguage(ofClient: 999_999) == nil)

                    #expect(try tx.futureActiveAppointments(ofDoctor: drA, from: day).map(\.id) == [a1, orphan, nextDay])
                    #expect(try tx.futureActiveAppointments(ofDoctor: drA, from: day.addingTimeInterval(-2 * hour)).map(\.id)
                            == [a1, orphan, nextDay])
                    #expect(!(try tx.futureActiveAppointments(ofDoctor: drA, from: .distantPast).map(\.id).contains(done)))
                    #expect(try tx.futureActiveAppointments(ofDoctor: drC, from: day.addingTimeInterval(1)).isEmpty)
                }
            }
        }
    }
}
