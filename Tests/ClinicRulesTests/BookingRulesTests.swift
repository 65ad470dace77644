import Foundation
import Testing
@testable import ClinicKit

// The booking rules on plain facts (issue 56): facts built by hand, the decision called, no
// store, no file, no server. Each test changes one fact of a booking that succeeds
// (`Fixture.facts`) and checks the one refusal it must cause.

/// A clinic in New York with one department, two doctors working Monday to Friday 9:00–12:00
/// in 30-minute slots, and a patient (7) with no appointments. "Now" is Monday 2026-03-02
/// 08:00 local; the United States move their clocks forward on Sunday 2026-03-08.
enum Fixture {
    static let zone = TimeZone(identifier: "America/New_York")!
    static let clinic = Clinic(id: 10, externalId: "X10", name: "Harbor Clinic", address: "1 Main St", city: "New York", cityKey: "new york",
                               state: "NY", zip: "10001", description: "", category: "GENERAL ACUTE CARE", lat: 40.7, lon: -74.0,
                               isPediatric: false, isHospital: true, timeZone: "America/New_York", phone: "", website: "")
    static let department = Department(id: 20, clinicId: 10, specialization: "therapy", isDemo: false)
    static let doctors = [Doctor(id: 1, departmentId: 20, name: "Dr. Avery", isDemo: false),
                          Doctor(id: 2, departmentId: 20, name: "Dr. Brook", isDemo: false)]

    static func weekdays(_ doctor: Int64, from start: Int = 9 * 60, to end: Int = 12 * 60, slot: Int = 30) -> [WorkingHours] {
        (1...5).map { WorkingHours(id: nil, doctorId: doctor, weekday: $0, startMinute: start, endMinute: end, slotMinutes: slot) }
    }

    /// A local wall time in the clinic's zone, as an instant.
    static func at(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0) -> Date {
        LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute)!.firstInstant(in: zone)!
    }

    static let now = at(2026, 3, 2, 8)
    /// Tuesday 2026-03-03 10:00, a free slot of both doctors.
    static let tuesday10 = at(2026, 3, 3, 10)

    static let context = AppointmentMessageContext(language: .en, emailConfirmed: true, clinicName: "Harbor Clinic", address: "1 Main St",
                                                   city: "New York", state: "NY", zip: "10001", timeZone: "America/New_York",
                                                   specialization: "therapy")

    static func facts(settings: [String: String] = [:]) -> BookingFacts {
        BookingFacts(clientExists: true, department: department, clinic: clinic, visitType: nil, doctors: doctors,
                     hours: [1: weekdays(1), 2: weekdays(2)], exceptions: [:], taken: [:], patientAppointments: [], activeCount: 0,
                     bookingSettings: settings, messageContext: context, appointmentId: 500)
    }

    static func ask(_ start: Date = tuesday10, doctor: Int64? = nil, visitType: Int64? = nil, staff: Int64? = nil) -> BookingAsk {
        BookingAsk(clientId: 7, departmentId: 20, time: .instant(start), doctorId: doctor, notes: "knee", staffId: staff,
                   visitTypeId: visitType)
    }

    static func visitType(id: Int64 = 30, department: Int64 = 20, minutes: Int, active: Bool = true) throws -> VisitType {
        try VisitType(row: StoredRowValues([
            "id": .integer(id), "department_id": .integer(department), "name_en": .text("Long visit"), "name_ru": .text("Долгий приём"),
            "duration_minutes": .integer(Int64(minutes)), "price_cents": .null, "is_active": .integer(active ? 1 : 0)]))
    }

    static func appointment(id: Int64 = 900, start: Date, minutes: Int = 30, doctor: Int64 = 1, status: AppointmentStatus = .scheduled,
                            client: Int64? = 7, department: Int64 = 20) -> Appointment {
        Appointment(id: id, clientId: client, clinicId: 10, departmentId: department, doctorId: doctor, doctorName: "Dr. Avery",
                    startsAt: start, endsAt: start.addingTimeInterval(TimeInterval(minutes * 60)), status: status, notes: "",
                    createdAt: now, updatedAt: now)
    }

    static func changeFacts(_ appointment: Appointment, settings: [String: String] = [:]) -> AppointmentChangeFacts {
        AppointmentChangeFacts(appointment: appointment, bookingSettings: settings, messageContext: context, personalDataKeyCheck: nil)
    }
}

