import Foundation
import Testing
@testable import ClinicKit

// The front desk's day decided on plain facts (issue 56): `StaffController.planningDay`,
// `dayReads` and `dayEntries`. The stores' reads and audit rows are `ClinicKitTests/StaffTests`'.

@Suite struct DeskDayRulesTests {
    static let now = Fixture.now

    static func place(doctorClinic: Int64? = nil) -> DeskDayPlace {
        DeskDayPlace(clinic: Fixture.clinic, departments: [Fixture.department], doctors: Fixture.doctors.map { ($0, Fixture.department) },
                     doctorAskedClinicId: doctorClinic)
    }

    static func member(_ role: StaffRole, doctor: Int64? = nil) -> StaffMember {
        StaffMember(id: 3, login: "desk", name: "Sam", surname: "Lee", role: role, clinicId: 10, doctorId: doctor, isActive: true,
                    createdAt: now)
    }

    @Test func theDayIsTheClinicsAndTheFiltersAreChecked() throws {
        let monday = try #require(LocalDateTime(year: 2026, month: 11, day: 23))
        let plan = try StaffController.planningDay(Self.place(), Self.member(.receptionist), day: monday, departmentId: 20, doctorId: nil,
                                                   now: Self.now)
        #expect(plan.zone.identifier == "America/New_York" && plan.departmentId == 20 && plan.doctorId == nil && plan.now == Self.now)
        // Midnight to midnight in New York (UTC−5 in November): 05:00 to 05:00 UTC.
        #expect(plan.span.lowerBound == Date(timeIntervalSince1970: 1_795_410_000))
        #expect(plan.span.upperBound.timeIntervalSince(plan.span.lowerBound) == 86_400)
        #expect(throws: ClinicError(.notFound, .departmentNotFound, "21")) {
            _ = try StaffController.planningDay(Self.place(), Self.member(.receptionist), day: monday, departmentId: 21, doctorId: nil,
                                                now: Self.now)
        }
        #expect(throws: ClinicError(.notFound, .doctorNotFound, "8")) {
            _ = try StaffController.planningDay(Self.place(doctorClinic: 2), Self.member(.clinicAdmin), day: monday, departmentId: nil,
                                                doctorId: 8, now: Self.now)
        }
        let ours = try StaffController.planningDay(Self.place(doctorClinic: 10), Self.member(.clinicAdmin), day: monday, departmentId: nil,
                                                   doctorId: 8, now: Self.now)
        #expect(ours.doctorId == 8)
        // A doctor sees their own day only, whatever is asked; another doctor is not theirs to see.
        let own = try StaffController.planningDay(Self.place(), Self.member(.doctor, doctor: 4), day: monday, departmentId: nil,
                                                  doctorId: nil, now: Self.now)
        #expect(own.doctorId == 4)
        #expect(throws: ClinicError(.notFound, .doctorNotFound, "8")) {
            _ = try StaffController.planningDay(Self.place(), Self.member(.doctor, doctor: 4), day: monday, departmentId: nil,
                                                doctorId: 8, now: Self.now)
        }
        let gone = DeskDayPlace(clinic: nil, departments: [], doctors: [], doctorAskedClinicId: nil)
        #expect(throws: ClinicError(.notFound, .clinicNotFound, "10")) {
            _ = try StaffController.planningDay(gone, Self.member(.receptionist), day: nil, departmentId: nil, doctorId: nil, now: Self.now)
        }
    }

    @Test func eachPatientShownIsReadIntoTheTrailAndTheDeskSeesMore() throws {
        let monday = try #require(LocalDateTime(year: 2026, month: 11, day: 23))
        let desk = Self.member(.receptionist), doctor = Self.member(.doctor, doctor: 1)
        let plan = try StaffController.planningDay(Self.place(), desk, day: monday, departmentId: nil, doctorId: nil, now: Self.now)
        var anna = Client(id: 8, login: "anna", loginKey: "anna", passwordHash: "x", name: "Anna", surname: "Smith", street: "Elm St",
                          house: "1", city: "Boston", lat: nil, lon: nil, homeClinicId: nil, preferredLanguage: "en",
                          privacyAcceptedAt: nil, privacyVersion: nil, createdAt: Self.now)
        anna.birthDate = "1990-02-03"
        let nine = Fixture.at(2026, 11, 23, 9)
        let facts = DeskDayFacts(place: Self.place(), plan: plan, appointments: [
            Fixture.appointment(id: 1, start: nine, client: 8), Fixture.appointment(id: 2, start: nine.addingTimeInterval(1800), client: 7),
            Fixture.appointment(id: 3, start: nine.addingTimeInterval(3600), client: 8),
        ], patients: [8: anna])
        let reads = StaffController.dayReads(facts, desk, requestId: "r1", now: Self.now)
        #expect(reads == [AuditAsk(by: desk.auditActor, action: .patientRead, clientId: 8, requestId: "r1", detail: "schedule 2026-11-23",
                                   now: Self.now)], "one row per patient shown; a patient gone is not shown")
        let entries = StaffController.dayEntries(facts, desk)
        #expect(entries.map(\.appointment.id) == [1, 2, 3] && entries.map(\.patientName) == ["Anna Smith", nil, "Anna Smith"])
        #expect(entries[0].patientBirthDate == "1990-02-03" && entries[0].patientLogin == "anna")
        #expect(StaffController.dayEntries(facts, doctor)[0].patientBirthDate == nil, "a doctor's list has no date of birth")
    }
}
