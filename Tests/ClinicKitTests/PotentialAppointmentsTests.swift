import Foundation
import Testing
@testable import ClinicKit

/// Times that could be booked (FHIR's `$find` and its proposed appointments,
/// `ClinicSystem.findPotentialAppointments`), awaited on both stores: by department, visit type,
/// doctor or clinic, the free slots of the window in order; near a point, the nearest clinics'
/// earliest; the refusals. "Now" is Sunday 2026-11-22 12:00 UTC (the TestClock).
@Suite struct PotentialAppointmentsTests {
    let runner = InlinePasswordRunner()
    /// Monday 2026-11-23, 08:00 to 12:00 in Los Angeles.
    let mondayMorning = utc("2026-11-23T16:00:00Z")..<utc("2026-11-23T20:00:00Z")

    /// The search without the wall clock's budget (tested in `FindTests`): a loaded machine must
    /// not cut the walk near a point whose answer is compared here.
    func find(_ system: ClinicSystem, _ query: PotentialQuery) async throws -> [PotentialAppointment] {
        try await system.findPotentialAppointments(query, computing: runner, budget: Self.unbounded)
    }

    static let unbounded = SearchBudget(clinics: 10_000, seconds: 600)

    /// The free slots of a department in the window, as `slots` shows them, in the search's order.
    func expected(_ system: ClinicSystem, _ departmentId: Int64, doctorId: Int64? = nil, visitTypeId: Int64? = nil,
                  limit: Int) throws -> [Slot] {
        let slots = try system.appointments.slots(departmentId: departmentId, doctorId: doctorId,
                                                  from: LocalDateTime(year: 2026, month: 11, day: 23, hour: 0, minute: 0), days: 1,
                                                  visitTypeId: visitTypeId)
        return Array(slots.filter { $0.isAvailable && mondayMorning.contains($0.start) }
            .sorted { ($0.start, $0.doctorId) < ($1.start, $1.doctorId) }.prefix(limit))
    }

    @Test func theWindowsFreeTimesAreFoundByDepartmentVisitTypeDoctorOrClinic() async throws {
        let system = try makeSystem()
        let la1 = try clinic(system, "LA1"), therapy = try department(system, "LA1", "therapy")
        let therapyId = try #require(therapy.id)
        let window = PotentialQuery(start: mondayMorning.lowerBound, end: mondayMorning.upperBound, limit: 50)

        var byDepartment = window
        byDepartment.departmentId = therapyId
        let found = try await find(system, byDepartment), free = try expected(system, therapyId, limit: 50)
        #expect(!found.isEmpty && found.map(\.slot) == free)
        #expect(found.allSatisfy { $0.clinic == la1 && $0.department == therapy && $0.visitType == nil && $0.distance == nil })

        // A visit type: its department's times of its length, and the type itself.
        let admin = try system.staff.addStaff(StaffInput(login: "admin", name: "Sam", surname: "Lee", role: .clinicAdmin,
                                                         clinicId: la1.id ?? 0, password: "counter-shift-73"))
        let long = try await system.staff.addVisitType(admin, departmentId: therapyId, nameEn: "Long", nameRu: "Долгий", durationMinutes: 40)
        var byVisit = window
        byVisit.visitTypeId = long.id
        let visits = try await find(system, byVisit), longFree = try expected(system, therapyId, visitTypeId: long.id, limit: 50)
        #expect(!visits.isEmpty && visits.map(\.slot) == longFree)
        #expect(visits.allSatisfy { $0.visitType == long && $0.visitTypeId == long.id && $0.slot.end.timeIntervalSince($0.slot.start) == 2400 })

        // A doctor: theirs only; a proposed appointment's read: that time, once.
        let doctorId = try #require(found.last?.slot.doctorId)
        var byDoctor = window
        byDoctor.doctorId = doctorId
        let doctors = try await find(system, byDoctor).map(\.slot), doctorsFree = try expected(system, therapyId, doctorId: doctorId, limit: 50)
        #expect(!doctors.isEmpty && doctors == doctorsFree)
        let slot = try #require(found.last?.slot)
        let proposed = PotentialQuery(start: slot.start, end: slot.start.addingTimeInterval(1), doctorId: doctorId,
                                      departmentId: therapyId, limit: 1)
        #expect(try await find(system, proposed).map(\.slot) == [slot])

        // A clinic with a specialization: that department's; a department elsewhere than the clinic named: none.
        var byClinic = window
        byClinic.clinicId = la1.id
        byClinic.specialization = "therapy"
        byClinic.limit = 3
        let clinics = try await find(system, byClinic).map(\.slot), firstThree = try expected(system, therapyId, limit: 3)
        #expect(clinics.count == 3 && clinics == firstThree)
        byDepartment.clinicId = try clinic(system, "NY1").id
        #expect(try await find(system, byDepartment).isEmpty)
    }

