import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

@Suite struct ClientControllerTests {
    @Test func registrationStoresTheClientWithAHomeClinicInTheirCity() throws {
        let system = try makeSystem()
        let client = try register(system, "Anna.S")
        #expect(client.id != nil)
        #expect(client.login == "Anna.S")
        #expect(client.privacyVersion == PrivacyPolicy.version)
        #expect(client.privacyAcceptedAt == testNow)
        #expect(try system.clinics.getClinicById(client.homeClinicId ?? 0).city.lowercased() == "los angeles")
        #expect(try system.clients.getUserById(client.id ?? 0) == client)
        #expect(try system.clients.getUserByLogin("anna.s") == client)
        #expect(expectError(.notFound) { _ = try system.clients.getUserById(999) } != nil)
    }

    @Test func everyBadFieldIsRefusedWithItsCodeAndNothingIsStored() throws {
        let system = try makeSystem()
        _ = try register(system, "anna")
        let before = try fingerprint(system)
        func attempt(_ change: (inout RegistrationRequest) -> Void) -> ClinicError? {
            var request = RegistrationRequest(login: "bob", password: "correct-horse-42", name: "Bob", surname: "Lee",
                                              street: "Main Street", house: "1", city: "Los Angeles", acceptedPrivacy: true)
            change(&request)
            do { _ = try system.clients.registerUser(request); return nil } catch let error as ClinicError { return error } catch { return nil }
        }
        #expect(attempt { $0.login = "ANNA" }?.code == .loginTaken)
        #expect(attempt { $0.login = "a" }?.code == .invalidInput)
        #expect(attempt { $0.password = "short-1" }?.code == .weakPassword)
        #expect(attempt { $0.password = "xx-bob-is-long-1" }?.key == .passwordContainsLogin)
        #expect(attempt { $0.password = "i-am-lee-1990" }?.key == .passwordContainsName)
        #expect(attempt { $0.confirmPassword = "other-horse-42" }?.key == .passwordsDiffer)
        #expect(attempt { $0.acceptedPrivacy = false }?.code == .privacyNotAccepted)
        #expect(attempt { $0.name = "" }?.key == .fieldEmpty)
        #expect(attempt { $0.surname = "L33" }?.key == .fieldLettersOnly)
        #expect(attempt { $0.house = "x" }?.key == .houseInvalid)
        #expect(attempt { $0.street = "  " }?.key == .fieldEmpty)
        #expect(attempt { $0.city = "Atlantis" }?.key == .cityUnknown)
        #expect(attempt { $0.clinicId = 999 }?.code == .notFound)
        #expect(try fingerprint(system) == before)
        // A form's round: every problem at once, each with its field, in the form's order.
        let everything = RegistrationRequest(login: "ANNA", password: "short-1", confirmPassword: "other", name: "", surname: "L33",
                                             street: "Main Street", house: "1", city: "Atlantis", acceptedPrivacy: false)
        let problems = try system.clients.registrationProblems(everything)
        #expect(problems.map(\.field) == ["name", "surname", "passwordAgain", "password", "acceptPrivacy", "city", "login"])
        #expect(problems.map(\.error.key) == [.fieldEmpty, .fieldLettersOnly, .passwordsDiffer, .passwordTooShort, .privacyRequired,
                                             .cityUnknown, .loginTaken])
        // registerUser refuses with the first of them.
        #expect(attempt { $0 = everything }?.key == .fieldEmpty)
        var good = everything
        (good.login, good.password, good.confirmPassword, good.name, good.surname, good.city, good.acceptedPrivacy) =
            ("bob", "correct-horse-42", "correct-horse-42", "Bob", "Lee", "Los Angeles", true)
        #expect(try system.clients.registrationProblems(good).isEmpty)
        #expect(try fingerprint(system) == before)
    }

    @Test func accentsAndCyrillicWork() throws {
        let system = try makeSystem()
        let client = try system.clients.registerUser(RegistrationRequest(
            login: "жанна", password: "пароль-надёжный-1", name: "Жанна", surname: "д'Арк", street: "пр. Независимости",
            house: "4", city: "минск", language: .ru, acceptedPrivacy: true))
        #expect(try system.clinics.getClinicById(client.homeClinicId ?? 0).city == "Минск")
        #expect(try system.clients.getUserByLogin("ЖАННА").id == client.id)
        #expect(try system.clients.logIn(login: "Жанна", password: "пароль-надёжный-1").client.id == client.id)
    }

    @Test func onlyTheCityIsGeocodedAndCached() throws {
        let system = try makeSystem()
        let client = try system.clients.registerUser(RegistrationRequest(
            login: "privy", password: "correct-horse-42", name: "Pat", surname: "Smith", street: "Secret Lane",
            house: "7", city: "Los Angeles", acceptedPrivacy: true))
        #expect(client.lat != nil && client.lon != nil)
        let cached = try storedRows(system, "SELECT query FROM geocode_cache").compactMap { $0["query"] as String? }
        #expect(cached == ["los angeles"], "no street or house in the cache: \(cached)")
        #expect(expectError(.invalidInput) {
            _ = try system.clients.registerUser(RegistrationRequest(
                login: "elmo", password: "correct-horse-42", name: "Pat", surname: "Smith", street: "Los Angeles",
                house: "3", city: "Qwertyville", acceptedPrivacy: true))
        }?.key == .cityUnknown)
    }

    @Test func sqlLookingTextIsStoredVerbatim() throws {
        let system = try makeSystem()
        let street = "Main'; DROP TABLE clients; --"
        let client = try system.clients.registerUser(RegistrationRequest(
            login: "robert", password: "correct-horse-42", name: "Robert", surname: "Tables", street: street,
            house: "1", city: "Los Angeles", acceptedPrivacy: true))
        #expect(try system.clients.getUserById(client.id ?? 0).street == street)
    }
}

