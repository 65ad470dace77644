import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The patient's reason for a visit (an appointment's notes) is sealed at rest and read in
/// clear by every reader (issue 30). "Now" is Sunday 2026-11-22 12:00 UTC.
@Suite struct SealedNotesTests {
    let monday0920 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)
    let tuesday1000 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 24, hour: 10, minute: 0)!)
    let reason = "Zebulon's rash on the «left» arm\nsince Tuesday"

    func storedNotes(_ system: ClinicSystem) throws -> [String] {
        try storedRows(system, "SELECT notes FROM appointments ORDER BY id").map { $0["notes"] ?? "" }
    }

    @Test func theReasonIsSealedAtRestAndEveryReaderGetsItInClear() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0,
                                                               at: monday0920, notes: reason)
        #expect(booked.notes == reason)
        let id = try #require(booked.id)
        let stored = try #require(try storedNotes(system).first)
        #expect(stored.hasPrefix("\u{1}"))
        for word in ["Zebulon", "rash", "left", "Tuesday"] {
            #expect(!stored.contains(word), "\(word) in clear")
        }
        // The patient's own reads, the clinic's list and the store's other readers.
        #expect(try system.appointments.getAppointmentById(id, clientId: anna.id ?? 0).notes == reason)
        #expect(try system.appointments.getAppointmentsByClientId(anna.id ?? 0).map(\.notes) == [reason])
        let clinicDay = try system.database.reading { tx in
            try tx.appointments(ofClinic: booked.clinicId, startingIn: booked.startsAt..<booked.endsAt, departmentId: nil, doctorId: nil)
        }
        #expect(clinicDay.map(\.notes) == [reason])
        #expect(try system.database.reading { try $0.futureActiveAppointments(ofDoctor: booked.doctorId, from: booked.startsAt) }
            .map(\.notes) == [reason])
        // A move and a cancellation keep it, sealed once (not the sealed text sealed again).
        let moved = try system.appointments.rescheduleAppointment(id, clientId: anna.id ?? 0, to: tuesday1000)
        #expect(moved.notes == reason)
        _ = try system.appointments.cancelAppointment(id, clientId: anna.id ?? 0)
        #expect(try system.appointments.getAppointmentById(id, clientId: anna.id ?? 0).notes == reason)
        // (SQLite rewrites the row and seals the notes again with a fresh nonce; PostgreSQL's
        // one write of a change leaves the notes column as it is: either way sealed once.)
        let after = try #require(try storedNotes(system).first)
        #expect(after.hasPrefix("\u{1}") && !after.contains("Zebulon"))
        #expect(after.count == stored.count, "not sealed twice")
        // No notes, nothing sealed.
        let bare = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: tuesday1000)
        #expect(bare.notes == "")
        #expect(try storedNotes(system).last == "")
    }

    /// Another appointment's sealed note copied into a row does not open there: it is bound to
    /// its appointment's id. The reader gets a clear error, never the other patient's words.
    @Test func aSealedNoteMovedToAnotherAppointmentDoesNotOpen() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let therapy = try department(system, "LA1", "therapy")
        let first = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0,
                                                              at: monday0920, notes: reason)
        let second = try system.appointments.createAppointment(clientId: bob.id ?? 0, departmentId: therapy.id ?? 0,
                                                               at: tuesday1000, notes: "Headache")
        let sealed = try #require(try storedNotes(system).first)
        try system.database.writing { tx in try tx.setStoredNotes(sealed, ofAppointment: second.id ?? 0) }
        #expect(expectError(.keyError) { _ = try system.appointments.getAppointmentById(second.id ?? 0, clientId: bob.id ?? 0) }?
            .key == .personalUnreadable)
        #expect(try system.appointments.getAppointmentById(first.id ?? 0, clientId: anna.id ?? 0).notes == reason)
    }

    /// Migration 18 seals the notes an older program left in clear, and its down part opens
    /// them again; a key rotation seals every note anew.
    @Test(.sqliteOnly) func theMigrationAndTheRotationCarryTheNotes() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0,
                                                               at: monday0920, notes: reason)
        let database = try #require(system.database as? SQLiteStore)
        try database.migrate(to: SQLiteStore.sealedNotesVersion - 1)
        #expect(try storedNotes(system) == [reason], "in clear before the version goes")
        // As a program before the migration writes it.
        try database.write { db in
            try db.execute(sql: "UPDATE appointments SET notes = 'Knee' WHERE id = ?", arguments: [booked.id ?? 0])
        }
        try database.migrate()
        let sealed = try storedNotes(system)
        #expect(sealed.count == 1 && sealed[0].hasPrefix("\u{1}") && !sealed[0].contains("Knee"))
        #expect(try system.appointments.getAppointmentById(booked.id ?? 0, clientId: anna.id ?? 0).notes == "Knee")
        #expect(try database.rotateKey() == 1)
        let rotated = try storedNotes(system)
        #expect(rotated[0].hasPrefix("\u{1}") && rotated != sealed)
        #expect(try system.appointments.getAppointmentById(booked.id ?? 0, clientId: anna.id ?? 0).notes == "Knee")
    }
}
