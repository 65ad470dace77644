import Foundation
import Testing
@testable import ClinicKit

/// The staff area of the storage seam (issue #25), on either store: what the operations
/// promise whatever the rules checked before them.
@Suite struct StaffSeamTests {
    let password = "staff-passphrase-77"

    func addReceptionist(_ system: ClinicSystem, _ login: String, at clinicId: Int64) throws -> StaffMember {
        try system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: .receptionist, clinicId: clinicId,
                                             password: password))
    }

    /// A staff login taken in any case is refused by the store itself (`login_taken`, the login
    /// as typed), also when written straight through the seam without the use case's checks;
    /// the refused insert changes nothing and leaves the transaction usable.
    @Test func theStoreItselfRefusesATakenStaffLogin() throws {
        let system = try makeSystem()
        let la1 = try clinic(system, "LA1").id ?? 0
        let desk = try addReceptionist(system, "desk-a", at: la1)
        let before = try fingerprint(system)
        func insert(_ tx: any StoreWriting, _ login: String) throws -> StaffMember {
            try tx.insertStaffMember(login: login, loginKey: Client.key(forLogin: login), passwordHash: "x", name: "Kim",
                                     surname: "Park", role: .receptionist, clinicId: la1, doctorId: nil, createdAt: testNow)
        }
        let taken = expectError(.loginTaken) { _ = try system.database.writing { tx in try insert(tx, "DESK-A") } }
        #expect(taken?.key == .loginTaken && taken?.arguments == ["DESK-A"])
        #expect(try fingerprint(system) == before)

        // Inside one transaction: the refused insert is the statement's only, the rest commits.
        let added = try system.database.writing { tx -> StaffMember in
            do { _ = try insert(tx, "Desk-A") } catch let error as ClinicError where error.code == .loginTaken {}
            return try insert(tx, "desk-b")
        }
        #expect(added.login == "desk-b" && added.isActive && added.clinicId == la1)
        #expect(try system.database.reading { tx in try tx.staffMembers(ofClinic: la1) }.map(\.id) == [desk.id, added.id])
        // Any other constraint is not taken for a taken login: a clinic that does not exist.
        let refused: ClinicError? = {
            do {
                _ = try system.database.writing { tx in
                    try tx.insertStaffMember(login: "desk-c", loginKey: "desk-c", passwordHash: "x", name: "Kim", surname: "Park",
                                             role: .receptionist, clinicId: 999_999, doctorId: nil, createdAt: testNow)
                }
                return nil
            } catch let error as ClinicError { return error } catch { return nil }
        }()
        #expect(refused != nil && refused?.code != .loginTaken)
    }

    /// Sessions live in the store: a session's last use never moves back (two servers touching
    /// it at once), ending one says whether there was one, the idle cutoff is inclusive, and a
    /// disabled account's sessions name no one.
    @Test func staffSessionsKeepTheirContract() throws {
        let system = try makeSystem()
        let la1 = try clinic(system, "LA1").id ?? 0
        let desk = try addReceptionist(system, "desk-a", at: la1)
        let start = testNow, later = testNow.addingTimeInterval(600)
        try system.database.writing { tx in
            try tx.insertStaffSession(staffId: desk.id, tokenHash: "h1", at: start)
            try tx.touchStaffSession(tokenHash: "h1", at: later)
            try tx.touchStaffSession(tokenHash: "h1", at: start) // the earlier one commits last
        }
        #expect(try system.database.reading { tx in try tx.activeStaffSession(tokenHash: "h1").flatMap { $0.lastUsedAt >= later ? $0.member : nil } } == desk)
        #expect(try system.database.reading { tx in
            try tx.activeStaffSession(tokenHash: "h1").flatMap { $0.lastUsedAt >= later.addingTimeInterval(1) ? $0.member : nil }
        } == nil)
        #expect(try system.database.reading { tx in try tx.activeStaffSession(tokenHash: "h2").flatMap { $0.lastUsedAt >= start ? $0.member : nil } } == nil)
        // A web session's own idle limit is kept with it (issue 55); the API's has none.
        try system.database.writing { tx in try tx.insertStaffSession(staffId: desk.id, tokenHash: "web", at: start, idleSeconds: 900) }
        #expect(try system.database.reading { tx in try tx.activeStaffSession(tokenHash: "web") }?.idleSeconds == 900)
        #expect(try system.database.reading { tx in try tx.activeStaffSession(tokenHash: "h1") }?.idleSeconds == nil)

        // The cutoff: a session last used at it is kept, one used before it is forgotten.
        try system.database.writing { tx in
            try tx.insertStaffSession(staffId: desk.id, tokenHash: "h2", at: start)
            try tx.deleteStaffSessions(lastUsedBefore: later)
        }
        #expect(try system.database.reading { tx in try tx.activeStaffSession(tokenHash: "h2").flatMap { $0.lastUsedAt >= start ? $0.member : nil } } == nil)
        #expect(try system.database.reading { tx in try tx.activeStaffSession(tokenHash: "h1").flatMap { $0.lastUsedAt >= start ? $0.member : nil } } == desk)

        try system.database.writing { tx in try tx.deactivateStaffMember(id: desk.id) }
        #expect(try system.database.reading { tx in try tx.activeStaffSession(tokenHash: "h1").flatMap { $0.lastUsedAt >= start ? $0.member : nil } } == nil,
                "a disabled account's session names no one")
        #expect(try system.database.reading { tx in try tx.staffMember(id: desk.id) }?.isActive == false)
        #expect(try system.database.writing { tx in try tx.deleteStaffSession(tokenHash: "h1") })
        #expect(try !system.database.writing { tx in try tx.deleteStaffSession(tokenHash: "h1") })
        #expect(try system.database.reading { tx in try tx.staffCredentials(loginKey: "desk-a") }?.member.id == desk.id)
        #expect(try system.database.reading { tx in try tx.staffCredentials(loginKey: "nobody") } == nil)
    }

    /// The clinic's day: appointments starting in [start, end) (half-open), filtered by
    /// department and doctor; the patients of the day count active appointments only.
    @Test func theClinicsDayIsHalfOpenAndCountsActivePatientsOnly() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(
            clientId: anna.id ?? 0, departmentId: therapy.id ?? 0,
            at: .local(try #require(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20))))
        let la1 = booked.clinicId, la2 = try clinic(system, "LA2").id ?? 0, start = booked.startsAt, client = anna.id ?? 0
        let read = try system.database.reading { tx in
            (from: try tx.appointments(ofClinic: la1, startingIn: start..<start.addingTimeInterval(60), departmentId: nil, doctorId: nil),
             until: try tx.appointments(ofClinic: la1, startingIn: start.addingTimeInterval(-60)..<start, departmentId: nil, doctorId: nil),
             department: try tx.appointments(ofClinic: la1, startingIn: start..<start.addingTimeInterval(60),
                                             departmentId: booked.departmentId, doctorId: booked.doctorId),
             otherDoctor: try tx.appointments(ofClinic: la1, startingIn: start..<start.addingTimeInterval(60),
                                              departmentId: nil, doctorId: -1),
             patients: try tx.activePatients(ofClinic: la1, startingIn: start..<start.addingTimeInterval(60), departmentId: nil),
             hasAppointment: try tx.isPatient(client, ofClinic: la1),
             elsewhere: try tx.isPatient(client, ofClinic: la2),
             language: try tx.messageLanguage(ofClient: client),
             future: try tx.futureActiveAppointments(ofDoctor: booked.doctorId, from: start).map(\.id))
        }
        #expect(read.from.map(\.id) == [booked.id] && read.until.isEmpty, "[a, b) holds a, not b")
        #expect(read.department.map(\.id) == [booked.id] && read.otherDoctor.isEmpty)
        #expect(read.patients == [client] && read.hasAppointment && !read.elsewhere)
        #expect(read.language == .en)
        #expect(read.future == [booked.id])
        _ = try system.appointments.cancelAppointment(booked.id ?? 0, clientId: client)
        let after = try system.database.reading { tx in
            (patients: try tx.activePatients(ofClinic: la1, startingIn: start..<start.addingTimeInterval(60), departmentId: nil),
             day: try tx.appointments(ofClinic: la1, startingIn: start..<start.addingTimeInterval(60), departmentId: nil, doctorId: nil),
             future: try tx.futureActiveAppointments(ofDoctor: booked.doctorId, from: start),
             hasAppointment: try tx.isPatient(client, ofClinic: la1))
        }
        #expect(after.patients.isEmpty && after.future.isEmpty, "a cancelled appointment is no active one")
        #expect(after.day.count == 1 && after.hasAppointment, "the day and the patient's history show every status")
    }

    /// Replacing a weekday's hours leaves the other weekdays alone; none is a day off.
    @Test func replacingHoursTouchesOneWeekday() throws {
        let system = try makeSystem()
        let therapy = try department(system, "LA1", "therapy")
        let doctor = try #require(try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0).first?.id)
        let before = try system.database.reading { tx in try tx.workingHours(ofDoctor: doctor) }
        let interval = DoctorSchedule.Interval(startMinute: 600, endMinute: 660, slotMinutes: 20)
        try system.database.writing { tx in try tx.replaceWorkingHours(ofDoctor: doctor, weekday: 1, with: [interval]) }
        let monday = try system.database.reading { tx in try tx.workingHours(ofDoctor: doctor) }
        #expect(monday.filter { $0.weekday == 1 }.map { [$0.startMinute, $0.endMinute, $0.slotMinutes] } == [[600, 660, 20]])
        #expect(monday.filter { $0.weekday != 1 }.map(\.id) == before.filter { $0.weekday != 1 }.map(\.id))
        try system.database.writing { tx in try tx.replaceWorkingHours(ofDoctor: doctor, weekday: 1, with: []) }
        #expect(try system.database.reading { tx in try tx.workingHours(ofDoctor: doctor) }.allSatisfy { $0.weekday != 1 })
    }
}
