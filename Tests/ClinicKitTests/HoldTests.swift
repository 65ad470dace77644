import Foundation
import Testing
@testable import ClinicKit

/// Holds (FHIR's $hold): a held slot is taken for everyone else until it expires, by booking
/// and by `slots`; its patient books it; one hold per patient; a failed hold changes nothing.
/// "Now" is Sunday 2026-11-22 12:00 UTC (the TestClock); Monday 09:20 in Los Angeles is 17:20 UTC.
@Suite struct HoldTests {
    let monday0920 = utc("2026-11-23T17:20:00Z")

    /// Issue 55 (C19): a patient's own hold never stands in their own way: booking the held
    /// time directly (FHIR's proposed appointment, /v1, the web) books it, for them only.
    @Test func aPatientsOwnHoldDoesNotBlockTheirBookingOfThatTime() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let therapy = try department(system, "LA1", "therapy")
        let doctorId = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)[0].id ?? 0
        _ = try system.appointments.holdSlot(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId, at: monday0920)
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0,
                                                          at: .instant(monday0920), doctorId: doctorId)
        } != nil, "held for everyone else")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0,
                                                               at: .instant(monday0920), doctorId: doctorId)
        #expect(booked.startsAt == monday0920 && booked.doctorId == doctorId)
    }

    @Test func aHeldSlotIsTakenUntilItExpiresAndItsPatientBooksIt() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let therapy = try department(system, "LA1", "therapy")
        let doctor = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)[0]
        let doctorId = doctor.id ?? 0
        let hold = try system.appointments.holdSlot(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId,
                                                    at: monday0920)
        #expect(hold.expiresAt == clock.now.addingTimeInterval(300), "booking.hold_seconds is 300 by default")
        #expect(hold.endsAt == utc("2026-11-23T17:40:00Z"))

        // Taken for Bob: holding, booking that doctor, and in the slots.
        let before = try fingerprint(system)
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.holdSlot(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId, at: monday0920)
        } != nil)
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0,
                                                          at: .instant(monday0920), doctorId: doctorId)
        } != nil)
        #expect(try fingerprint(system) == before, "refusals change nothing")
        let slot = try system.appointments.slots(departmentId: therapy.id ?? 0, doctorId: doctorId,
                                                 from: LocalDateTime(year: 2026, month: 11, day: 23, hour: 0, minute: 0)!, days: 1)
            .first { $0.start == monday0920 }
        #expect(slot?.isAvailable == false && slot?.isTaken == true)
        // Booking without naming a doctor takes the next free doctor, not the held one.
        let other = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0,
                                                              at: .instant(monday0920))
        #expect(other.doctorId != doctorId)
        _ = try system.appointments.cancelAppointment(other.id ?? 0, clientId: bob.id ?? 0)

        // Another patient's hold is not found; Anna books hers, and the hold ends.
        #expect(expectError(.notFound) { _ = try system.appointments.bookHold(hold.id ?? 0, clientId: bob.id ?? 0) } != nil)
        let booked = try system.appointments.bookHold(hold.id ?? 0, clientId: anna.id ?? 0, notes: "from FHIR")
        #expect(booked.doctorId == doctorId && booked.startsAt == monday0920 && booked.notes == "from FHIR")
        #expect(expectError(.notFound) { _ = try system.appointments.slotHold(hold.id ?? 0, clientId: anna.id ?? 0) } != nil)
    }

    /// A hold's booking decided on plain facts (issue 56): the plan refuses a hold that is not
    /// there or is another patient's, and asks for its own time's facts with the hold itself
    /// out of the way.
    @Test func aHoldsBookingIsPlannedOnPlainFacts() throws {
        let system = try makeSystem()
        guard case .bookHold(let id, let plan, _) = try system.appointments.holdBooking(7, clientId: 1, notes: "") else {
            Issue.record("not a hold's booking"); return
        }
        #expect(id == 7)
        let hold = SlotHold(id: 7, clientId: 1, clinicId: 2, departmentId: 3, doctorId: 4, visitTypeId: 5, startsAt: monday0920,
                            endsAt: monday0920.addingTimeInterval(1200), expiresAt: monday0920, createdAt: monday0920)
        #expect(expectError(.notFound) { _ = try plan(nil) }?.key == .holdNotFound)
        var others = hold
        others.clientId = 2
        #expect(expectError(.notFound) { _ = try plan(others) }?.key == .holdNotFound)
        let ask = try plan(hold)
        #expect(ask.exceptHold == 7 && ask.onlyDoctorId == 4 && ask.departmentId == 3 && ask.visitTypeId == 5 && ask.clientId == 1)
        #expect(ask.exceptAppointment == nil)
    }

    /// `book(hold:)` as the store's one awaited operation, with and without a kept answer, on
    /// either store: another patient's hold refused with nothing changed, the patient's booked
    /// and ended, the same request replayed, the hold gone for a request without a key.
    @Test func aHoldIsBookedAwaited() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0, bob = try register(system, "bob").id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let doctorId = try system.departments.getDoctorsByDepartmentId(therapy)[0].id ?? 0
        let hold = try system.appointments.holdSlot(clientId: anna, departmentId: therapy, doctorId: doctorId, at: monday0920)
        let holdId = try #require(hold.id)
        let read = try await system.appointments.slotHold(holdId, clientId: anna)
        #expect(read.id == holdId && read.startsAt == monday0920 && read.doctorId == doctorId, "her hold, read awaited")
        let othersHold = await #expect(throws: ClinicError.self) { _ = try await system.appointments.slotHold(holdId, clientId: bob) }
        #expect(othersHold?.key == .holdNotFound, "another's hold is one that does not exist")
        let before = try fingerprint(system)
        let notHis = await #expect(throws: ClinicError.self) { _ = try await system.appointments.book(hold: holdId, clientId: bob) }
        #expect(notHis?.key == .holdNotFound)
        #expect(try fingerprint(system) == before)

        let store = system.makeIdempotencyStore()
        let keeping = AnswerKeeping<Appointment>(store: store, key: "h1", fingerprint: "f") { outcome in
            switch outcome {
            case .success(let appointment): .init(status: 200, body: Data("\(appointment.id ?? 0) \(appointment.notes)".utf8))
            case .failure(let error): .init(status: 404, body: Data(error.key.rawValue.utf8))
            }
        }
        let first = try await system.appointments.book(hold: holdId, clientId: anna, notes: "from FHIR", keeping: keeping)
        #expect(first.status == 200 && !first.replayed)
        let id = try #require(Int64(String(decoding: first.body, as: UTF8.self).split(separator: " ")[0]))
        let booked = try system.appointments.getAppointmentById(id, clientId: anna)
        #expect(booked.doctorId == doctorId && booked.startsAt == monday0920 && booked.notes == "from FHIR")
        let ended = await #expect(throws: ClinicError.self) { _ = try await system.appointments.slotHold(holdId, clientId: anna) }
        #expect(ended?.key == .holdNotFound, "the hold ended")
        let replay = try await system.appointments.book(hold: holdId, clientId: anna, notes: "from FHIR", keeping: keeping)
        #expect(replay.replayed && replay.body == first.body)
        let gone = await #expect(throws: ClinicError.self) { _ = try await system.appointments.book(hold: holdId, clientId: anna) }
        #expect(gone?.key == .holdNotFound)
        #expect(try system.appointments.history(id, clientId: anna).map(\.event) == ["booked"])
    }

    /// `hold` as the store's one awaited operation, on either store: as `holdSlot` decides (a
    /// second hold releases the first, a refused one keeps it and changes nothing), and with
    /// an `Idempotency-Key` its answer kept and replayed.
    @Test func aSlotIsHeldAwaited() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0, bob = try register(system, "bob").id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let doctorId = try system.departments.getDoctorsByDepartmentId(therapy)[0].id ?? 0
        let first = try await system.appointments.hold(clientId: anna, departmentId: therapy, doctorId: doctorId, at: monday0920)
        #expect(first.id != nil && first.clientId == anna && first.startsAt == monday0920)
        #expect(try await system.appointments.slotHold(first.id ?? 0, clientId: anna) == first)
        let before = try fingerprint(system)
        let taken = await #expect(throws: ClinicError.self) {
            _ = try await system.appointments.hold(clientId: bob, departmentId: therapy, doctorId: doctorId, at: monday0920)
        }
        #expect(taken?.code == .slotTaken)
        #expect(try fingerprint(system) == before, "a refusal changes nothing")

        let store = system.makeIdempotencyStore()
        let keeping = AnswerKeeping<SlotHold>(store: store, key: "k", fingerprint: "f") { outcome in
            switch outcome {
            case .success(let hold): .init(status: 200, body: Data("\(hold.id ?? 0)".utf8))
            case .failure(let error): .init(status: 409, body: Data(error.code.rawValue.utf8))
            }
        }
        let later = monday0920.addingTimeInterval(20 * 60)
        let kept = try await system.appointments.hold(clientId: anna, departmentId: therapy, doctorId: doctorId, at: later, keeping: keeping)
        #expect(kept.status == 200 && !kept.replayed)
        let id = try #require(Int64(String(decoding: kept.body, as: UTF8.self)))
        #expect(try await system.appointments.slotHold(id, clientId: anna).startsAt == later)
        #expect(expectError(.notFound) { _ = try system.appointments.slotHold(first.id ?? 0, clientId: anna) } != nil,
                "the second hold released the first")
        let replay = try await system.appointments.hold(clientId: anna, departmentId: therapy, doctorId: doctorId, at: later, keeping: keeping)
        #expect(replay.replayed && replay.body == kept.body)
        #expect(try await system.appointments.slotHold(id, clientId: anna).startsAt == later, "the replay changed nothing")
    }

    @Test func aHoldExpiresByItselfAndOnePatientHasOneHold() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let therapy = try department(system, "LA1", "therapy")
        let doctorId = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)[0].id ?? 0
        _ = try await system.appointments.setBookingRule("booking.hold_seconds", to: "60")
        let first = try system.appointments.holdSlot(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId,
                                                     at: monday0920)
        // A second hold of Anna's releases the first.
        let later = monday0920.addingTimeInterval(20 * 60)
        _ = try system.appointments.holdSlot(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId, at: later)
        #expect(expectError(.notFound) { _ = try system.appointments.slotHold(first.id ?? 0, clientId: anna.id ?? 0) } != nil)
        _ = try system.appointments.holdSlot(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId, at: monday0920)
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.holdSlot(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId, at: later)
        } != nil)
        #expect(try storedInt(system, "SELECT count(*) FROM slot_holds") == 2, "Bob's failed hold kept his first one")
        // 61 seconds on, Anna's hold of `later` is over: Bob can book it.
        clock.advance(61)
        let booked = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0,
                                                               at: .instant(later), doctorId: doctorId)
        #expect(booked.startsAt == later)
        // A hold follows the booking rules: not within the lead time, not outside hours.
        #expect(expectError(.slotUnavailable) {
            _ = try system.appointments.holdSlot(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId,
                                                 at: clock.now.addingTimeInterval(60))
        } != nil)
        try system.appointments.releaseHold(try #require(try storedInt(system, "SELECT max(id) FROM slot_holds")).int64,
                                            clientId: bob.id ?? 0)
        #expect(try storedInt(system, "SELECT count(*) FROM slot_holds WHERE client_id = \(bob.id ?? 0)") == 0)
    }
}

