import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// "Now" is Sunday 2026-11-22 12:00 UTC unless a test moves it.
@Suite struct SlotTests {
    func day(_ text: String) throws -> LocalDateTime { try TimeInput.parseDay(text) }

    func local(_ text: String) -> TimeInput.Parsed {
        guard let parsed = try? TimeInput.parse(text) else { fatalError(text) }
        return parsed
    }

    @Test func slotsCutWorkingHoursInTheClinicsZone() throws {
        let system = try makeSystem()
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let slots = try system.appointments.slots(departmentId: therapy, from: try day("2026-11-23"), days: 1)
        #expect(slots.count == 2 * 24, "two doctors, 12 morning and 12 afternoon slots of 20 minutes")
        #expect(slots.first?.start == utc("2026-11-23T16:00:00Z"), "08:00 in Los Angeles")
        #expect(slots.last?.end == utc("2026-11-24T01:00:00Z"), "17:00 in Los Angeles")
        #expect(slots.allSatisfy { $0.isAvailable })
        #expect(zip(slots, slots.dropFirst()).allSatisfy { ($0.start, $0.doctorId) < ($1.start, $1.doctorId) })
        #expect(try system.appointments.slots(departmentId: therapy, from: try day("2026-11-28"), days: 2).isEmpty, "a weekend")
        #expect(try system.appointments.slots(departmentId: therapy, from: try day("2026-11-23"), days: 7).count == 5 * 48)
    }

