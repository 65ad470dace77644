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

    /// The front desk's move page, read awaited (`deskAppointment`) with the times computed by a
    /// runner: the synchronous `rescheduleTimes` of the day; refused as `rescheduleRefusal` says.
    @Test func theDesksMoveChoicesAwaited() async throws {
        let w = try StaffTests().world()
        let id = try #require(w.booked.id), staff = w.system.staff, runner = InlinePasswordRunner()
        let choices = try await staff.moveChoices(w.receptionA, appointmentId: id, computing: runner)
        #expect(choices.appointment.id == id && choices.clinic.id == w.booked.clinicId)
        #expect(choices.day == LocalDateTime.of(w.clock.now, in: choices.clinic.zone).at(minuteOfDay: 0))
        let day = LocalDateTime.of(w.booked.startsAt, in: choices.clinic.zone).at(minuteOfDay: 0)
        let onTheDay = try await staff.moveChoices(w.receptionA, appointmentId: id, day: day, computing: runner)
        let synchronous = try { try w.system.appointments.rescheduleTimes(w.booked, from: day) }()
        #expect(onTheDay.day == day && onTheDay.times == synchronous && !synchronous.isEmpty)
        #expect(!onTheDay.times.contains { $0.start == w.booked.startsAt })
        for (member, code) in [(w.adminB, ClinicError.Code.notFound), (w.doctorA, .forbidden), (w.otherDoctorA, .notFound)] {
            let refused = await #expect(throws: ClinicError.self) { _ = try await staff.moveChoices(member, appointmentId: id, computing: runner) }
            #expect(refused?.code == code)
        }
        let none = await #expect(throws: ClinicError.self) { _ = try await staff.moveChoices(w.receptionA, appointmentId: id + 1000, computing: runner) }
        #expect(none?.code == .notFound)
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
        let log = try await w.system.clients.accessLog(clientId: w.anna.id ?? 0)
        #expect(log.map(\.action) == ["appointment.complete", "appointment.start", "appointment.check-in", "appointment.undo-check-in",
                                      "appointment.check-in"])
        // The access log awaited is the seam's, and its limit is the store's (the latest first).
        let system = w.system, anna = w.anna.id ?? 0
        #expect(try Self.seamLog(system, anna) == log)
        #expect(try await system.database.accessLog(ofClient: anna, limit: 2) == Array(log.prefix(2)))
        #expect(try await system.database.accessLog(ofClient: 99_999, limit: 10) == [])
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
        let told = try await w.system.clients.messages(clientId: anna).filter { $0.kind == .clinicCancelled }
        #expect(told.map(\.appointmentId) == [id])
        #expect(try w.system.auditCheck().broken == [])
    }

    /// A clinic's cancellation texts a patient who takes reminders by text, awaited and through
    /// the synchronous `act` alike: the text's delivery is about the message written with it.
    @Test func aClinicsCancellationIsTextedToAPatientWhoTakesThem() async throws {
        let texts = TextTests(), s = try await texts.scene()
        let la1 = try clinic(s.system, "LA1")
        let desk = try s.system.staff.addStaff(StaffInput(login: "desk", name: "Sam", surname: "Lee", role: .receptionist,
                                                          clinicId: try #require(la1.id), doctorId: nil, password: "staff-passphrase-77"))
        try await texts.confirm(s, s.anna, "+13035550123")
        func at(_ text: String) throws -> TimeInput.Parsed { try TimeInput.parse(text) }
        let first = try await s.system.appointments.book(clientId: s.anna, departmentId: s.therapy, at: try at("2026-11-24 09:00"))
        let second = try await s.system.appointments.book(clientId: s.anna, departmentId: s.therapy, at: try at("2026-11-24 10:00"))
        let third = try await s.system.appointments.book(clientId: s.bob, departmentId: s.therapy, at: try at("2026-11-24 11:00"))
        let before = s.texter.texts.count
        _ = try await s.system.staff.act(desk, .cancel, appointmentId: try #require(first.id), reason: "Dr. Avery is ill")
        let synchronous: () throws -> Appointment = {
            try s.system.staff.act(desk, .cancel, appointmentId: second.id ?? 0, reason: "Dr. Avery is ill")
        }
        _ = try synchronous()
        // Bob has no phone: his message, no text.
        _ = try await s.system.staff.act(desk, .cancel, appointmentId: try #require(third.id), reason: "Dr. Avery is ill")
        try await texts.deliver(s)
        let sent = s.texter.texts.dropFirst(before)
        #expect(sent.count == 2)
        #expect(sent.allSatisfy { $0.to == "+13035550123" && $0.body.hasPrefix(la1.name + " cancelled your appointment") })
        let told = try await s.system.clients.messages(clientId: s.anna).filter { $0.kind == .clinicCancelled }.compactMap(\.appointmentId)
        #expect(Set(told) == [first.id, second.id].compactMap { $0 }.reduce(into: Set<Int64>()) { $0.insert($1) })
        #expect(try await s.system.clients.messages(clientId: s.bob).contains { $0.kind == .clinicCancelled && $0.appointmentId == third.id })
    }

    /// A front desk's move awaited: the synchronous `reschedule`'s refusals (another patient's
    /// visit then told as `patient_unavailable`), its history, message and audit row.
    @Test func aFrontDesksMoveAwaited() async throws {
        let w = try StaffTests().world()
        let id = try #require(w.booked.id), anna = try #require(w.anna.id), staff = w.system.staff
        let monday1000 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 10, minute: 0)!)
        #expect(await refusal { try await staff.reschedule(w.doctorA, appointmentId: id, to: monday1000) } == .forbidden)
        #expect(await refusal { try await staff.reschedule(w.adminB, appointmentId: id, to: monday1000) } == .notFound)
        #expect(await refusal { try await staff.reschedule(w.receptionA, appointmentId: id + 1000, to: monday1000) } == .notFound)
        let other = try #require(try w.system.departments.getDepartmentsByClinicId(try clinic(w.system, "LA2").id ?? 0).first)
        let elsewhere = try w.system.appointments.createAppointment(clientId: anna, departmentId: other.id ?? 0, at: monday1000)
        #expect(await refusal { try await staff.reschedule(w.receptionA, appointmentId: id, to: monday1000) } == .patientUnavailable)
        _ = try await w.system.appointments.cancel(try #require(elsewhere.id), clientId: anna)
        #expect(try w.system.appointments.history(id, clientId: anna).map(\.event) == ["booked"], "refusals change nothing")

        let moved = try await staff.reschedule(w.receptionA, appointmentId: id, to: monday1000, reason: "The doctor is late")
        #expect(moved.startsAt == w.booked.startsAt.addingTimeInterval(40 * 60) && moved.status == .scheduled)
        let last = try #require(try w.system.appointments.history(id, clientId: anna).last)
        #expect(last.event == "rescheduled" && last.staffId == w.receptionA.id && last.reason == "The doctor is late")
        #expect(try await w.system.clients.messages(clientId: anna).first?.body.contains("The doctor is late") == true)
        #expect(try await w.system.clients.accessLog(clientId: anna).first?.action == "appointment.reschedule")
        // The same time again changes nothing, and writes no audit row.
        let rows = try await w.system.clients.accessLog(clientId: anna).count
        #expect(try await staff.reschedule(w.receptionA, appointmentId: id, to: monday1000) == moved)
        #expect(try await w.system.clients.accessLog(clientId: anna).count == rows)
        #expect(try w.system.auditCheck().broken == [])
    }

    /// The access log on the seam's synchronous path (where no async overload can be chosen).
    static func seamLog(_ system: ClinicSystem, _ clientId: Int64) throws -> [AuditEntry] {
        try system.clients.accessLog(clientId: clientId)
    }
}