/// Whether a decision was refused with this code and message key (a decision made, or
/// another refusal, is recorded as the test's issue).
func refused(_ code: ClinicError.Code, _ key: MessageKey, sourceLocation: SourceLocation = #_sourceLocation,
             _ body: () throws -> Any?) -> Bool {
    do {
        let made = try body()
        Issue.record("decided, not refused: \(String(describing: made))", sourceLocation: sourceLocation)
        return false
    } catch let error as ClinicError {
        return error.code == code && error.key == key
    } catch {
        Issue.record("\(error)", sourceLocation: sourceLocation)
        return false
    }
}

@Suite struct BookingDecisionTests {
    typealias F = Fixture

    @Test func aFreeSlotIsBookedWithTheFirstDoctorAndEverythingTheWriteNeeds() throws {
        let decision = try BookingRules.book(F.facts(), F.ask(), now: F.now)
        #expect(decision.appointment.id == 500)
        #expect(decision.appointment.doctorId == 1)
        #expect(decision.appointment.startsAt == F.tuesday10)
        #expect(decision.appointment.endsAt == F.tuesday10.addingTimeInterval(1800))
        #expect(decision.appointment.status == .scheduled)
        #expect(decision.appointment.notes == "knee")
        #expect(decision.event.event == "booked" && decision.event.actor == "patient" && decision.event.startsAt == F.tuesday10)
        #expect(decision.message?.clientId == 7)
        #expect(decision.message?.body.contains("500") == true)
    }

    @Test func aStaffBookingIsTheStaffs() throws {
        let decision = try BookingRules.book(F.facts(), F.ask(staff: 3), now: F.now)
        #expect(decision.event.actor == "staff" && decision.event.staffId == 3 && decision.message?.staffId == 3)
    }

    @Test func withoutAnIdYetTheMessageWaitsForTheWrite() throws {
        var facts = F.facts()
        facts.appointmentId = nil
        let decision = try BookingRules.book(facts, F.ask(), now: F.now)
        #expect(decision.appointment.id == nil && decision.message == nil)
    }

    @Test func aWallTimeIsReadInTheClinicsZone() throws {
        let local = BookingAsk(clientId: 7, departmentId: 20, time: .local(LocalDateTime(year: 2026, month: 3, day: 3, hour: 10)!))
        #expect(try BookingRules.book(F.facts(), local, now: F.now).appointment.startsAt == F.tuesday10)
    }

    @Test func anUnknownPatientDepartmentOrClinicIsRefused() throws {
        var facts = F.facts()
        facts.clientExists = false
        #expect(refused(.notLoggedIn, .notLoggedIn) { try BookingRules.book(facts, F.ask(), now: F.now) })
        facts = F.facts()
        facts.department = nil
        #expect(refused(.notFound, .departmentNotFound) { try BookingRules.book(facts, F.ask(), now: F.now) })
        facts = F.facts()
        facts.clinic = nil
        #expect(refused(.notFound, .clinicNotFound) { try BookingRules.book(facts, F.ask(), now: F.now) })
    }

    @Test func thePastTheLeadTimeAndTheHorizon() throws {
        // In the past.
        #expect(refused(.slotUnavailable, .slotInPast) { try BookingRules.book(F.facts(), F.ask(F.at(2026, 3, 2, 7)), now: F.now) })
        // 30 minutes is the default lead time: 08:30 is too soon, 09:00 is fine.
        let soon = F.at(2026, 3, 2, 8, 30)
        var facts = F.facts()
        facts.hours = [1: F.weekdays(1, from: 8 * 60)]
        #expect(refused(.slotUnavailable, .slotTooSoon) { try BookingRules.book(facts, F.ask(F.at(2026, 3, 2, 8, 29)), now: F.now) })
        #expect((try? BookingRules.book(facts, F.ask(soon), now: F.now)) != nil)
        // A lead time of two hours refuses 09:00 on the same day.
        facts.bookingSettings = ["booking.lead_minutes": "120"]
        #expect(refused(.slotUnavailable, .slotTooSoon) { try BookingRules.book(facts, F.ask(F.at(2026, 3, 2, 9)), now: F.now) })
        // The horizon: 365 days by default; 10 days (of 24 real hours) when set so. The clocks
        // moved forward meanwhile, so it ends at 09:00 local on 2026-03-12, not 08:00.
        facts = F.facts(settings: ["booking.horizon_days": "10"])
        #expect((try? BookingRules.book(facts, F.ask(F.at(2026, 3, 12, 9)), now: F.now)) != nil)
        #expect(refused(.slotUnavailable, .slotTooFar) { try BookingRules.book(facts, F.ask(F.at(2026, 3, 12, 9, 30)), now: F.now) })
    }