    @Test func bookedPastAndTooSoonSlotsAreNotAvailable() async throws {
        // Monday 08:10 in Los Angeles.
        let clock = TestClock(utc("2026-11-23T16:10:00Z"))
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0 // one doctor
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology, at: local("2026-11-23 10:00"))
        let slots = try system.appointments.slots(departmentId: cardiology, days: 1)
        let free = Dictionary(uniqueKeysWithValues: slots.map { (LocalDateTime.of($0.start, in: TimeZone(identifier: "America/Los_Angeles")!).description, $0.isAvailable) })
        #expect(free["2026-11-23 08:00"] == false, "started already")
        #expect(free["2026-11-23 08:20"] == false, "within the 30-minute lead time")
        #expect(free["2026-11-23 08:40"] == true)
        #expect(free["2026-11-23 10:00"] == false, "booked")
        #expect(free["2026-11-23 10:20"] == true)
        let taken = Dictionary(uniqueKeysWithValues: slots.map { (LocalDateTime.of($0.start, in: TimeZone(identifier: "America/Los_Angeles")!).description, $0.isTaken) })
        #expect(taken["2026-11-23 10:00"] == true && taken["2026-11-23 08:20"] == false, "too soon is not taken")
        #expect(expectError(.slotUnavailable) {
            _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology, at: local("2026-11-23 08:20"))
        }?.key == .slotTooSoon)
        // The lead time is a setting; even at 0, a slot starting right now is not offered.
        try await system.appointments.setBookingRule("booking.lead_minutes", to: "0")
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology, at: local("2026-11-23 08:20"))
        clock.advance(30 * 60) // 08:40 exactly
        let now = try system.appointments.slots(departmentId: cardiology, days: 1).first { $0.start == clock.now }
        #expect(now?.isAvailable == false)
    }

    @Test func fallBackAndSpringForwardInNewYork() throws {
        let system = try makeSystem(clock: TestClock(utc("2026-10-20T12:00:00Z")))
        let night = try system.departments.addDepartment(clinicId: try clinic(system, "NY1").id ?? 0, specialization: "night care")
        _ = try system.departments.addDoctor(departmentId: night.id ?? 0, name: "Dr Night", hours: [
            WorkingHours(id: nil, doctorId: 0, weekday: 7, startMinute: 0, endMinute: 240, slotMinutes: 30)])
        let zone = try #require(TimeZone(identifier: "America/New_York"))
        // 2026-11-01: 01:00-01:59 happens twice, and the doctor works it twice (issue 55: the
        // repeated hour had no slots): both occurrences are offered, in time order.
        let fallBack = try system.appointments.slots(departmentId: night.id ?? 0, from: try day("2026-11-01"), days: 1)
        #expect(fallBack.map { LocalDateTime.of($0.start, in: zone).description.suffix(5) }
                == ["00:00", "00:30", "01:00", "01:30", "01:00", "01:30", "02:00", "02:30", "03:00", "03:30"])
        #expect(fallBack[2].start == utc("2026-11-01T05:00:00Z") && fallBack[3].start == utc("2026-11-01T05:30:00Z"))
        #expect(fallBack[4].start == utc("2026-11-01T06:00:00Z") && fallBack[5].start == utc("2026-11-01T06:30:00Z"))
        #expect(Set(fallBack.map(\.start)).count == 10)
        // The second 01:30 (EST) is booked by its instant, as any slot.
        let patient = try register(system, "owl")
        let second = try system.appointments.createAppointment(clientId: patient.id ?? 0, departmentId: night.id ?? 0,
                                                               at: .instant(utc("2026-11-01T06:30:00Z")))
        #expect(second.startsAt == utc("2026-11-01T06:30:00Z") && second.endsAt == utc("2026-11-01T07:00:00Z"))
        // 2027-03-14: 02:00-02:59 does not exist.
        let springClock = TestClock(utc("2027-03-01T12:00:00Z"))
        let spring = AppointmentController(database: system.database, now: { springClock.now })
        let springSlots = try spring.slots(departmentId: night.id ?? 0, from: try day("2027-03-14"), days: 1)
        #expect(springSlots.map { LocalDateTime.of($0.start, in: zone).description.suffix(5) }
                == ["00:00", "00:30", "01:00", "01:30", "03:00", "03:30"])
        // The slot before the gap lasts 30 real minutes and ends at 03:00 EDT.
        #expect(springSlots[3].end == utc("2027-03-14T07:00:00Z"))
    }

    @Test func minskHasTheSameSlotsAllYear() throws {
        let system = try makeSystem(clock: TestClock(utc("2026-01-01T00:00:00Z")))
        let psychiatry = try department(system, "MN1", "psychiatry").id ?? 0
        for first in ["2026-03-30", "2026-06-29", "2026-10-26", "2026-12-28"] { // Mondays around the old DST dates
            let slots = try system.appointments.slots(departmentId: psychiatry, from: try day(first), days: 1)
            #expect(slots.first?.start == utc("\(first)T05:00:00Z"), "08:00 in Minsk is 05:00 UTC on \(first)")
            #expect(slots.count == 24)
        }
    }

    /// The operator's exceptions keep the clinic admin's rule (issue 56: they used to leave
    /// booked visits outside the hours): a day off over a booked visit is refused and changes
    /// nothing; forced, the visit is cancelled for the clinic with the reason, the patient is
    /// told, and the audit trail names the operator.
    @Test func anOperatorsDayOffOverABookedVisitIsRefusedUnlessForced() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0
        let visit = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology,
                                                             at: local("2026-11-23 10:00"))
        let before = try fingerprint(system)
        let refused = await expectError(.hoursConflict) {
            _ = try await system.departments.addException(doctorId: visit.doctorId, day: try day("2026-11-23"), hours: nil)
        }
        #expect(refused?.arguments.first == String(visit.id ?? 0), "the refusal names the visit")
        #expect(try fingerprint(system) == before, "the refusal changes nothing")
        // Hours that still hold the visit are no conflict.
        let morning = try await system.departments.addException(doctorId: visit.doctorId, day: try day("2026-11-23"),
                                                                 hours: DoctorSchedule.Interval(startMinute: 540, endMinute: 720, slotMinutes: 20))
        #expect(morning.cancelled.isEmpty)
        #expect(try await system.departments.removeException(morning.exception.id ?? 0).isEmpty, "the weekly hours hold the visit too")
        let off = try await system.departments.addException(doctorId: visit.doctorId, day: try day("2026-11-23"),
                                                             hours: nil, force: true, reason: "Dr. Kim is away")
        #expect(off.cancelled.map(\.id) == [visit.id] && off.cancelled.first?.status == .cancelled)
        let message = try #require(try await system.clients.messages(clientId: anna.id ?? 0).first)
        #expect(message.kind == .clinicCancelled && message.body.contains("Dr. Kim is away"))
        #expect(try await system.departments.exceptions(doctorId: visit.doctorId).map(\.id) == [off.exception.id])
        let actors = try system.database.reading { tx in
            try AuditLog.entries(tx, since: Date(timeIntervalSince1970: 0)).filter { $0.action.hasPrefix("exception.") }.map(\.actor)
        }
        #expect(actors == ["operator", "operator", "operator"], "\(actors)")
        #expect(await expectError(.notFound) {
            _ = try await system.departments.addException(doctorId: 99_999, day: try day("2026-11-25"), hours: nil)
        } != nil)
    }

    @Test func exceptionsGiveADayOffOrOtherHours() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0
        let doctor = try system.departments.getDoctorsByDepartmentId(cardiology)[0].id ?? 0
        let off = try await system.departments.addException(doctorId: doctor, day: try day("2026-11-23"), hours: nil)
        #expect(try system.appointments.slots(departmentId: cardiology, from: try day("2026-11-23"), days: 1).isEmpty)
        #expect(expectError(.slotUnavailable) {
            _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology, at: local("2026-11-23 10:00"))
        } != nil)
        // Tuesday: only 10:00-11:00 in 30-minute slots.
        _ = try await system.departments.addException(doctorId: doctor, day: try day("2026-11-24"),
                                                hours: DoctorSchedule.Interval(startMinute: 600, endMinute: 660, slotMinutes: 30))
        let tuesday = try system.appointments.slots(departmentId: cardiology, from: try day("2026-11-24"), days: 1)
        #expect(tuesday.map(\.start) == [utc("2026-11-24T18:00:00Z"), utc("2026-11-24T18:30:00Z")])
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology, at: local("2026-11-24 10:30"))
        #expect(try await system.departments.exceptions(doctorId: doctor).count == 2)
        try await system.departments.removeException(off.exception.id ?? 0)
        #expect(try system.appointments.slots(departmentId: cardiology, from: try day("2026-11-23"), days: 1).count == 24)
        #expect(await expectError(.notFound) { try await system.departments.removeException(off.exception.id ?? 0) } != nil)
        #expect(await expectError(.invalidInput) {
            _ = try await system.departments.addException(doctorId: doctor, day: try day("2026-11-25"),
                                                    hours: DoctorSchedule.Interval(startMinute: 700, endMinute: 600, slotMinutes: 30))
        } != nil)
        #expect(await expectError(.notFound) { _ = try await system.departments.addException(doctorId: 99_999, day: try day("2026-11-25"), hours: nil) } != nil)
        // Exceptions on one date may not overlap or contradict each other.
        #expect(await expectError(.invalidInput) {
            _ = try await system.departments.addException(doctorId: doctor, day: try day("2026-11-24"),
                                                    hours: DoctorSchedule.Interval(startMinute: 630, endMinute: 700, slotMinutes: 30))
        }?.key == .exceptionOverlaps)
        #expect(await expectError(.invalidInput) { _ = try await system.departments.addException(doctorId: doctor, day: try day("2026-11-24"), hours: nil) } != nil)
        _ = try await system.departments.addException(doctorId: doctor, day: try day("2026-11-24"),
                                                hours: DoctorSchedule.Interval(startMinute: 660, endMinute: 720, slotMinutes: 30))
        #expect(try system.appointments.slots(departmentId: cardiology, from: try day("2026-11-24"), days: 1).count == 4)
    }

    @Test func weeklyHoursMayNotOverlapOnOneWeekday() throws {
        let system = try makeSystem()
        let department = try system.departments.addDepartment(clinicId: try clinic(system, "LA1").id ?? 0, specialization: "night care")
        func hours(_ weekday: Int, _ start: Int, _ end: Int, _ slot: Int = 20) -> WorkingHours {
            WorkingHours(id: nil, doctorId: 0, weekday: weekday, startMinute: start, endMinute: end, slotMinutes: slot)
        }
        #expect(expectError(.invalidInput) {
            _ = try system.departments.addDoctor(departmentId: department.id ?? 0, name: "Dr Twice",
                                                 hours: [hours(1, 480, 720), hours(1, 600, 660, 30)])
        }?.key == .workingHoursInvalid, "10:00 would start a 20- and a 30-minute slot")
        let doctor = try system.departments.addDoctor(departmentId: department.id ?? 0, name: "Dr Fine",
                                                      hours: [hours(1, 480, 720), hours(1, 720, 780), hours(2, 480, 720)])
        #expect(try system.departments.getWorkingHours(doctorId: doctor.id ?? 0).count == 3, "touching intervals and other days are fine")
    }

    @Test func daysAndDoctorsAreChecked() throws {
        let system = try makeSystem()
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        #expect(expectError(.invalidInput) { _ = try system.appointments.slots(departmentId: therapy, days: 0) } != nil)
        #expect(expectError(.invalidInput) { _ = try system.appointments.slots(departmentId: therapy, days: 32) } != nil)
        #expect(expectError(.notFound) { _ = try system.appointments.slots(departmentId: therapy, doctorId: 99_999) } != nil)
        #expect(expectError(.notFound) { _ = try system.appointments.slots(departmentId: 99_999) } != nil)
        let doctor = try system.departments.getDoctorsByDepartmentId(therapy)[1]
        let one = try system.appointments.slots(departmentId: therapy, doctorId: doctor.id, from: try day("2026-11-23"), days: 1)
        #expect(one.count == 24 && one.allSatisfy { $0.doctorId == doctor.id })
    }
}

