import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The front desk's search of patients through the blind index (issue 29): by prefix, folded,
/// among the clinic's own patients only, each patient shown in their access log; the index
/// follows renames and deletions, is made again when its key changes, and holds no name in clear.
@Suite struct PatientSearchTests {
    struct World {
        let system: ClinicSystem
        let desk: StaffMember, doctor: StaffMember, otherDesk: StaffMember
        let patients: [String: Client]
    }

    /// Patients of Los Angeles' LA1 (each with an appointment there) and one of LA2 only.
    func world(store: (any ClinicStore)? = nil) throws -> World {
        let system = try makeSystem(store: store)
        let therapyA = try department(system, "LA1", "therapy")
        let therapyB = try #require(try system.departments.getDepartmentsByClinicId(try clinic(system, "LA2").id ?? 0).first)
        var patients: [String: Client] = [:]
        let people: [(String, String, String, String, String)] = [
            ("pt1", "Anna", "Smith", "LA1", "09:20"), ("pt2", "John", "SMITH", "LA1", "09:40"),
            ("pt3", "Émile", "Müller", "LA1", "10:00"), ("pt4", "Иван", "Иванов", "LA1", "10:20"),
            ("pt5", "Anna", "Smithson", "LA2", "09:20"),
        ]
        for (login, name, surname, clinic, time) in people {
            let client = try system.clients.registerUser(RegistrationRequest(
                login: login, password: "correct-horse-42", name: name, surname: surname, street: "Main Street", house: "12",
                city: "Los Angeles", acceptedPrivacy: true))
            let parts = time.split(separator: ":").compactMap { Int($0) }
            let at = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: parts[0], minute: parts[1])!)
            _ = try system.appointments.createAppointment(clientId: client.id ?? 0,
                                                          departmentId: (clinic == "LA1" ? therapyA : therapyB).id ?? 0, at: at)
            patients[login] = client
        }
        // A patient registered who never booked at LA1.
        patients["newcomer"] = try register(system, "newcomer")
        let la1 = try clinic(system, "LA1").id ?? 0, la2 = try clinic(system, "LA2").id ?? 0
        let doctorId = try #require(try system.departments.getDoctorsByDepartmentId(therapyA.id ?? 0).first?.id)
        func add(_ login: String, _ role: StaffRole, _ clinic: Int64, doctor: Int64? = nil) throws -> StaffMember {
            try system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: role, clinicId: clinic,
                                                 doctorId: doctor, password: "staff-passphrase-77"))
        }
        return World(system: system, desk: try add("desk-a", .receptionist, la1),
                      doctor: try add("doctor-a", .doctor, la1, doctor: doctorId), otherDesk: try add("desk-b", .receptionist, la2),
                      patients: patients)
    }

    func logins(_ w: World, _ query: String, by member: StaffMember? = nil) throws -> [String] {
        try w.system.staff.findPatients(member ?? w.desk, query: query).compactMap(\.login)
    }

    @Test func findsTheClinicsPatientsByAFoldedPrefix() throws {
        let w = try world()
        #expect(try logins(w, "smi") == ["pt1", "pt2"], "case-folded, by surname; LA2's Smithson is not LA1's")
        #expect(try logins(w, "SMITH") == ["pt1", "pt2"])
        #expect(try logins(w, "anna smi") == ["pt1"], "every word must match")
        #expect(try logins(w, "smi anna") == ["pt1"])
        #expect(try logins(w, "mull") == ["pt3"], "diacritics folded")
        #expect(try logins(w, "emi") == ["pt3"])
        #expect(try logins(w, "Ив") == ["pt4"])
        #expect(try logins(w, "иванов") == ["pt4"])
        #expect(try logins(w, "PT4") == ["pt4"], "by login")
        #expect(try logins(w, "ivanov").isEmpty, "no transliteration")
        #expect(try logins(w, "ivanovich").isEmpty, "a query longer than the word finds nothing")
        #expect(try logins(w, "newc").isEmpty, "a patient who never booked at the clinic is not the clinic's")
        #expect(try logins(w, "smithson", by: w.otherDesk) == ["pt5"])
        #expect(try logins(w, "john", by: w.otherDesk).isEmpty, "LA2 sees none of LA1's patients")
        // What is refused: a doctor, a one-letter word, nothing, too many words.
        #expect(expectError(.forbidden) { _ = try logins(w, "smi", by: w.doctor) } != nil)
        for bad in ["s", "", "   ", "anna s", "a b c d e", "an bo cy dx ez", String(repeating: "a", count: 201)] {
            #expect(expectError(.invalidInput) { _ = try logins(w, bad) } != nil, "\(bad.prefix(20))")
        }
        // Each patient shown is in their own access log; a patient not shown is not.
        let smith = try #require(w.patients["pt1"]?.id)
        #expect(try w.system.clients.accessLog(clientId: smith).filter { $0.action == "patient.search" }.count == 4)
        let stranger = try #require(w.patients["pt5"]?.id)
        #expect(try w.system.clients.accessLog(clientId: stranger).filter { $0.action == "patient.search" }.count == 1)
        #expect(try auditIsSound(w.system))
    }

    /// Issue 56: the search awaited (the server's) finds what the blocking one (the CLI's) finds,
    /// refuses what it refuses, writes one `patient.search` row per patient shown, and makes an
    /// index missing or made under another key again before it searches.
    @Test func theSearchAwaitedIsTheBlockingOne() async throws {
        let w = try world()
        func blocking(_ member: StaffMember, _ query: String) -> String {
            do { return "\(try w.system.staff.findPatients(member, query: query).map(\.id))" } catch { return "\(error)" }
        }
        let searches = "SELECT count(*) FROM audit_events WHERE action = 'patient.search'"
        for (member, query) in [(w.desk, "smi"), (w.desk, "anna smi"), (w.desk, "Ив"), (w.desk, "newc"), (w.otherDesk, "smithson"),
                                (w.otherDesk, "john"), (w.doctor, "smi"), (w.desk, "s"), (w.desk, "a b c d e")] {
            let before = try storedInt(w.system, searches) ?? 0
            var awaited: String
            do { awaited = "\(try await w.system.staff.findPatients(member, query: query, requestId: "req-search").map(\.id))" }
            catch { awaited = "\(error)" }
            let shown = (try storedInt(w.system, searches) ?? 0) - before
            #expect(awaited == blocking(member, query), "\(member.login) \(query)")
            #expect(shown * 2 == (try storedInt(w.system, searches) ?? 0) - before, "as many rows as the blocking search wrote")
        }
        let smiths = [w.patients["pt1"]?.id, w.patients["pt2"]?.id].compactMap { $0 }
        #expect(try await w.system.staff.findPatients(w.desk, query: "smi").map(\.id) == smiths)
        // No index, or one under another key: made again, then searched.
        try w.system.database.writing { tx in try tx.clearSearchIndex() }
        #expect(try await w.system.staff.findPatients(w.desk, query: "smi").map(\.id) == smiths)
        try w.system.database.writing { tx in try tx.setSearchIndexCheck("0123") }
        #expect(try await w.system.staff.findPatients(w.desk, query: "smi").map(\.id) == smiths)
        #expect(try w.system.database.reading { tx in try tx.searchIndexCheck() } != "0123")
        #expect(try auditIsSound(w.system))
    }

    @Test func theIndexFollowsRenamesDeletionsAndMail() throws {
        let w = try world()
        let smith = try #require(w.patients["pt1"]?.id)
        _ = try w.system.clients.updateProfile(clientId: smith, ProfileChanges(surname: "Baker"))
        #expect(try logins(w, "smi") == ["pt2"])
        #expect(try logins(w, "bak") == ["pt1"])
        try w.system.clients.deleteAccount(clientId: smith, password: "correct-horse-42")
        #expect(try logins(w, "bak").isEmpty)
        #expect(try w.system.database.reading { tx in
            try tx.patients(withAnySearchToken: [PatientIndex.token(ofQueryWord: "bak", key: PatientIndex.key(try tx.cipherForTests(w.system)))],
                            atClinic: w.desk.clinicId)
        }.isEmpty)
    }

    @Test func anIndexMadeUnderAnotherKeyIsMadeAgain() throws {
        let w = try world()
        // As a database from before the index (or copied without it): no tokens, no check.
        try w.system.database.writing { tx in try tx.clearSearchIndex() }
        #expect(try w.system.database.reading { tx in try tx.searchIndexCheck() } == nil)
        #expect(try logins(w, "smi") == ["pt1", "pt2"])
        #expect(try w.system.database.reading { tx in try tx.searchIndexCheck() } != nil)
        // Tokens under a wrong check are replaced too.
        try w.system.database.writing { tx in try tx.setSearchIndexCheck("0123") }
        #expect(try logins(w, "иван") == ["pt4"])
    }

    /// SQLite's own file: no name in clear anywhere in it, and the search still finds the
    /// patients after the key is rotated (the tokens are all new).
    @Test(.sqliteOnly) func theFileHoldsNoNameAndSearchOutlivesAKeyRotation() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("search-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("c.sqlite").path
        let database = try SQLiteStore.open(path: path, migrations: projectMigrations)
        let w = try world(store: database)
        #expect(try logins(w, "smi") == ["pt1", "pt2"])
        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        var file = Data()
        for part in [path, path + "-wal"] where FileManager.default.fileExists(atPath: part) {
            file.append(try Data(contentsOf: URL(fileURLWithPath: part)))
        }
        #expect(file.range(of: Data("newcomer".utf8)) != nil, "logins are in clear: the scan can see text")
        for name in ["Smith", "SMITH", "smith", "Müller", "Иванов", "Émile"] {
            #expect(file.range(of: Data(name.utf8)) == nil, "\(name) is not in the file")
        }
        let before = try database.read { db in try Data.fetchAll(db, sql: "SELECT token FROM patient_search") }
        try database.rotateKey()
        let after = try database.read { db in try Data.fetchAll(db, sql: "SELECT token FROM patient_search") }
        #expect(before.count == after.count && Set(before).isDisjoint(with: Set(after)), "every token is new")
        #expect(try logins(w, "smi") == ["pt1", "pt2"])
        #expect(try logins(w, "mull") == ["pt3"])
    }

    @Test func foldingAndWords() throws {
        #expect(PatientIndex.folded("Émile") == "emile")
        #expect(PatientIndex.folded("ＳＭＩＴＨ") == "smith")
        #expect(PatientIndex.folded("Ёлкин") == "елкин")
        #expect(PatientIndex.words(of: "O'Brien-Smith") == ["o", "brien", "smith", "obriensmith"])
        #expect(try PatientIndex.queryWords(" O'Bri  smi ") == ["obri", "smi"])
    }
}

extension StoreReading {
    func cipherForTests(_ system: ClinicSystem) throws -> FieldCipher { try system.database.personalDataKey.cipher(self) }
}