    @Test func outsideHoursOffSlotBoundariesAndOnADayOff() throws {
        // Saturday: nobody works.
        #expect(refused(.slotUnavailable, .slotOutsideHours) { try BookingRules.book(F.facts(), F.ask(F.at(2026, 3, 7, 10)), now: F.now) })
        // 10:15 is not a slot boundary; 11:45 would end after 12:00 with a 30-minute slot... it is 11:30's slot only.
        #expect(refused(.slotUnavailable, .slotOutsideHours) { try BookingRules.book(F.facts(), F.ask(F.at(2026, 3, 3, 10, 15)), now: F.now) })
        #expect(refused(.slotUnavailable, .slotOutsideHours) { try BookingRules.book(F.facts(), F.ask(F.at(2026, 3, 3, 12)), now: F.now) })
        // A day off of both doctors on that Tuesday.
        var facts = F.facts()
        facts.exceptions = [1: [WorkingException(id: 1, doctorId: 1, day: "2026-03-03", startMinute: nil, endMinute: nil, slotMinutes: nil)],
                            2: [WorkingException(id: 2, doctorId: 2, day: "2026-03-03", startMinute: nil, endMinute: nil, slotMinutes: nil)]]
        #expect(refused(.slotUnavailable, .slotOutsideHours) { try BookingRules.book(facts, F.ask(), now: F.now) })
        // Doctor 1 off, doctor 2 works: doctor 2 gets it.
        facts.exceptions[2] = nil
        #expect(try BookingRules.book(facts, F.ask(), now: F.now).appointment.doctorId == 2)
        // An exception that changes the hours: doctor 1 works 14:00–15:00 that day.
        facts = F.facts()
        facts.doctors = [F.doctors[0]]
        facts.exceptions = [1: [WorkingException(id: 1, doctorId: 1, day: "2026-03-03", startMinute: 14 * 60, endMinute: 15 * 60, slotMinutes: 60)]]
        #expect(refused(.slotUnavailable, .slotOutsideHours) { try BookingRules.book(facts, F.ask(), now: F.now) })
        let afternoon = try? BookingRules.book(facts, F.ask(F.at(2026, 3, 3, 14)), now: F.now)
        #expect(afternoon?.appointment.endsAt == F.at(2026, 3, 3, 15))
    }

    @Test func aTakenTimeGoesToTheNextDoctorAndWhenAllAreTakenIsRefused() throws {
        var facts = F.facts()
        facts.taken = [1: [F.tuesday10..<F.tuesday10.addingTimeInterval(1800)]]
        #expect(try BookingRules.book(facts, F.ask(), now: F.now).appointment.doctorId == 2)
        // Only doctor 1 asked for: taken.
        #expect(refused(.slotTaken, .slotTaken) { try BookingRules.book(facts, F.ask(doctor: 1), now: F.now) })
        // An overlap by a minute is enough (a longer visit booked before the hours changed).
        facts.taken[2] = [F.tuesday10.addingTimeInterval(-1800)..<F.tuesday10.addingTimeInterval(60)]
        #expect(refused(.slotTaken, .slotTaken) { try BookingRules.book(facts, F.ask(), now: F.now) })
        // Touching is not overlapping.
        facts.taken[2] = [F.tuesday10.addingTimeInterval(-1800)..<F.tuesday10]
        #expect(try BookingRules.book(facts, F.ask(), now: F.now).appointment.doctorId == 2)
    }

    @Test func aDoctorAskedForMustBeOfTheDepartment() throws {
        #expect(refused(.notFound, .doctorNotFound) { try BookingRules.book(F.facts(), F.ask(doctor: 99), now: F.now) })
        #expect(try BookingRules.book(F.facts(), F.ask(doctor: 2), now: F.now).appointment.doctorId == 2)
    }

