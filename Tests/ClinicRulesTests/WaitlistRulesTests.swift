import Foundation
import Testing
@testable import ClinicKit

// The waitlist's rules on plain facts (issue 56): joining, closing an offer, leaving, resuming,
// declining. Facts built by hand, the decision called; no store, no file, no server. The
// stores' gather and write are `ClinicKitTests/AwaitedWaitlistTests.swift`'s.

@Suite struct WaitlistRulesTests {
    static let now = Fixture.now
    static let later = Fixture.tuesday10

    static func entry(id: Int64 = 7, clientId: Int64 = 1, status: WaitlistEntryStatus = .offered) -> WaitlistEntry {
        WaitlistEntry(id: id, clientId: clientId, clinicId: 3, departmentId: 4, doctorId: nil, visitTypeId: nil, firstDay: "2026-11-22",
                      lastDay: "2026-12-22", fromMinute: nil, toMinute: nil, weekdays: WaitlistEntry.everyDay, beforeAppointmentId: nil,
                      priority: 0, staffId: nil, status: status, createdAt: now, updatedAt: now)
    }

    static func offer(id: Int64 = 9, entryId: Int64 = 7, clientId: Int64 = 1, hold: Int64? = 11, startsAt: Date = later,
                      status: WaitlistOfferStatus = .open) -> WaitlistOffer {
        WaitlistOffer(id: id, entryId: entryId, clientId: clientId, holdId: hold, clinicId: 3, departmentId: 4, doctorId: 5,
                      startsAt: startsAt, endsAt: startsAt.addingTimeInterval(1_200), expiresAt: now.addingTimeInterval(900),
                      status: status, appointmentId: nil, createdAt: now, closedAt: nil)
    }

