import Foundation
import Testing
@testable import ClinicKit

/// A patient's waitlist changes (issue 56: `WaitlistChangesStore`) on the store under test, by
/// both paths, the synchronous seam's and the awaited one: joining, leaving, resuming,
/// declining and accepting. Their rules on plain facts are `ClinicRulesTests/WaitlistRulesTests.swift`'s.
@Suite struct AwaitedWaitlistTests {
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case seam, awaited
        var testDescription: String { rawValue }
    }

    static let later = utc("2026-11-23T17:20:00Z")

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

    func accept(_ system: ClinicSystem, _ id: Int64, _ clientId: Int64, _ path: Path) async throws -> Appointment {
        switch path {
        case .seam: try Self.seam { try system.waitlist.accept(id, clientId: clientId) }
        case .awaited: try await system.waitlist.accept(id, clientId: clientId)
        }
    }

    func join(_ system: ClinicSystem, _ clientId: Int64, _ request: WaitlistController.Request, _ path: Path) async throws -> WaitlistEntry {
        switch path {
        case .seam: try Self.seam { try system.waitlist.join(clientId: clientId, request) }
        case .awaited: try await system.waitlist.join(clientId: clientId, request)
        }
    }

    /// A join with an `Idempotency-Key` (the API's), awaited: made once and its answer kept in
    /// its transaction; a retry replays it; a refusal is kept as the refusal (and writes
    /// nothing of itself); the key with another request is `idempotency_key_reused`.
    @Test func aKeyedJoinIsMadeOnceAndItsAnswerOrRefusalKept() async throws {
        let system = try makeSystem(clock: TestClock())
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let anna = try register(system, "anna").id ?? 0
        let store = system.makeIdempotencyStore()
        func keeping(_ key: String, _ fingerprint: String = "f") -> AnswerKeeping<WaitlistEntry> {
            AnswerKeeping(store: store, key: key, fingerprint: fingerprint) { outcome in
                switch outcome {
                case .success(let entry): .init(status: 201, body: Data("entry \(entry.id ?? 0)".utf8))
                case .failure(let error): .init(status: 409, body: Data(error.code.rawValue.utf8))
                }
            }
        }
        let first = try await system.waitlist.join(clientId: anna, .init(departmentId: therapy), keeping: keeping("j1"))
        let stored = try Self.entries(system, anna)
        #expect(first.status == 201 && !first.replayed && stored.count == 1)
        #expect(String(decoding: first.body, as: UTF8.self) == "entry \(stored[0].id ?? 0)")
        let again = try await system.waitlist.join(clientId: anna, .init(departmentId: therapy), keeping: keeping("j1"))
        #expect(again.replayed && again.body == first.body)
        #expect(try Self.entries(system, anna) == stored, "made once")

        // Another key: refused (already waiting), the refusal kept, nothing else written.
        let refused = try await system.waitlist.join(clientId: anna, .init(departmentId: therapy), keeping: keeping("j2"))
        #expect(refused.status == 409 && String(decoding: refused.body, as: UTF8.self) == "already_waiting" && !refused.replayed)
        #expect(try Self.entries(system, anna) == stored)
        #expect(try await system.waitlist.join(clientId: anna, .init(departmentId: therapy), keeping: keeping("j2")).replayed)
        await #expect(throws: ClinicError(.idempotencyKeyReused, .idempotencyKeyOtherRequest)) {
            _ = try await system.waitlist.join(clientId: anna, .init(departmentId: therapy), keeping: keeping("j1", "other"))
        }
        // A request refused before any store is asked keeps nothing.
        await #expect(throws: ClinicError.self) {
            _ = try await system.waitlist.join(clientId: anna, .init(departmentId: therapy, hoursFrom: "09:00"), keeping: keeping("j3"))
        }
        #expect(try storedInt(system, "SELECT count(*) FROM idempotency_keys") == 2)
    }

    @Test(arguments: Path.allCases) func aJoinIsStoredOnceAndEndsTheEntriesThatAreOver(_ path: Path) async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let therapy = try department(system, "LA1", "therapy").id ?? 0, cardiology = try department(system, "LA1", "cardiology").id ?? 0
        let anna = try register(system, "anna").id ?? 0
        let before = try fingerprint(system)
        for (request, code) in [(WaitlistController.Request(departmentId: 999_999), ClinicError.Code.notFound),
                                (.init(departmentId: therapy, hoursFrom: "09:00"), .invalidInput),
                                (.init(departmentId: therapy, appointmentId: 424_242), .invalidInput)] {
            do {
                _ = try await join(system, anna, request, path)
                Issue.record("\(request) was stored")
            } catch let error as ClinicError {
                #expect(error.code == code, "\(request)")
            }
        }
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await join(system, 99_999, .init(departmentId: therapy), path) }
        #expect(try fingerprint(system) == before, "a refusal writes nothing")

        // Until tomorrow (Monday) at therapy, with the hours of a morning.
        let first = try await join(system, anna, .init(departmentId: therapy, to: "2026-11-23", hoursFrom: "09:00", hoursTo: "12:00"), path)
        #expect(first.id != nil && first.firstDay == "2026-11-22" && first.lastDay == "2026-11-23" && first.fromMinute == 540)
        #expect(try Self.entries(system, anna) == [first], "answered as stored")
        let twice = try fingerprint(system)
        await #expect(throws: ClinicError(.alreadyWaiting, .waitlistAlreadyWaiting)) { _ = try await join(system, anna, .init(departmentId: therapy), path) }
        #expect(try fingerprint(system) == twice, "the second entry at a department is refused and writes nothing")
        // Two days on, that entry is over: a join with a limit of one ends it and is stored.
        _ = try await system.appointments.setBookingRule("booking.waitlist_entries", to: "1")
        clock.advance(2 * 86_400)
        let second = try await join(system, anna, .init(departmentId: cardiology), path)
        #expect(try Self.entries(system, anna) == [second])
        await #expect(throws: ClinicError(.limitReached, .waitlistEntriesLimit, "1")) {
            _ = try await join(system, anna, .init(departmentId: therapy), path)
        }
        #expect(try system.database.reading { tx in try tx.waitlistEntry(id: first.id ?? 0)?.status } == .left)
        // An earlier time than a visit of hers: the window ends on the visit's day in the clinic's
        // zone (Wednesday 10:00 in Los Angeles), the visit read from the store as the facts.
        _ = try await system.appointments.setBookingRule("booking.waitlist_entries", to: "5")
        let doctor = try system.departments.getDoctorsByDepartmentId(therapy)[0].id ?? 0
        let visit = try system.appointments.createAppointment(clientId: anna, departmentId: therapy,
                                                              at: .instant(utc("2026-11-25T18:00:00Z")), doctorId: doctor)
        let earlier = try await join(system, anna, .init(departmentId: therapy, appointmentId: visit.id), path)
        #expect(earlier.lastDay == "2026-11-25" && earlier.beforeAppointmentId == visit.id && earlier.firstDay == "2026-11-24")
    }

    /// Bob and Carol wait at therapy; Anna's cancelled visit frees Monday 09:20 (LA), offered to Bob.
    func scene() async throws -> (clock: TestClock, system: ClinicSystem, bob: WaitlistEntry, carol: WaitlistEntry, offer: WaitlistOffer,
                            therapy: Int64, doctor: Int64) {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let doctor = try system.departments.getDoctorsByDepartmentId(therapy)[0].id ?? 0
        let anna = try register(system, "anna").id ?? 0
        let bob = try await system.waitlist.join(clientId: try register(system, "bob").id ?? 0, .init(departmentId: therapy))
        let carol = try await system.waitlist.join(clientId: try register(system, "carol").id ?? 0, .init(departmentId: therapy))
        let visit = try system.appointments.createAppointment(clientId: anna, departmentId: therapy, at: .instant(Self.later), doctorId: doctor)
        _ = try system.appointments.cancelAppointment(visit.id ?? 0, clientId: anna)
        _ = try await system.waitlist.work()
        let offer = try await #require(try system.waitlist.offers(clientId: bob.clientId).first)
        return (clock, system, bob, carol, offer, therapy, doctor)
    }

    @Test(arguments: Path.allCases) func aDeclinedOfferGoesToTheNextAndTheDeclinerWaitsAgain(_ path: Path) async throws {
        let s = try await scene()
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
        #expect(try await s.system.waitlist.work() == 1)
        let carols = try #require(try Self.offers(s.system, s.carol.clientId).first)
        #expect(carols.startsAt == Self.later && carols.doctorId == s.doctor)
        #expect(try Self.offers(s.system, s.bob.clientId).isEmpty)
    }

    @Test(arguments: Path.allCases) func leavingWithAnOpenOfferFreesItsTimeAndEndsTheEntry(_ path: Path) async throws {
        let s = try await scene()
        try await leave(s.system, s.bob.id ?? 0, s.bob.clientId, path)
        #expect(try Self.entries(s.system, s.bob.clientId).isEmpty)
        #expect(try s.system.waitlist.offer(s.offer.id ?? 0, clientId: s.bob.clientId).status == .withdrawn)
        await #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, String(s.bob.id ?? 0)), "left already") {
            try await leave(s.system, s.bob.id ?? 0, s.bob.clientId, path)
        }
        #expect(try await s.system.waitlist.work() == 1, "the time queued again")
        #expect(try Self.offers(s.system, s.carol.clientId).first?.startsAt == Self.later)
        // Carol leaves while waiting with no offer... after declining hers: nothing else is written.
        let carols = try #require(try Self.offers(s.system, s.carol.clientId).first)
        try await decline(s.system, carols.id ?? 0, s.carol.clientId, path)
        try await leave(s.system, s.carol.id ?? 0, s.carol.clientId, path)
        #expect(try Self.entries(s.system, s.carol.clientId).isEmpty)
        #expect(try await s.system.waitlist.work() == 1, "the declined time, once; nobody waits for it")
        let anyone = try register(s.system, "dave").id ?? 0
        #expect(try s.system.appointments.createAppointment(clientId: anyone, departmentId: s.therapy, at: .instant(Self.later),
                                                            doctorId: s.doctor).clientId == anyone, "and it is free to book")
    }

    @Test(arguments: Path.allCases) func aPausedEntryResumedIsBackInLineWithNoLapses(_ path: Path) async throws {
        let s = try await scene()
        for round in 1...WaitlistEntry.lapsesToPause {
            if round > 1 {
                let carols = try #require(try Self.offers(s.system, s.carol.clientId).first, "round \(round)")
                _ = try await accept(s.system, carols.id ?? 0, s.carol.clientId, path)
                let anna = try register(s.system, "anna\(round)").id ?? 0
                let start = Self.later.addingTimeInterval(TimeInterval(round) * 2_400)
                let visit = try s.system.appointments.createAppointment(clientId: anna, departmentId: s.therapy, at: .instant(start),
                                                                        doctorId: s.doctor)
                _ = try s.system.appointments.cancelAppointment(visit.id ?? 0, clientId: anna)
                _ = try await s.system.waitlist.work()
            }
            s.clock.advance(16 * 60)
            _ = try await s.system.waitlist.work()
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

    /// A receptionist of the scene's clinic (LA1) and one of another (LA2).
    static func desks(_ system: ClinicSystem) throws -> (here: StaffMember, elsewhere: StaffMember) {
        func desk(_ login: String, _ clinic: String) throws -> StaffMember {
            try system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: .receptionist,
                                                 clinicId: try ClinicKitTests.clinic(system, clinic).id ?? 0, doctorId: nil,
                                                 password: "correct-horse-42"))
        }
        return (try desk("desk-a", "LA1"), try desk("desk-b", "LA2"))
    }

    @Test(arguments: Path.allCases) func theFrontDeskTakesAnEntryOffWithItsOfferAndAuditsIt(_ path: Path) async throws {
        let s = try await scene()
        let (here, elsewhere) = try Self.desks(s.system)
        func remove(_ member: StaffMember, _ id: Int64) async throws {
            switch path {
            case .seam: try Self.seam { try s.system.staff.removeFromWaitlist(member, entryId: id, requestId: "req-1") }
            case .awaited: try await s.system.staff.removeFromWaitlist(member, entryId: id, requestId: "req-1")
            }
        }
        let before = try fingerprint(s.system)
        await #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, String(s.bob.id ?? 0)), "another clinic's entry") {
            try await remove(elsewhere, s.bob.id ?? 0)
        }
        await #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, "99999")) { try await remove(here, 99_999) }
        #expect(try fingerprint(s.system) == before, "a refusal writes nothing, no audit row either")

        try await remove(here, s.bob.id ?? 0)
        #expect(try Self.entries(s.system, s.bob.clientId).isEmpty)
        #expect(try s.system.waitlist.offer(s.offer.id ?? 0, clientId: s.bob.clientId).status == .withdrawn)
        #expect(try await s.system.waitlist.work() == 1)
        #expect(try Self.offers(s.system, s.carol.clientId).first?.startsAt == Self.later, "the time goes to the next in line")
        let log = try await s.system.clients.accessLog(clientId: s.bob.clientId)
        #expect(log.map(\.action) == ["waitlist.remove"])
        #expect(try s.system.auditCheck().problem == nil && s.system.auditCheck().broken.isEmpty, "the chain holds")
        await #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, String(s.bob.id ?? 0)), "off already") {
            try await remove(here, s.bob.id ?? 0)
        }
    }

    @Test(arguments: Path.allCases) func anAcceptedOfferIsBookedOnceAndClosesItsEntryAndHold(_ path: Path) async throws {
        let s = try await scene()
        let before = try fingerprint(s.system)
        // Refusals change nothing: another's offer, an unknown one.
        await #expect(throws: ClinicError(.notFound, .waitlistOfferNotFound, String(s.offer.id ?? 0))) {
            _ = try await accept(s.system, s.offer.id ?? 0, s.carol.clientId, path)
        }
        await #expect(throws: ClinicError(.notFound, .waitlistOfferNotFound, "99999")) { _ = try await accept(s.system, 99_999, s.bob.clientId, path) }
        #expect(try fingerprint(s.system) == before, "a refusal writes nothing")

        let booked = try await accept(s.system, s.offer.id ?? 0, s.bob.clientId, path)
        #expect(booked.id != nil && booked.clientId == s.bob.clientId && booked.startsAt == Self.later && booked.doctorId == s.doctor)
        #expect(booked.status == .scheduled && booked.departmentId == s.therapy)
        let offer = try s.system.waitlist.offer(s.offer.id ?? 0, clientId: s.bob.clientId)
        #expect(offer.status == .accepted && offer.appointmentId == booked.id)
        #expect(try s.system.database.reading { tx in try tx.waitlistEntry(id: s.bob.id ?? 0)?.status } == .booked)
        #expect(try storedInt(s.system, "SELECT count(*) FROM slot_holds") == 0, "the hold stood in the booking's place, and is gone")
        #expect(try await s.system.appointments.getAppointmentsByClientId(s.bob.clientId).map(\.id) == [booked.id])
        let once = try fingerprint(s.system)
        await #expect(throws: ClinicError(.invalidTransition, .waitlistOfferClosed, "accepted"), "twice") {
            _ = try await accept(s.system, s.offer.id ?? 0, s.bob.clientId, path)
        }
        #expect(try fingerprint(s.system) == once)
        #expect(try await s.system.waitlist.work() == 0, "nothing freed: the time is Bob's")
    }

    @Test(arguments: Path.allCases) func anOfferPastItsTimeIsRefusedAndChangesNothing(_ path: Path) async throws {
        let s = try await scene()
        s.clock.advance(s.offer.expiresAt.timeIntervalSince(s.clock.now) + 1)
        let before = try fingerprint(s.system)
        await #expect(throws: ClinicError(.tooLate, .waitlistOfferLapsed)) { _ = try await accept(s.system, s.offer.id ?? 0, s.bob.clientId, path) }
        #expect(try fingerprint(s.system) == before)
    }

    /// An earlier time than Bob's Wednesday visit: accepting moves that visit (its notes kept)
    /// rather than booking another, by both paths.
    @Test(arguments: Path.allCases) func anEarlierTimeAcceptedMovesTheLaterVisit(_ path: Path) async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let doctor = try system.departments.getDoctorsByDepartmentId(therapy)[0].id ?? 0
        let anna = try register(system, "anna").id ?? 0, bob = try register(system, "bob").id ?? 0
        let annas = try system.appointments.createAppointment(clientId: anna, departmentId: therapy, at: .instant(Self.later), doctorId: doctor)
        let bobs = try system.appointments.createAppointment(clientId: bob, departmentId: therapy, at: .instant(utc("2026-11-25T18:00:00Z")),
                                                             doctorId: doctor, notes: "knee")
        _ = try await system.waitlist.join(clientId: bob, .init(departmentId: therapy, appointmentId: bobs.id))
        _ = try system.appointments.cancelAppointment(annas.id ?? 0, clientId: anna)
        _ = try await system.waitlist.work()
        let offer = try #require(try Self.offers(system, bob).first)
        let moved = try await accept(system, offer.id ?? 0, bob, path)
        #expect(moved.id == bobs.id && moved.startsAt == Self.later && moved.notes == "knee", "the same appointment, moved")
        #expect(try await system.appointments.getAppointmentsByClientId(bob).map(\.id) == [bobs.id])
        #expect(try system.waitlist.offer(offer.id ?? 0, clientId: bob).appointmentId == bobs.id)
    }

    /// An acceptance with an `Idempotency-Key` (the API's): made once, a retry replayed; a
    /// refusal kept as the refusal.
    @Test func aKeyedAcceptanceIsMadeOnceAndItsAnswerKept() async throws {
        let s = try await scene()
        let store = s.system.makeIdempotencyStore()
        func keeping(_ key: String) -> AnswerKeeping<Appointment> {
            AnswerKeeping(store: store, key: key, fingerprint: "f") { outcome in
                switch outcome {
                case .success(let appointment): .init(status: 201, body: Data("appointment \(appointment.id ?? 0)".utf8))
                case .failure(let error): .init(status: 409, body: Data(error.code.rawValue.utf8))
                }
            }
        }
        let first = try await s.system.waitlist.accept(s.offer.id ?? 0, clientId: s.bob.clientId, keeping: keeping("a1"))
        let visits = try await s.system.appointments.getAppointmentsByClientId(s.bob.clientId)
        #expect(first.status == 201 && !first.replayed && visits.count == 1)
        #expect(String(decoding: first.body, as: UTF8.self) == "appointment \(visits[0].id ?? 0)")
        let again = try await s.system.waitlist.accept(s.offer.id ?? 0, clientId: s.bob.clientId, keeping: keeping("a1"))
        #expect(again.replayed && again.body == first.body)
        let refused = try await s.system.waitlist.accept(s.offer.id ?? 0, clientId: s.bob.clientId, keeping: keeping("a2"))
        #expect(refused.status == 409 && String(decoding: refused.body, as: UTF8.self) == "invalid_transition" && !refused.replayed)
        #expect(try await s.system.appointments.getAppointmentsByClientId(s.bob.clientId) == visits, "booked once")
    }

    /// The front desk's list (a read that writes the audit trail) by either path: the clinic's
    /// entries in the order they are offered times, with names and the note opened; one audit
    /// row per patient shown; another clinic's department refused with nothing written.
    @Test(arguments: Path.allCases) func theFrontDesksListShowsItsClinicsEntriesWithTheirAuditRows(_ path: Path) async throws {
        let s = try await scene()
        let (here, elsewhere) = try Self.desks(s.system)
        _ = try await s.system.staff.changeWaitlistEntry(here, entryId: s.carol.id ?? 0, priority: 3, note: "calls after 5", requestId: nil)
        func list(_ member: StaffMember, _ department: Int64?) async throws -> [StaffWaitlistEntry] {
            switch path {
            case .seam: try Self.seam { try s.system.staff.waitlist(member, departmentId: department, requestId: "r") }
            case .awaited: try await s.system.staff.waitlist(member, departmentId: department, requestId: "r")
            }
        }
        let before = try fingerprint(s.system)
        await #expect(throws: ClinicError(.notFound, .departmentNotFound, String(s.therapy))) { _ = try await list(elsewhere, s.therapy) }
        await #expect(throws: ClinicError(.notFound, .departmentNotFound, "99999")) { _ = try await list(here, 99_999) }
        #expect(try fingerprint(s.system) == before, "a refusal writes nothing, no audit row either")
        #expect(try await list(elsewhere, nil).isEmpty, "another clinic sees nobody")

        let listed = try await list(here, s.therapy)
        #expect(listed.map(\.entry.id) == [s.carol.id, s.bob.id], "the higher priority first")
        #expect(listed.map(\.patientName) == ["Anna Smith", "Anna Smith"], "the names opened")
        #expect(listed.map(\.note) == ["calls after 5", nil])
        for clientId in [s.bob.clientId, s.carol.clientId] {
            let log = try await s.system.clients.accessLog(clientId: clientId)
            #expect(log.filter { $0.action == "patient.read" }.count == 1, "one row for the patient shown")
        }
        #expect(try s.system.auditCheck().problem == nil && s.system.auditCheck().broken.isEmpty, "the chain holds")
    }

    @Test(arguments: Path.allCases) func theFrontDeskChangesAnEntrysPriorityAndNoteWithTheirAuditRows(_ path: Path) async throws {
        let s = try await scene()
        let (here, elsewhere) = try Self.desks(s.system)
        func change(_ member: StaffMember, _ id: Int64, priority: Int?, note: String?) async throws -> WaitlistEntry {
            switch path {
            case .seam: try Self.seam { try s.system.staff.changeWaitlistEntry(member, entryId: id, priority: priority, note: note, requestId: "r") }
            case .awaited: try await s.system.staff.changeWaitlistEntry(member, entryId: id, priority: priority, note: note, requestId: "r")
            }
        }
        let before = try fingerprint(s.system)
        await #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, String(s.bob.id ?? 0)), "another clinic's entry") {
            _ = try await change(elsewhere, s.bob.id ?? 0, priority: 5, note: nil)
        }
        await #expect(throws: ClinicError(.notFound, .waitlistEntryNotFound, "99999")) { _ = try await change(here, 99_999, priority: 5, note: nil) }
        await #expect(throws: ClinicError.invalid(.waitlistPriorityInvalid, "1001")) {
            _ = try await change(here, s.bob.id ?? 0, priority: 1_001, note: "calls back")
        }
        #expect(try fingerprint(s.system) == before, "a refusal writes nothing, no audit row either")

        s.clock.advance(60)
        let changed = try await change(here, s.bob.id ?? 0, priority: 5, note: "prefers mornings")
        #expect(changed.id == s.bob.id && changed.priority == 5 && changed.updatedAt == s.clock.now)
        let listed = try #require(try await s.system.staff.waitlist(here).first { $0.entry.id == s.bob.id })
        #expect(listed.entry == changed && listed.note == "prefers mornings", "answered as stored, the note opened")
        #expect(try storedInt(s.system, "SELECT count(*) FROM waitlist_entries WHERE note IS NOT NULL") == 1)
        let log = try await s.system.clients.accessLog(clientId: s.bob.clientId)
        #expect(log.filter { $0.action == "waitlist.priority" }.count == 2, "the priority's row and the note's")
        // The note alone, then removed: the priority kept.
        let noteOnly = try await change(here, s.bob.id ?? 0, priority: nil, note: "")
        #expect(noteOnly.priority == 5)
        #expect(try await s.system.staff.waitlist(here).first { $0.entry.id == s.bob.id }?.note == nil)
        #expect(try s.system.auditCheck().problem == nil && s.system.auditCheck().broken.isEmpty, "the chain holds")
    }
}