    @Test func thePatientsOverlapAndLimit() throws {
        var facts = F.facts()
        facts.patientAppointments = [PatientSpan(appointmentId: 41, span: F.tuesday10.addingTimeInterval(900)..<F.tuesday10.addingTimeInterval(2700))]
        #expect(refused(.overlappingAppointment, .overlapping) { try BookingRules.book(facts, F.ask(), now: F.now) })
        facts = F.facts()
        facts.activeCount = 5
        #expect(refused(.limitReached, .limitReached) { try BookingRules.book(facts, F.ask(), now: F.now) })
        facts.bookingSettings = ["booking.max_active": "6"]
        #expect((try? BookingRules.book(facts, F.ask(), now: F.now)) != nil)
    }

    @Test func visitTypesSetTheLengthAndMustBeOfferedHere() throws {
        var facts = F.facts()
        facts.visitType = try F.visitType(minutes: 60)
        let long = try BookingRules.book(facts, F.ask(visitType: 30), now: F.now)
        #expect(long.appointment.endsAt == F.tuesday10.addingTimeInterval(3600) && long.appointment.visitTypeId == 30)
        // 11:30 + 60 minutes ends after the hours.
        #expect(refused(.slotUnavailable, .slotOutsideHours) { try BookingRules.book(facts, F.ask(F.at(2026, 3, 3, 11, 30), visitType: 30), now: F.now) })
        // A 60-minute visit whose second half is taken.
        facts.taken = [1: [F.tuesday10.addingTimeInterval(1800)..<F.tuesday10.addingTimeInterval(3600)]]
        #expect(try BookingRules.book(facts, F.ask(visitType: 30), now: F.now).appointment.doctorId == 2)
        // Another department's, or inactive: not found.
        facts.visitType = try F.visitType(department: 21, minutes: 60)
        #expect(refused(.notFound, .visitTypeNotFound) { try BookingRules.book(facts, F.ask(visitType: 30), now: F.now) })
        facts.visitType = try F.visitType(minutes: 60, active: false)
        #expect(refused(.notFound, .visitTypeNotFound) { try BookingRules.book(facts, F.ask(visitType: 30), now: F.now) })
        // 45 minutes is no whole number of 30-minute slots.
        facts.visitType = try F.visitType(minutes: 45)
        #expect(refused(.slotUnavailable, .slotOutsideHours) { try BookingRules.book(facts, F.ask(visitType: 30), now: F.now) })
    }

    @Test func clocksMovingForwardSkipAWallTimeAndShortenNoVisit() throws {
        // Doctor 1 works Sundays 01:00–04:00 in 30-minute slots; on 2026-03-08 02:00–02:59 does not exist.
        var facts = F.facts()
        facts.doctors = [F.doctors[0]]
        facts.hours = [1: [WorkingHours(id: nil, doctorId: 1, weekday: 7, startMinute: 60, endMinute: 240, slotMinutes: 30)]]
        let skipped = BookingAsk(clientId: 7, departmentId: 20, time: .local(LocalDateTime(year: 2026, month: 3, day: 8, hour: 2, minute: 30)!))
        #expect(refused(.invalidInput, .timeDoesNotExist) { try BookingRules.book(facts, skipped, now: F.now) })
        // 01:30 EST is a slot, and lasts 30 real minutes (ending at 03:00 EDT).
        let early = try? BookingRules.book(facts, F.ask(F.at(2026, 3, 8, 1, 30)), now: F.now)
        #expect(early?.appointment.endsAt == F.at(2026, 3, 8, 3))
        #expect(early?.appointment.endsAt.timeIntervalSince(early!.appointment.startsAt) == 1800)
        // 03:00 EDT is a slot too.
        #expect((try? BookingRules.book(facts, F.ask(F.at(2026, 3, 8, 3)), now: F.now)) != nil)
    }
}

@Suite struct DepartmentSpacingTests {
    typealias F = Fixture

