import Foundation
import Testing
@testable import ClinicKit

// The staff's transitions on plain facts (issue 56): who may move a visit along its lifecycle,
// from which status, and when (`StaffAction.refusal`, the one rule `StaffController.act`
// enforces and the fronts offer actions by). A member and an appointment built by hand; no
// store, no server.

@Suite struct StaffActionRulesTests {
    static func member(_ role: StaffRole, clinic: Int64 = 10, doctor: Int64? = nil) -> StaffMember {
        StaffMember(id: 40, login: "desk", name: "Dana", surname: "Reyes", role: role, clinicId: clinic,
                    doctorId: role == .doctor ? (doctor ?? 1) : nil, isActive: true, createdAt: Fixture.now)
    }

    /// Tuesday 2026-03-03 10:00 in New York, with doctor 1.
    static let start = Fixture.at(2026, 3, 3, 10)

    static func visit(_ status: AppointmentStatus, at start: Date = start, doctor: Int64 = 1) -> Appointment {
        Fixture.appointment(start: start, doctor: doctor, status: status)
    }

    /// The refusal's code and key, nil when the action is allowed.
    static func refusal(_ action: StaffAction, by member: StaffMember, on appointment: Appointment,
                        now: Date) -> (ClinicError.Code, MessageKey)? {
        action.refusal(by: member, on: appointment, now: now, zone: Fixture.zone).map { ($0.code, $0.key) }
    }

    /// A status each action can move from, and a time when it may.
    static func allowedCase(_ action: StaffAction) -> (Appointment, Date) {
        let after = start.addingTimeInterval(15 * 60)
        switch action {
        case .checkIn: return (visit(.scheduled), start.addingTimeInterval(-3600))
        case .undoCheckIn: return (visit(.arrived), after)
        case .start: return (visit(.arrived), after)
        case .complete: return (visit(.inProgress), after)
        case .noShow: return (visit(.scheduled), after)
        case .cancel: return (visit(.scheduled), after)
        }
    }

    @Test func eachRoleTakesItsOwnActionsOnly() {
        let allowed: [StaffRole: Set<StaffAction>] = [
            .receptionist: [.checkIn, .undoCheckIn, .noShow, .cancel],
            .doctor: [.start, .complete],
            .clinicAdmin: Set(StaffAction.allCases),
        ]
        for (role, actions) in allowed {
            for action in StaffAction.allCases {
                let (appointment, now) = Self.allowedCase(action)
                let refused = Self.refusal(action, by: Self.member(role), on: appointment, now: now)
                if actions.contains(action) {
                    #expect(refused == nil, "\(role) \(action)")
                } else {
                    #expect(refused.map { $0.0 == .forbidden && $0.1 == .staffForbidden } == true, "\(role) \(action)")
                }
            }
        }
    }

    @Test func anotherClinicsVisitOrAnotherDoctorsIsNotFound() {
        let (arrived, now) = Self.allowedCase(.start)
        let elsewhere = Self.refusal(.checkIn, by: Self.member(.clinicAdmin, clinic: 11), on: Self.visit(.scheduled), now: now)
        #expect(elsewhere.map { $0.0 == .notFound && $0.1 == .appointmentNotFound } == true)
        let otherDoctor = Self.refusal(.start, by: Self.member(.doctor, doctor: 2), on: arrived, now: now)
        #expect(otherDoctor.map { $0.0 == .notFound && $0.1 == .appointmentNotFound } == true)
        #expect(Self.refusal(.start, by: Self.member(.doctor, doctor: 1), on: arrived, now: now) == nil)
    }

    @Test func aVisitMovesOnlyAlongItsLifecycle() {
        let admin = Self.member(.clinicAdmin), after = Self.start.addingTimeInterval(15 * 60)
        let refusedMoves: [(StaffAction, AppointmentStatus)] = [
            (.checkIn, .completed), (.cancel, .cancelled), (.noShow, .inProgress), (.undoCheckIn, .scheduled),
            (.start, .scheduled), (.checkIn, .noShow), (.complete, .cancelled),
        ]
        for (action, status) in refusedMoves {
            let refused = Self.refusal(action, by: admin, on: Self.visit(status, at: after.addingTimeInterval(-60)), now: after)
            #expect(refused.map { $0.0 == .invalidTransition && $0.1 == .transitionRefused } == true, "\(action) from \(status)")
        }
    }

