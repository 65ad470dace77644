import Foundation
import Testing
@testable import ClinicKit

/// Holds (FHIR's $hold): a held slot is taken for everyone else until it expires, by booking
/// and by `slots`; its patient books it; one hold per patient; a failed hold changes nothing.
/// "Now" is Sunday 2026-11-22 12:00 UTC (the TestClock); Monday 09:20 in Los Angeles is 17:20 UTC.
@Suite struct HoldTests {
    let monday0920 = utc("2026-11-23T17:20:00Z")

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

    @Test func aHoldExpiresByItselfAndOnePatientHasOneHold() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let therapy = try department(system, "LA1", "therapy")
        let doctorId = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)[0].id ?? 0
        _ = try system.appointments.setBookingRule("booking.hold_seconds", to: "60")
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
