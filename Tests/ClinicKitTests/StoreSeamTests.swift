import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The storage seam's contract (issue #25), on either store: what every store must do
/// whatever the rules checked before it.
@Suite struct StoreSeamTests {
    func local(_ text: String) throws -> TimeInput.Parsed { try TimeInput.parse(text) }

    /// A store's own constraints refuse a second active appointment of a doctor at the same
    /// start (`slot_taken`), and a second of a patient (`overlapping_appointment`), even when
    /// written straight through the seam without the booking rules' checks; a cancelled one
    /// holds nothing. The failed insert leaves the transaction usable and changes nothing.
    @Test func theStoreItselfRefusesADoubleBooking() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), boris = try register(system, "boris")
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0 // one doctor
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology,
                                                               at: try local("2026-11-23 10:00"))
        var copy = booked
        copy.id = nil
        copy.clientId = boris.id ?? 0
        let taken = expectError(.slotTaken) {
            _ = try system.database.writing { tx in try tx.insertAppointment(copy) }
        }
        #expect(taken?.key == .slotTaken)

        // The same patient at the same start with another doctor: the patient's constraint.
        let therapy = try department(system, "LA1", "therapy")
        let other = try #require(try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0).first)
        var twice = booked
        twice.id = nil
        twice.departmentId = therapy.id ?? 0
        twice.doctorId = other.id ?? 0
        #expect(expectError(.overlappingAppointment) {
            _ = try system.database.writing { tx in try tx.insertAppointment(twice) }
        } != nil)

        // Inside one transaction: the refused insert is the statement's only, the rest commits.
        let kept = try system.database.writing { tx -> Int in
            do { _ = try tx.insertAppointment(copy) } catch let error as ClinicError where error.code == .slotTaken {}
            return try tx.appointments(ofClient: anna.id ?? 0).count
        }
        #expect(kept == 1)
        #expect(try system.database.reading { tx in try tx.appointments(ofClient: boris.id ?? 0) }.isEmpty)

        // Once cancelled, the slot holds nothing: the same row shape goes in.
        _ = try system.appointments.cancelAppointment(booked.id ?? 0, clientId: anna.id ?? 0)
        let again = try system.database.writing { tx in try tx.insertAppointment(copy) }
        #expect(again.id != nil && again.id != booked.id)
    }

    /// The named reads answer what the rules ask: overlaps are half-open ([a, b) meets [b, c)
    /// without overlapping) and only active appointments count.
    @Test func overlapReadsAreHalfOpenAndCountActiveAppointmentsOnly() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let cardiology = try department(system, "LA1", "cardiology").id ?? 0
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: cardiology,
                                                               at: try local("2026-11-23 10:00"))
        let start = booked.startsAt, end = booked.endsAt, doctor = booked.doctorId, client = anna.id ?? 0
        let before = try system.database.reading { tx in
            (whole: try tx.doctorIsBooked(doctor, overlapping: start..<end, except: nil),
             itself: try tx.doctorIsBooked(doctor, overlapping: start..<end, except: booked.id),
             after: try tx.doctorIsBooked(doctor, overlapping: end..<end.addingTimeInterval(1200), except: nil),
             earlier: try tx.doctorIsBooked(doctor, overlapping: start.addingTimeInterval(-1200)..<start, except: nil),
             patient: try tx.activeAppointment(ofClient: client, overlapping: start.addingTimeInterval(600)..<end, except: nil),
             spans: try tx.activeAppointmentSpans(doctorId: doctor, overlapping: start..<end),
             fromStart: try tx.activeAppointmentCount(ofClient: client, startingFrom: start),
             fromEnd: try tx.activeAppointmentCount(ofClient: client, startingFrom: end))
        }
        #expect(before.whole && !before.itself, "the appointment itself is left out when asked")
        #expect(!before.after && !before.earlier, "[a, b) meets [b, c) without overlapping")
        #expect(before.patient == booked.id)
        #expect(before.spans == [start..<end])
        #expect(before.fromStart == 1 && before.fromEnd == 0)
        _ = try system.appointments.cancelAppointment(booked.id ?? 0, clientId: client)
        let after = try system.database.reading { tx in
            (booked: try tx.doctorIsBooked(doctor, overlapping: start..<end, except: nil),
             spans: try tx.activeAppointmentSpans(doctorId: doctor, overlapping: start..<end),
             events: try tx.appointmentEvents(of: [booked.id ?? 0]).map(\.event))
        }
        #expect(!after.booked && after.spans.isEmpty, "a cancelled appointment holds nothing")
        #expect(after.events == ["booked", "cancelled"])
    }

    /// A clinic's position edited into text (the schema's checks off) is no position: the
    /// finder leaves the clinic out instead of placing it at 0° (what a plain decode reads).
    @Test(.sqliteOnly) func aPositionThatIsNotANumberIsLeftOut() throws {
        let system = try makeSystem()
        let before = try system.database.reading { tx in try tx.clinicPoints() }
        let edited = try #require(before.first).id
        try system.sqliteFile.write { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: "UPDATE clinics SET lat = 'x' WHERE id = ?", arguments: [edited])
            try db.execute(sql: "PRAGMA ignore_check_constraints = OFF")
        }
        let after = try system.database.reading { tx in try tx.clinicPoints() }
        #expect(after.count == before.count - 1)
        #expect(!after.contains { $0.id == edited })
        let finder = try system.database.reading { tx in try NearestClinicFinder.load(tx) }
        let origin = try #require(Coordinate(latitude: 0, longitude: 0))
        #expect(try finder.nearest(to: origin, limit: before.count).allSatisfy { $0.clinicId != edited })
    }
}
