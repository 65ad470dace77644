import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

@Suite struct ProfileTests {
    let monday = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)

    @Test func editingChecksFieldsGeocodesANewCityAndKeepsDataSealed() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let updated = try system.clients.updateProfile(clientId: anna.id ?? 0, ProfileChanges(
            surname: "Ivanova", street: "Oak Street", city: "Минск", language: .ru))
        #expect(updated.surname == "Ivanova" && updated.street == "Oak Street" && updated.city == "Минск" && updated.language == .ru)
        #expect(abs((updated.lat ?? 0) - 53.9) < 0.1, "the new city was looked up")
        #expect(try system.clients.getUserById(anna.id ?? 0) == updated)
        let raw = try system.database.reading { tx in try tx.storedClient(id: anna.id ?? 0)?.client }
        #expect(raw?.surname == "" && raw?.street == "", "still sealed")
        let before = try fingerprint(system)
        #expect(expectError(.invalidInput) { _ = try system.clients.updateProfile(clientId: anna.id ?? 0, ProfileChanges(name: "R2D2")) } != nil)
        #expect(expectError(.invalidInput) { _ = try system.clients.updateProfile(clientId: anna.id ?? 0, ProfileChanges(city: "Qwertyville")) }?.key == .cityUnknown)
        #expect(expectError(.notFound) { _ = try system.clients.updateProfile(clientId: anna.id ?? 0, ProfileChanges(clinicId: 99_999)) } != nil)
        #expect(try fingerprint(system) == before)
    }

    @Test func changingThePasswordNeedsTheOldOneAndEndsOtherSessions() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let (_, mine) = try system.clients.logIn(login: "anna", password: "correct-horse-42")
        let (_, other) = try system.clients.logIn(login: "anna", password: "correct-horse-42")
        #expect(expectError(.invalidCredentials) {
            try system.clients.changePassword(clientId: anna.id ?? 0, old: "wrong-horse-42", new: "purple-monkey-dishwasher", keeping: mine)
        } != nil)
        #expect(expectError(.weakPassword) {
            try system.clients.changePassword(clientId: anna.id ?? 0, old: "correct-horse-42", new: "short", keeping: mine)
        } != nil)
        try system.clients.changePassword(clientId: anna.id ?? 0, old: "correct-horse-42", new: "purple-monkey-dishwasher", keeping: mine)
        #expect(try system.clients.currentUser(token: mine).login == "anna")
        #expect(expectError(.notLoggedIn) { _ = try system.clients.currentUser(token: other) } != nil)
        #expect(try system.clients.logIn(login: "anna", password: "purple-monkey-dishwasher").client.id == anna.id)
    }

    @Test func exportHoldsEverythingStoredAboutThePatient() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        _ = try system.clients.logIn(login: "anna", password: "correct-horse-42")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0,
                                                               departmentId: try department(system, "LA1", "therapy").id ?? 0, at: monday)
        _ = try system.appointments.cancelAppointment(booked.id ?? 0, clientId: anna.id ?? 0)
        let data = try system.clients.export(clientId: anna.id ?? 0)
        #expect(data.client.name == "Anna" && data.client.street == "Main Street")
        #expect(data.appointments.count == 1 && data.appointments[0].1.map(\.event) == ["booked", "cancelled"])
        #expect(data.sessions.count == 1)
    }

    /// After deleting an account, no column of any table holds anything of the patient's. By
    /// both paths, the CLI's seam and a server's awaited store (issue 56).
    @Test(arguments: [false, true]) func deletingTheAccountLeavesNothingPersonalAnywhere(awaited: Bool) async throws {
        let system = try makeSystem()
        let zed = try system.clients.registerUser(RegistrationRequest(
            login: "zedlogin", password: "correct-horse-42", name: "Zebulon", surname: "Quaxley", street: "Wisteria Lane",
            house: "4242", city: "Los Angeles", acceptedPrivacy: true))
        _ = try system.clients.logIn(login: "zedlogin", password: "correct-horse-42")
        _ = expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "zedlogin", password: "wrong-horse-42") }
        let booked = try system.appointments.createAppointment(clientId: zed.id ?? 0, departmentId: try department(system, "LA1", "therapy").id ?? 0,
                                                               at: monday, notes: "Zebulon has a cough")
        func delete(_ password: String) async throws {
            if awaited {
                try await system.clients.deleteAccount(clientId: zed.id ?? 0, password: password, passwords: InlinePasswordRunner())
            } else {
                try { try system.clients.deleteAccount(clientId: zed.id ?? 0, password: password) }()
            }
        }
        #expect(await expectError(.invalidCredentials) { try await delete("nope-nope-nope") } != nil)
        #expect(try storedInt(system, "SELECT count(*) FROM clients") == 1, "a wrong password deletes nothing")
        try await delete("correct-horse-42")
        #expect(await expectError(.notFound) { try await delete("correct-horse-42") } != nil, "gone")

        let secrets = ["zedlogin", "Zebulon", "Quaxley", "Wisteria", "4242", "cough"]
        for (table, rows) in try storedTables(system) {
            for row in rows {
                for secret in secrets where row.localizedCaseInsensitiveContains(secret) {
                    Issue.record("\(table) still holds \(secret): \(row)")
                }
            }
        }
        #expect(try storedInt(system, "SELECT count(*) FROM sessions") == 0)
        let kept = try system.database.reading { tx in try tx.appointment(id: booked.id ?? 0) }
        #expect(kept != nil && kept?.clientId == nil && kept?.notes == "", "kept for the clinic, anonymous")
        // The login is free again.
        _ = try { try register(system, "zedlogin") }()
    }
}

/// Registration takes the date of birth and a phone (issue 55: the desk's printed day had
/// blanks for every online patient); each is checked as the front desk checks a walk-in's,
/// stored sealed, and optional unless the front asks for it (the web does).
@Suite struct RegistrationDetailsTests {
    func request(birthDate: String?, phone: String?) -> RegistrationRequest {
        RegistrationRequest(login: "dora", password: "correct-horse-42", name: "Dora", surname: "Diaz", street: "Main Street",
                            house: "12", city: "Los Angeles", acceptedPrivacy: true, birthDate: birthDate, phone: phone)
    }

    @Test func theDateOfBirthAndAPhoneAreCheckedAndKeptSealed() throws {
        let system = try makeSystem()
        let problems = try system.clients.registrationProblems(request(birthDate: "2999-01-01", phone: "12"))
        #expect(Set(problems.map(\.field)) == ["birthDate", "phone"])
        var required = request(birthDate: nil, phone: nil)
        required.birthDateRequired = true
        #expect(try system.clients.registrationProblems(required).map(\.field) == ["birthDate"])
        #expect(try system.clients.registrationProblems(request(birthDate: nil, phone: nil)).isEmpty, "optional for the API and CLI")

        let dora = try system.clients.registerUser(request(birthDate: "1990-02-01", phone: "(503) 555-0142"))
        let stored = try system.clients.getUserById(dora.id ?? 0)
        #expect(stored.birthDate == "1990-02-01" && stored.phone == "(503) 555-0142")
        #expect(ClientJSON(stored).birthDate == "1990-02-01")
        let rows = try storedRows(system, "SELECT * FROM clients WHERE id = \(dora.id ?? 0)")
        let raw = rows.map { $0.columns.values.joined(separator: "|") }.joined()
        #expect(!raw.contains("1990-02-01") && !raw.contains("555-0142"), "sealed, not stored in the clear")
    }
}