@Suite struct LifecycleTests {
    func local(_ text: String) -> TimeInput.Parsed {
        guard let parsed = try? TimeInput.parse(text) else { fatalError(text) }
        return parsed
    }

    /// Every pair of statuses: the allowed transitions succeed, every other one is refused.
    @Test func everyTransitionIsAllowedOrRefusedAsWritten() async throws {
        let allowed: Set<[AppointmentStatus]> = [[.scheduled, .confirmed], [.scheduled, .arrived], [.scheduled, .cancelled],
                                                 [.scheduled, .noShow], [.confirmed, .arrived], [.confirmed, .completed],
                                                 [.confirmed, .cancelled], [.confirmed, .noShow], [.arrived, .inProgress],
                                                 [.arrived, .completed], [.arrived, .cancelled], [.arrived, .noShow],
                                                 [.arrived, .scheduled], [.inProgress, .completed]]
        for from in AppointmentStatus.allCases {
            for to in AppointmentStatus.allCases {
                // Book, bring it to `from` along allowed steps, then try `to` after the start.
                let clock = TestClock()
                let system = try makeSystem(clock: clock)
                let anna = try register(system, "anna")
                let booked = try system.appointments.createAppointment(
                    clientId: anna.id ?? 0, departmentId: try department(system, "LA1", "therapy").id ?? 0, at: local("2026-11-23 09:20"))
                let id = booked.id ?? 0
                clock.advance(2 * 86_400) // after the start
                let path: [AppointmentStatus] = switch from {
                case .scheduled: []
                case .confirmed: [.confirmed]
                case .arrived: [.arrived]
                case .inProgress: [.arrived, .inProgress]
                case .completed: [.confirmed, .completed]
                case .cancelled: [.cancelled]
                case .noShow: [.noShow]
                }
                for step in path { _ = try await system.appointments.setStatus(id, to: step) }
                let expected = allowed.contains([from, to])
                #expect(from.canMove(to: to) == expected, "\(from) → \(to)")
                do {
                    let moved = try await system.appointments.setStatus(id, to: to)
                    #expect(expected && moved.status == to, "\(from) → \(to) should be refused")
                } catch let error as ClinicError {
                    #expect(!expected && error.code == .invalidTransition, "\(from) → \(to): \(error)")
                }
            }
        }
    }