    @Test func nearAPointTheNearestClinicsEarliestTimesComeNearestFirst() async throws {
        let system = try makeSystem()
        let query = PotentialQuery(specialization: "therapy", near: try #require(Coordinate(latitude: 34.06, longitude: -118.26)), limit: 3)
        let found = try await find(system, query)
        #expect(found.count >= 2)
        let distances = found.compactMap(\.distance)
        #expect(distances.count == found.count && distances == distances.sorted())
        #expect(Set(found.map(\.clinic.id)).count == found.count, "the earliest of each clinic")
        #expect(found.first?.clinic.externalId == "LA1")

        // No place named: near a signed-in patient's registered address, and said so; refused without one.
        let anna = try register(system, "anna")
        let home = try await system.findPotentialAppointments(PotentialQuery(specialization: "therapy", limit: 3), patientId: anna.id,
                                                              computing: runner, budget: Self.unbounded)
        #expect(home.nearRegisteredAddress && home.appointments.first?.clinic.externalId == "LA1")
        await #expect(throws: ClinicError.invalid(.potentialWhere)) {
            _ = try await system.findPotentialAppointments(PotentialQuery(specialization: "therapy"), patientId: nil, computing: runner)
        }
    }

    @Test func whatCannotBeSearchedIsRefusedAndNamed() async throws {
        let system = try makeSystem()
        let la1 = try clinic(system, "LA1"), therapyId = try #require(try department(system, "LA1", "therapy").id)
        let otherId = try #require(try department(system, "NY1", "therapy").id)
        let admin = try system.staff.addStaff(StaffInput(login: "admin", name: "Sam", surname: "Lee", role: .clinicAdmin,
                                                         clinicId: la1.id ?? 0, password: "counter-shift-73"))
        let gone = try await system.staff.addVisitType(admin, departmentId: therapyId, nameEn: "Gone", nameRu: "Нет", durationMinutes: 30)
        _ = try await system.staff.removeVisitType(admin, id: gone.id)
        let kept = try await system.staff.addVisitType(admin, departmentId: therapyId, nameEn: "Kept", nameRu: "Есть", durationMinutes: 30)
        func refusal(_ query: PotentialQuery) async -> ClinicError? {
            await #expect(throws: ClinicError.self) { _ = try await find(system, query) }
        }
        #expect(await refusal(PotentialQuery(visitTypeId: gone.id))?.key == .visitTypeNotFound, "no longer offered")
        #expect(await refusal(PotentialQuery(visitTypeId: kept.id, departmentId: otherId))?.key == .visitTypeNotFound, "another department's")
        #expect(await refusal(PotentialQuery(doctorId: 999_999)) == ClinicError(.notFound, .doctorNotFound, "999999"))
        #expect(await refusal(PotentialQuery(departmentId: 999_999)) == ClinicError(.notFound, .departmentNotFound, "999999"))
        #expect(await refusal(PotentialQuery(clinicId: 999_999)) == ClinicError(.notFound, .clinicNotFound, "999999"))
        #expect(await refusal(PotentialQuery(specialization: "therapy"))?.key == .potentialWhere, "no place")
        let start = utc("2026-11-23T16:00:00Z")
        #expect(await refusal(PotentialQuery(start: start, end: start, departmentId: therapyId))?.key == .potentialWindow)
        #expect(await refusal(PotentialQuery(start: start, end: start.addingTimeInterval(32 * 86_400), departmentId: therapyId))?.key
                == .potentialWindow)
        #expect(await refusal(PotentialQuery(departmentId: therapyId, limit: 0)) != nil)
    }
}
