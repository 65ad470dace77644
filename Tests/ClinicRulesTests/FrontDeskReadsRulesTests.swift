import Foundation
import Testing
@testable import ClinicKit

// The front desk's other reads decided on plain facts (issue 56): what the member may do to an
// appointment (`StaffController.offered`), whether its patient is told (`isTold`), and the
// clinic admin's month (`monthPlanning`, `monthReport`). The stores' reads are
// `ClinicKitTests/StaffTests`'.

@Suite struct FrontDeskReadsRulesTests {
    static func member(_ role: StaffRole, clinic: Int64 = 10, doctor: Int64? = nil) -> StaffMember {
        StaffMember(id: 40, login: "desk", name: "Dana", surname: "Reyes", role: role, clinicId: clinic,
                    doctorId: role == .doctor ? (doctor ?? 1) : nil, isActive: true, createdAt: Fixture.now)
    }

    static func patient(online: Bool, email: String?) -> Client {
        var client = Client(id: 7, login: "anna", loginKey: "anna", passwordHash: online ? "x" : "", name: "Anna", surname: "Smith",
                            street: "", house: "", city: "Boston", lat: nil, lon: nil, homeClinicId: nil, preferredLanguage: "en",
                            privacyAcceptedAt: nil, privacyVersion: nil, createdAt: Fixture.now)
        client.email = email
        return client
    }

