import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// Staff accounts (migration 11): roles scoped to a clinic, the clinic's day, the lifecycle,
/// and the audit trail they leave. "Now" is Sunday 2026-11-22 12:00 UTC; the appointment is
/// Monday 2026-11-23 09:20 in Los Angeles (17:20 UTC).
@Suite struct StaffTests {
    let monday0920 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)
    let password = "staff-passphrase-77"

    struct World {
        let system: ClinicSystem
        let clock: TestClock
        let anna: Client
        let booked: Appointment
        let adminA: StaffMember, receptionA: StaffMember, doctorA: StaffMember, otherDoctorA: StaffMember, adminB: StaffMember
    }

    func world() throws -> World {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let la1 = try clinic(system, "LA1").id ?? 0, la2 = try clinic(system, "LA2").id ?? 0
        let other = try #require(try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0).first { $0.id != booked.doctorId })
        func add(_ login: String, _ role: StaffRole, _ clinic: Int64, doctor: Int64? = nil) throws -> StaffMember {
            try system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: role, clinicId: clinic,
                                                 doctorId: doctor, password: password))
        }
        return World(system: system, clock: clock, anna: anna, booked: booked,
                     adminA: try add("admin-a", .clinicAdmin, la1), receptionA: try add("desk-a", .receptionist, la1),
                     doctorA: try add("doctor-a", .doctor, la1, doctor: booked.doctorId),
                     otherDoctorA: try add("doctor-a2", .doctor, la1, doctor: other.id), adminB: try add("admin-b", .clinicAdmin, la2))
    }

    @Test func accountsLogInWithTheirOwnSessions() throws {
        let w = try world()
        let (member, token) = try w.system.staff.logIn(login: "DESK-A", password: password)
        #expect(member == w.receptionA)
        #expect(try w.system.staff.current(token: token) == w.receptionA)
        #expect(expectError(.invalidCredentials) { _ = try w.system.staff.logIn(login: "desk-a", password: "wrong-passphrase-1") } != nil)
        #expect(expectError(.invalidCredentials) { _ = try w.system.staff.logIn(login: "nobody", password: password) } != nil)
        // A patient's token is not a staff session, nor the other way round.
        let (_, patientToken) = try w.system.clients.logIn(login: "anna", password: "correct-horse-42")
        #expect(expectError(.notLoggedIn) { _ = try w.system.staff.current(token: patientToken) } != nil)
        #expect(expectError(.notLoggedIn) { _ = try w.system.clients.currentUser(token: token) } != nil)
        // Twelve hours idle end a staff session.
        w.clock.advance(12 * 3600 + 60)
        #expect(expectError(.notLoggedIn) { _ = try w.system.staff.current(token: token) } != nil)
        // A disabled account cannot log in, and its sessions end.
        let (_, fresh) = try w.system.staff.logIn(login: "desk-a", password: password)
        _ = try w.system.staff.disable(w.receptionA.id, by: w.adminA)
        #expect(expectError(.notLoggedIn) { _ = try w.system.staff.current(token: fresh) } != nil)
        #expect(expectError(.invalidCredentials) { _ = try w.system.staff.logIn(login: "desk-a", password: password) } != nil)
    }

    /// Issue 56: an account disabled awaited (the server's) as the blocking way (the CLI's): only
    /// its clinic's admin may, a refusal changes nothing, and its sessions end with it.
    @Test func anAccountDisabledAwaitedEndsItsSessions() async throws {
        let w = try world()
        let token = try Self.logIn(w, "desk-a")
        let before = try fingerprint(w.system)
        for (target, viewer, code) in [(w.doctorA.id, w.receptionA, ClinicError.Code.forbidden), (w.receptionA.id, w.adminB, .notFound),
                                       (99_999, w.adminA, .notFound)] {
            do {
                _ = try await w.system.staff.disable(target, by: viewer)
                Issue.record("\(viewer.login) disabled \(target)")
            } catch let error as ClinicError { #expect(error.code == code, "\(viewer.login) \(target)") }
        }
        #expect(try fingerprint(w.system) == before, "a refusal changes nothing")
        let disabled = try await w.system.staff.disable(w.receptionA.id, by: w.adminA, requestId: "req-disable")
        #expect(!disabled.isActive && disabled.login == "desk-a")
        #expect(Self.current(w, token) == .notLoggedIn, "its sessions ended")
        #expect(try storedInt(w.system, "SELECT count(*) FROM staff_sessions WHERE staff_id = \(w.receptionA.id)") == 0)
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'staff.disable' AND request_id = 'req-disable'") == 1)
        #expect(try auditIsSound(w.system))
    }

    static func logIn(_ w: World, _ login: String) throws -> String {
        try w.system.staff.logIn(login: login, password: "staff-passphrase-77").token
    }

    static func current(_ w: World, _ token: String) -> ClinicError.Code? {
        do { _ = try w.system.staff.current(token: token); return nil } catch let error as ClinicError { return error.code } catch { return .storage }
    }

    /// Issue 56: an account added awaited (the server's, `StaffAccountsStore.addStaff`) as the
    /// blocking way (the CLI's): the same refusals, none of which changes anything.
    @Test(arguments: [false, true]) func whoMayCreateAccounts(awaited: Bool) async throws {
        let w = try world()
        let la1 = w.adminA.clinicId, la2 = w.adminB.clinicId
        func add(_ input: StaffInput, by creator: StaffMember?) async throws -> StaffMember {
            if awaited { return try await w.system.staff.addStaff(input, by: creator, requestId: "req-add", passwords: InlinePasswordRunner()) }
            return try { try w.system.staff.addStaff(input, by: creator, requestId: "req-add") }()
        }
        let input = StaffInput(login: "new-desk", name: "Kim", surname: "Park", role: .receptionist, clinicId: la1, password: password)
        let before = try fingerprint(w.system)
        #expect(await expectError(.forbidden) { _ = try await add(input, by: w.receptionA) } != nil)
        #expect(await expectError(.forbidden) { _ = try await add(input, by: w.doctorA) } != nil)
        #expect(await expectError(.notFound) { _ = try await add(input, by: w.adminB) } != nil, "another clinic's admin")
        var elsewhere = input
        elsewhere.clinicId = la2
        #expect(await expectError(.notFound) { _ = try await add(elsewhere, by: w.adminA) } != nil)
        var nowhere = input
        nowhere.clinicId = 99_999
        #expect(await expectError(.notFound) { _ = try await add(nowhere, by: nil) } != nil, "the operator names no clinic")
        var doctorOfB = input
        doctorOfB.role = .doctor
        doctorOfB.doctorId = try w.system.departments.getDoctorsByDepartmentId(try department(w.system, "LA2", "pediatrics").id ?? 0)[0].id
        #expect(await expectError(.notFound) { _ = try await add(doctorOfB, by: w.adminA) } != nil, "a doctor of clinic B")
        doctorOfB.doctorId = 99_999
        #expect(await expectError(.notFound) { _ = try await add(doctorOfB, by: w.adminA) } != nil, "no such doctor")
        var weak = input
        weak.password = "short"
        #expect(await expectError(.weakPassword) { _ = try await add(weak, by: w.adminA) } != nil)
        #expect(await expectError(.loginTaken) {
            _ = try await add(StaffInput(login: "Admin-A", name: "X", surname: "Y", role: .receptionist, clinicId: la1, password: password),
                              by: nil)
        } != nil)
        #expect(try fingerprint(w.system) == before, "refusals change nothing")
        let added = try await add(input, by: w.adminA)
        #expect(added.role == .receptionist && added.clinicId == la1 && added.isActive)
        #expect(try w.system.staff.logIn(login: "NEW-DESK", password: password).member == added, "its password is the one given")
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'staff.add' AND request_id = 'req-add'") == 1)
        #expect(try auditIsSound(w.system))
        #expect(expectError(.forbidden) { _ = try w.system.staff.accounts(clinicId: la1, by: w.receptionA) } != nil)
        #expect(expectError(.notFound) { _ = try w.system.staff.accounts(clinicId: la1, by: w.adminB) } != nil)
        let listed = try await w.system.staff.accounts(clinicId: la1, by: w.adminA)
        #expect(listed.map(\.login).contains("new-desk"))
    }

    @Test func theDayIsScopedToTheClinicAndTheDoctor() throws {
        let w = try world()
        let monday = LocalDateTime(year: 2026, month: 11, day: 23)!
        let desk = try w.system.staff.schedule(w.receptionA, day: monday)
        #expect(desk.entries.map(\.appointment.id) == [w.booked.id])
        #expect(desk.entries.first?.patientName == "Anna Smith" && desk.zone.identifier == "America/Los_Angeles")
        #expect(try w.system.staff.schedule(w.adminB, day: monday).entries.isEmpty, "another clinic sees nothing")
        #expect(try w.system.staff.schedule(w.doctorA, day: monday).entries.count == 1)
        #expect(try w.system.staff.schedule(w.otherDoctorA, day: monday).entries.isEmpty, "another doctor's patients")
        #expect(expectError(.notFound) { _ = try w.system.staff.schedule(w.otherDoctorA, day: monday, doctorId: w.booked.doctorId) } != nil)
        #expect(expectError(.notFound) { _ = try w.system.staff.schedule(w.adminB, day: monday, departmentId: w.booked.departmentId) } != nil)
        #expect(try w.system.staff.schedule(w.receptionA, day: monday.adding(days: 1)).entries.isEmpty)
        // The patient sees who read their data: the receptionist and the doctor, not the others.
        let log = try w.system.clients.accessLog(clientId: w.anna.id ?? 0)
        #expect(log.map(\.role) == ["doctor", "receptionist"])
        #expect(log.allSatisfy { $0.action == "patient.read" && $0.actor == "staff" && $0.detail == "schedule 2026-11-23" })
        #expect(try auditIsSound(w.system))
    }

    @Test func theLifecycleByRole() throws {
        let w = try world()
        let id = w.booked.id ?? 0
        let staff = w.system.staff
        #expect(expectError(.notFound) { _ = try staff.act(w.adminB, .checkIn, appointmentId: id) } != nil, "clinic B's admin")
        #expect(expectError(.notFound) { _ = try staff.act(w.otherDoctorA, .start, appointmentId: id) } != nil, "another doctor")
        #expect(expectError(.forbidden) { _ = try staff.act(w.doctorA, .checkIn, appointmentId: id) } != nil)
        #expect(expectError(.forbidden) { _ = try staff.act(w.receptionA, .start, appointmentId: id) } != nil)
        w.clock.advance(21 * 3600)  // Monday 01:00 in Los Angeles: the visit's day, when it may be checked in
        #expect(try staff.act(w.receptionA, .checkIn, appointmentId: id).status == .arrived)
        #expect(expectError(.invalidTransition) { _ = try staff.act(w.receptionA, .checkIn, appointmentId: id) } != nil)
        #expect(try staff.act(w.doctorA, .start, appointmentId: id).status == .inProgress)
        #expect(expectError(.invalidTransition) { _ = try staff.act(w.doctorA, .complete, appointmentId: id) }?.key == .notStartedYet)
        w.clock.advance(30 * 3600)
        #expect(try staff.act(w.doctorA, .complete, appointmentId: id).status == .completed)
        let history = try w.system.appointments.history(id, clientId: w.anna.id ?? 0)
        #expect(history.map(\.event) == ["booked", "arrived", "in_progress", "completed"])
        #expect(history.map(\.staffId) == [nil, w.receptionA.id, w.doctorA.id, w.doctorA.id])
        let actions = try w.system.clients.accessLog(clientId: w.anna.id ?? 0).map(\.action)
        #expect(actions == ["appointment.complete", "appointment.start", "appointment.check-in"])
    }

    @Test func anArrivedPatientStillHoldsTheSlot() throws {
        let w = try world()
        w.clock.advance(21 * 3600)  // the visit's day in Los Angeles
        _ = try w.system.staff.act(w.receptionA, .checkIn, appointmentId: w.booked.id ?? 0)
        let bob = try register(w.system, "bob")
        #expect(expectError(.slotTaken) {
            _ = try w.system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: w.booked.departmentId,
                                                            at: monday0920, doctorId: w.booked.doctorId)
        } != nil)
        // Once checked in, the patient no longer moves or cancels it (the clinic does).
        let id = w.booked.id ?? 0, anna = w.anna.id ?? 0
        #expect(expectError(.invalidTransition) { _ = try w.system.appointments.cancelAppointment(id, clientId: anna) } != nil)
        #expect(expectError(.invalidTransition) {
            _ = try w.system.appointments.rescheduleAppointment(id, clientId: anna, to: .local(LocalDateTime(year: 2026, month: 11, day: 24, hour: 9, minute: 20)!))
        } != nil)
    }

    /// Issue 42: a cancelled visit gives its time back in the calendar: listed aside
    /// (`cancelled`), not over the slot (`occupying`), and the slot is free to book again.
    @Test func aCancelledVisitDoesNotOccupyItsTimeInTheCalendar() throws {
        let w = try world()
        let monday = LocalDateTime(year: 2026, month: 11, day: 23, hour: 0, minute: 0)!
        _ = try w.system.staff.act(w.receptionA, .cancel, appointmentId: w.booked.id ?? 0, reason: "The patient called")
        let calendar = try w.system.frontDeskCalendar(w.receptionA, from: monday, days: 1)
        let column = try #require(calendar.columns.first { $0.doctor.id == w.booked.doctorId })
        #expect(column.entries.map(\.appointment.id) == [w.booked.id], "the day's list still has it")
        #expect(column.occupying.isEmpty)
        #expect(column.cancelled.map(\.appointment.id) == [w.booked.id])
        #expect(column.slots.first { $0.start == w.booked.startsAt }?.isAvailable == true)
        // Issue 55: the API's and the CLI's JSON list it apart too, not among the appointments.
        let json = try #require(CalendarJSON(calendar).doctors.first { $0.doctorId == w.booked.doctorId })
        #expect(json.appointments.isEmpty && json.cancelled.count == 1)
    }

    /// The front desk's day awaited (issue 56: `FrontDeskStore.deskDay`): the same list and
    /// refusals as the blocking `schedule`, for each member and filter; one `patient.read` row
    /// per patient shown, the trail sound; a refusal writes nothing. The front desk's page
    /// (`frontDeskDay`) carries the clinic, its departments and active doctors read with it.
    @Test func theDayAwaitedIsTheBlockingOne() async throws {
        let w = try world()
        let monday = try #require(LocalDateTime(year: 2026, month: 11, day: 23))
        func entries(_ list: [DayEntry]) -> [String] {
            list.map { "\($0.appointment.id ?? 0) \($0.patientName ?? "-") \($0.patientLogin ?? "-") \($0.patientBirthDate ?? "-") "
                + "\($0.actions.map(\.rawValue))" }
        }
        func blocking(_ member: StaffMember, _ department: Int64?, _ doctor: Int64?) -> String {
            do {
                return entries(try w.system.staff.schedule(member, day: monday, departmentId: department, doctorId: doctor).entries)
                    .joined(separator: "; ")
            } catch { return "\(error)" }
        }
        let cases: [(StaffMember, Int64?, Int64?)] = [
            (w.receptionA, nil, nil), (w.adminB, nil, nil), (w.doctorA, nil, nil), (w.otherDoctorA, nil, nil),
            (w.otherDoctorA, nil, w.booked.doctorId), (w.adminB, w.booked.departmentId, nil), (w.adminB, nil, w.booked.doctorId),
            (w.receptionA, w.booked.departmentId, w.booked.doctorId), (w.receptionA, nil, 99_999),
        ]
        for (member, department, doctor) in cases {
            let reads = try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'patient.read'") ?? 0
            var awaited: String
            do {
                let facts = try await w.system.staff.deskDay(member, day: monday, departmentId: department, doctorId: doctor)
                awaited = entries(StaffController.dayEntries(facts, member)).joined(separator: "; ")
                #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'patient.read'") == reads + facts.patients.count,
                        "one read row per patient shown")
            } catch {
                awaited = "\(error)"
                #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'patient.read'") == reads, "a refusal writes nothing")
            }
            #expect(awaited == blocking(member, department, doctor), "\(member.role) \(department ?? 0) \(doctor ?? 0)")
        }
        let page = try await w.system.frontDeskDay(w.receptionA, day: monday)
        #expect(page.entries.map(\.appointment.id) == [w.booked.id] && page.entries.first?.patientName == "Anna Smith")
        #expect(page.clinic.externalId == "LA1" && page.zone.identifier == "America/Los_Angeles")
        #expect(page.departments.map(\.specialization) == ["cardiology", "neurology", "ophthalmology", "surgery", "therapy"])
        #expect(page.doctors.count == (try w.system.staff.doctors(w.receptionA)).count && page.doctors.contains { $0.doctor.id == w.booked.doctorId })
        #expect(try auditIsSound(w.system))
    }

    /// The front desk's calendar awaited (what `clinic serve` runs: each day's `deskDay`, the
    /// slots computed by a runner, the holds in one read): the blocking calendar's JSON for each
    /// member, filter and length, a live hold in its column, one `patient.read` row per patient
    /// and day shown, the same refusals.
    @Test func theCalendarAwaitedIsTheBlockingOne() async throws {
        let w = try world()
        let monday = try #require(LocalDateTime(year: 2026, month: 11, day: 23))
        let anna = w.anna.id ?? 0
        let free = try #require(try { try w.system.appointments.slots(departmentId: w.booked.departmentId, doctorId: w.booked.doctorId,
                                                                       from: monday, days: 2) }().last { $0.isAvailable })
        let hold = try { try w.system.appointments.holdSlot(clientId: anna, departmentId: w.booked.departmentId,
                                                            doctorId: w.booked.doctorId, at: free.start) }()
        func json(_ calendar: FrontDeskCalendar) throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            encoder.dateEncodingStrategy = .iso8601
            return String(decoding: try encoder.encode(CalendarJSON(calendar)), as: UTF8.self)
        }
        func blocking(_ member: StaffMember, _ days: Int, _ department: Int64?, _ doctor: Int64?) -> String {
            do {
                return try json(try w.system.frontDeskCalendar(member, from: monday, days: days, departmentId: department, doctorId: doctor))
            } catch { return "\(error)" }
        }
        let cases: [(StaffMember, Int, Int64?, Int64?)] = [
            (w.receptionA, 2, nil, nil), (w.receptionA, 1, w.booked.departmentId, nil), (w.receptionA, 7, nil, w.booked.doctorId),
            (w.doctorA, 1, nil, nil), (w.otherDoctorA, 1, nil, w.booked.doctorId), (w.adminB, 3, nil, nil),
            (w.receptionA, 8, nil, nil), (w.receptionA, 1, 99_999, nil),
        ]
        var holdsSeen = 0
        for (member, days, department, doctor) in cases {
            let reads = try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'patient.read'") ?? 0
            var awaited: String
            do {
                let calendar = try await w.system.frontDeskCalendar(member, from: monday, days: days, departmentId: department,
                                                                    doctorId: doctor, computing: InlinePasswordRunner())
                awaited = try json(calendar)
                let shown = Set(calendar.columns.flatMap { $0.entries.map { "\($0.appointment.clientId ?? 0) \(LocalDateTime.of($0.appointment.startsAt, in: calendar.zone).dayText)" } })
                #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'patient.read'") == reads + shown.count,
                        "one read row per patient and day shown")
                holdsSeen += calendar.columns.flatMap(\.holds).filter { $0.id == hold.id }.count
            } catch {
                awaited = "\(error)"
                #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'patient.read'") == reads, "a refusal writes nothing")
            }
            #expect(awaited == blocking(member, days, department, doctor), "\(member.role) \(days) \(department ?? 0) \(doctor ?? 0)")
        }
        // The hold is on Tuesday: in the desk's two-day and week's calendars, not in Monday's.
        #expect(LocalDateTime.of(free.start, in: try #require(TimeZone(identifier: "America/Los_Angeles"))).dayText == "2026-11-24")
        #expect(holdsSeen == 2, "the hold in its doctor's column of each calendar with its day")
        #expect(try auditIsSound(w.system))
    }

    /// The clinic admin's reads awaited (issue 56: `ClinicAdminReadsStore`): the doctors with
    /// their hours, a doctor's week (hours and exceptions), a department's visit types and the
    /// staff accounts, each as the blocking reads give them, and another clinic's refused as one
    /// that does not exist.
    @Test func theClinicAdminsReadsAwaitedAreTheBlockingOnes() async throws {
        let w = try world()
        let staff = w.system.staff, doctor = w.booked.doctorId
        func blockingDoctors() throws -> [String] {
            try staff.doctors(w.adminA).map { "\($0.doctor.id ?? 0)/\($0.department.id ?? 0) \(try staff.hours(w.adminA, doctorId: $0.doctor.id ?? 0))" }
        }
        let doctors = try await staff.doctorsWithHours(w.adminA).map { "\($0.doctor.id ?? 0)/\($0.department.id ?? 0) \($0.hours)" }
        #expect(try doctors == blockingDoctors() && doctors.count > 5)
        #expect(try await staff.doctorsWithHours(w.receptionA).count == doctors.count, "any staff member of the clinic")
        _ = try await staff.addException(w.adminA, doctorId: doctor, day: try #require(LocalDateTime(year: 2026, month: 12, day: 1)), hours: nil)
        let week = try await staff.doctorWeek(w.adminA, doctorId: doctor)
        func blockingWeek() throws -> ([WorkingHours], [WorkingException]) {
            (try staff.hours(w.adminA, doctorId: doctor), try w.system.database.reading { tx in try tx.workingExceptions(ofDoctor: doctor) })
        }
        let (hours, exceptions) = try blockingWeek()
        #expect(week.hours == hours && !hours.isEmpty && week.exceptions == exceptions && exceptions.count == 1)
        for id in [doctor, 99_999] {
            await #expect(throws: ClinicError(.notFound, .doctorNotFound, String(id))) {
                _ = try await staff.doctorWeek(w.adminB, doctorId: id)
            }
        }
        let therapy = w.booked.departmentId
        let long = try await staff.addVisitType(w.adminA, departmentId: therapy, nameEn: "Long visit", nameRu: "Долгий приём", durationMinutes: 40)
        _ = try await staff.removeVisitType(w.adminA, id: long.id ?? 0)
        func blockingTypes() throws -> [VisitType] { try staff.visitTypes(w.adminA, departmentId: therapy) }
        let types = try await staff.visitTypes(w.adminA, departmentId: therapy)
        #expect(try types == blockingTypes() && types.contains { $0.id == long.id && !$0.isActive }, "inactive ones too")
        await #expect(throws: ClinicError(.notFound, .departmentNotFound, String(therapy))) {
            _ = try await staff.visitTypes(w.adminB, departmentId: therapy)
        }
        // The staff accounts: the clinic admin's list, as the blocking one; no other role's, no other clinic's.
        let clinicA = w.adminA.clinicId
        func blockingAccounts() throws -> [StaffMember] { try staff.accounts(clinicId: clinicA, by: w.adminA) }
        let accounts = try await staff.accounts(clinicId: clinicA, by: w.adminA)
        #expect(try accounts == blockingAccounts() && accounts.map(\.login) == ["admin-a", "desk-a", "doctor-a", "doctor-a2"])
        await #expect(throws: ClinicError(.forbidden, .staffForbidden, "receptionist")) {
            _ = try await staff.accounts(clinicId: clinicA, by: w.receptionA)
        }
        await #expect(throws: ClinicError(.notFound, .clinicNotFound, String(clinicA))) {
            _ = try await staff.accounts(clinicId: clinicA, by: w.adminB)
        }
    }

    /// Issue 56: what a member may do to an appointment, and whether its patient is told,
    /// awaited (the server's) as blocking (the CLI's), refusals alike.
    @Test func theActionsAndWhetherThePatientIsToldAwaitedAreTheBlockingOnes() async throws {
        let w = try world()
        let staff = w.system.staff, id = w.booked.id ?? 0
        // Whether the patient is told has one path, awaited: told (Anna has an online account)
        // wherever the member may act on the visit, refused alike elsewhere.
        func blocking(_ member: StaffMember, _ id: Int64) -> String {
            do { return "\(try staff.actions(member, appointmentId: id)) true" }
            catch { return "\(error)" }
        }
        for member in [w.receptionA, w.adminA, w.doctorA, w.otherDoctorA, w.adminB] {
            for id in [id, 99_999] {
                var awaited: String
                do {
                    let actions = try await staff.actions(member, appointmentId: id)
                    awaited = "\(actions) \(try await staff.patientIsTold(member, appointmentId: id))"
                } catch { awaited = "\(error)" }
                #expect(awaited == blocking(member, id), "\(member.login) \(id)")
            }
        }
        #expect(try await staff.actions(w.receptionA, appointmentId: id).contains("cancel"))
        #expect(try await staff.patientIsTold(w.receptionA, appointmentId: id), "Anna has an online account")
        // The doctor sees the visit's actions but another doctor of the clinic does not see the visit.
        await #expect(throws: ClinicError(.notFound, .appointmentNotFound, String(id))) {
            _ = try await staff.actions(w.otherDoctorA, appointmentId: id)
        }
    }

    /// Issue 42: a check-in only on the visit's day in the clinic's zone (days early it is
    /// refused, with a message, and changes nothing); undone by the clinic's front desk until
    /// the visit starts, in the history and the audit trail; statuses named as the screens
    /// name them ("checked in", never "arrived"), in both languages.
    @Test func checkInOnlyOnTheVisitsDayAndUndoneUntilTheVisitStarts() throws {
        let w = try world()
        let id = w.booked.id ?? 0, anna = w.anna.id ?? 0
        let staff = w.system.staff
        let zone = try w.system.clinics.getClinicById(w.booked.clinicId).zone
        // Sunday in Los Angeles, the visit on Monday: no check-in, offered or taken.
        let before = try fingerprint(w.system)
        let early = try #require(expectError(.invalidTransition) { _ = try staff.act(w.receptionA, .checkIn, appointmentId: id) })
        #expect(early.key == .checkInNotToday)
        #expect(early.message(in: .en) == "A patient can be checked in only on the day of the visit (2026-11-23, the clinic's date).")
        #expect(early.message(in: .ru).contains("только в день приёма (2026-11-23"))
        #expect(try fingerprint(w.system) == before)
        #expect(!(try staff.actions(w.receptionA, appointmentId: id)).contains("check-in"))
        #expect(!w.receptionA.may(.checkIn, on: w.booked, now: w.clock.now, zone: zone))
        // Late on Monday the 23rd in Los Angeles is already Tuesday in UTC: still the visit's day.
        #expect(w.receptionA.may(.checkIn, on: w.booked, now: w.booked.startsAt.addingTimeInterval(14 * 3600), zone: zone))
        #expect(!w.receptionA.may(.checkIn, on: w.booked, now: w.booked.startsAt.addingTimeInterval(15 * 3600), zone: zone))
        // Monday 01:00 there: checked in; the offered actions now include undoing it.
        w.clock.advance(21 * 3600)
        #expect(try staff.act(w.receptionA, .checkIn, appointmentId: id).status == .arrived)
        #expect(try staff.actions(w.receptionA, appointmentId: id).contains("undo-check-in"))
        #expect(!(try staff.actions(w.doctorA, appointmentId: id)).contains("undo-check-in"))
        // A refusal names the status as the screens do.
        let moving = try #require(expectError(.invalidTransition) {
            _ = try staff.reschedule(w.receptionA, appointmentId: id, to: .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 10, minute: 0)!))
        })
        #expect(moving.message(in: .en) == "An appointment that is checked in cannot be rescheduled.")
        #expect(moving.message(in: .ru) == "Запись в состоянии «пациент пришёл» нельзя перенести.")
        #expect(!moving.message(in: .en).contains("arrived") && !moving.message(in: .ru).contains("arrived"))
        // Undoing: not another clinic's, not a doctor's; the front desk's, back to scheduled.
        let checkedIn = try fingerprint(w.system)
        #expect(expectError(.notFound) { _ = try staff.act(w.adminB, .undoCheckIn, appointmentId: id) } != nil)
        #expect(expectError(.forbidden) { _ = try staff.act(w.doctorA, .undoCheckIn, appointmentId: id) } != nil)
        #expect(try fingerprint(w.system) == checkedIn)
        #expect(try staff.act(w.receptionA, .undoCheckIn, appointmentId: id).status == .scheduled)
        let history = try w.system.appointments.history(id, clientId: anna)
        #expect(history.map(\.event) == ["booked", "arrived", "scheduled"])
        #expect(history.last?.staffId == w.receptionA.id && history.last?.actor == "staff")
        let log = try w.system.clients.accessLog(clientId: anna)
        #expect(log.first?.action == "appointment.undo-check-in" && log.first?.detail == "arrived -> scheduled")
        // Booked again: the patient may move it; a second undo has nothing to undo.
        #expect(expectError(.invalidTransition) { _ = try staff.act(w.receptionA, .undoCheckIn, appointmentId: id) } != nil)
        // Once the doctor has started the visit, the check-in stands.
        _ = try staff.act(w.receptionA, .checkIn, appointmentId: id)
        _ = try staff.act(w.doctorA, .start, appointmentId: id)
        let started = try #require(expectError(.invalidTransition) { _ = try staff.act(w.adminA, .undoCheckIn, appointmentId: id) })
        #expect(started.message(in: .en) == "An appointment that is in progress cannot become booked.")
        #expect(try auditIsSound(w.system))
    }

    @Test func cancellingForTheClinicNeedsAReason() throws {
        let w = try world()
        let id = w.booked.id ?? 0
        let before = try fingerprint(w.system)
        #expect(expectError(.invalidInput) { _ = try w.system.staff.act(w.receptionA, .cancel, appointmentId: id) } != nil)
        #expect(expectError(.invalidInput) { _ = try w.system.staff.act(w.receptionA, .cancel, appointmentId: id, reason: "  ") } != nil)
        #expect(expectError(.invalidInput) {
            _ = try w.system.staff.act(w.receptionA, .cancel, appointmentId: id, reason: String(repeating: "x", count: 501))
        } != nil)
        #expect(try fingerprint(w.system) == before)
        let cancelled = try w.system.staff.act(w.receptionA, .cancel, appointmentId: id, reason: "Dr. Thompson is ill")
        #expect(cancelled.status == .cancelled)
        let last = try #require(try w.system.appointments.history(id, clientId: w.anna.id ?? 0).last)
        #expect(last.event == "cancelled" && last.reason == "Dr. Thompson is ill" && last.staffId == w.receptionA.id)
    }

    /// By both paths: the CLI's seam and a server's awaited store (`DeskBookingStore`).
    @Test(arguments: [false, true]) func receptionistsBookForPatients(awaited: Bool) async throws {
        let w = try world()
        func book(_ member: StaffMember, patientLogin: String? = nil, patientId: Int64? = nil, departmentId: Int64,
                  at time: TimeInput.Parsed, doctorId: Int64? = nil) async throws -> Appointment {
            if awaited {
                return try await w.system.staff.book(member, patientLogin: patientLogin, patientId: patientId, departmentId: departmentId,
                                                     at: time, doctorId: doctorId)
            }
            return try { try w.system.staff.book(member, patientLogin: patientLogin, patientId: patientId, departmentId: departmentId,
                                                 at: time, doctorId: doctorId) }()
        }
        let bob = try register(w.system, "bob")
        let monday0940 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 40)!)
        let before = try fingerprint(w.system)
        let beforeButAudit = try fingerprint(w.system, excluding: ["audit_events", "audit_head"])
        #expect(await expectError(.forbidden) {
            _ = try await book(w.doctorA, patientLogin: "bob", departmentId: w.booked.departmentId, at: monday0940)
        } != nil)
        #expect(await expectError(.notFound) {
            _ = try await book(w.adminB, patientLogin: "bob", departmentId: w.booked.departmentId, at: monday0940)
        } != nil, "another clinic's department")
        #expect(await expectError(.notFound) {
            _ = try await book(w.receptionA, patientLogin: "nobody", departmentId: w.booked.departmentId, at: monday0940)
        } != nil)
        #expect(try fingerprint(w.system) == before, "refusals before the patient is looked up change nothing")
        #expect(await expectError(.slotTaken) {
            _ = try await book(w.receptionA, patientLogin: "bob", departmentId: w.booked.departmentId, at: monday0920,
                                        doctorId: w.booked.doctorId)
        } != nil, "the patient's rules hold")
        // A refusal after the look-up writes one audit row, which the patient reads, and nothing else.
        #expect(try await w.system.clients.accessLog(clientId: bob.id ?? 0).map(\.action) == ["appointment.book-refused"])
        #expect(try fingerprint(w.system, excluding: ["audit_events", "audit_head"]) == beforeButAudit)
        let booked = try await book(w.receptionA, patientLogin: "BOB", departmentId: w.booked.departmentId, at: monday0940)
        #expect(booked.clientId == bob.id && booked.status == .scheduled)
        let history = try w.system.appointments.history(booked.id ?? 0, clientId: bob.id ?? 0)
        #expect(history.map(\.event) == ["booked"] && history.first?.actor == "staff" && history.first?.staffId == w.receptionA.id)
        #expect(try await w.system.clients.accessLog(clientId: bob.id ?? 0).map(\.action) == ["appointment.book", "appointment.book-refused"])
        #expect(try auditIsSound(w.system))
        // By id: a patient of this clinic only (ids are not to be tried one by one); login and id are one or the other.
        let carl = try register(w.system, "carl")
        let tuesday = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 24, hour: 9, minute: 40)!)
        #expect(await expectError(.notFound) {
            _ = try await book(w.receptionA, patientId: carl.id ?? 0, departmentId: w.booked.departmentId, at: tuesday)
        } != nil)
        #expect(await expectError(.invalidInput) {
            _ = try await book(w.receptionA, patientLogin: "bob", patientId: bob.id, departmentId: w.booked.departmentId,
                                        at: tuesday)
        } != nil)
        #expect(await expectError(.invalidInput) {
            _ = try await book(w.receptionA, departmentId: w.booked.departmentId, at: tuesday)
        } != nil)
        let again = try await book(w.receptionA, patientId: bob.id ?? 0, departmentId: w.booked.departmentId, at: tuesday)
        #expect(again.clientId == bob.id)
    }

    /// The front desk moves a patient's appointment (issue 29): one change, the patient's
    /// other appointments respected (and not revealed), the history naming the staff account
    /// and the reason, which the patient reads in their inbox in their language.
    @Test func receptionistsMoveAnAppointmentWithAReason() throws {
        let w = try world()
        let id = w.booked.id ?? 0, anna = w.anna.id ?? 0, staff = w.system.staff
        _ = try w.system.clients.updateProfile(clientId: anna, ProfileChanges(language: .ru))
        let monday1000 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 10, minute: 0)!)
        let before = try fingerprint(w.system)
        #expect(expectError(.forbidden) { _ = try staff.reschedule(w.doctorA, appointmentId: id, to: monday1000) } != nil)
        #expect(expectError(.notFound) { _ = try staff.reschedule(w.adminB, appointmentId: id, to: monday1000) } != nil)
        #expect(expectError(.invalidInput) {
            _ = try staff.reschedule(w.receptionA, appointmentId: id, to: monday1000, reason: String(repeating: "x", count: 501))
        } != nil)
        #expect(try fingerprint(w.system) == before, "refusals change nothing")
        // Another of Anna's appointments at 10:00 elsewhere: refused without saying where.
        let other = try #require(try w.system.departments.getDepartmentsByClinicId(try clinic(w.system, "LA2").id ?? 0).first)
        let elsewhere = try w.system.appointments.createAppointment(clientId: anna, departmentId: other.id ?? 0, at: monday1000)
        let unchanged = try fingerprint(w.system)
        #expect(expectError(.patientUnavailable) {
            _ = try staff.reschedule(w.receptionA, appointmentId: id, to: monday1000, reason: "The doctor is late")
        } != nil)
        #expect(try fingerprint(w.system) == unchanged)
        _ = try w.system.appointments.cancelAppointment(elsewhere.id ?? 0, clientId: anna)

        let inboxBefore = try w.system.clients.messages(clientId: anna).count
        let moved = try staff.reschedule(w.receptionA, appointmentId: id, to: monday1000, reason: "The doctor is late")
        #expect(moved.id == id && moved.startsAt == w.booked.startsAt.addingTimeInterval(40 * 60) && moved.status == .scheduled)
        let last = try #require(try w.system.appointments.history(id, clientId: anna).last)
        #expect(last.event == "rescheduled" && last.actor == "staff" && last.staffId == w.receptionA.id && last.reason == "The doctor is late")
        let told = try #require(try w.system.clients.messages(clientId: anna).first)
        #expect(try w.system.clients.messages(clientId: anna).count == inboxBefore + 1)
        #expect(told.body.contains("The doctor is late") && told.body.contains("Клиника перенесла"), "\(told.body)")
        #expect(try w.system.clients.accessLog(clientId: anna).first?.action == "appointment.reschedule")
        // The same time again changes nothing; a checked-in visit is not moved.
        #expect(try staff.reschedule(w.receptionA, appointmentId: id, to: monday1000) == moved)
        w.clock.advance(21 * 3600)  // the visit's day in Los Angeles
        _ = try staff.act(w.receptionA, .checkIn, appointmentId: id)
        #expect(expectError(.invalidTransition) { _ = try staff.reschedule(w.adminA, appointmentId: id, to: monday0920) } != nil)
        #expect(try auditIsSound(w.system))
    }

    /// The front desk's calendar: the clinic's doctors side by side, each with their slots and
    /// appointments of the days shown; a doctor sees their own column; at most a week.
    @Test func theCalendarShowsTheDoctorsSideBySide() throws {
        let w = try world()
        let monday = LocalDateTime(year: 2026, month: 11, day: 23, hour: 0, minute: 0)!
        let calendar = try w.system.frontDeskCalendar(w.receptionA, from: monday, days: 2)
        #expect(calendar.from.dayText == "2026-11-23" && calendar.days == 2 && calendar.zone.identifier == "America/Los_Angeles")
        #expect(calendar.columns.count > 1 && calendar.columns.allSatisfy { $0.department.clinicId == w.receptionA.clinicId })
        let own = try #require(calendar.columns.first { $0.doctor.id == w.booked.doctorId })
        #expect(own.entries.map(\.appointment.id) == [w.booked.id] && own.entries.first?.patientName == "Anna Smith")
        #expect(own.slots.contains { $0.start == w.booked.startsAt && !$0.isAvailable })
        #expect(own.slots.contains { $0.isAvailable } && own.slots.allSatisfy { $0.doctorId == w.booked.doctorId })
        let days = Set(own.slots.map { LocalDateTime.of($0.start, in: calendar.zone).dayText })
        #expect(days.isSubset(of: ["2026-11-23", "2026-11-24"]))
        let others = calendar.columns.filter { $0.doctor.id != w.booked.doctorId }
        #expect(others.allSatisfy { $0.entries.isEmpty })
        // A doctor: their own column only.
        let doctor = try w.system.frontDeskCalendar(w.doctorA, from: monday)
        #expect(doctor.columns.map(\.doctor.id) == [w.booked.doctorId])
        // Another clinic's admin sees none of clinic A's patients.
        let other = try w.system.frontDeskCalendar(w.adminB, from: monday, days: 7)
        #expect(other.columns.allSatisfy { $0.entries.isEmpty })
        for bad in [0, 8] {
            #expect(expectError(.invalidInput) { _ = try w.system.frontDeskCalendar(w.receptionA, from: monday, days: bad) } != nil)
        }
        #expect(try w.system.clients.accessLog(clientId: w.anna.id ?? 0).map(\.action).contains("patient.read"))
    }

    /// The one permission rule: for every role, status and action, what `offers` (and so every
    /// page and `GET /v1/staff/actions`) lists is exactly what the change itself then allows.
    @Test func theOfferedActionsAreExactlyTheAllowedOnes() async throws {
        let statuses: [AppointmentStatus] = [.scheduled, .confirmed, .arrived, .inProgress, .completed, .noShow, .cancelled]
        for status in statuses {
            for started in [false, true] {
                let w = try world()
                let id = w.booked.id ?? 0
                // Bring the appointment to `status` as the operator would, then look before or after its start.
                let path: [AppointmentStatus] = switch status {
                case .scheduled: []
                case .confirmed: [.confirmed]
                case .arrived: [.arrived]
                case .inProgress: [.arrived, .inProgress]
                case .completed: [.arrived, .inProgress, .completed]
                case .noShow: [.noShow]
                default: [.cancelled]
                }
                if started || status == .completed || status == .noShow { w.clock.advance(30 * 3600) }
                for step in path { _ = try await w.system.appointments.setStatus(id, to: step) }
                for member in [w.adminA, w.receptionA, w.doctorA, w.otherDoctorA, w.adminB] {
                    let current = try await w.system.appointments.appointmentWithHistory(id, clientId: w.anna.id ?? 0).appointment
                    let zone = try w.system.clinics.getClinicById(current.clinicId).zone
                    let offered = member.offers(on: current, now: w.clock.now, zone: zone)
                    if member.clinicId != current.clinicId || member.id == w.otherDoctorA.id {
                        #expect(expectError(.notFound) { _ = try w.system.staff.actions(member, appointmentId: id) } != nil)
                    } else {
                        #expect(try await w.system.staff.actions(member, appointmentId: id) == offered)
                    }
                    for action in StaffAction.allCases {
                        // Each attempt on a copy of the world's state: a fresh look at the same rule.
                        let allowed = action.refusal(by: member, on: current, now: w.clock.now, zone: zone) == nil
                        #expect(offered.contains(action.rawValue) == allowed, "\(member.role) \(action) \(status) started: \(started)")
                        if !allowed {
                            #expect((try? await w.system.staff.act(member, action, appointmentId: id, reason: "r")) == nil,
                                    "\(member.role) may not \(action) a \(status) appointment")
                        }
                    }
                    #expect(offered.contains("reschedule") == (member.rescheduleRefusal(on: current) == nil))
                    if member.role == .doctor || !status.isPatientChangeable { #expect(!offered.contains("reschedule")) }
                }
                // What is offered is then allowed: the receptionist takes each offered status action on a fresh world.
                let fresh = try world()
                if started || status == .completed || status == .noShow { fresh.clock.advance(30 * 3600) }
                for step in path { _ = try await fresh.system.appointments.setStatus(fresh.booked.id ?? 0, to: step) }
                let current = try await fresh.system.appointments.appointmentWithHistory(fresh.booked.id ?? 0,
                                                                                   clientId: fresh.anna.id ?? 0).appointment
                let zone = try fresh.system.clinics.getClinicById(current.clinicId).zone
                if let action = StaffAction.allCases.first(where: { fresh.receptionA.may($0, on: current, now: fresh.clock.now, zone: zone) }) {
                    #expect(try await fresh.system.staff.act(fresh.receptionA, action, appointmentId: fresh.booked.id ?? 0,
                                                       reason: "r").status == action.status)
                }
            }
        }
    }

    /// Hours and exceptions: a change that leaves a booked appointment outside the doctor's
    /// hours is refused with its id and changes nothing; forced, the appointment is cancelled
    /// for the clinic with the reason. Issue 56: by both paths, the CLI's seam and a server's
    /// awaited store (`ClinicAdminChangesStore.changeSchedule`).
    @Test(arguments: [false, true]) func hoursChangesThatStrandAppointmentsAreRefusedUnlessForced(awaited: Bool) async throws {
        let w = try world()
        let staff = w.system.staff, doctor = w.booked.doctorId
        func setHours(_ member: StaffMember, weekday: Int, _ intervals: [DoctorSchedule.Interval]) async throws -> [Appointment] {
            if awaited { return try await staff.setHours(member, doctorId: doctor, weekday: weekday, intervals: intervals, requestId: "req-h") }
            return try { try staff.setHours(member, doctorId: doctor, weekday: weekday, intervals: intervals, requestId: "req-h") }()
        }
        func addException(_ member: StaffMember, _ day: LocalDateTime, force: Bool = false,
                          reason: String? = nil) async throws -> (exception: WorkingException, cancelled: [Appointment]) {
            if awaited { return try await staff.addException(member, doctorId: doctor, day: day, hours: nil, force: force, reason: reason) }
            return try { try staff.addException(member, doctorId: doctor, day: day, hours: nil, force: force, reason: reason) }()
        }
        func removeException(_ member: StaffMember, _ id: Int64) async throws -> [Appointment] {
            if awaited { return try await staff.removeException(member, exceptionId: id) }
            return try { try staff.removeException(member, exceptionId: id) }()
        }
        let id = w.booked.id ?? 0
        let monday = LocalDateTime(year: 2026, month: 11, day: 23)!
        let before = try fingerprint(w.system)
        #expect(await expectError(.forbidden) { _ = try await setHours(w.receptionA, weekday: 1, []) } != nil)
        #expect(await expectError(.notFound) { _ = try await setHours(w.adminB, weekday: 1, []) } != nil)
        #expect(await expectError(.invalidInput) { _ = try await setHours(w.adminA, weekday: 8, []) }?.key == .workingHoursInvalid)
        let conflict = await expectError(.hoursConflict) { _ = try await setHours(w.adminA, weekday: 1, []) }
        #expect(conflict?.arguments == [String(id)])
        #expect(await expectError(.hoursConflict) { _ = try await addException(w.adminA, monday) } != nil)
        // Afternoon hours only: 09:20 is outside them.
        let afternoon = DoctorSchedule.Interval(startMinute: 13 * 60, endMinute: 17 * 60, slotMinutes: 20)
        #expect(await expectError(.hoursConflict) { _ = try await setHours(w.adminA, weekday: 1, [afternoon]) } != nil)
        #expect(try fingerprint(w.system) == before, "every refusal changed nothing")
        // Another weekday is free to change; a Tuesday day off strands nothing, and is taken back.
        #expect(try await setHours(w.adminA, weekday: 2, [afternoon]).isEmpty)
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'hours.set' AND request_id = 'req-h'") == 1)
        let tuesday = try await addException(w.adminA, monday.adding(days: 1))
        #expect(tuesday.cancelled.isEmpty && tuesday.exception.day == "2026-11-24" && tuesday.exception.isDayOff)
        #expect(await expectError(.invalidInput) { _ = try await addException(w.adminA, monday.adding(days: 1)) }?.key == .exceptionOverlaps)
        #expect(await expectError(.notFound) { _ = try await removeException(w.adminB, tuesday.exception.id ?? 0) }?.key
                == .exceptionNotFound, "another clinic's exception is not found")
        #expect(await expectError(.notFound) { _ = try await removeException(w.adminA, 99_999) } != nil)
        #expect(try await removeException(w.adminA, tuesday.exception.id ?? 0).isEmpty)
        #expect(try await w.system.departments.exceptions(doctorId: doctor).isEmpty)
        // A forced change's reason is checked like a cancellation's (the change rolls back).
        #expect(await expectError(.invalidInput) {
            _ = try await addException(w.adminA, monday, force: true, reason: String(repeating: "x", count: 501))
        } != nil)
        #expect(try await w.system.departments.exceptions(doctorId: doctor).allSatisfy { $0.day != monday.dayText },
                "no exception was left behind")
        // Forced: the Monday appointment is cancelled for the clinic, with the reason.
        let cancelled = try await addException(w.adminA, monday, force: true, reason: "Dr. Thompson is ill").cancelled
        #expect(cancelled.map(\.id) == [id] && cancelled.first?.status == .cancelled)
        let last = try #require(try w.system.appointments.history(id, clientId: w.anna.id ?? 0).last)
        #expect(last.event == "cancelled" && last.reason == "Dr. Thompson is ill" && last.staffId == w.adminA.id)
        #expect(try { try w.system.clients.accessLog(clientId: w.anna.id ?? 0) }().first?.action == "appointment.cancel")
        // The slot is gone for patients too.
        let slots = try w.system.appointments.slots(departmentId: w.booked.departmentId, doctorId: doctor, from: monday, days: 1)
        #expect(slots.isEmpty)
        #expect(try auditIsSound(w.system))
    }

    /// Issue 56: by both paths, the CLI's seam and a server's awaited store
    /// (`ClinicAdminChangesStore.addDoctor`); a refusal changes nothing.
    @Test(arguments: [false, true]) func clinicAdminsAddDoctorsToTheirOwnClinic(awaited: Bool) async throws {
        let w = try world()
        let hours = [WorkingHours(id: nil, doctorId: 0, weekday: 3, startMinute: 9 * 60, endMinute: 12 * 60, slotMinutes: 30)]
        func add(_ member: StaffMember, _ name: String, department: Int64? = nil, hours: [WorkingHours] = hours) async throws -> Doctor {
            let id = department ?? w.booked.departmentId
            if awaited { return try await w.system.staff.addDoctor(member, departmentId: id, name: name, hours: hours, requestId: "req-doc") }
            return try { try w.system.staff.addDoctor(member, departmentId: id, name: name, hours: hours, requestId: "req-doc") }()
        }
        let before = try fingerprint(w.system)
        #expect(await expectError(.forbidden) { _ = try await add(w.receptionA, "Ada Park") } != nil)
        #expect(await expectError(.notFound) { _ = try await add(w.adminB, "Ada Park") } != nil)
        #expect(await expectError(.notFound) { _ = try await add(w.adminA, "Ada Park", department: 99_999) } != nil)
        // Issue 55 (A6): a doctor's name shows what it is, in one script a word.
        for name in ["\u{3164}", "Аda Park", "A" + String(repeating: "\u{0301}", count: 300)] {
            #expect(await expectError(.invalidInput) { _ = try await add(w.adminA, name) }?.key == .doctorNameInvalid)
        }
        let overlapping = hours + [WorkingHours(id: nil, doctorId: 0, weekday: 3, startMinute: 11 * 60, endMinute: 13 * 60, slotMinutes: 30)]
        #expect(await expectError(.invalidInput) { _ = try await add(w.adminA, "Ada Park", hours: overlapping) }?.key == .workingHoursInvalid)
        #expect(try fingerprint(w.system) == before, "a refusal changes nothing")
        let doctor = try await add(w.adminA, "Ada Park")
        #expect(doctor.name == "Ada Park" && doctor.departmentId == w.booked.departmentId && doctor.isActive)
        #expect(try { try w.system.staff.doctors(w.receptionA) }().contains { $0.doctor.id == doctor.id })
        #expect(!(try { try w.system.staff.doctors(w.adminB) }().contains { $0.doctor.id == doctor.id }))
        #expect(try { try w.system.staff.hours(w.doctorA, doctorId: doctor.id ?? 0) }().map(\.weekday) == [3])
        #expect(expectError(.notFound) { _ = try w.system.staff.hours(w.adminB, doctorId: doctor.id ?? 0) } != nil)
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'doctor.add' AND request_id = 'req-doc'") == 1)
        #expect(try auditIsSound(w.system))
    }

    /// A deactivated doctor is no longer offered; their booking refuses it unless forced. By
    /// both paths (issue 56).
    @Test(arguments: [false, true]) func deactivatingADoctor(awaited: Bool) async throws {
        let w = try world()
        let staff = w.system.staff
        func deactivate(_ member: StaffMember, force: Bool = false, reason: String? = nil) async throws -> [Appointment] {
            if awaited { return try await staff.deactivateDoctor(member, doctorId: w.booked.doctorId, force: force, reason: reason) }
            return try { try staff.deactivateDoctor(member, doctorId: w.booked.doctorId, force: force, reason: reason) }()
        }
        let before = try fingerprint(w.system)
        #expect(await expectError(.forbidden) { _ = try await deactivate(w.receptionA) } != nil)
        #expect(await expectError(.notFound) { _ = try await deactivate(w.adminB) } != nil)
        #expect(await expectError(.hoursConflict) { _ = try await deactivate(w.adminA) }?.arguments == [String(w.booked.id ?? 0)])
        #expect(try fingerprint(w.system) == before)
        let cancelled = try await deactivate(w.adminA, force: true, reason: "Dr. Thompson left")
        #expect(cancelled.map(\.id) == [w.booked.id] && cancelled.first?.status == .cancelled)
        #expect(!(try { try staff.doctors(w.adminA) }().contains { $0.doctor.id == w.booked.doctorId }))
        let slots = try w.system.appointments.slots(departmentId: w.booked.departmentId, from: LocalDateTime(year: 2026, month: 11, day: 23)!)
        #expect(!slots.contains { $0.doctorId == w.booked.doctorId })
        #expect(expectError(.notFound) {
            _ = try w.system.appointments.createAppointment(clientId: w.anna.id ?? 0, departmentId: w.booked.departmentId,
                                                            at: monday0920, doctorId: w.booked.doctorId)
        } != nil)
        let last = try #require(try w.system.appointments.history(w.booked.id ?? 0, clientId: w.anna.id ?? 0).last)
        #expect(last.event == "cancelled" && last.reason == "Dr. Thompson left" && last.staffId == w.adminA.id)
        #expect(try auditIsSound(w.system))
    }

    /// A visit booked for a visit type stays inside the hours when they do not change.
    @Test func aLongVisitIsNotStrandedByAnUnrelatedChange() throws {
        let w = try world()
        let type = try w.system.staff.addVisitType(w.adminA, departmentId: w.booked.departmentId, nameEn: "Long", nameRu: "Долгий",
                                                   durationMinutes: 40)
        let bob = try register(w.system, "bob")
        let long = try w.system.appointments.createAppointment(
            clientId: bob.id ?? 0, departmentId: w.booked.departmentId,
            at: .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 10, minute: 0)!), doctorId: w.booked.doctorId,
            visitTypeId: type.id)
        #expect(long.endsAt.timeIntervalSince(long.startsAt) == 2400)
        // A Tuesday day off changes nothing on Monday: neither visit is stranded.
        let tuesday = LocalDateTime(year: 2026, month: 11, day: 24)!
        #expect(try w.system.staff.addException(w.adminA, doctorId: w.booked.doctorId, day: tuesday, hours: nil).cancelled.isEmpty)
    }
}
