import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// Booking rules. "Now" is Sunday 2026-11-22 12:00 UTC; Monday 2026-11-23 09:20 in Los Angeles
/// is 17:20 UTC.
@Suite struct AppointmentTests {
    let monday0920 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)

    func local(_ text: String) -> TimeInput.Parsed {
        guard let parsed = try? TimeInput.parse(text) else { fatalError(text) }
        return parsed
    }

    @Test func bookingTakesTheFirstFreeDoctorInTheClinicsZone() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), bob = try register(system, "bob"), cleo = try register(system, "cleo")
        let therapy = try department(system, "LA1", "therapy")
        let doctors = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)
        let first = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0,
                                                              at: monday0920, notes: "  cough  ")
        #expect(first.startsAt == utc("2026-11-23T17:20:00Z"))
        #expect(first.endsAt == utc("2026-11-23T17:40:00Z"))
        #expect(first.status == .scheduled)
        #expect(first.notes == "cough")
        #expect(first.doctorId == doctors[0].id)
        #expect(first.doctorName == doctors[0].name)
        let second = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        #expect(second.doctorId == doctors[1].id, "the first doctor is taken, the second is free")
        let before = try fingerprint(system)
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.createAppointment(clientId: cleo.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        } != nil)
        #expect(try fingerprint(system) == before)
        // The same instant given in UTC is the same slot.
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.createAppointment(clientId: cleo.id ?? 0, departmentId: therapy.id ?? 0,
                                                          at: .instant(utc("2026-11-23T17:20:00Z")))
        } != nil)
    }

    @Test func aChosenDoctorMustBeFreeAndInTheDepartment() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let therapy = try department(system, "LA1", "therapy")
        let cardiology = try department(system, "LA1", "cardiology")
        let doctors = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)
        let cardiologist = try system.departments.getDoctorsByDepartmentId(cardiology.id ?? 0)[0]
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0,
                                                               at: monday0920, doctorId: doctors[1].id)
        #expect(booked.doctorId == doctors[1].id)
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0,
                                                          at: monday0920, doctorId: doctors[1].id)
        } != nil)
        #expect(expectError(.notFound) {
            _ = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0,
                                                          at: monday0920, doctorId: cardiologist.id)
        } != nil)
    }

    @Test func startsOutsideHoursOffBoundaryOrPastAreRefused() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let before = try fingerprint(system)
        for text in ["2026-11-23 09:30", "2026-11-23 07:40", "2026-11-23 12:00", "2026-11-23 16:50",
                     "2026-11-28 10:00", "2026-11-23T09:20:30-08:00", "2026-11-23T09:20:00.5-08:00"] {
            let error = expectError(.slotUnavailable) {
                _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local(text))
            }
            #expect(error != nil, "\(text)")
        }
        #expect(expectError(.slotUnavailable) {
            _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-20 09:20"))
        }?.key == .slotInPast)
        #expect(expectError(.notFound) {
            _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: 99_999, at: monday0920)
        } != nil)
        #expect(expectError(.invalidInput) {
            _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: monday0920,
                                                          notes: String(repeating: "x", count: 1001))
        } != nil)
        #expect(try fingerprint(system) == before)
        // 16:40 is the last slot of the afternoon, 08:00 the first of the morning.
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-23 16:40"))
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-24 08:00"))
    }

    @Test func aDoctorsOverlappingAppointmentTakesTheSlotEvenWithOtherStarts() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0 // one doctor
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology, at: monday0920)
        // The clinic changes to 30-minute slots from 09:00: 09:30-10:00 overlaps 09:20-09:40.
        try changeWorkingHours(system) { hours in
            hours.startMinute == 480
                ? DoctorSchedule.Interval(startMinute: 540, endMinute: hours.endMinute, slotMinutes: 30)
                : DoctorSchedule.Interval(startMinute: hours.startMinute, endMinute: hours.endMinute, slotMinutes: hours.slotMinutes)
        }
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: cardiology, at: local("2026-11-23 09:30"))
        } != nil)
        _ = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: cardiology, at: local("2026-11-23 10:00"))
    }

    @Test func aPatientCannotHoldTwoOverlappingAppointments() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0,
                                                      departmentId: try department(system, "LA1", "therapy").id ?? 0, at: monday0920)
        #expect(expectError(.overlappingAppointment) {
            _ = try system.appointments.createAppointment(clientId: anna.id ?? 0,
                                                          departmentId: try department(system, "LA1", "cardiology").id ?? 0, at: monday0920)
        } != nil)
    }

    @Test func rescheduleMovesAtomicallyAndFreesTheOldSlot() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0 // one doctor
        let original = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology, at: monday0920)
        let blocker = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: cardiology,
                                                                at: local("2026-11-23 10:00"))
        // Into a taken slot: refused, and the original stays where it was.
        let before = try fingerprint(system)
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.rescheduleAppointment(original.id ?? 0, clientId: anna.id ?? 0, to: local("2026-11-23 10:00"))
        } != nil)
        #expect(expectError(.slotUnavailable) {
            _ = try system.appointments.rescheduleAppointment(original.id ?? 0, clientId: anna.id ?? 0, to: local("2026-11-23 10:05"))
        } != nil)
        #expect(try fingerprint(system) == before)
        let moved = try system.appointments.rescheduleAppointment(original.id ?? 0, clientId: anna.id ?? 0, to: local("2026-11-23 10:20"))
        #expect(moved.id == original.id)
        #expect(moved.startsAt == utc("2026-11-23T18:20:00Z"))
        // The old slot is free for someone else now.
        let taken = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: cardiology, at: monday0920)
        #expect(taken.startsAt == original.startsAt)
        _ = blocker
    }

    @Test func cancelKeepsTheRowAndFreesTheSlot() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology, at: monday0920)
        let cancelled = try system.appointments.cancelAppointment(booked.id ?? 0, clientId: anna.id ?? 0)
        #expect(cancelled.status == .cancelled)
        #expect(try system.appointments.getAppointmentById(booked.id ?? 0, clientId: anna.id ?? 0).status == .cancelled)
        #expect(expectError(.invalidTransition) { _ = try system.appointments.cancelAppointment(booked.id ?? 0, clientId: anna.id ?? 0) } != nil)
        #expect(expectError(.invalidTransition) {
            _ = try system.appointments.rescheduleAppointment(booked.id ?? 0, clientId: anna.id ?? 0, to: local("2026-11-23 10:20"))
        } != nil)
        _ = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: cardiology, at: monday0920)
        #expect(try system.appointments.getAppointmentsByClientId(anna.id ?? 0, scope: .all).count == 1)
    }

    @Test func onlyTheOwnerMaySeeOrChangeAnAppointment() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), mallory = try register(system, "mallory")
        let booked = try system.appointments.createAppointment(
            clientId: anna.id ?? 0, departmentId: try department(system, "LA1", "therapy").id ?? 0, at: monday0920)
        let before = try fingerprint(system)
        let id = booked.id ?? 0, other = mallory.id ?? 0
        #expect(expectError(.forbidden) { _ = try system.appointments.getAppointmentById(id, clientId: other) } != nil)
        #expect(expectError(.forbidden) { _ = try system.appointments.cancelAppointment(id, clientId: other) } != nil)
        #expect(expectError(.forbidden) { _ = try system.appointments.rescheduleAppointment(id, clientId: other, to: local("2026-11-23 10:20")) } != nil)
        #expect(expectError(.notFound) { _ = try system.appointments.cancelAppointment(99_999, clientId: other) } != nil)
        #expect(try system.appointments.getAppointmentsByClientId(other, scope: .all).isEmpty)
        #expect(try fingerprint(system) == before)
    }

    @Test func listsSplitUpcomingAndPast() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let early = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: monday0920)
        let late = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-25 09:20"))
        #expect(try system.appointments.getAppointmentsByClientId(anna.id ?? 0).map(\.id) == [early.id, late.id])
        clock.advance(2 * 86_400) // Tuesday noon UTC
        #expect(try system.appointments.getAppointmentsByClientId(anna.id ?? 0, scope: .upcoming).map(\.id) == [late.id])
        #expect(try system.appointments.getAppointmentsByClientId(anna.id ?? 0, scope: .past).map(\.id) == [early.id])
        #expect(try system.appointments.getAppointmentsByClientId(anna.id ?? 0, scope: .all).count == 2)
    }

    @Test func daylightSavingDaysInNewYork() throws {
        let system = try makeSystem(clock: TestClock(utc("2026-10-25T12:00:00Z")))
        let anna = try register(system, "anna", city: "New York")
        let night = try system.departments.addDepartment(clinicId: try clinic(system, "NY1").id ?? 0, specialization: "night care")
        // Sundays 00:00-04:00 local, 30-minute slots: the clock changes inside these hours.
        _ = try system.departments.addDoctor(departmentId: night.id ?? 0, name: "Dr Night", hours: [
            WorkingHours(id: nil, doctorId: 0, weekday: 7, startMinute: 0, endMinute: 240, slotMinutes: 30)])
        // Fall back, 2026-11-01: 01:30 happens twice. A local time is its first occurrence; the
        // second is a slot of its own (issue 55: the doctor works the repeated hour too), booked
        // by its instant.
        let first = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: night.id ?? 0,
                                                              at: local("2026-11-01 01:30"))
        #expect(first.startsAt == utc("2026-11-01T05:30:00Z"))
        let second = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: night.id ?? 0,
                                                               at: .instant(utc("2026-11-01T06:30:00Z")))
        #expect(second.startsAt == utc("2026-11-01T06:30:00Z") && second.id != first.id, "the second 01:30 is another slot")
        #expect(expectError(.slotUnavailable) {
            _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: night.id ?? 0,
                                                          at: .instant(utc("2026-11-01T06:15:00Z")))
        } != nil, "not a slot boundary of either hour")
        let later = TestClock(utc("2027-03-01T12:00:00Z"))
        let spring = AppointmentController(database: system.database, now: { later.now })
        // Spring forward, 2027-03-14: 02:00-02:59 does not exist.
        #expect(expectError(.invalidInput) {
            _ = try spring.createAppointment(clientId: anna.id ?? 0, departmentId: night.id ?? 0, at: local("2027-03-14 02:30"))
        } != nil)
        let three = try spring.createAppointment(clientId: anna.id ?? 0, departmentId: night.id ?? 0, at: local("2027-03-14 03:00"))
        #expect(three.startsAt == utc("2027-03-14T07:00:00Z"))
    }

    @Test func minskKeepsUtcPlusThreeAllYear() throws {
        let system = try makeSystem(clock: TestClock(utc("2026-03-01T00:00:00Z")))
        let anna = try register(system, "anna", city: "Минск")
        let psychiatry = try department(system, "MN1", "psychiatry").id ?? 0
        for (day, expected) in [("2026-03-30", "2026-03-30T06:00:00Z"), ("2026-07-06", "2026-07-06T06:00:00Z"),
                                ("2026-10-26", "2026-10-26T06:00:00Z"), ("2026-12-28", "2026-12-28T06:00:00Z")] {
            let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: psychiatry,
                                                                   at: local("\(day) 09:00"))
            #expect(booked.startsAt == utc(expected))
        }
    }
}