    static func spaced(_ days: Int, visits: [(Int64, Date)]) -> BookingFacts {
        var facts = F.facts(settings: ["booking.department_days_between": String(days)])
        facts.departmentVisits = visits.map { PatientSpan(appointmentId: $0.0, span: $0.1..<$0.1.addingTimeInterval(1800)) }
        return facts
    }

    @Test func offByDefault() throws {
        var facts = F.facts()
        facts.departmentVisits = [PatientSpan(appointmentId: 41, span: F.at(2026, 3, 4, 10)..<F.at(2026, 3, 4, 10, 30))]
        #expect((try? BookingRules.book(facts, F.ask(), now: F.now)) != nil)
    }

    @Test func aVisitFewerThanNDaysAwayIsTooCloseAndNamesItsDate() throws {
        // Six days: a visit on Friday 2026-03-06 (three days after Tuesday) stands in the way.
        let facts = Self.spaced(6, visits: [(41, F.at(2026, 3, 6, 11))])
        do {
            _ = try BookingRules.book(facts, F.ask(), now: F.now)
            Issue.record("booked three days from another visit of the department")
        } catch let error as ClinicError {
            #expect(error.code == .tooClose && error.key == .tooClose)
            #expect(error.arguments == ["2026-03-06", "6"])
            #expect(error.message(in: .en).contains("2026-03-06"))
        } catch { Issue.record("\(error)") }
    }

    @Test func exactlyNDaysApartIsAllowedBeforeAndAfter() throws {
        // Tuesday 2026-03-03 and a visit on 2026-03-09 (six days later) or 2026-02-25 (six days before).
        #expect((try? BookingRules.book(Self.spaced(6, visits: [(41, F.at(2026, 3, 9, 9))]), F.ask(), now: F.now)) != nil)
        #expect((try? BookingRules.book(Self.spaced(6, visits: [(41, F.at(2026, 2, 25, 11, 30))]), F.ask(), now: F.now)) != nil)
        #expect(refused(.tooClose, .tooClose) { try BookingRules.book(Self.spaced(7, visits: [(41, F.at(2026, 3, 9, 9))]), F.ask(), now: F.now) })
    }

    @Test func daysAreTheClinicsCalendarDaysNotTwentyFourHours() throws {
        // One day apart: a visit the evening before at 23:30 local is the day before, so allowed
        // with N = 1 (another day), refused with N = 2, though under 24 hours away.
        let evening = F.at(2026, 3, 2, 23, 30)
        #expect((try? BookingRules.book(Self.spaced(1, visits: [(41, evening)]), F.ask(F.at(2026, 3, 3, 9)), now: F.now)) != nil)
        #expect(refused(.tooClose, .tooClose) { try BookingRules.book(Self.spaced(2, visits: [(41, evening)]), F.ask(F.at(2026, 3, 3, 9)), now: F.now) })
        // The same day, whatever the hour, with N = 1.
        #expect(refused(.tooClose, .tooClose) { try BookingRules.book(Self.spaced(1, visits: [(41, F.at(2026, 3, 3, 11, 30))]), F.ask(), now: F.now) })
    }

    @Test func aMoveIsNotTooCloseToItselfButIsToAnother() throws {
        let own = F.appointment(id: 41, start: F.at(2026, 3, 4, 10))
        var facts = Self.spaced(6, visits: [(41, own.startsAt)])
        let policy = BookingPolicy(settings: facts.bookingSettings)
        let moved = try BookingRules.move(facts, MoveAsk(appointment: own, time: .instant(F.tuesday10)), policy: policy, now: F.now)
        #expect(moved?.appointment.startsAt == F.tuesday10)
        facts.departmentVisits.append(PatientSpan(appointmentId: 42, span: F.at(2026, 3, 5, 9)..<F.at(2026, 3, 5, 9, 30)))
        #expect(refused(.tooClose, .tooClose) { try BookingRules.move(facts, MoveAsk(appointment: own, time: .instant(F.tuesday10)), policy: policy, now: F.now) })
    }

    @Test func aHoldAndAWaitlistOfferFollowTheSameRule() throws {
        let facts = Self.spaced(6, visits: [(41, F.at(2026, 3, 6, 11))])
        #expect(refused(.tooClose, .tooClose) { try BookingRules.hold(HoldFacts(facts: facts, released: []), clientId: 7, departmentId: 20, doctorId: 1,
                                                start: F.tuesday10, visitTypeId: nil, now: F.now) })
        #expect(refused(.tooClose, .tooClose) { try BookingRules.checkPatient(facts, start: F.tuesday10, end: F.tuesday10.addingTimeInterval(1800), excluding: nil,
                                                        policy: BookingPolicy(settings: facts.bookingSettings), zone: F.zone) })
    }
}