private extension Int {
    var int64: Int64 { Int64(self) }
}

extension HoldTests {
    /// Issue 42: 23 free accounts held every time of a doctor's day, re-holding renewed them,
    /// and the day never came free. Others may hold at most `booking.holds_per_doctor_day` of a
    /// doctor's times of a day, and holding the same time again keeps its first expiry.
    @Test func holdsOfADoctorsDayAreBoundedAndNotRenewed() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let therapy = try department(system, "LA1", "therapy")
        let doctorId = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)[0].id ?? 0
        let patients = try (0..<5).map { try register(system, "holder\($0)") }
        func hold(_ patient: Client, _ start: Date) throws -> SlotHold {
            try system.appointments.holdSlot(clientId: patient.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId, at: start)
        }
        for index in 0..<3 { _ = try hold(patients[index], monday0920.addingTimeInterval(Double(index) * 20 * 60)) }
        let before = try fingerprint(system)
        let refused = expectError(.limitReached) { _ = try hold(patients[3], monday0920.addingTimeInterval(3 * 20 * 60)) }
        #expect(refused?.key == .holdsPerDoctorDay && refused?.arguments == ["3"])
        #expect(try fingerprint(system) == before, "the refusal changes nothing")
        // Another day of the doctor is another day; a holder moves within the day freely.
        _ = try hold(patients[3], monday0920.addingTimeInterval(86_400))
        _ = try hold(patients[0], monday0920.addingTimeInterval(4 * 20 * 60))
        // The operator's setting raises it.
        _ = try await system.appointments.setBookingRule("booking.holds_per_doctor_day", to: "4")
        _ = try hold(patients[4], monday0920.addingTimeInterval(5 * 20 * 60))

        // Holding the same time again does not move its expiry; another time gets a new one.
        let first = try hold(patients[1], monday0920.addingTimeInterval(20 * 60))
        clock.advance(200)
        let again = try hold(patients[1], monday0920.addingTimeInterval(20 * 60))
        #expect(again.expiresAt == first.expiresAt, "re-holding keeps the first expiry")
        let elsewhere = try hold(patients[1], monday0920.addingTimeInterval(86_400 + 40 * 60))
        #expect(elsewhere.expiresAt == clock.now.addingTimeInterval(300))
    }

    /// The front desk sees its doctors' live holds on the calendar and may release one (issue
    /// 42); another clinic's desk cannot, nor can a doctor; the patient's access log says so.
    /// By both paths (issue 56): the CLI's seam and a server's awaited store (`deskReleaseHold`).
    @Test(arguments: [false, true]) func theFrontDeskSeesAHoldOnTheCalendarAndReleasesIt(awaited: Bool) async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let therapy = try department(system, "LA1", "therapy")
        let doctorId = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)[0].id ?? 0
        let hold = try system.appointments.holdSlot(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, doctorId: doctorId,
                                                    at: monday0920)
        func staff(_ login: String, _ role: StaffRole, clinic: String, doctor: Int64? = nil) throws -> StaffMember {
            try system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: role,
                                                 clinicId: try ClinicKitTests.clinic(system, clinic).id ?? 0, doctorId: doctor,
                                                 password: "staff-passphrase-77"))
        }
        let desk = try staff("desk", .receptionist, clinic: "LA1")
        let elsewhere = try staff("elsewhere", .receptionist, clinic: "LA2")
        let doctor = try staff("doc", .doctor, clinic: "LA1", doctor: doctorId)
        let calendar = try system.frontDeskCalendar(desk, from: LocalDateTime(year: 2026, month: 11, day: 23, hour: 0, minute: 0), days: 1)
        let column = try #require(calendar.columns.first { $0.doctor.id == doctorId })
        #expect(column.holds.map(\.id) == [hold.id])
        func release(_ member: StaffMember, _ id: Int64) async throws {
            if awaited { return try await system.staff.releaseHold(member, holdId: id, requestId: "req-release") }
            try { try system.staff.releaseHold(member, holdId: id, requestId: "req-release") }()
        }
        let before = try fingerprint(system)
        #expect(await expectError(.notFound) { try await release(elsewhere, hold.id ?? 0) } != nil)
        #expect(await expectError(.forbidden) { try await release(doctor, hold.id ?? 0) } != nil)
        #expect(await expectError(.notFound) { try await release(desk, 99_999) } != nil)
        #expect(try fingerprint(system) == before, "refusals change nothing")
        try await release(desk, hold.id ?? 0)
        // Free again for everyone at once; the hold is gone for its patient; the log says who.
        _ = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0,
                                                      at: .instant(monday0920), doctorId: doctorId)
        #expect(expectError(.notFound) { _ = try system.appointments.slotHold(hold.id ?? 0, clientId: anna.id ?? 0) } != nil)
        let log = try await system.clients.accessLog(clientId: anna.id ?? 0)
        #expect(log.map(\.action).contains("hold.release"))
        #expect(try storedInt(system, "SELECT count(*) FROM audit_events WHERE action = 'hold.release' AND request_id = 'req-release'") == 1)
        #expect(await expectError(.notFound) { try await release(desk, hold.id ?? 0) } != nil)
        #expect(try auditIsSound(system))
    }
}