@Suite struct DirectoryTests {
    @Test func clinicsFilterByCityWithoutCaseOrAccentsAndByKind() throws {
        let system = try makeSystem()
        #expect(try system.clinics.getAllClinics().count == 5)
        #expect(try system.clinics.getAllClinics(ClinicFilter(city: "los angeles")).map(\.externalId) == ["LA1", "LA2"])
        #expect(try system.clinics.getAllClinics(ClinicFilter(city: "SAO PAULO")).map(\.externalId) == ["SP1"])
        #expect(try system.clinics.getAllClinics(ClinicFilter(city: "  São   Paulo ")).map(\.externalId) == ["SP1"])
        #expect(try system.clinics.getAllClinics(ClinicFilter(city: "минск")).map(\.externalId) == ["MN1"])
        #expect(try system.clinics.getAllClinics(ClinicFilter(pediatricOnly: true)).map(\.externalId) == ["LA2"])
        #expect(try system.clinics.getAllClinics(ClinicFilter(hospitalOnly: true)).count == 4)
        #expect(try system.clinics.getAllClinics(ClinicFilter(limit: 2)).count == 2)
        #expect(expectError(.invalidInput) { _ = try system.clinics.getAllClinics(ClinicFilter(limit: 0)) } != nil)
        #expect(expectError(.notFound) { _ = try system.clinics.getClinicById(42) } != nil)
    }