    @Test func theActionsAreTheMembersOnItsOwnClinicsVisits() throws {
        let visit = Fixture.appointment(id: 5, start: Fixture.tuesday10, doctor: 1, status: .scheduled)
        let read = DeskAppointment(appointment: visit, clinic: Fixture.clinic, patient: nil)
        let desk = Self.member(.receptionist)
        let offered = try StaffController.offered(read, 5, desk, now: Fixture.now)
        #expect(offered == desk.offers(on: visit, now: Fixture.now, zone: Fixture.zone) && offered.contains("cancel"))
        // Another clinic's visit, another doctor's for a doctor, or none: not found, the same refusal.
        for (read, member) in [(read, Self.member(.receptionist, clinic: 11)), (read, Self.member(.doctor, doctor: 2)), (nil, desk)] {
            #expect(throws: ClinicError(.notFound, .appointmentNotFound, "5")) {
                _ = try StaffController.offered(read, 5, member, now: Fixture.now)
            }
        }
        // Their own doctor starts the visit once the patient is checked in.
        let arrived = DeskAppointment(appointment: Fixture.appointment(id: 5, start: Fixture.tuesday10, doctor: 1, status: .arrived),
                                      clinic: Fixture.clinic, patient: nil)
        #expect(try StaffController.offered(arrived, 5, Self.member(.doctor, doctor: 1), now: Fixture.tuesday10).contains("start"))
        #expect(throws: ClinicError(.notFound, .clinicNotFound, "10")) {
            _ = try StaffController.offered(DeskAppointment(appointment: visit, clinic: nil, patient: nil), 5, desk, now: Fixture.now)
        }
    }

    @Test func aPatientIsToldWithAnAccountOrAnEmailAddress() throws {
        let visit = Fixture.appointment(id: 5, start: Fixture.tuesday10)
        func told(_ patient: Client?) throws -> Bool {
            try StaffController.isTold(DeskAppointment(appointment: visit, clinic: Fixture.clinic, patient: patient), 5, Self.member(.receptionist))
        }
        #expect(try told(Self.patient(online: true, email: nil)))
        #expect(try told(Self.patient(online: false, email: "anna@example.org")))
        #expect(try !told(Self.patient(online: false, email: nil)), "a walk-in with neither")
        #expect(try !told(nil), "an account gone")
        #expect(throws: ClinicError(.notFound, .appointmentNotFound, "5")) {
            _ = try StaffController.isTold(DeskAppointment(appointment: visit, clinic: Fixture.clinic, patient: nil), 5,
                                           Self.member(.receptionist, clinic: 11))
        }
    }

    @Test func theMonthIsTheClinicAdminsInTheClinicsZone() throws {
        let admin = Self.member(.clinicAdmin)
        let march = try StaffController.monthPlanning(admin, month: "2026-03", now: Fixture.now)(Fixture.clinic)
        #expect(march.year == 2026 && march.month == 3)
        #expect(march.span == Fixture.at(2026, 3, 1, 0)..<Fixture.at(2026, 4, 1, 0), "New York's midnights (the change to summer time inside)")
        #expect(march.span.upperBound.timeIntervalSince(march.span.lowerBound) == 31 * 86_400 - 3600)
        let now = try StaffController.monthPlanning(admin, month: "  ", now: Fixture.at(2026, 12, 31, 22))(Fixture.clinic)
        #expect(now.year == 2026 && now.month == 12, "this month in the clinic's calendar")
        let tokyo = Clinic(id: 10, externalId: "X10", name: "Harbor Clinic", address: "", city: "Tokyo", cityKey: "tokyo", state: "", zip: "",
                           description: "", category: "", lat: 35.7, lon: 139.7, isPediatric: false, isHospital: true,
                           timeZone: "Asia/Tokyo", phone: "", website: "")
        let there = try StaffController.monthPlanning(admin, month: nil, now: Fixture.at(2026, 12, 31, 22))(tokyo)
        #expect(there.year == 2027 && there.month == 1, "already January in Tokyo")
        for text in ["2026-3", "2026-13", "1999-12", "march"] {
            #expect(throws: ClinicError.self) { _ = try StaffController.monthPlanning(admin, month: text, now: Fixture.now) }
        }
        for role in [StaffRole.receptionist, .doctor] {
            #expect(throws: ClinicError(.forbidden, .staffForbidden, role.rawValue)) {
                _ = try StaffController.monthPlanning(Self.member(role), month: nil, now: Fixture.now)
            }
        }
    }

    @Test func theMonthAddsUpWhatBecameOfEachVisit() throws {
        let admin = Self.member(.clinicAdmin)
        let plan = try StaffController.monthPlanning(admin, month: "2026-03", now: Fixture.now)(Fixture.clinic)
        let ten = Fixture.tuesday10, eleven = Fixture.at(2026, 3, 3, 11)
        let seen = Fixture.appointment(id: 1, start: ten, doctor: 1, status: .completed)
        let missed = Fixture.appointment(id: 2, start: ten, doctor: 2, status: .noShow)
        // Cancelled by the clinic two days ahead, its time booked again after; cancelled late by the patient.
        let freed = Fixture.appointment(id: 3, start: eleven, doctor: 1, status: .cancelled)
        let refill = Fixture.appointment(id: 4, start: eleven, doctor: 1, status: .scheduled)
        let late = Fixture.appointment(id: 5, start: Fixture.at(2026, 3, 4, 9), doctor: 2, status: .cancelled)
        func event(_ id: Int64, _ name: String, _ at: Date, staff: Int64? = nil) -> AppointmentEvent {
            AppointmentEvent(id: nil, appointmentId: id, event: name, actor: staff == nil ? "patient" : "staff", at: at, startsAt: nil,
                             doctorId: nil, staffId: staff)
        }
        let events: [Int64: [AppointmentEvent]] = [
            3: [event(3, "booked", Fixture.at(2026, 2, 20, 9)), event(3, "cancelled", Fixture.at(2026, 3, 1, 9), staff: 40)],
            4: [event(4, "booked", Fixture.at(2026, 3, 2, 9))],
            5: [event(5, "booked", Fixture.at(2026, 2, 20, 9)), event(5, "cancelled", Fixture.at(2026, 3, 4, 8))],
        ]
        let facts = MonthFacts(clinic: Fixture.clinic, plan: plan, departments: [Fixture.department],
                               visits: [seen, missed, freed, refill, late], events: events)
        let report = try StaffController.monthReport(facts, admin)
        #expect(report.clinicName == "Harbor Clinic" && report.timeZone == "America/New_York" && report.year == 2026 && report.month == 3)
        let total = report.total
        #expect((total.booked, total.completed, total.noShows, total.cancelled, total.open) == (5, 1, 1, 2, 1))
        #expect((total.cancelledLate, total.cancelledByClinic, total.freed, total.refilled) == (1, 1, 2, 1))
        #expect(report.byDepartment.map(\.key) == ["therapy"] && report.byDepartment.first?.booked == 5)
        // Two doctors of one name are two rows, each told apart by its department and id.
        #expect(report.byDoctor.map(\.doctorId) == [1, 2] && report.byDoctor.allSatisfy(\.namesake))
        #expect(report.byDoctor.first?.label(.en) == "Dr. Avery (Therapy, 1)")
        #expect(throws: ClinicError(.notFound, .clinicNotFound, "10")) { _ = try StaffController.monthReport(nil, admin) }
    }

    /// Who may disable an account (`StaffController.disabling`): the operator, or the clinic
    /// admin of its clinic; the audit row names its login and clinic.
    @Test func anAccountIsDisabledByItsClinicsAdminOrTheOperator() throws {
        let desk = Self.member(.receptionist)
        let admin = StaffMember(id: 41, login: "boss", name: "B", surname: "C", role: .clinicAdmin, clinicId: 10, doctorId: nil,
                                isActive: true, createdAt: Fixture.now)
        let audit = try StaffController.disabling(40, by: admin, requestId: "r", now: Fixture.now)(desk)
        #expect(audit.action == .staffDisable && audit.detail == "desk" && audit.clinicId == 10 && audit.actor == admin.auditActor)
        #expect(try StaffController.disabling(40, by: nil, requestId: nil, now: Fixture.now)(desk).actor == .operator)
        #expect(throws: ClinicError(.notFound, .staffNotFound, "40")) {
            _ = try StaffController.disabling(40, by: admin, requestId: nil, now: Fixture.now)(nil)
        }
        #expect(throws: ClinicError(.notFound, .staffNotFound, "40")) {
            _ = try StaffController.disabling(40, by: Self.member(.clinicAdmin, clinic: 11), requestId: nil, now: Fixture.now)(desk)
        }
        #expect(throws: ClinicError(.forbidden, .staffForbidden, "receptionist")) {
            _ = try StaffController.disabling(40, by: Self.member(.receptionist), requestId: nil, now: Fixture.now)(desk)
        }
    }
}
