import Foundation
import Testing
@testable import ClinicKit

/// The booking family as the store's awaited operations (issue 56: `ClinicStore.book`,
/// `changeAppointment`, `moveAppointment`), on both stores: the same answers and the same rows
/// as the synchronous controller calls, refusals included. "Now" is Sunday 2026-11-22 12:00 UTC.
@Suite struct AwaitedUseCaseTests {
    func local(_ text: String) -> TimeInput.Parsed {
        guard let parsed = try? TimeInput.parse(text) else { fatalError(text) }
        return parsed
    }

    @Test func bookMoveAndCancelAwaited() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0, boris = try register(system, "boris").id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let booked = try await system.appointments.book(clientId: anna, departmentId: therapy, at: local("2026-11-24 09:00"),
                                                        notes: "Knee, left")
        #expect(booked.notes == "Knee, left" && booked.status == .scheduled)
        let id = try #require(booked.id)
        #expect(try system.appointments.getAppointmentById(id, clientId: anna) == booked)
        #expect(try system.appointments.history(id, clientId: anna).map(\.event) == ["booked"])

        // Refused as the synchronous call refuses, and nothing changes.
        let before = try fingerprint(system)
        let taken = await #expect(throws: ClinicError.self) {
            _ = try await system.appointments.book(clientId: boris, departmentId: therapy, at: local("2026-11-24 09:00"),
                                                   doctorId: booked.doctorId)
        }
        #expect(taken?.code == .slotTaken)
        let notYours = await #expect(throws: ClinicError.self) { _ = try await system.appointments.cancel(id, clientId: boris) }
        #expect(notYours?.key == .notYourAppointment)
        let missing = await #expect(throws: ClinicError.self) {
            _ = try await system.appointments.reschedule(999_999, clientId: anna, to: local("2026-11-25 09:00"))
        }
        #expect(missing?.code == .notFound)
        #expect(try fingerprint(system) == before)

        // A move keeps the notes and the doctor when free; the same time changes nothing.
        let moved = try await system.appointments.reschedule(id, clientId: anna, to: local("2026-11-25 10:00"))
        #expect(moved.notes == "Knee, left" && moved.doctorId == booked.doctorId && moved.startsAt != booked.startsAt)
        let same = try await system.appointments.reschedule(id, clientId: anna, to: .instant(moved.startsAt))
        #expect(same == moved)
        #expect(try system.appointments.getAppointmentById(id, clientId: anna) == moved)

        let cancelled = try await system.appointments.cancel(id, clientId: anna)
        #expect(cancelled.status == .cancelled && cancelled.notes == "Knee, left")
        #expect(try system.appointments.history(id, clientId: anna).map(\.event) == ["booked", "rescheduled", "cancelled"])
        let again = await #expect(throws: ClinicError.self) { _ = try await system.appointments.cancel(id, clientId: anna) }
        #expect(again?.code == .invalidTransition)
        let messages = try system.clients.messages(clientId: anna).map(\.kind)
        #expect(messages.filter { [.booked, .rescheduled, .cancelled].contains($0) }.count == 3)
    }

    @Test func theCutoffHoldsForAwaitedChanges() async throws {
        // Monday 07:30 in Los Angeles: 09:20 is within the two hours.
        let system = try makeSystem(clock: TestClock(utc("2026-11-23T15:30:00Z")))
        let anna = try register(system, "anna").id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let soon = try await system.appointments.book(clientId: anna, departmentId: therapy, at: local("2026-11-23 09:20"))
        let late = await #expect(throws: ClinicError.self) { _ = try await system.appointments.cancel(soon.id ?? 0, clientId: anna) }
        #expect(late?.code == .tooLate)
        let lateMove = await #expect(throws: ClinicError.self) {
            _ = try await system.appointments.reschedule(soon.id ?? 0, clientId: anna, to: local("2026-11-24 09:20"))
        }
        #expect(lateMove?.code == .tooLate)
    }
}