    @Test func demoDepartmentsFollowTheCategoryAndZonesTheState() throws {
        let system = try makeSystem()
        let general = try clinic(system, "LA1")
        #expect(general.timeZone == "America/Los_Angeles")
        #expect(try clinic(system, "NY1").timeZone == "America/New_York")
        #expect(try clinic(system, "SP1").timeZone == "America/Sao_Paulo", "a given zone wins over the state")
        let departments = try system.departments.getDepartmentsByClinicId(general.id ?? 0)
        #expect(Set(departments.map(\.specialization)) == ["therapy", "cardiology", "surgery", "neurology", "ophthalmology"])
        #expect(departments.allSatisfy { $0.isDemo })
        let pediatric = try system.departments.getDepartmentsByClinicId(try clinic(system, "LA2").id ?? 0)
        #expect(Set(pediatric.map(\.specialization)) == ["pediatrics", "pediatric surgery"])
        let therapy = try department(system, "LA1", "therapy")
        let doctors = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)
        #expect(doctors.count == 2)
        let hours = try system.departments.getWorkingHours(doctorId: doctors[0].id ?? 0)
        #expect(hours.count == 10)
        #expect(Set(hours.map(\.weekday)) == [1, 2, 3, 4, 5])
        #expect(hours.allSatisfy { $0.slotMinutes == 20 })
        #expect(Set(hours.map { [$0.startMinute, $0.endMinute] }) == [[480, 720], [780, 1020]])
        #expect(expectError(.notFound) { _ = try system.departments.getDepartmentById(99_999) } != nil)
        #expect(expectError(.notFound) { _ = try system.departments.getDoctorsByDepartmentId(99_999) } != nil)
    }

    @Test func demoDataIsDeterministic() throws {
        let names = { (system: ClinicSystem) in
            try system.database.reading { tx in
                try tx.allClinics().flatMap { try tx.departments(ofClinic: $0.id ?? 0) }
                    .flatMap { try tx.activeDoctors(inDepartment: $0.id ?? 0) }.sorted { ($0.id ?? 0) < ($1.id ?? 0) }.map(\.name)
            }
        }
        #expect(try names(makeSystem()) == names(makeSystem()))
        #expect(DemoDirectory.doctorName(seed: "0005793230/therapy/0") == DemoDirectory.doctorName(seed: "0005793230/therapy/0"))
        // A Russian surname agrees with the first name (issue 46: "James Sokolova"), over many seeds.
        let sample = (0..<5000).map { DemoDirectory.doctorName(seed: "seed-\($0)/therapy/0") }
        let women = sample.filter { DemoDirectory.feminine.contains(String($0.split(separator: " ")[0])) }
        let men = sample.filter { !DemoDirectory.feminine.contains(String($0.split(separator: " ")[0])) }
        #expect(women.contains { $0.hasSuffix("ova") } && men.contains { $0.hasSuffix("ov") })
        #expect(!men.contains { $0.hasSuffix("ova") } && !women.contains { $0.hasSuffix("ov") })
    }

    @Test func addClinicAndDepartmentValidate() throws {
        let system = try makeSystem()
        guard let point = Coordinate(latitude: 10, longitude: 20) else { Issue.record("coordinate"); return }
        let added = try system.clinics.addClinic(ClinicInput(externalId: "X1", name: "New", city: "Nowhere", coordinate: point))
        #expect(added.timeZone == "Etc/GMT-1", "no state: a whole-hour zone from the longitude")
        #expect(expectError(.invalidInput) { _ = try system.clinics.addClinic(ClinicInput(externalId: "X1", name: "Dup", coordinate: point)) } != nil)
        #expect(expectError(.invalidInput) { _ = try system.clinics.addClinic(ClinicInput(externalId: "X2", name: " ", coordinate: point)) } != nil)
        // The import's rules, for a clinic added by hand too.
        let refused: [(ClinicInput, MessageKey)] = [
            (ClinicInput(externalId: "X3", name: "Bell\u{7}", coordinate: point), .importControlCharacter),
            (ClinicInput(externalId: String(repeating: "x", count: 65), name: "Long id", coordinate: point), .importEmptyId),
            (ClinicInput(externalId: "X4", name: "Long phone", phone: String(repeating: "1", count: 501), coordinate: point), .importFieldTooLong),
            (ClinicInput(externalId: "X5", name: "Zone", coordinate: point, timeZone: "Mars/Olympus"), .importBadTimeZone),
            // Issue 55 (A6): a name that shows nothing, or a stack of combining marks.
            (ClinicInput(externalId: "X6", name: "\u{3164}", coordinate: point), .importNameInvalid),
            (ClinicInput(externalId: "X7", name: "H" + String(repeating: "\u{0301}", count: 5000), coordinate: point), .importNameInvalid),
        ]
        for (input, key) in refused {
            #expect(expectError(.invalidInput) { _ = try system.clinics.addClinic(input) }?.key == key, "\(input.name)")
        }
        let department = try system.departments.addDepartment(clinicId: added.id ?? 0, specialization: "Кардиология")
        #expect(department.specialization == "cardiology", "Russian names map to the same key")
        #expect(expectError(.invalidInput) { _ = try system.departments.addDepartment(clinicId: added.id ?? 0, specialization: "cardiology") } != nil)
        #expect(expectError(.notFound) { _ = try system.departments.addDepartment(clinicId: 999, specialization: "x") } != nil)
    }
}

@Suite struct ImportTests {
    static let header = "external_id,name,city,state,lat,lon,is_pediatric\n"