@Suite struct ChangeDecisionTests {
    typealias F = Fixture

    @Test func aMoveKeepsTheDoctorWhenFreeAndTheLengthOfItsVisitType() throws {
        var facts = F.facts()
        facts.visitType = try F.visitType(minutes: 60)
        var own = F.appointment(id: 41, start: F.at(2026, 3, 4, 9), minutes: 60, doctor: 2)
        own.visitTypeId = 30
        let decision = try BookingRules.move(facts, MoveAsk(appointment: own, time: .instant(F.tuesday10)), policy: BookingPolicy(), now: F.now)
        #expect(decision?.appointment.doctorId == 2)
        #expect(decision?.appointment.endsAt == F.tuesday10.addingTimeInterval(3600))
        #expect(decision?.event.event == "rescheduled" && decision?.message?.kind == .rescheduled)
        // The same time with the same doctor: nothing to change.
        #expect(try BookingRules.move(facts, MoveAsk(appointment: own, time: .instant(own.startsAt)), policy: BookingPolicy(), now: F.now) == nil)
    }

    @Test func aMoveDoesNotCountTowardsTheLimitNorOverlapItself() throws {
        let own = F.appointment(id: 41, start: F.tuesday10.addingTimeInterval(-1800))
        var facts = F.facts()
        facts.activeCount = 5
        facts.patientAppointments = [PatientSpan(appointmentId: 41, span: own.startsAt..<own.endsAt.addingTimeInterval(900))]
        #expect(try BookingRules.move(facts, MoveAsk(appointment: own, time: .instant(F.tuesday10)), policy: BookingPolicy(), now: F.now) != nil)
        facts.patientAppointments.append(PatientSpan(appointmentId: 42, span: F.tuesday10..<F.tuesday10.addingTimeInterval(1800)))
        #expect(refused(.overlappingAppointment, .overlapping) { try BookingRules.move(facts, MoveAsk(appointment: own, time: .instant(F.tuesday10)), policy: BookingPolicy(), now: F.now) })
    }

    @Test func theCutoffAndStatusesOfAPatientsChange() throws {
        // 120 minutes by default: 09:59 is inside it at 08:00, 10:00 is not.
        let soon = F.appointment(start: F.at(2026, 3, 2, 9, 59))
        #expect(refused(.tooLate, .tooLate) { try BookingRules.cancel(F.changeFacts(soon), id: 900, clientId: 7, now: F.now) })
        let later = F.appointment(start: F.at(2026, 3, 2, 10))
        #expect(try BookingRules.cancel(F.changeFacts(later), id: 900, clientId: 7, now: F.now).appointment.status == .cancelled)
        #expect(refused(.tooLate, .tooLate) { try BookingRules.cancel(F.changeFacts(later, settings: ["booking.cutoff_minutes": "180"]), id: 900, clientId: 7,
                                                  now: F.now) })
        // Checked in: the clinic's to change.
        let checkedIn = F.appointment(start: F.at(2026, 3, 3, 10), status: .arrived)
        #expect(refused(.invalidTransition, .cannotCancel) { try BookingRules.cancel(F.changeFacts(checkedIn), id: 900, clientId: 7, now: F.now) })
        #expect(refused(.invalidTransition, .cannotReschedule) { try BookingRules.patientMayChange(F.changeFacts(checkedIn), id: 900, clientId: 7, refusal: .cannotReschedule,
                                                            now: F.now) })
        // Another patient's, or none.
        #expect(refused(.forbidden, .notYourAppointment) { try BookingRules.cancel(F.changeFacts(later), id: 900, clientId: 8, now: F.now) })
        #expect(refused(.notFound, .appointmentNotFound) { try BookingRules.cancel(nil, id: 900, clientId: 7, now: F.now) })
    }

    @Test func aCancellationTellsThePatient() throws {
        let decision = try BookingRules.cancel(F.changeFacts(F.appointment(start: F.tuesday10)), id: 900, clientId: 7, now: F.now)
        #expect(decision.event.event == "cancelled" && decision.event.actor == "patient")
        #expect(decision.message?.kind == .cancelled && decision.message?.clientId == 7)
    }

    @Test func confirmingIsForAScheduledVisitOnce() throws {
        let scheduled = F.appointment(start: F.tuesday10)
        #expect(try BookingRules.confirm(scheduled, now: F.now)?.appointment.status == .confirmed)
        #expect(try BookingRules.confirm(F.appointment(start: F.tuesday10, status: .confirmed), now: F.now) == nil)
        #expect(refused(.invalidTransition, .cannotConfirm) { try BookingRules.confirm(F.appointment(start: F.tuesday10, status: .cancelled), now: F.now) })
    }
}

