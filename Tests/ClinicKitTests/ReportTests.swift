import Foundation
import Testing
@testable import ClinicKit

/// A clinic's month for its admin (issue 46): visits by what became of them, cancellations and
/// how late, no-shows, and freed times booked again; "now" is Sunday 2026-11-22 12:00 UTC, the
/// visits are on Monday 2026-11-23 in Los Angeles.
@Suite struct ReportTests {
    func at(_ hour: Int, _ minute: Int) -> TimeInput.Parsed {
        .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: hour, minute: minute)!)
    }

    /// The awaited report (what the server runs, issue 56) is the blocking one, refusals alike.
    @Test func aMonthCountsVisitsCancellationsNoShowsAndRefilledTimes() async throws {
        let (system, admin, desk) = try countedMonth()
        func blocking(_ member: StaffMember, _ month: String?) -> String {
            do { return "\(try system.staff.monthReport(member, month: month))" } catch { return "\(error)" }
        }
        for (member, month) in [(admin, nil), (admin, "2026-11"), (admin, " 2026-12 "), (admin, "2026-13"), (desk, nil), (desk, "x")] {
            var awaited: String
            do { awaited = "\(try await system.staff.monthReport(member, month: month))" } catch { awaited = "\(error)" }
            #expect(awaited == blocking(member, month), "\(member.role) \(month ?? "-")")
        }
        let awaited = try await system.staff.monthReport(admin, month: nil)
        #expect(awaited.total.booked == 5 && awaited.total.refilled == 1)
    }

    func countedMonth() throws -> (ClinicSystem, StaffMember, StaffMember) {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let therapy = try department(system, "LA1", "therapy")
        let la1 = try clinic(system, "LA1").id ?? 0
        func staff(_ login: String, _ role: StaffRole) throws -> StaffMember {
            try system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: role, clinicId: la1, password: "staff-passphrase-77"))
        }
        let admin = try staff("admin-r", .clinicAdmin), desk = try staff("desk-r", .receptionist)
        var ids: [String: Int64] = [:]
        func book(_ login: String, _ time: TimeInput.Parsed, doctor: Int64? = nil) throws -> Appointment {
            let patient = try register(system, login)
            ids[login] = patient.id
            return try system.appointments.createAppointment(clientId: patient.id ?? 0, departmentId: therapy.id ?? 0, at: time, doctorId: doctor)
        }
        _ = try book("anna", at(9, 20))
        // Bob cancels 30 hours ahead; Dan takes his doctor's time: freed and refilled.
        let bob = try book("bob", at(10, 0))
        _ = try system.appointments.cancelAppointment(bob.id ?? 0, clientId: ids["bob"] ?? 0)
        _ = try book("dan", at(10, 0), doctor: bob.doctorId)
        let cleo = try book("cleo", at(11, 0)), eva = try book("eva", at(11, 20))
        // The desk cancels Cleo's 20 minutes before (late, by the clinic); Eva does not come.
        clock.advance(30 * 3600 + 40 * 60)  // 2026-11-23 18:40 UTC, 10:40 in Los Angeles
        _ = try system.staff.act(desk, .cancel, appointmentId: cleo.id ?? 0, reason: "Doctor ill")
        clock.advance(80 * 60)  // 12:00 in Los Angeles
        _ = try system.staff.act(desk, .noShow, appointmentId: eva.id ?? 0)

        let report = try system.staff.monthReport(admin, month: nil)
        #expect(report.year == 2026 && report.month == 11 && report.timeZone == "America/Los_Angeles")
        let total = report.total
        let counts: [Int] = [total.booked, total.completed, total.noShows, total.cancelled, total.cancelledLate,
                             total.cancelledByClinic, total.open, total.freed, total.refilled]
        #expect(counts == [5, 0, 1, 2, 1, 1, 2, 2, 1], "\(total)")
        #expect(report.byDepartment.map(\.key) == ["therapy"] && report.byDepartment[0].booked == 5)
        #expect(report.byDoctor.map(\.booked).reduce(0, +) == 5)
        let bobs = try #require(report.byDoctor.first { $0.key == bob.doctorName })
        #expect(bobs.freed >= 1 && bobs.refilled == 1)
        let refilledShare = try #require(total.refilledShare), noShowShare = try #require(total.noShowShare)
        #expect(refilledShare == 0.5)
        #expect(abs(noShowShare - 1.0 / 3) < 1e-9)
        // The CSV: a header, a line a department and a doctor, and the total.
        let csv = report.csv(.en).split(separator: "\r\n").map(String.init)
        #expect(csv.first == "scope,name,booked,completed,no_shows,no_show_share,cancelled,cancelled_under_24h,cancelled_by_clinic,open,freed,refilled,refilled_share,department,doctor_id")
        #expect(csv.last == "total,,5,0,1,0.333,2,1,1,2,2,1,0.500,,", "\(csv)")
        #expect(csv.contains { $0.hasPrefix("department,Therapy,5,") })
        #expect(report.csv(.ru).contains("department,Терапия,5,"))
        // Another month is empty; a bad one is refused; only a clinic admin reads it.
        #expect(try system.staff.monthReport(admin, month: "2026-12").total.booked == 0)
        #expect(expectError(.invalidInput) { _ = try system.staff.monthReport(admin, month: "2026-13") } != nil)
        #expect(expectError(.invalidInput) { _ = try system.staff.monthReport(admin, month: "11-2026") } != nil)
        #expect(expectError(.forbidden) { _ = try system.staff.monthReport(desk, month: nil) } != nil)
        return (system, admin, desk)
    }

    @Test func aNameThatLooksLikeAFormulaIsTextInTheCSV() {
        var row = ReportRow(scope: .doctor, key: "=HYPERLINK(\"x\")")
        row.booked = 1
        let report = MonthReport(clinicName: "C", timeZone: "UTC", year: 2026, month: 11, byDepartment: [], byDoctor: [row],
                                 total: ReportRow(scope: .total, key: ""))
        #expect(report.csv(.en).contains("doctor,\"'=HYPERLINK(\"\"x\"\")\",1,"))
        // Issue 55 (A10): a semicolon separates fields in many locales' spreadsheets.
        let semicolon = MonthReport(clinicName: "C", timeZone: "UTC", year: 2026, month: 11, byDepartment: [],
                                    byDoctor: [ReportRow(scope: .doctor, key: ";Smith")], total: ReportRow(scope: .total, key: ""))
        #expect(semicolon.csv(.en).contains("doctor,\";Smith\",0,"))
    }

    /// Issue 55 (A7): two doctors of one name are two rows, told apart by their department
    /// (and id) on every front; the CSV carries the id.
    @Test func doctorsWhoShareANameAreTwoRows() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let la1 = try clinic(system, "LA1").id ?? 0
        let admin = try system.staff.addStaff(StaffInput(login: "admin-n", name: "Sam", surname: "Lee", role: .clinicAdmin, clinicId: la1,
                                                         password: "staff-passphrase-77"))
        let hours = (1...5).map { WorkingHours(doctorId: 0, weekday: $0, startMinute: 9 * 60, endMinute: 12 * 60, slotMinutes: 20) }
        let therapy = try department(system, "LA1", "therapy"), cardiology = try department(system, "LA1", "cardiology")
        let first = try system.staff.addDoctor(admin, departmentId: therapy.id ?? 0, name: "John Smith", hours: hours)
        let second = try system.staff.addDoctor(admin, departmentId: cardiology.id ?? 0, name: "John Smith", hours: hours)
        for (index, (doctor, department)) in [(first, therapy), (second, cardiology)].enumerated() {
            let patient = try register(system, "namesake\(index)")
            _ = try system.appointments.createAppointment(clientId: patient.id ?? 0, departmentId: department.id ?? 0, at: at(9, 20),
                                                          doctorId: doctor.id)
        }
        let report = try system.staff.monthReport(admin, month: nil)
        let smiths = report.byDoctor.filter { $0.key == "John Smith" }
        #expect(smiths.count == 2 && smiths.allSatisfy { $0.booked == 1 && $0.namesake }, "\(report.byDoctor)")
        #expect(Set(smiths.map { $0.label(.en) }) == ["John Smith (Therapy, \(first.id ?? 0))", "John Smith (Cardiology, \(second.id ?? 0))"])
        #expect(report.csv(.en).contains(",Cardiology,\(second.id ?? 0)\r\n"))
        #expect(MonthReportJSON(report, language: .en).doctors.filter { $0.doctorId == first.id }.count == 1)
    }
}