    @Test func closingAnOfferWritesWhatItsStatusAndTimeAsk() {
        let freed = WaitlistWrite.queueFreedTime(departmentId: 4, doctorId: 5, span: Self.later..<Self.later.addingTimeInterval(1_200))
        #expect(WaitlistController.closing(Self.offer(), as: .declined, entryStatus: .offered, now: Self.now) == [
            .closeOffer(id: 9, status: .declined, appointmentId: nil), .deleteHold(id: 11), .setEntryStatus(id: 7, status: .waiting), freed])
        #expect(WaitlistController.closing(Self.offer(), as: .lapsed, entryStatus: .offered, now: Self.now) == [
            .closeOffer(id: 9, status: .lapsed, appointmentId: nil), .deleteHold(id: 11), .recordLapse(entryId: 7),
            .setEntryStatus(id: 7, status: .waiting), freed])
        // Withdrawn (the entry leaves, or the desk books the time): the entry's status is the caller's.
        #expect(WaitlistController.closing(Self.offer(hold: nil), as: .withdrawn, entryStatus: .offered, now: Self.now) == [
            .closeOffer(id: 9, status: .withdrawn, appointmentId: nil), freed])
        // A time begun is not queued; an entry no longer offered is left as it is.
        #expect(WaitlistController.closing(Self.offer(startsAt: Self.now), as: .declined, entryStatus: .left, now: Self.now) == [
            .closeOffer(id: 9, status: .declined, appointmentId: nil), .deleteHold(id: 11)])
        #expect(WaitlistController.closing(Self.offer(), as: .declined, entryStatus: nil, now: Self.now).count == 3, "the entry gone")
    }

    @Test func leavingWithdrawsTheEntrysOpenOffersAndOnlyTheOwnersWaitingEntryLeaves() throws {
        let state = WaitlistEntryState(entry: Self.entry(), openOffers: [Self.offer()])
        let leaving = try WaitlistController.leaving(state, id: 7, clientId: 1, now: Self.now)
        #expect(leaving.writes.first == .closeOffer(id: 9, status: .withdrawn, appointmentId: nil))
        #expect(leaving.writes.contains(.deleteHold(id: 11)))
        #expect(leaving.writes.last == .setEntryStatus(id: 7, status: .left))
        #expect(!leaving.writes.contains(.setEntryStatus(id: 7, status: .waiting)), "a withdrawn offer does not send it back to waiting")
        #expect(try WaitlistController.leaving(WaitlistEntryState(entry: Self.entry(status: .waiting), openOffers: []), id: 7,
                                               clientId: 1, now: Self.now).writes == [.setEntryStatus(id: 7, status: .left)])
        for (state, note) in [(nil, "no such entry"), (WaitlistEntryState(entry: Self.entry(clientId: 2), openOffers: []), "another's"),
                              (WaitlistEntryState(entry: Self.entry(status: .left), openOffers: []), "left already"),
                              (WaitlistEntryState(entry: Self.entry(status: .booked), openOffers: []), "booked")] as [(WaitlistEntryState?, Comment)] {
            #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, "7"), note) {
                _ = try WaitlistController.leaving(state, id: 7, clientId: 1, now: Self.now)
            }
            #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, "7"), note) {
                _ = try WaitlistController.resuming(state, id: 7, clientId: 1, now: Self.now)
            }
        }
    }

    @Test func resumingForgetsTheLapsesAndAnswersTheEntryAsWritten() throws {
        var paused = Self.entry(status: .waiting)
        paused.lapses = WaitlistEntry.lapsesToPause
        #expect(paused.isPaused)
        let resuming = try WaitlistController.resuming(WaitlistEntryState(entry: paused, openOffers: []), id: 7, clientId: 1,
                                                       now: Self.later)
        #expect(resuming.writes == [.resumeEntry(id: 7)] && resuming.now == Self.later)
        #expect(!resuming.result.isPaused && resuming.result.lapses == 0 && resuming.result.updatedAt == Self.later)
    }

    @Test func decliningTakesOnlyTheOwnersOpenOffer() throws {
        let declining = try WaitlistController.declining(WaitlistOfferState(offer: Self.offer(), entryStatus: .offered), id: 9,
                                                         clientId: 1, now: Self.now)
        #expect(declining.writes == WaitlistController.closing(Self.offer(), as: .declined, entryStatus: .offered, now: Self.now))
        #expect(throws: ClinicError(.notFound, .waitlistOfferNotFound, "9")) {
            _ = try WaitlistController.declining(nil, id: 9, clientId: 1, now: Self.now)
        }
        #expect(throws: ClinicError(.notFound, .waitlistOfferNotFound, "9"), "another patient's") {
            _ = try WaitlistController.declining(WaitlistOfferState(offer: Self.offer(clientId: 2), entryStatus: .offered), id: 9,
                                                 clientId: 1, now: Self.now)
        }
        for status in [WaitlistOfferStatus.accepted, .declined, .lapsed, .withdrawn] {
            #expect(throws: ClinicError(.invalidTransition, .waitlistOfferClosed, status.rawValue)) {
                _ = try WaitlistController.declining(WaitlistOfferState(offer: Self.offer(status: status), entryStatus: .waiting), id: 9,
                                                     clientId: 1, now: Self.now)
            }
        }
    }

    // MARK: Joining

    typealias Request = WaitlistController.Request

    /// A patient (7) with no entries, at `Fixture`'s department with its two doctors, on
    /// Monday 2026-03-02 08:00 in New York.
    static func joinFacts(entries: [WaitlistEntryFacts] = [], before: Appointment? = nil, settings: [String: String] = [:]) -> WaitlistJoinFacts {
        WaitlistJoinFacts(clientExists: true, department: Fixture.department, clinic: Fixture.clinic, doctorIds: [1, 2], visitType: nil,
                          bookingSettings: settings, before: before, entries: entries)
    }

    static func joining(_ facts: WaitlistJoinFacts = joinFacts(), _ request: Request = Request(departmentId: 20), staffId: Int64? = nil,
                        now: Date = Fixture.now) throws -> WaitlistJoin {
        try WaitlistController.joining(facts, request, clientId: 7, staffId: staffId,
                                       input: try WaitlistController.checkedInput(request, staffId: staffId), now: now)
    }

    @Test func aJoinWaitsFromTodayToTheHorizonInTheClinicsDays() throws {
        let join = try Self.joining()
        #expect(join.ended.isEmpty)
        #expect(join.entry.firstDay == "2026-03-02" && join.entry.lastDay == "2027-03-02", "365 days, the clinic's days")
        #expect(join.entry.clientId == 7 && join.entry.clinicId == 10 && join.entry.status == .waiting && join.entry.priority == 0)
        #expect(join.entry.weekdays == WaitlistEntry.everyDay && join.entry.fromMinute == nil)
        // 02:00 UTC on Tuesday is still Monday in New York.
        #expect(try Self.joining(now: utc("2026-03-03T02:00:00Z")).entry.firstDay == "2026-03-02")
        let hours = try Self.joining(Self.joinFacts(), Request(departmentId: 20, from: "2026-03-01", to: "2026-03-20", hoursFrom: "09:00",
                                                                hoursTo: "12:30", weekdays: [1, 3]))
        #expect(hours.entry.firstDay == "2026-03-02", "a first day past is today")
        #expect(hours.entry.lastDay == "2026-03-20" && hours.entry.fromMinute == 540 && hours.entry.toMinute == 750)
        #expect(hours.entry.weekdayList == [1, 3])
        // The front desk's priority; a patient's own is 0 whatever they ask.
        #expect(try Self.joining(Self.joinFacts(), Request(departmentId: 20, priority: 9), staffId: 4).entry.priority == 9)
        #expect(try Self.joining(Self.joinFacts(), Request(departmentId: 20, priority: 9)).entry.priority == 0)
        #expect(throws: ClinicError.invalid(.waitlistPriorityInvalid, "5000")) {
            _ = try WaitlistController.checkedInput(Request(departmentId: 20, priority: 5_000), staffId: 4)
        }
    }

    @Test func aJoinIsRefusedForEachFactThatForbidsIt() throws {
        var facts = Self.joinFacts()
        facts.clientExists = false
        #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try Self.joining(facts) }
        facts = Self.joinFacts()
        facts.department = nil
        #expect(throws: ClinicError(.notFound, .departmentNotFound, "20")) { _ = try Self.joining(facts) }
        facts = Self.joinFacts()
        facts.clinic = nil
        #expect(throws: ClinicError(.notFound, .clinicNotFound, "10")) { _ = try Self.joining(facts) }
        #expect(throws: ClinicError(.notFound, .doctorNotFound, "3")) { _ = try Self.joining(Self.joinFacts(), Request(departmentId: 20, doctorId: 3)) }
        #expect(try Self.joining(Self.joinFacts(), Request(departmentId: 20, doctorId: 2)).entry.doctorId == 2)
        facts = Self.joinFacts()
        facts.doctorIds = []
        #expect(throws: ClinicError(.slotUnavailable, .waitlistNoDoctor)) { _ = try Self.joining(facts) }
        // A visit type: none such, another department's, retired; the department's own is kept.
        #expect(throws: ClinicError.self) { _ = try Self.joining(Self.joinFacts(), Request(departmentId: 20, visitTypeId: 30)) }
        facts = Self.joinFacts()
        facts.visitType = try Fixture.visitType(department: 21, minutes: 40)
        #expect(throws: ClinicError.self) { _ = try Self.joining(facts, Request(departmentId: 20, visitTypeId: 30)) }
        facts.visitType = try Fixture.visitType(minutes: 40, active: false)
        #expect(throws: ClinicError.self) { _ = try Self.joining(facts, Request(departmentId: 20, visitTypeId: 30)) }
        facts.visitType = try Fixture.visitType(minutes: 40)
        #expect(try Self.joining(facts, Request(departmentId: 20, visitTypeId: 30)).entry.visitTypeId == 30)
        // The window: ended, backwards, past the horizon (which a setting moves).
        #expect(throws: ClinicError.invalid(.waitlistWindowInvalid, "2026-03-02")) {
            _ = try Self.joining(Self.joinFacts(), Request(departmentId: 20, to: "2026-03-01"))
        }
        #expect(throws: ClinicError.invalid(.waitlistWindowInvalid, "2026-03-02")) {
            _ = try Self.joining(Self.joinFacts(), Request(departmentId: 20, from: "2026-03-10", to: "2026-03-05"))
        }
        #expect(throws: ClinicError.invalid(.waitlistWindowBeyondHorizon, "30", "2026-04-01")) {
            _ = try Self.joining(Self.joinFacts(settings: ["booking.horizon_days": "30"]), Request(departmentId: 20, to: "2026-04-02"))
        }
        #expect(try Self.joining(Self.joinFacts(settings: ["booking.horizon_days": "30"])).entry.lastDay == "2026-04-01")
    }

    @Test func anEarlierTimeWaitsOnlyBeforeThePatientsOwnUpcomingVisitThere() throws {
        let visit = Fixture.appointment(start: Fixture.at(2026, 3, 12, 10))
        let join = try Self.joining(Self.joinFacts(before: visit), Request(departmentId: 20, appointmentId: 900))
        #expect(join.entry.lastDay == "2026-03-12" && join.entry.beforeAppointmentId == 900)
        let refused = ClinicError(.invalidInput, .waitlistAppointmentInvalid, "900")
        for (appointment, note) in [(nil, "none"), (Fixture.appointment(start: visit.startsAt, client: 8), "another patient's"),
                                    (Fixture.appointment(start: visit.startsAt, department: 21), "another department's"),
                                    (Fixture.appointment(start: visit.startsAt, status: .cancelled), "cancelled"),
                                    (Fixture.appointment(start: Fixture.at(2026, 3, 2, 7)), "begun")] as [(Appointment?, Comment)] {
            #expect(throws: refused, note) { _ = try Self.joining(Self.joinFacts(before: appointment), Request(departmentId: 20, appointmentId: 900)) }
        }
    }

    @Test func entriesThatAreOverEndAndNeitherCountNorStandInTheWay() throws {
        func waiting(_ id: Int64, lastDay: String = "2026-12-01", status: WaitlistEntryStatus = .waiting, beforeIsActive: Bool? = nil,
                     zone: String? = "America/New_York") -> WaitlistEntryFacts {
            var entry = Self.entry(id: id, clientId: 7, status: status)
            entry.lastDay = lastDay
            return WaitlistEntryFacts(entry: entry, clinicZone: zone, beforeIsActive: beforeIsActive)
        }
        let limit = ["booking.waitlist_entries": "2"]
        // Two live entries: the limit of two is reached.
        #expect(throws: ClinicError(.limitReached, .waitlistEntriesLimit, "2")) {
            _ = try Self.joining(Self.joinFacts(entries: [waiting(1), waiting(2)], settings: limit))
        }
        // One whose last day was yesterday in New York, one whose visit is gone: both end.
        let join = try Self.joining(Self.joinFacts(entries: [waiting(1), waiting(2, lastDay: "2026-03-01"), waiting(3, beforeIsActive: false)],
                                                   settings: limit))
        #expect(join.ended == [2, 3])
        // Its last day is today in New York (though tomorrow in UTC): it still counts.
        #expect(throws: ClinicError(.limitReached, .waitlistEntriesLimit, "2")) {
            _ = try Self.joining(Self.joinFacts(entries: [waiting(1), waiting(2, lastDay: "2026-03-02")], settings: limit),
                                 now: utc("2026-03-03T02:00:00Z"))
        }
        // An entry over while offered a time is left to the worker: it counts until its offer closes.
        #expect(throws: ClinicError(.limitReached, .waitlistEntriesLimit, "2")) {
            _ = try Self.joining(Self.joinFacts(entries: [waiting(1), waiting(2, lastDay: "2026-03-01", status: .offered)], settings: limit))
        }
    }

    // MARK: Accepting an offer

    /// An offer of Fixture's Tuesday 10:00 with Dr. Avery to patient 7, held (hold 11), its
    /// entry (7) waiting for any time or, with `before`, for an earlier time than that visit.
    static func acceptance(before: Appointment? = nil, offerStatus: WaitlistOfferStatus = .open,
                           entryGone: Bool = false) -> OfferAcceptanceFacts {
        let offer = WaitlistOffer(id: 9, entryId: 7, clientId: 7, holdId: 11, clinicId: 10, departmentId: 20, doctorId: 1,
                                  startsAt: Fixture.tuesday10, endsAt: Fixture.tuesday10.addingTimeInterval(1_800),
                                  expiresAt: Fixture.now.addingTimeInterval(900), status: offerStatus, appointmentId: nil,
                                  createdAt: Fixture.now, closedAt: nil)
        var entry = Self.entry(clientId: 7)
        entry.beforeAppointmentId = before?.id
        return OfferAcceptanceFacts(offer: offer, entry: entryGone ? nil : entry, later: before.map { Fixture.changeFacts($0) })
    }

    @Test func acceptingChecksTheOfferAndAsksForItsTimeWithItsHoldOutOfTheWay() throws {
        let plan = try WaitlistController.acceptancePlan(Self.acceptance(), id: 9, clientId: 7, now: Fixture.now)
        #expect(plan.clientId == 7 && plan.departmentId == 20 && plan.onlyDoctorId == 1 && plan.exceptHold == 11)
        #expect(plan.exceptAppointment == nil && plan.now == Fixture.now)
        #expect(plan.span.contains(Fixture.tuesday10), "the offered start is within the facts asked for")
        for (facts, clientId, error, note) in [
            (nil, 7, ClinicError(.notFound, .waitlistOfferNotFound, "9"), "no such offer"),
            (Self.acceptance(), 8, ClinicError(.notFound, .waitlistOfferNotFound, "9"), "another's"),
            (Self.acceptance(offerStatus: .declined), 7, ClinicError(.invalidTransition, .waitlistOfferClosed, "declined"), "closed"),
            (Self.acceptance(entryGone: true), 7, ClinicError(.notFound, .waitlistEntryNotFound, "7"), "its entry gone"),
        ] as [(OfferAcceptanceFacts?, Int64, ClinicError, Comment)] {
            #expect(throws: error, note) { _ = try WaitlistController.acceptancePlan(facts, id: 9, clientId: clientId, now: Fixture.now) }
        }
        #expect(throws: ClinicError(.tooLate, .waitlistOfferLapsed), "past its time") {
            _ = try WaitlistController.acceptancePlan(Self.acceptance(), id: 9, clientId: 7, now: Fixture.now.addingTimeInterval(900))
        }
    }

    @Test func anEarlierTimeMovesOnlyAnActiveLaterVisitOfTheOwner() throws {
        let wednesday = Fixture.at(2026, 3, 4, 11)
        let later = Fixture.appointment(id: 900, start: wednesday)
        let plan = try WaitlistController.acceptancePlan(Self.acceptance(before: later), id: 9, clientId: 7, now: Fixture.now)
        #expect(plan.exceptAppointment == 900 && plan.exceptHold == 11, "the visit moved is not in its own way")
        let withdrawn = ClinicError(.invalidTransition, .waitlistOfferClosed, "withdrawn")
        for (visit, note) in [(Fixture.appointment(id: 900, start: wednesday, status: .cancelled), "cancelled"),
                              (Fixture.appointment(id: 900, start: Fixture.at(2026, 3, 3, 9)), "earlier than the offer"),
                              (Fixture.appointment(id: 900, start: wednesday, client: 8), "another's")] as [(Appointment, Comment)] {
            #expect(throws: withdrawn, note) {
                _ = try WaitlistController.acceptancePlan(Self.acceptance(before: visit), id: 9, clientId: 7, now: Fixture.now)
            }
        }
        // The visit gone: never a new booking instead.
        var gone = Self.acceptance(before: later)
        gone = OfferAcceptanceFacts(offer: gone.offer, entry: gone.entry, later: nil)
        #expect(throws: withdrawn) { _ = try WaitlistController.acceptancePlan(gone, id: 9, clientId: 7, now: Fixture.now) }

        let moving = try WaitlistController.accepting(Self.acceptance(before: later), Fixture.facts(), clientId: 7, now: Fixture.now)
        #expect(moving.moves && moving.booking.appointment.id == 900 && moving.booking.appointment.startsAt == Fixture.tuesday10)
        #expect(moving.booking.appointment.doctorId == 1)
    }

    @Test func acceptingBooksTheOfferedTimeAndClosesTheOfferWithIt() throws {
        let accepted = try WaitlistController.accepting(Self.acceptance(), Fixture.facts(), clientId: 7, now: Fixture.now)
        #expect(!accepted.moves && accepted.booking.appointment.id == 500 && accepted.booking.appointment.clientId == 7)
        #expect(accepted.booking.appointment.startsAt == Fixture.tuesday10 && accepted.booking.appointment.doctorId == 1)
        #expect(accepted.writes(appointmentId: 500) == [.deleteHold(id: 11), .closeOffer(id: 9, status: .accepted, appointmentId: 500),
                                                         .setEntryStatus(id: 7, status: .booked)])
        // Every booking rule applies: the time taken meanwhile by staff refuses it.
        var taken = Fixture.facts()
        taken.taken = [1: [Fixture.tuesday10..<Fixture.tuesday10.addingTimeInterval(1_800)]]
        #expect(refused(.slotTaken, .slotTaken) { try WaitlistController.accepting(Self.acceptance(), taken, clientId: 7, now: Fixture.now) })
    }

    @Test func aLinksPageShowsOnlyAnOpenOfferWithinItsTime() throws {
        let offer = Self.acceptance().offer
        let facts = OfferLinkFacts(offer: offer, department: Fixture.department, clinic: Fixture.clinic)
        let shown = try WaitlistController.linkOffer(facts, now: Fixture.now)
        #expect(shown.offer == offer && shown.department == Fixture.department && shown.clinic == Fixture.clinic)
        let closed = Self.acceptance(offerStatus: .accepted).offer
        for (facts, now, note) in [
            (nil, Fixture.now, "no such link, or used"),
            (facts, offer.expiresAt, "past its time"),
            (OfferLinkFacts(offer: closed, department: Fixture.department, clinic: Fixture.clinic), Fixture.now, "answered already"),
            (OfferLinkFacts(offer: offer, department: nil, clinic: nil), Fixture.now, "its department gone"),
        ] as [(OfferLinkFacts?, Date, Comment)] {
            #expect(throws: ClinicError(.notFound, .offerLinkInvalid), note) { _ = try WaitlistController.linkOffer(facts, now: now) }
        }
    }

    // MARK: The front desk's change

    @Test func theFrontDesksChangeIsOfItsClinicsWaitingEntryWithARowPerChange() throws {
        let desk = StaffActionRulesTests.member(.receptionist, clinic: 3)
        let state = WaitlistEntryState(entry: Self.entry(status: .waiting), openOffers: [])
        let both = try StaffController.changing(state, desk, entryId: 7, priority: 5, note: "mornings", requestId: "r", now: Self.later)
        #expect(both.writes == [.setPriority(id: 7, priority: 5), .setNote(entryId: 7, note: "mornings")])
        #expect(both.audits.map(\.detail) == ["entry 7 priority 5", "entry 7 note"] && both.audits.allSatisfy { $0.clientId == 1 })
        #expect(both.result.priority == 5 && both.result.updatedAt == Self.later)
        let noteOnly = try StaffController.changing(state, desk, entryId: 7, priority: nil, note: "", requestId: nil, now: Self.later)
        #expect(noteOnly.writes == [.setNote(entryId: 7, note: "")] && noteOnly.result == state.entry, "the entry as it was")
        for (state, member, note) in [
            (nil, desk, "no such entry"),
            (state, StaffActionRulesTests.member(.receptionist, clinic: 4), "another clinic's"),
            (WaitlistEntryState(entry: Self.entry(status: .booked), openOffers: []), desk, "booked already"),
        ] as [(WaitlistEntryState?, StaffMember, Comment)] {
            #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, "7"), note) {
                _ = try StaffController.changing(state, member, entryId: 7, priority: 1, note: nil, requestId: nil, now: Self.now)
            }
        }
    }

    // MARK: The front desk's list

    @Test func theFrontDesksListShowsItsClinicsEntriesAndAuditsEachPatientShown() throws {
        let desk = StaffActionRulesTests.member(.receptionist, clinic: 3)
        let entries = [Self.entry(id: 7, clientId: 2, status: .waiting), Self.entry(id: 8, clientId: 1), Self.entry(id: 9, clientId: 2),
                       Self.entry(id: 10, clientId: 5, status: .waiting)]
        let facts = StaffWaitlistFacts(department: Department(id: 4, clinicId: 3, specialization: "therapy", isDemo: false),
                                       entries: entries, names: [1: "Anna Lee", 2: "Boris Ivanov"], notes: [8: "mornings"])
        let shown = try StaffController.shownWaitlist(facts, desk, departmentId: 4, requestId: "r", now: Self.later)
        #expect(shown.writes.isEmpty && shown.result.map(\.entry) == entries, "in the order the store read them")
        #expect(shown.result.map(\.patientName) == ["Boris Ivanov", "Anna Lee", "Boris Ivanov", ""], "a record gone shows no name")
        #expect(shown.result.map(\.note) == [nil, "mornings", nil, nil])
        // One row per patient shown, by id; the patient whose record is gone is not audited.
        #expect(shown.audits.map(\.clientId) == [1, 2])
        #expect(shown.audits.allSatisfy { $0.action == .patientRead && $0.detail == "waitlist" && $0.requestId == "r" && $0.now == Self.later })
        #expect(try StaffController.shownWaitlist(StaffWaitlistFacts(department: nil, entries: [], names: [:], notes: [:]), desk,
                                                  departmentId: nil, requestId: nil, now: Self.now).audits.isEmpty)
        // A department asked must be the member's clinic's.
        for (department, note) in [(nil, "no such department"),
                                    (Department(id: 4, clinicId: 6, specialization: "therapy", isDemo: false), "another clinic's")]
            as [(Department?, Comment)] {
            #expect(throws: ClinicError(.notFound, .departmentNotFound, "4"), note) {
                _ = try StaffController.shownWaitlist(StaffWaitlistFacts(department: department, entries: entries, names: [:], notes: [:]),
                                                      desk, departmentId: 4, requestId: nil, now: Self.now)
            }
        }
    }
}


/// An instant written in ISO 8601 ("2026-03-03T02:00:00Z").
private func utc(_ text: String) -> Date { (try? Date(text, strategy: .iso8601)) ?? .distantPast }
