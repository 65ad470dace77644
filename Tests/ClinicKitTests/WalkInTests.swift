import Foundation
import Testing
@testable import ClinicKit

/// Walk-in and phone patients (issue 29): registered by the front desk without an online
/// account, found and booked by the clinic that registered them only, and later claimed with a
/// one-time code — never by guessing.
@Suite struct WalkInTests {
    struct World {
        let system: ClinicSystem
        let clock: TestClock
        let desk: StaffMember, doctor: StaffMember, otherDesk: StaffMember
        let therapy: Department
    }

    func world() throws -> World {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let therapy = try department(system, "LA1", "therapy")
        let la1 = try clinic(system, "LA1").id ?? 0, la2 = try clinic(system, "LA2").id ?? 0
        let doctorId = try #require(try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0).first?.id)
        func add(_ login: String, _ role: StaffRole, _ clinic: Int64, doctor: Int64? = nil) throws -> StaffMember {
            try system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: role, clinicId: clinic,
                                                 doctorId: doctor, password: "staff-passphrase-77"))
        }
        return World(system: system, clock: clock, desk: try add("desk-a", .receptionist, la1),
                     doctor: try add("doctor-a", .doctor, la1, doctor: doctorId), otherDesk: try add("desk-b", .receptionist, la2),
                     therapy: therapy)
    }

    let olga = WalkInRequest(name: "Olga", surname: "Petrova", birthDate: "1961-04-12", phone: "+1 (775) 555-0134",
                             email: "olga@example.org", language: .ru)

    @Test func theFrontDeskRegistersFindsAndBooksAWalkIn() throws {
        let w = try world()
        let olga = try w.system.staff.registerWalkIn(w.desk, self.olga)
        #expect(olga.login == nil && olga.name == "Olga" && olga.birthDate == "1961-04-12" && olga.phone == "+1 (775) 555-0134")
        // Found by surname, phone, year of birth, e-mail; by the clinic that registered her only.
        for query in ["petr", "775", "1961", "19610412", "olga@ex", "olga petrova"] {
            #expect(try w.system.staff.findPatients(w.desk, query: query).map(\.id) == [olga.id], "\(query)")
        }
        #expect(try w.system.staff.findPatients(w.otherDesk, query: "petr").isEmpty)
        // Booked by id, by the patient's rules; another clinic's desk cannot.
        let monday = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)
        let booked = try w.system.staff.book(w.desk, patientId: olga.id, departmentId: w.therapy.id ?? 0, at: monday)
        #expect(booked.clientId == olga.id)
        #expect(expectError(.notFound) { _ = try w.system.staff.claimCode(w.otherDesk, patientId: olga.id) } != nil)
        // Her inbox waits for her in Russian.
        let inbox = try w.system.clients.messages(clientId: olga.id)
        #expect(inbox.first?.subject.hasPrefix("Вы записаны") == true, "\(inbox.map(\.subject))")
        let log = try w.system.clients.accessLog(clientId: olga.id).map(\.action)
        #expect(log.last == "patient.register" && log.first == "appointment.book" && log.contains("patient.search"), "newest first")
        #expect(try auditIsSound(w.system))
    }

    /// Issue 56: the awaited registration (the server's) writes what the blocking one (the CLI's)
    /// writes — the patient sealed and searchable, the clinic's walk-in row, the audit row — and a
    /// refusal writes nothing.
    @Test func theAwaitedRegistrationIsTheBlockingOne() async throws {
        let w = try world()
        let staff = w.system.staff
        let olga = try await staff.registerWalkIn(w.desk, self.olga, requestId: "req-walk-in")
        let ivan = try Self.blockingRegistration(w, WalkInRequest(name: "Ivan", surname: "Petrov", birthDate: "1958-01-02",
                                                                  phone: "7755550199"))
        #expect(olga.login == nil && olga.name == "Olga" && olga.email == "olga@example.org" && olga.phone == "+1 (775) 555-0134")
        #expect(try await staff.findPatients(w.desk, query: "petr").map(\.id) == [ivan.id, olga.id], "both searchable, by surname")
        #expect(try storedInt(w.system, "SELECT count(*) FROM walk_ins WHERE client_id = \(olga.id) AND staff_id = \(w.desk.id)") == 1)
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'patient.register' AND client_id = \(olga.id)") == 1)
        let logs = try Self.accessLogs(w, olga.id, ivan.id)
        #expect(logs.0 == logs.1 && logs.0 == ["patient.search", "patient.register"], "\(logs)")
        #expect(try auditIsSound(w.system))
        let before = try fingerprint(w.system)
        for (member, request, code) in [(w.doctor, self.olga, ClinicError.Code.forbidden),
                                        (w.desk, WalkInRequest(name: "Ol9a", surname: "P", birthDate: "1961-04-12", phone: "7755550134"),
                                         .invalidInput)] {
            do {
                _ = try await staff.registerWalkIn(member, request)
                Issue.record("\(member.role) \(request.name) registered")
            } catch let error as ClinicError { #expect(error.code == code) }
        }
        #expect(try fingerprint(w.system) == before)
    }

    /// Issue 56: the front desk's page of a patient awaited (the web's) is the blocking one: the
    /// patient, their visits at the member's clinic only (the latest first, each with its
    /// history), one `patient.read` row per page; another clinic's desk reads nothing and writes nothing.
    @Test func thePatientsPageAwaitedIsTheBlockingOne() async throws {
        let w = try world()
        let olga = try await w.system.staff.registerWalkIn(w.desk, self.olga)
        let first = try Self.bookForOlga(w, olga.id, hour: 9), second = try Self.bookForOlga(w, olga.id, hour: 10)
        let reads = "SELECT count(*) FROM audit_events WHERE action = 'patient.read' AND client_id = \(olga.id)"
        let page = try await w.system.staff.patientPage(w.desk, id: olga.id, requestId: "req-page")
        #expect(try storedInt(w.system, reads) == 1)
        let blocking = try Self.blockingPage(w, olga.id)
        #expect(try storedInt(w.system, reads) == 2)
        #expect(page.patient == blocking.patient && page.patient.name == "Olga" && page.clinic.id == w.desk.clinicId)
        #expect(page.visits.map(\.appointment.id) == [second.id, first.id] && blocking.visits.map(\.appointment.id) == [second.id, first.id])
        #expect(page.visits.map(\.history) == blocking.visits.map(\.history) && page.visits.allSatisfy { $0.history.first?.event == "booked" })
        let before = try fingerprint(w.system)
        for (member, id) in [(w.otherDesk, olga.id), (w.desk, 99_999), (w.desk, 0)] {
            await #expect(throws: ClinicError(.notFound, .staffPatientIdNotFound, String(id))) {
                _ = try await w.system.staff.patientPage(member, id: id)
            }
        }
        await #expect(throws: ClinicError.self) { _ = try await w.system.staff.patientPage(w.doctor, id: olga.id) }
        #expect(try fingerprint(w.system) == before, "a refusal writes nothing")
        #expect(try auditIsSound(w.system))
    }

    static func bookForOlga(_ w: World, _ id: Int64, hour: Int) throws -> Appointment {
        try w.system.staff.book(w.desk, patientId: id, departmentId: w.therapy.id ?? 0,
                                at: .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: hour, minute: 0)!))
    }

    static func blockingPage(_ w: World, _ id: Int64) throws
        -> (patient: PatientMatch, visits: [(appointment: Appointment, history: [AppointmentEvent])]) {
        try w.system.staff.patientPage(w.desk, id: id)
    }

    static func accessLogs(_ w: World, _ a: Int64, _ b: Int64) throws -> ([String], [String]) {
        (try w.system.clients.accessLog(clientId: a).map(\.action), try w.system.clients.accessLog(clientId: b).map(\.action))
    }

    static func blockingRegistration(_ w: World, _ request: WalkInRequest) throws -> PatientMatch {
        try w.system.staff.registerWalkIn(w.desk, request)
    }

    @Test func badFieldsAreRefusedAndChangeNothing() throws {
        let w = try world()
        var bad = [WalkInRequest]()
        for (birth, phone, email, name) in [("1961-02-30", "7755550134", nil, "Olga"), ("2099-01-01", "7755550134", nil, "Olga"),
                                            ("1899-12-31", "7755550134", nil, "Olga"), ("12.04.1961", "7755550134", nil, "Olga"),
                                            ("1961-04-12", "555-12", nil, "Olga"), ("1961-04-12", "7755550134x", nil, "Olga"),
                                            ("1961-04-12", "1234567890123456", nil, "Olga"), ("1961-04-12", "7755550134", "not-mail", "Olga"),
                                            ("1961-04-12", "7755550134", nil, "Ol9a"), ("1961-04-12", "7755550134", nil, "")] as [(String, String, String?, String)] {
            bad.append(WalkInRequest(name: name, surname: "Petrova", birthDate: birth, phone: phone, email: email))
        }
        for request in bad {
            #expect(expectError(.invalidInput) { _ = try w.system.staff.registerWalkIn(w.desk, request) } != nil,
                    "\(request.birthDate) \(request.phone) \(request.email ?? "") \(request.name)")
        }
        #expect(expectError(.forbidden) { _ = try w.system.staff.registerWalkIn(w.doctor, olga) } != nil)
        #expect(try w.system.staff.findPatients(w.desk, query: "petr").isEmpty, "nothing was stored")
    }

    /// By both paths: the CLI's seam and a server's awaited store (`ClaimStore`).
    @Test(arguments: [false, true]) func theWalkInClaimsTheAccountWithTheCodeOnly(awaited: Bool) async throws {
        let w = try world()
        func claim(_ code: String, _ login: String, _ password: String, again: String? = nil) async throws -> Client {
            if awaited {
                return try await w.system.clients.claim(code: code, login: login, password: password, confirmPassword: again,
                                                        passwords: InlinePasswordRunner())
            }
            return try { try w.system.clients.claim(code: code, login: login, password: password, confirmPassword: again) }()
        }
        let olga = try await w.system.staff.registerWalkIn(w.desk, self.olga)
        let password = "my-own-pass-phrase-9"
        // Nobody logs in before the claim, whatever they try.
        let stored = try #require(try w.system.database.reading { tx in try tx.storedClient(id: olga.id) })
        #expect(expectError(.invalidCredentials) { _ = try w.system.clients.logIn(login: stored.client.login, password: "") } != nil)
        #expect(await expectError(.invalidInput) { _ = try await claim("AAAA-BBBB-CCCC", "olga", password) } != nil)

        let first = try await w.system.staff.claimCode(w.desk, patientId: olga.id)
        let second = try await w.system.staff.claimCode(w.desk, patientId: olga.id)
        #expect(first.code != second.code && second.code.count == 14)
        #expect(await expectError(.invalidInput) { _ = try await claim(first.code, "olga", password) } != nil,
                "a new code replaces the one before")
        // A weak password or a taken login is refused, and the code still works after.
        _ = try register(w.system, "taken")
        let before = try fingerprint(w.system)
        #expect(await expectError(.weakPassword) { _ = try await claim(second.code, "olga", "petrova") } != nil)
        #expect(await expectError(.loginTaken) { _ = try await claim(second.code, "TAKEN", password) } != nil)
        #expect(await expectError(.invalidInput) { _ = try await claim(second.code, "olga", password, again: password + "x") } != nil,
                "the password typed twice differs")
        #expect(try fingerprint(w.system) == before, "a refusal changes nothing")
        // Typed in lower case and without dashes, it is the same code.
        let typed = second.code.lowercased().replacingOccurrences(of: "-", with: " ")
        let claimed = try await claim(typed, "olga", password)
        #expect(claimed.id == olga.id && claimed.login == "olga" && claimed.privacyVersion == PrivacyPolicy.version)
        let (me, _) = try w.system.clients.logIn(login: "olga", password: password)
        #expect(me.id == olga.id && me.name == "Olga" && me.birthDate == "1961-04-12" && me.email == "olga@example.org")
        // Used once; and a patient with an account gets no code.
        #expect(await expectError(.invalidInput) { _ = try await claim(second.code, "olga2", password) } != nil)
        #expect(expectError(.invalidInput) { _ = try w.system.staff.claimCode(w.desk, patientId: olga.id) } != nil)
        // Found by her login now too.
        let found = try await w.system.staff.findPatients(w.desk, query: "olga")
        #expect(found.map(\.login) == ["olga"])
    }

    /// By both paths: the CLI's seam and a server's awaited store (`FrontDeskChangesStore.deskClaimCode`).
    @Test(arguments: [false, true]) func theCodeGoesByMailToAWalkInWithAnAddress(awaited: Bool) async throws {
        let w = try world()
        func claimCode(_ member: StaffMember, _ id: Int64) async throws -> ClaimCode {
            if awaited { return try await w.system.staff.claimCode(member, patientId: id) }
            return try { try w.system.staff.claimCode(member, patientId: id) }()
        }
        let olga = try await w.system.staff.registerWalkIn(w.desk, self.olga)
        let before = try fingerprint(w.system)
        #expect(await expectError(.notFound) { _ = try await claimCode(w.otherDesk, olga.id) } != nil, "another clinic's patient")
        #expect(await expectError(.notFound) { _ = try await claimCode(w.desk, 0) } != nil)
        #expect(await expectError(.forbidden) { _ = try await claimCode(w.doctor, olga.id) } != nil)
        #expect(try fingerprint(w.system) == before, "a refusal writes nothing")
        let code = try await claimCode(w.desk, olga.id)
        #expect(try await w.system.clients.accessLog(clientId: olga.id).map(\.action).contains("patient.claim-code"))
        #expect(code.emailed)
        let mailer = RecordingMailer()
        _ = try await w.system.outbox.run(mailer: mailer, from: "clinic@example.org")
        let mail = try #require(mailer.messages.first { $0.to == "olga@example.org" })
        let body = decodedParts(mail.text).joined()
        #expect(body.contains(code.code) && body.contains("Adventist Medical Center") && body.contains("Вас зарегистрировали"),
                "the code and the clinic, in her language: \(body)")
        // No address, no mail; a code written but not yet sent when she claims is not sent after.
        let ivan = try await w.system.staff.registerWalkIn(w.desk, WalkInRequest(name: "Ivan", surname: "Kuzmin", birthDate: "1980-01-31",
                                                                           phone: "7755550142"))
        #expect(try await !claimCode(w.desk, ivan.id).emailed)
        let second = try await claimCode(w.desk, olga.id)
        _ = try w.system.clients.claim(code: second.code, login: "olga", password: "my-own-pass-phrase-9")
        let later = RecordingMailer()
        _ = try await w.system.outbox.run(mailer: later, from: "clinic@example.org")
        #expect(!later.messages.contains { decodedParts($0.text).joined().contains(second.code) })
    }

    @Test func aCodeExpiresAfterAWeek() throws {
        let w = try world()
        let olga = try w.system.staff.registerWalkIn(w.desk, self.olga)
        let code = try w.system.staff.claimCode(w.desk, patientId: olga.id)
        w.clock.advance(Double(StaffController.claimCodeDays) * 86_400 + 1)
        #expect(expectError(.invalidInput) { _ = try w.system.clients.claim(code: code.code, login: "olga", password: "my-own-pass-phrase-9") } != nil)
    }
}