    @Test func completedAndNoShowWaitForTheStartAndEverythingIsInTheHistory() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-23 09:20"))
        let id = booked.id ?? 0
        clock.advance(60)
        _ = try system.appointments.rescheduleAppointment(id, clientId: anna.id ?? 0, to: local("2026-11-23 10:20"))
        clock.advance(60)
        _ = try await system.appointments.setStatus(id, to: .confirmed)
        #expect(await expectError(.invalidTransition) { _ = try await system.appointments.setStatus(id, to: .completed) }?.key == .notStartedYet)
        #expect(await expectError(.invalidTransition) { _ = try await system.appointments.setStatus(id, to: .noShow) } != nil)
        clock.advance(2 * 86_400)
        _ = try await system.appointments.setStatus(id, to: .completed)
        let history = try system.appointments.history(id, clientId: anna.id ?? 0)
        #expect(history.map(\.event) == ["booked", "rescheduled", "confirmed", "completed"])
        #expect(history.map(\.actor) == ["patient", "patient", "staff", "staff"])
        #expect(history[0].startsAt == utc("2026-11-23T17:20:00Z") && history[1].startsAt == utc("2026-11-23T18:20:00Z"))
        #expect(history.map(\.at) == [testNow, testNow + 60, testNow + 120, testNow + 120 + 2 * 86_400])
        let mallory = try register(system, "mallory")
        #expect(expectError(.forbidden) { _ = try system.appointments.history(id, clientId: mallory.id ?? 0) } != nil)
        #expect(await expectError(.notFound) { _ = try await system.appointments.setStatus(99_999, to: .confirmed) } != nil)
    }

    @Test func patientsCannotCancelOrMoveWithinTheCutoff() async throws {
        // Monday 07:30 in Los Angeles: 09:20 is less than 2 hours away, 10:00 is not.
        let clock = TestClock(utc("2026-11-23T15:30:00Z"))
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let soon = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-23 09:20"))
        let later = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-23 10:00"))
        let before = try fingerprint(system)
        #expect(expectError(.tooLate) { _ = try system.appointments.cancelAppointment(soon.id ?? 0, clientId: anna.id ?? 0) } != nil)
        #expect(expectError(.tooLate) {
            _ = try system.appointments.rescheduleAppointment(soon.id ?? 0, clientId: anna.id ?? 0, to: local("2026-11-24 09:20"))
        } != nil)
        #expect(try fingerprint(system) == before)
        _ = try system.appointments.cancelAppointment(later.id ?? 0, clientId: anna.id ?? 0)
        // Staff are not bound by the cutoff; and the cutoff is a setting.
        _ = try await system.appointments.setStatus(soon.id ?? 0, to: .confirmed)
        try await system.appointments.setBookingRule("booking.cutoff_minutes", to: "30")
        _ = try system.appointments.cancelAppointment(soon.id ?? 0, clientId: anna.id ?? 0)
    }

    @Test func aPatientHoldsAtMostTheLimitOfActiveFutureAppointments() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        var booked: [Appointment] = []
        for hour in 8..<13 where hour != 12 {
            booked.append(try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy,
                                                                    at: local("2026-11-24 \(String(format: "%02d", hour)):00")))
        }
        booked.append(try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-24 13:00")))
        #expect(booked.count == 5)
        let before = try fingerprint(system)
        #expect(expectError(.limitReached) {
            _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-24 14:00"))
        } != nil)
        #expect(try fingerprint(system) == before)
        // Moving one does not count as another; cancelling one makes room.
        _ = try system.appointments.rescheduleAppointment(booked[0].id ?? 0, clientId: anna.id ?? 0, to: local("2026-11-25 08:00"))
        _ = try system.appointments.cancelAppointment(booked[1].id ?? 0, clientId: anna.id ?? 0)
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy, at: local("2026-11-24 14:00"))
        #expect(await expectError(.invalidInput) { try await system.appointments.setBookingRule("booking.max_active", to: "0") } != nil)
        #expect(await expectError(.invalidInput) { try await system.appointments.setBookingRule("booking.colour", to: "1") } != nil)
    }

    /// The department spacing rule through the store (issue 56): the gather brings the
    /// patient's other visits in the department, booking and moving are refused with the
    /// other visit's date, and nothing changes. Its edge cases are `DepartmentSpacingTests`'.
    @Test func visitsInOneDepartmentKeepTheirSpacingWhenSet() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), id = anna.id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0
        let first = try system.appointments.createAppointment(clientId: id, departmentId: therapy, at: local("2026-11-24 09:00"))
        // Off by default: the next day is fine.
        let next = try system.appointments.createAppointment(clientId: id, departmentId: therapy, at: local("2026-11-25 09:00"))
        _ = try system.appointments.cancelAppointment(next.id ?? 0, clientId: id)
        try await system.appointments.setBookingRule("booking.department_days_between", to: "6")
        let before = try fingerprint(system)
        let refused = expectError(.tooClose) {
            _ = try system.appointments.createAppointment(clientId: id, departmentId: therapy, at: local("2026-11-27 09:00"))
        }
        #expect(refused?.arguments == ["2026-11-24", "6"])
        #expect(try fingerprint(system) == before)
        // Another department is another matter; six days later is far enough.
        _ = try system.appointments.createAppointment(clientId: id, departmentId: cardiology, at: local("2026-11-25 09:00"))
        let later = try system.appointments.createAppointment(clientId: id, departmentId: therapy, at: local("2026-11-30 09:00"))
        // A move is measured against the other visits, not itself.
        let moving = try fingerprint(system)
        #expect(expectError(.tooClose) {
            _ = try system.appointments.rescheduleAppointment(later.id ?? 0, clientId: id, to: local("2026-11-26 09:00"))
        }?.arguments == ["2026-11-24", "6"])
        #expect(expectError(.tooClose) {
            _ = try system.appointments.rescheduleAppointment(first.id ?? 0, clientId: id, to: local("2026-11-25 10:00"))
        }?.arguments == ["2026-11-30", "6"])
        #expect(try fingerprint(system) == moving)
        _ = try system.appointments.rescheduleAppointment(first.id ?? 0, clientId: id, to: local("2026-11-23 09:00"))
        // A cancelled visit no longer counts.
        _ = try system.appointments.cancelAppointment(first.id ?? 0, clientId: id)
        _ = try system.appointments.createAppointment(clientId: id, departmentId: therapy, at: local("2026-11-24 10:00"))
        #expect(await expectError(.invalidInput) { try await system.appointments.setBookingRule("booking.department_days_between", to: "366") } != nil)
    }
}