    @Test func badRowsAreReportedByLineAndNothingIsImported() throws {
        let system = try makeSystem()
        let before = try fingerprint(system)
        var data = Data((Self.header + "N1,Good,Reno,NV,39.5,-119.8,0\nN2,,Reno,NV,39.5,-119.8,0\nN3,Far,Reno,NV,95,-119.8,0\n"
                         + "N4,Text,Reno,NV,north,-119.8,0\nN1,Again,Reno,NV,39.5,-119.8,0\nN5,Short,Reno\nN6,Flag,Reno,NV,1,1,maybe\n").utf8)
        data += Data([0x4E, 0x37, 0x2C, 0xC3, 0x28, 0x2C, 0x52, 0x2C, 0x4E, 0x56, 0x2C, 0x31, 0x2C, 0x31, 0x2C, 0x30, 0x0A])
        let error = expectError(.invalidInput) { _ = try system.clinics.importClinics(data) }
        #expect(error?.problems.map(\.line) == [3, 4, 5, 6, 7, 8, 9])
        #expect(error?.problems.map(\.key) == [.importEmptyName, .importBadCoordinates, .importBadCoordinates,
                                               .importDuplicateId, .importColumnCount, .importBadFlag, .importInvalidUTF8])
        #expect(try fingerprint(system) == before)

        let report = try system.clinics.importClinics(data, skipInvalid: true)
        #expect(report.inserted == 1)
        #expect(report.skipped.count == 7)
    }

    @Test func aRefusedImportDoesNotMarkANewDatabaseAsFilled() throws {
        let database = try SQLiteStore.inMemory(migrations: projectMigrations)
        let system = ClinicSystem(store: database, resources: Resources(root: projectRoot))
        let before = try fingerprint(database)
        #expect(expectError(.invalidInput) { _ = try system.importDirectory(Data((Self.header + "N1,,Reno,NV,1,1,0\n").utf8)) } != nil)
        #expect(try fingerprint(database) == before)
        #expect(try system.initialization() == nil, "the default directory still loads on first use")
        _ = try system.importDirectory(Data((Self.header + "N1,Good,Reno,NV,1,1,0\n").utf8))
        #expect(try system.initialization() == .empty, "an operator's directory replaces the default one")
    }

    /// Two processes starting together on an empty database (servers on PostgreSQL; threads
    /// here) fill it once: one fills, the other finds it filled. (On PostgreSQL the second
    /// import failed on the first's unique keys and its server did not start.)
    @Test func twoFirstFillsAtOnceFillOnce() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("fill-\(UUID().uuidString)")
        let data = root.appendingPathComponent("Data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("Migrations"),
                                                   withDestinationURL: projectRoot.appendingPathComponent("Migrations"))
        for name in ["timezones.db", "gazetteer.db", "common-passwords.txt"] {
            try FileManager.default.createSymbolicLink(at: data.appendingPathComponent(name),
                                                       withDestinationURL: projectRoot.appendingPathComponent("Data/" + name))
        }
        let csv = try String(contentsOf: projectRoot.appendingPathComponent("Data/clinics.csv"), encoding: .utf8)
        try (csv.split(separator: "\n").prefix(121).joined(separator: "\n") + "\n")
            .write(to: data.appendingPathComponent("clinics.csv"), atomically: true, encoding: .utf8)
        let store = try TestStore.make()
        let systems = (0..<2).map { _ in ClinicSystem(store: store, resources: Resources(root: root)) }
        let reports = try await withThrowingTaskGroup(of: ImportReport?.self) { group in
            for system in systems {
                group.addTask {
                    try await withCheckedThrowingContinuation { continuation in
                        Thread { continuation.resume(with: Result { try system.initialize(.defaultDirectory) }) }.start()
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reports.compactMap { $0 }.map(\.inserted) == [120], "\(reports)")
        #expect(try systems[0].clinics.count() == 120)
        let kind = try await systems[1].initialization()
        #expect(kind == .defaultDirectory)
    }

    @Test func reimportUpdatesByExternalId() throws {
        let system = try makeSystem()
        let first = try system.clinics.importClinics(Data((Self.header + "N1,Good,Reno,NV,39.5,-119.8,0\n").utf8))
        #expect(first.inserted == 1 && first.updated == 0)
        let id = try clinic(system, "N1").id
        let second = try system.clinics.importClinics(Data((Self.header + "N1,Better,Reno,NV,39.6,-119.8,1\n").utf8))
        #expect(second.inserted == 0 && second.updated == 1)
        let updated = try clinic(system, "N1")
        #expect(updated.id == id)
        #expect(updated.name == "Better" && updated.isPediatric && updated.lat == 39.6)
    }

    @Test func headerProblemsRefuseTheWholeFile() throws {
        let system = try makeSystem()
        #expect(expectError(.invalidInput) { _ = try system.clinics.importClinics(Data()) }?.key == .importNoHeader)
        #expect(expectError(.invalidInput) { _ = try system.clinics.importClinics(Data("name,lat\nx,1\n".utf8)) }?.key == .importMissingColumns)
    }

    @Test func theEmbeddedDefaultDirectoryLoadsCompletely() throws {
        let database = try SQLiteStore.inMemory(migrations: projectMigrations)
        let system = ClinicSystem(store: database, resources: Resources(root: projectRoot))
        let report = try system.initialize(.defaultDirectory)
        #expect(report?.inserted == 7146)
        #expect(report?.demoFilled == 7146)
        #expect(try system.initialization() == .defaultDirectory)
        #expect(try system.initialize(.defaultDirectory) == nil, "a second initialization does nothing")
        try database.read { db in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM clinics WHERE is_pediatric") == 118)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM clinics WHERE NOT is_hospital") == 0)
            #expect(try Int.fetchOne(db, sql: """
                SELECT count(*) FROM clinics WHERE NOT EXISTS (SELECT 1 FROM departments d WHERE d.clinic_id = clinics.id)
                """) == 0, "every clinic has a department")
            #expect(try String.fetchOne(db, sql: "SELECT time_zone FROM clinics WHERE city = 'ADAK'") == "America/Adak")
            #expect(try String.fetchOne(db, sql: "SELECT time_zone FROM clinics WHERE state = 'GU' LIMIT 1") == "Pacific/Guam")
            let zones = try String.fetchAll(db, sql: "SELECT DISTINCT time_zone FROM clinics")
            #expect(zones.allSatisfy { TimeZone(identifier: $0) != nil }, "\(zones)")
        }
    }
}
