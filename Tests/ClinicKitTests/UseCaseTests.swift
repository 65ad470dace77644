import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The use cases every front calls (ClinicSystem+UseCases.swift): each is checked against the
/// steps it replaces, so that a front that calls it gets what it used to compute itself.
@Suite struct UseCaseTests {
    func cacheRows(_ system: ClinicSystem) throws -> Int {
        try storedInt(system, "SELECT count(*) FROM geocode_cache") ?? 0
    }

    @Test func nearestFromAnAddressIsTheFindersAnswerAndRemembersTheAddress() throws {
        let system = try makeSystem()
        let query = NearestQuery(limit: 3)
        #expect(try cacheRows(system) == 0)
        let search = try system.nearestClinics(from: .address("Минск"), query) { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        let geocoded = try #require(search.geocoded)
        #expect(search.found == (try system.clinics.nearest(to: geocoded.coordinate, query)))
        #expect(search.found.first?.clinic.externalId == "MN1")
        // The address is in the cache once the search succeeded.
        #expect(try cacheRows(system) == 1)
        // Coordinates are not looked up, and nothing is remembered.
        let here = try system.nearestClinics(from: .coordinates(latitude: "40.7", longitude: "-74.0"), query) {
            throw ClinicError(.notLoggedIn, .notLoggedIn)
        }
        #expect(here.geocoded == nil)
        #expect(here.found.first?.clinic.externalId == "NY1")
        #expect(try cacheRows(system) == 1)
    }

    @Test func aRefusedSearchRemembersNothing() async throws {
        let system = try makeSystem()
        // A bad query is refused before the address is looked up or remembered.
        let refused = expectError(.invalidInput) {
            _ = try system.nearestClinics(from: .address("Минск"), NearestQuery(limit: 0)) { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        }
        #expect(refused != nil)
        // A search that fails after the address was found does not remember it either.
        let unknown = await expectError(.notFound) {
            _ = try await system.findFreeSlots(from: .address("Минск"), specialization: "astrology") { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        }
        #expect(unknown != nil)
        #expect(try cacheRows(system) == 0)
        // Locating a place (as a server does, apart from the search) remembers nothing; the
        // search from it does, once it succeeded.
        let place = try await system.locate(.address("Минск")) { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        #expect(place.geocoded != nil)
        #expect(try cacheRows(system) == 0)
        _ = try await system.findFreeSlots(at: place, specialization: "psychiatry")
        #expect(try cacheRows(system) == 1)
    }

    @Test func theHomePlaceAsksForThePatientOnly() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        var asked = 0
        let search = try system.nearestClinics(from: .home, NearestQuery(limit: 1)) { asked += 1; return anna }
        #expect(asked == 1)
        let home = try #require(anna.coordinate)
        #expect(search.found == (try system.clinics.nearest(to: home, NearestQuery(limit: 1))))
        _ = try system.nearestClinics(from: .text("34.05,-118.25"), NearestQuery(limit: 1)) { asked += 1; return anna }
        #expect(asked == 1)
        // Signed out, the home place is `not_logged_in`.
        #expect(expectError(.notLoggedIn) {
            _ = try system.nearestClinics(from: .home, NearestQuery()) { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        } != nil)
    }

    @Test func findFromAPlaceIsTheBudgetedSearchFromItsPoint() async throws {
        let system = try makeSystem()
        let point = try #require(Coordinate(latitude: 34.05, longitude: -118.25))
        // Without the wall clock's budget (FindTests has it): a loaded machine must not cut one of the two.
        let budget = SearchBudget(clinics: 10_000, seconds: 600)
        let direct = try await system.appointments.searchFreeSlots(specialization: "cardiology", near: point, limit: 2, clinics: system.clinics,
                                                                   budget: budget)
        let viaPlace = try await system.findFreeSlots(from: .coordinates(latitude: "34.05", longitude: "-118.25"),
                                                      specialization: "cardiology", limit: 2, budget: budget) {
            throw ClinicError(.notLoggedIn, .notLoggedIn)
        }
        #expect(viaPlace.found == direct)
        #expect(!direct.slots.isEmpty)
    }

    @Test func bookingChoicesKeepToTheClinicsOwnDepartments() async throws {
        let system = try makeSystem()
        let la1 = try clinic(system, "LA1").id ?? 0
        let therapy = try department(system, "LA1", "therapy")
        let elsewhere = try department(system, "NY1", "therapy")
        let day = try TimeInput.parseDay("2026-11-23")
        let runner = InlinePasswordRunner()
        let choices = try await system.bookingChoices(clinicId: la1, departmentId: therapy.id, day: day, computing: runner)
        let departments = try { try system.departments.getDepartmentsByClinicId(la1) }()
        let visitTypes = try { try system.departments.visitTypes(departmentId: therapy.id ?? 0) }()
        let doctors = try { try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0) }()
        #expect(choices.departments == departments && choices.visitTypes == visitTypes && choices.doctors == doctors && !doctors.isEmpty)
        let expected = try Self.freeSlots(system, therapy.id ?? 0, from: day)
        #expect(choices.freeSlots == expected)
        #expect(!expected.isEmpty)
        #expect(choices.freeDays.isEmpty, "no day picker asked for: no look-ahead")
        // Another clinic's department is `not_found`, as one that does not exist; so is another department's doctor.
        let refused = await #expect(throws: ClinicError.self) {
            _ = try await system.bookingChoices(clinicId: la1, departmentId: elsewhere.id, day: day, computing: runner)
        }
        #expect(refused?.key == .departmentNotFound)
        let theirDoctor = try { try system.departments.getDoctorsByDepartmentId(elsewhere.id ?? 0) }().first?.id
        let notHere = await #expect(throws: ClinicError.self) {
            _ = try await system.bookingChoices(clinicId: la1, departmentId: therapy.id, doctorId: theirDoctor, computing: runner)
        }
        #expect(notHere?.key == .doctorNotFound)
        let noClinic = await #expect(throws: ClinicError.self) { _ = try await system.bookingChoices(clinicId: 999_999, computing: runner) }
        #expect(noClinic?.key == .clinicNotFound)
        // Without a day, no slots are read.
        #expect(try await system.bookingChoices(clinicId: la1, departmentId: therapy.id, computing: runner).freeSlots.isEmpty)
        // Without a day but with `firstFreeDay`: the first marked free day, and its free times, as a day's query gives them.
        let first = try await system.bookingChoices(clinicId: la1, departmentId: therapy.id, firstFreeDay: true, computing: runner)
        let chosen = try #require(first.chosenDay)
        #expect(chosen.dayText == first.freeDays.min())
        #expect(!first.freeSlots.isEmpty)
        #expect(first.freeSlots == (try Self.freeSlots(system, therapy.id ?? 0, from: chosen)))
    }

    /// A day's free slots, read on the synchronous seam.
    static func freeSlots(_ system: ClinicSystem, _ departmentId: Int64, from day: LocalDateTime) throws -> [Slot] {
        try system.appointments.slots(departmentId: departmentId, from: day, days: 1).filter(\.isAvailable)
    }

    @Test func appointmentsComeWithTheirClinicAndDepartment() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let cardiology = try department(system, "NY1", "cardiology")
        let monday = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)
        let tuesday = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 24, hour: 10, minute: 0)!)
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday)
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology.id ?? 0, at: tuesday)
        let list = try system.appointments(ofPatient: anna.id ?? 0, scope: .upcoming)
        #expect(list.map(\.appointment) == (try system.appointments.getAppointmentsByClientId(anna.id ?? 0, scope: .upcoming)))
        #expect(list.count == 2)
        for item in list {
            #expect(item.clinic.id == item.appointment.clinicId)
            #expect(item.department.id == item.appointment.departmentId)
        }
        #expect(Set(list.map(\.clinic.externalId)) == ["LA1", "NY1"])
    }

    @Test func hoursAsEveryFrontTakesThem() throws {
        let interval = try #require(try DoctorSchedule.Interval.parse(off: false, start: "09:00", end: "13:00", slotMinutes: nil))
        #expect(interval == DoctorSchedule.Interval(startMinute: 540, endMinute: 780, slotMinutes: DoctorSchedule.Interval.defaultSlotMinutes))
        #expect(DoctorSchedule.Interval.defaultSlotMinutes == 20)
        #expect(try DoctorSchedule.Interval.parse(off: false, start: "09:00", end: "13:00", slotMinutes: 30)?.slotMinutes == 30)
        #expect(try DoctorSchedule.Interval.parse(off: true, start: nil, end: nil, slotMinutes: nil) == nil)
        for (off, start, end) in [(true, "09:00", "13:00"), (false, "09:00", nil), (false, nil, nil), (false, "9h", "13:00")] as [(Bool, String?, String?)] {
            let refused = expectError(.invalidInput) { _ = try DoctorSchedule.Interval.parse(off: off, start: start, end: end, slotMinutes: nil) }
            #expect(refused?.key == .exceptionInvalid)
        }
    }
}