@Suite struct HoldDecisionTests {
    typealias F = Fixture

    static func hold(_ facts: BookingFacts, released: [SlotHold] = [], client: Int64 = 7, start: Date = F.tuesday10) throws -> SlotHold {
        try BookingRules.hold(HoldFacts(facts: facts, released: released), clientId: client, departmentId: 20, doctorId: 1, start: start,
                              visitTypeId: nil, now: F.now)
    }

    static func held(_ id: Int64, client: Int64, start: Date, expires: Date = F.now.addingTimeInterval(300)) -> SlotHold {
        SlotHold(id: id, clientId: client, clinicId: 10, departmentId: 20, doctorId: 1, visitTypeId: nil, startsAt: start,
                 endsAt: start.addingTimeInterval(1800), expiresAt: expires, createdAt: F.now)
    }

    @Test func aHoldLastsTheHoldTimeAndKeepsAnEarlierHoldsExpiry() throws {
        let hold = try Self.hold(F.facts())
        #expect(hold.expiresAt == F.now.addingTimeInterval(300) && hold.doctorId == 1 && hold.endsAt == F.tuesday10.addingTimeInterval(1800))
        #expect(try Self.hold(F.facts(settings: ["booking.hold_seconds": "60"])).expiresAt == F.now.addingTimeInterval(60))
        // Holding the same time again does not renew it.
        let earlier = Self.held(5, client: 7, start: F.tuesday10, expires: F.now.addingTimeInterval(100))
        #expect(try Self.hold(F.facts(), released: [earlier]).expiresAt == F.now.addingTimeInterval(100))
    }

    @Test func othersMayHoldOnlySoManyOfADoctorsTimesOfADay() throws {
        var facts = F.facts()
        facts.holds = (0..<3).map { Self.held(Int64($0), client: 100 + Int64($0), start: F.at(2026, 3, 3, 9).addingTimeInterval(Double($0) * 1800)) }
        #expect(refused(.limitReached, .holdsPerDoctorDay) { try Self.hold(facts) })
        // The patient's own do not count, nor another day's.
        facts.holds[0].clientId = 7
        #expect((try? Self.hold(facts)) != nil)
        facts.holds[0].clientId = 100
        facts.holds[0].startsAt = F.at(2026, 3, 4, 9)
        facts.holds[0].endsAt = F.at(2026, 3, 4, 9, 30)
        #expect((try? Self.hold(facts)) != nil)
        // Four when set so.
        facts = F.facts(settings: ["booking.holds_per_doctor_day": "4"])
        facts.holds = (0..<3).map { Self.held(Int64($0), client: 100 + Int64($0), start: F.at(2026, 3, 3, 9).addingTimeInterval(Double($0) * 1800)) }
        #expect((try? Self.hold(facts)) != nil)
    }

    @Test func aHoldFollowsTheBookingsRules() throws {
        var facts = F.facts()
        facts.taken = [1: [F.tuesday10..<F.tuesday10.addingTimeInterval(1800)]]
        // Strictly the doctor asked for: no other doctor instead.
        #expect(refused(.slotTaken, .slotTaken) { try Self.hold(facts) })
        facts = F.facts()
        facts.activeCount = 5
        #expect(refused(.limitReached, .limitReached) { try Self.hold(facts) })
        #expect(refused(.slotUnavailable, .slotTooSoon) { try Self.hold(F.facts(), start: F.at(2026, 3, 2, 8, 15)) })
    }
}
