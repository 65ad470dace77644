import Foundation
import Testing
@testable import ClinicKit

/// The staff's transitions as the store's awaited use case (issue 56: `StaffController.act`
/// async, what `clinic serve` runs), on either store: the same refusals as the synchronous
/// `act`, nothing written by a refusal, and each change's history entry and audit row written
/// with it, the trail still verifying under its key. The world is `StaffTests`'.
@Suite struct StaffAwaitedTests {
    /// The refusal's code, nil when the action was taken.
    func refusal(_ body: () async throws -> Appointment) async -> ClinicError.Code? {
        do {
            _ = try await body()
            return nil
        } catch let error as ClinicError {
            return error.code
        } catch {
            Issue.record("\(error)")
            return nil
        }
    }

    @Test func theLifecycleAwaitedWritesItsHistoryAndAnAuditTrailThatVerifies() async throws {
        let w = try StaffTests().world()
        let id = try #require(w.booked.id), staff = w.system.staff
        #expect(await refusal { try await staff.act(w.adminB, .checkIn, appointmentId: id) } == .notFound, "clinic B's admin")
        #expect(await refusal { try await staff.act(w.otherDoctorA, .start, appointmentId: id) } == .notFound, "another doctor")
        #expect(await refusal { try await staff.act(w.doctorA, .checkIn, appointmentId: id) } == .forbidden)
        #expect(await refusal { try await staff.act(w.receptionA, .checkIn, appointmentId: id) } == .invalidTransition, "the day before")
        #expect(await refusal { try await staff.act(w.receptionA, .checkIn, appointmentId: id + 1000) } == .notFound)
        w.clock.advance(21 * 3600)  // Monday 01:00 in Los Angeles: the visit's day
        #expect(try await staff.act(w.receptionA, .checkIn, appointmentId: id).status == .arrived)
        #expect(try await staff.act(w.receptionA, .undoCheckIn, appointmentId: id).status == .scheduled)
        #expect(try await staff.act(w.receptionA, .checkIn, appointmentId: id).status == .arrived)
        #expect(try await staff.act(w.doctorA, .start, appointmentId: id).status == .inProgress)
        #expect(await refusal { try await staff.act(w.doctorA, .complete, appointmentId: id) } == .invalidTransition, "before the start")
        w.clock.advance(30 * 3600)
        #expect(try await staff.act(w.doctorA, .complete, appointmentId: id).status == .completed)

        let history = try w.system.appointments.history(id, clientId: w.anna.id ?? 0)
        #expect(history.map(\.event) == ["booked", "arrived", "scheduled", "arrived", "in_progress", "completed"])
        #expect(history.map(\.staffId) == [nil, w.receptionA.id, w.receptionA.id, w.receptionA.id, w.doctorA.id, w.doctorA.id])
        let actions = try w.system.clients.accessLog(clientId: w.anna.id ?? 0).map(\.action)
        #expect(actions == ["appointment.complete", "appointment.start", "appointment.check-in", "appointment.undo-check-in",
                            "appointment.check-in"])
        let check = try w.system.auditCheck()
        #expect(check.problem == nil)
        #expect(check.broken == [])
    }

    @Test func aClinicsCancellationAwaitedNeedsAReasonAndTellsThePatient() async throws {
        let w = try StaffTests().world()
        let id = try #require(w.booked.id), anna = try #require(w.anna.id)
        #expect(await refusal { try await w.system.staff.act(w.receptionA, .cancel, appointmentId: id) } == .invalidInput)
        let cancelled = try await w.system.staff.act(w.receptionA, .cancel, appointmentId: id, reason: "The doctor is ill")
        #expect(cancelled.status == .cancelled)
        let last = try #require(try w.system.appointments.history(id, clientId: anna).last)
        #expect(last.event == "cancelled" && last.reason == "The doctor is ill" && last.staffId == w.receptionA.id)
        let told = try w.system.clients.messages(clientId: anna).filter { $0.kind == .clinicCancelled }
        #expect(told.map(\.appointmentId) == [id])
        #expect(try w.system.auditCheck().broken == [])
    }
}
