import Foundation
import Testing
@testable import ClinicKit

/// A patient's waitlist changes (issue 56: `WaitlistChangesStore`): the rules on plain facts,
/// with no store; then leaving, resuming and declining on the store under test, by both paths,
/// the synchronous seam's and the awaited one.
@Suite struct AwaitedWaitlistTests {
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case seam, awaited
        var testDescription: String { rawValue }
    }

    static let now = utc("2026-11-22T12:00:00Z")
    static let later = utc("2026-11-23T17:20:00Z")

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

    // MARK: The rules on plain facts

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

    // MARK: On the store, by both paths

    /// A synchronous call, made where no async overload can be chosen for it.
    static func seam<T>(_ body: () throws -> T) throws -> T { try body() }

    /// The patient's entries and offers as the seam reads them.
    static func entries(_ system: ClinicSystem, _ clientId: Int64) throws -> [WaitlistEntry] { try system.waitlist.entries(clientId: clientId) }
    static func offers(_ system: ClinicSystem, _ clientId: Int64) throws -> [WaitlistOffer] { try system.waitlist.offers(clientId: clientId) }

    func leave(_ system: ClinicSystem, _ id: Int64, _ clientId: Int64, _ path: Path) async throws {
        switch path {
        case .seam: try Self.seam { try system.waitlist.leave(id, clientId: clientId) }
        case .awaited: try await system.waitlist.leave(id, clientId: clientId)
        }
    }

    func resume(_ system: ClinicSystem, _ id: Int64, _ clientId: Int64, _ path: Path) async throws -> WaitlistEntry {
        switch path {
        case .seam: try Self.seam { try system.waitlist.resume(id, clientId: clientId) }
        case .awaited: try await system.waitlist.resume(id, clientId: clientId)
        }
    }

    func decline(_ system: ClinicSystem, _ id: Int64, _ clientId: Int64, _ path: Path) async throws {
        switch path {
        case .seam: try Self.seam { try system.waitlist.decline(id, clientId: clientId) }
        case .awaited: try await system.waitlist.decline(id, clientId: clientId)
        }
    }

    /// Bob and Carol wait at therapy; Anna's cancelled visit frees Monday 09:20 (LA), offered to Bob.
    func scene() throws -> (clock: TestClock, system: ClinicSystem, bob: WaitlistEntry, carol: WaitlistEntry, offer: WaitlistOffer,
                            therapy: Int64, doctor: Int64) {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let doctor = try system.departments.getDoctorsByDepartmentId(therapy)[0].id ?? 0
        let anna = try register(system, "anna").id ?? 0
        let bob = try system.waitlist.join(clientId: try register(system, "bob").id ?? 0, .init(departmentId: therapy))
        let carol = try system.waitlist.join(clientId: try register(system, "carol").id ?? 0, .init(departmentId: therapy))
        let visit = try system.appointments.createAppointment(clientId: anna, departmentId: therapy, at: .instant(Self.later), doctorId: doctor)
        _ = try system.appointments.cancelAppointment(visit.id ?? 0, clientId: anna)
        _ = try system.waitlist.work()
        let offer = try #require(try system.waitlist.offers(clientId: bob.clientId).first)
        return (clock, system, bob, carol, offer, therapy, doctor)
    }

    @Test(arguments: Path.allCases) func aDeclinedOfferGoesToTheNextAndTheDeclinerWaitsAgain(_ path: Path) async throws {
        let s = try scene()
        let before = try fingerprint(s.system)
        // Refusals change nothing: another's offer, an unknown one, another's entry.
        await #expect(throws: ClinicError(.notFound, .waitlistOfferNotFound, String(s.offer.id ?? 0))) {
            try await decline(s.system, s.offer.id ?? 0, s.carol.clientId, path)
        }
        await #expect(throws: ClinicError(.notFound, .waitlistOfferNotFound, "99999")) { try await decline(s.system, 99_999, s.bob.clientId, path) }
        await #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, String(s.bob.id ?? 0))) {
            try await leave(s.system, s.bob.id ?? 0, s.carol.clientId, path)
        }
        #expect(try fingerprint(s.system) == before, "a refusal writes nothing")

        try await decline(s.system, s.offer.id ?? 0, s.bob.clientId, path)
        #expect(try s.system.waitlist.offer(s.offer.id ?? 0, clientId: s.bob.clientId).status == .declined)
        #expect(try Self.entries(s.system, s.bob.clientId).map(\.status) == [.waiting])
        await #expect(throws: ClinicError(.invalidTransition, .waitlistOfferClosed, "declined"), "twice") {
            try await decline(s.system, s.offer.id ?? 0, s.bob.clientId, path)
        }
        // The hold is gone and the time queued: the worker offers it to Carol, never to Bob again.
        #expect(try s.system.waitlist.work() == 1)
        let carols = try #require(try Self.offers(s.system, s.carol.clientId).first)
        #expect(carols.startsAt == Self.later && carols.doctorId == s.doctor)
        #expect(try Self.offers(s.system, s.bob.clientId).isEmpty)
    }

    @Test(arguments: Path.allCases) func leavingWithAnOpenOfferFreesItsTimeAndEndsTheEntry(_ path: Path) async throws {
        let s = try scene()
        try await leave(s.system, s.bob.id ?? 0, s.bob.clientId, path)
        #expect(try Self.entries(s.system, s.bob.clientId).isEmpty)
        #expect(try s.system.waitlist.offer(s.offer.id ?? 0, clientId: s.bob.clientId).status == .withdrawn)
        await #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, String(s.bob.id ?? 0)), "left already") {
            try await leave(s.system, s.bob.id ?? 0, s.bob.clientId, path)
        }
        #expect(try s.system.waitlist.work() == 1, "the time queued again")
        #expect(try Self.offers(s.system, s.carol.clientId).first?.startsAt == Self.later)
        // Carol leaves while waiting with no offer... after declining hers: nothing else is written.
        let carols = try #require(try Self.offers(s.system, s.carol.clientId).first)
        try await decline(s.system, carols.id ?? 0, s.carol.clientId, path)
        try await leave(s.system, s.carol.id ?? 0, s.carol.clientId, path)
        #expect(try Self.entries(s.system, s.carol.clientId).isEmpty)
        #expect(try s.system.waitlist.work() == 1, "the declined time, once; nobody waits for it")
        let anyone = try register(s.system, "dave").id ?? 0
        #expect(try s.system.appointments.createAppointment(clientId: anyone, departmentId: s.therapy, at: .instant(Self.later),
                                                            doctorId: s.doctor).clientId == anyone, "and it is free to book")
    }

    @Test(arguments: Path.allCases) func aPausedEntryResumedIsBackInLineWithNoLapses(_ path: Path) async throws {
        let s = try scene()
        for round in 1...WaitlistEntry.lapsesToPause {
            if round > 1 {
                let carols = try #require(try Self.offers(s.system, s.carol.clientId).first, "round \(round)")
                _ = try s.system.waitlist.accept(carols.id ?? 0, clientId: s.carol.clientId)
                let anna = try register(s.system, "anna\(round)").id ?? 0
                let start = Self.later.addingTimeInterval(TimeInterval(round) * 2_400)
                let visit = try s.system.appointments.createAppointment(clientId: anna, departmentId: s.therapy, at: .instant(start),
                                                                        doctorId: s.doctor)
                _ = try s.system.appointments.cancelAppointment(visit.id ?? 0, clientId: anna)
                _ = try s.system.waitlist.work()
            }
            s.clock.advance(16 * 60)
            _ = try s.system.waitlist.work()
        }
        let paused = try #require(try Self.entries(s.system, s.bob.clientId).first)
        #expect(paused.isPaused)
        let resumed = try await resume(s.system, s.bob.id ?? 0, s.bob.clientId, path)
        #expect(!resumed.isPaused && resumed.lapses == 0 && resumed.updatedAt == s.clock.now && resumed.status == .waiting)
        #expect(try Self.entries(s.system, s.bob.clientId) == [resumed], "answered as stored")
        await #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, String(s.bob.id ?? 0))) {
            _ = try await resume(s.system, s.bob.id ?? 0, s.carol.clientId, path)
        }
    }
}