    @Test func aCompletionOrANoShowWaitsForTheVisitsStart() {
        let admin = Self.member(.clinicAdmin)
        for (action, status) in [(StaffAction.complete, AppointmentStatus.inProgress), (.noShow, .scheduled)] {
            let early = Self.refusal(action, by: admin, on: Self.visit(status), now: Self.start.addingTimeInterval(-60))
            #expect(early.map { $0.0 == .invalidTransition && $0.1 == .notStartedYet } == true, "\(action)")
            #expect(Self.refusal(action, by: admin, on: Self.visit(status), now: Self.start) == nil, "\(action) at the start")
        }
    }

    @Test func aCheckInIsOnTheVisitsDayInTheClinicsZone() {
        let desk = Self.member(.receptionist)
        // 00:30 on Tuesday in New York; 23:50 on Monday there is the same day in UTC (04:50 and
        // 05:30 on the 3rd) but not in the clinic's.
        let visit = Self.visit(.scheduled, at: Fixture.at(2026, 3, 3, 0, 30))
        let monday = Self.refusal(.checkIn, by: desk, on: visit, now: Fixture.at(2026, 3, 2, 23, 50))
        #expect(monday.map { $0.0 == .invalidTransition && $0.1 == .checkInNotToday } == true)
        #expect(Self.refusal(.checkIn, by: desk, on: visit, now: Fixture.at(2026, 3, 3, 0, 10)) == nil)
        // Late on the visit's own day is still that day.
        #expect(Self.refusal(.checkIn, by: desk, on: visit, now: Fixture.at(2026, 3, 3, 23, 59)) == nil)
        let days = Self.refusal(.checkIn, by: desk, on: Self.visit(.scheduled), now: Fixture.now)
        #expect(days.map { $0.0 == .invalidTransition && $0.1 == .checkInNotToday } == true)
    }

    @Test func theDecisionCarriesTheHistoryEntryAndTheAuditRow() throws {
        let desk = Self.member(.receptionist), now = Self.start.addingTimeInterval(15 * 60)
        let facts = AppointmentChangeFacts(appointment: Self.visit(.scheduled), bookingSettings: [:], messageContext: Fixture.context,
                                           personalDataKeyCheck: nil, clinicTimeZone: "America/New_York")
        let cancel = try StaffRules.act(facts, id: 900, member: desk, action: .cancel, reason: "Doctor ill", requestId: "r-1", now: now)
        #expect(cancel.appointment.status == .cancelled && cancel.appointment.updatedAt == now)
        #expect(cancel.event.event == "cancelled" && cancel.event.reason == "Doctor ill" && cancel.event.staffId == 40)
        #expect(cancel.message?.kind == .clinicCancelled && cancel.message?.clientId == 7 && cancel.message?.staffId == 40)
        #expect(cancel.message?.body.contains("Doctor ill") == true)
        #expect(cancel.text?.clientId == 7 && cancel.text?.topic == .reminder)
        #expect(cancel.text?.body.hasPrefix("Harbor Clinic cancelled your appointment") == true)
        #expect(cancel.audit == AuditAsk(by: desk.auditActor, action: .appointment(.cancel), clientId: 7, appointmentId: 900,
                                         requestId: "r-1", detail: "scheduled -> cancelled: Doctor ill", now: now))
        let noShow = try StaffRules.act(facts, id: 900, member: desk, action: .noShow, reason: "ignored", requestId: nil, now: now)
        #expect(noShow.event.reason == nil && noShow.audit?.detail == "scheduled -> no_show")
        #expect(noShow.message == nil && noShow.text == nil)
        // An appointment that is not there, or whose clinic is gone, is not found.
        #expect(refused(.notFound, .appointmentNotFound) {
            try StaffRules.act(nil, id: 900, member: desk, action: .noShow, reason: nil, requestId: nil, now: now)
        })
        var orphan = facts
        orphan.clinicTimeZone = nil
        #expect(refused(.notFound, .clinicNotFound) {
            try StaffRules.act(orphan, id: 900, member: desk, action: .noShow, reason: nil, requestId: nil, now: now)
        })
    }
}
