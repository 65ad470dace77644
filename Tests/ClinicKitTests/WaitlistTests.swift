import Foundation
import Testing
@testable import ClinicKit

/// The waitlist (issue 45) on the store under test: a freed time goes to the first waiting
/// patient it fits, held for them; declined or lapsed, to the next; accepted, it is booked (or
/// the later appointment moved to it). "Now" is Sunday 2026-11-22 12:00 UTC (the TestClock);
/// Monday 09:20 in Los Angeles is 17:20 UTC.
@Suite struct WaitlistTests {
    let monday0920 = utc("2026-11-23T17:20:00Z")
    let wednesday1000 = utc("2026-11-25T18:00:00Z")

    struct Scene {
        let clock: TestClock
        let system: ClinicSystem
        let therapy: Int64
        let doctor: Int64
        let anna: Int64, bob: Int64, carol: Int64, dave: Int64
    }

    func scene() throws -> Scene {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let doctor = try system.departments.getDoctorsByDepartmentId(therapy)[0].id ?? 0
        return Scene(clock: clock, system: system, therapy: therapy, doctor: doctor,
                     anna: try register(system, "anna").id ?? 0, bob: try register(system, "bob").id ?? 0,
                     carol: try register(system, "carol").id ?? 0, dave: try register(system, "dave").id ?? 0)
    }

    func messages(_ system: ClinicSystem, _ clientId: Int64) throws -> [InboxMessage] {
        try system.database.reading { tx in try Inbox.messages(tx, clientId: clientId) }
    }

    @Test func aCancelledTimeGoesToTheFirstWaitingPatientHeldForThemAndAcceptingBooksIt() async throws {
        let s = try scene()
        let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                 doctorId: s.doctor)
        let bobs = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        _ = try await s.system.waitlist.join(clientId: s.carol, .init(departmentId: s.therapy))
        #expect(bobs.status == .waiting && bobs.firstDay == "2026-11-22" && bobs.weekdays == WaitlistEntry.everyDay)
        #expect(try await s.system.waitlist.work() == 0, "nothing freed yet")

        _ = try s.system.appointments.cancelAppointment(booked.id ?? 0, clientId: s.anna)
        #expect(try await s.system.waitlist.work() == 1)
        let offers = try await s.system.waitlist.offers(clientId: s.bob)
        #expect(offers.count == 1)
        let offer = try #require(offers.first)
        #expect(offer.startsAt == monday0920 && offer.doctorId == s.doctor && offer.entryId == bobs.id)
        #expect(offer.expiresAt == s.clock.now.addingTimeInterval(15 * 60), "booking.waitlist_offer_minutes is 15 by default")
        #expect(try await s.system.waitlist.offers(clientId: s.carol).isEmpty, "one time, one offer")
        #expect(try await s.system.waitlist.entries(clientId: s.bob).first?.status == .offered)
        let message = try #require(try messages(s.system, s.bob).first)
        #expect(message.kind == .waitlist && message.body.contains("accept \(offer.id ?? 0)"))

        // Held for Bob: Dave can neither book nor hold it, and it is taken in the slots.
        #expect(expectError(.slotTaken) {
            _ = try s.system.appointments.createAppointment(clientId: s.dave, departmentId: s.therapy, at: .instant(monday0920),
                                                            doctorId: s.doctor)
        } != nil)
        #expect(expectError(.slotTaken) {
            _ = try s.system.appointments.holdSlot(clientId: s.dave, departmentId: s.therapy, doctorId: s.doctor, at: monday0920)
        } != nil)
        // Bob's own hold of another time does not release the offer's.
        _ = try s.system.appointments.holdSlot(clientId: s.bob, departmentId: s.therapy, doctorId: s.doctor,
                                               at: monday0920.addingTimeInterval(3_600))
        #expect(try await s.system.waitlist.offers(clientId: s.bob).count == 1)
        #expect(expectError(.slotTaken) {
            _ = try s.system.appointments.createAppointment(clientId: s.dave, departmentId: s.therapy, at: .instant(monday0920),
                                                            doctorId: s.doctor)
        } != nil)

        // Carol cannot accept Bob's offer; Bob can, and the time is his.
        #expect(expectError(.notFound) { _ = try s.system.waitlist.accept(offer.id ?? 0, clientId: s.carol) } != nil)
        let appointment = try await s.system.waitlist.accept(offer.id ?? 0, clientId: s.bob)
        #expect(appointment.clientId == s.bob && appointment.startsAt == monday0920 && appointment.doctorId == s.doctor)
        #expect(try s.system.waitlist.offer(offer.id ?? 0, clientId: s.bob).status == .accepted)
        #expect(try await s.system.waitlist.entries(clientId: s.bob).isEmpty, "a booked entry is done")
        #expect(try await s.system.waitlist.entries(clientId: s.carol).map(\.status) == [.waiting])
        let twice = expectError(.invalidTransition) { _ = try s.system.waitlist.accept(offer.id ?? 0, clientId: s.bob) }
        #expect(twice?.message(in: .ru) == "Это предложение уже принято: ничего не записано.", "the status in the reader's language")
        #expect(twice?.message(in: .en) == "This offer is accepted already: nothing was booked.")
    }

    @Test func aDeclinedOrLapsedOfferGoesToTheNextInLineAndNeverTwiceToOneEntry() async throws {
        let s = try scene()
        let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                 doctorId: s.doctor)
        // The front desk's priority goes first; the same priority in the order of joining.
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        _ = try await s.system.waitlist.join(clientId: s.carol, .init(departmentId: s.therapy, priority: 5), staffId: 1)
        _ = try await s.system.waitlist.join(clientId: s.dave, .init(departmentId: s.therapy, priority: 5))
        #expect(try await s.system.waitlist.entries(clientId: s.dave).first?.priority == 0, "a patient cannot raise their own priority")
        _ = try s.system.appointments.cancelAppointment(booked.id ?? 0, clientId: s.anna)
        try await s.system.waitlist.work()
        let first = try await #require(try s.system.waitlist.offers(clientId: s.carol).first)
        try await s.system.waitlist.decline(first.id ?? 0, clientId: s.carol)
        #expect(try await s.system.waitlist.entries(clientId: s.carol).first?.status == .waiting)
        try await s.system.waitlist.work()
        let second = try await #require(try s.system.waitlist.offers(clientId: s.bob).first, "declined: the next in line")
        #expect(second.startsAt == monday0920)
        // Bob lets it lapse: 16 minutes on it is Dave's.
        s.clock.advance(16 * 60)
        #expect(await expectError(.tooLate) { _ = try s.system.waitlist.accept(second.id ?? 0, clientId: s.bob) } != nil)
        try await s.system.waitlist.work()
        #expect(try s.system.waitlist.offer(second.id ?? 0, clientId: s.bob).status == .lapsed)
        let third = try await #require(try s.system.waitlist.offers(clientId: s.dave).first)
        #expect(third.startsAt == monday0920)
        try await s.system.waitlist.decline(third.id ?? 0, clientId: s.dave)
        // Everyone has had this time once: nobody is offered it again, and it is free to book.
        try await s.system.waitlist.work()
        for patient in [s.bob, s.carol, s.dave] { #expect(try await s.system.waitlist.offers(clientId: patient).isEmpty) }
        let anyone = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                 doctorId: s.doctor)
        #expect(anyone.startsAt == monday0920)
    }

    /// A patient's waitlist read awaited (`WaitlistReadsStore`) is the synchronous one: entries,
    /// offers and the overview's places, while an offer is open, once an entry's last day is past
    /// and once the appointment an entry waits to come before is cancelled.
    @Test func theWaitlistReadAwaitedIsTheSeams() async throws {
        let s = try scene()
        /// The entries and offers by the seam, and each one's department with its clinic's id.
        func bySeam(_ id: Int64) throws -> ([WaitlistEntry], [WaitlistOffer], [Int64: [Int64?]]) {
            let entries = try s.system.waitlist.entries(clientId: id), offers = try s.system.waitlist.offers(clientId: id)
            var places: [Int64: [Int64?]] = [:]
            for departmentId in Set(entries.map(\.departmentId) + offers.map(\.departmentId)) {
                places[departmentId] = [departmentId, try s.system.departments.getDepartmentById(departmentId).clinicId]
            }
            return (entries, offers, places)
        }
        func same(_ id: Int64, _ note: Comment) async throws {
            let (entries, offers, places) = try bySeam(id)
            #expect(try await s.system.waitlist.entries(clientId: id) == entries, note)
            #expect(try await s.system.waitlist.offers(clientId: id) == offers, note)
            let awaited = try await s.system.waitlist.overview(clientId: id)
            #expect(awaited.entries == entries && awaited.offers == offers, note)
            #expect(awaited.places.mapValues { [$0.department.id, $0.clinic.id] } == places, note)
        }
        func cancel(_ id: Int64?, _ clientId: Int64) throws { _ = try s.system.appointments.cancelAppointment(id ?? 0, clientId: clientId) }
        func work() async throws { _ = try await s.system.waitlist.work() }
        func join(_ clientId: Int64, _ request: WaitlistController.Request) throws { _ = try s.system.waitlist.join(clientId: clientId, request) }
        let annas = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                doctorId: s.doctor)
        let daves = try s.system.appointments.createAppointment(clientId: s.dave, departmentId: s.therapy, at: .instant(wednesday1000),
                                                                doctorId: s.doctor)
        try join(s.bob, .init(departmentId: s.therapy))
        try join(s.carol, .init(departmentId: s.therapy, to: "2026-11-23"))
        try join(s.dave, .init(departmentId: s.therapy, appointmentId: daves.id))
        for patient in [s.anna, s.bob, s.carol, s.dave] { try await same(patient, "waiting") }
        try cancel(annas.id, s.anna)
        try await work()
        #expect(try await s.system.waitlist.offers(clientId: s.bob).count == 1)
        for patient in [s.bob, s.carol, s.dave] { try await same(patient, "an offer open") }
        // Tuesday: Carol's last day is past; Dave's appointment cancelled: nothing comes before it.
        s.clock.advance(2 * 86_400)
        try cancel(daves.id, s.dave)
        #expect(try await s.system.waitlist.entries(clientId: s.carol).isEmpty)
        #expect(try await s.system.waitlist.entries(clientId: s.dave).isEmpty)
        #expect(try await s.system.waitlist.offers(clientId: s.bob).isEmpty, "the offer ran out")
        for patient in [s.bob, s.carol, s.dave] { try await same(patient, "over") }
    }

    @Test func anEarlierTimeMovesTheLaterAppointmentAndFreesItForTheNext() async throws {
        let s = try scene()
        let annas = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                doctorId: s.doctor)
        let bobs = try s.system.appointments.createAppointment(clientId: s.bob, departmentId: s.therapy, at: .instant(wednesday1000),
                                                               doctorId: s.doctor, notes: "knee")
        let entry = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy, appointmentId: bobs.id))
        #expect(entry.lastDay == "2026-11-25", "an earlier time: the window ends on the appointment's day")
        _ = try await s.system.waitlist.join(clientId: s.carol, .init(departmentId: s.therapy))
        _ = try s.system.appointments.cancelAppointment(annas.id ?? 0, clientId: s.anna)
        try await s.system.waitlist.work()
        let offer = try await #require(try s.system.waitlist.offers(clientId: s.bob).first)
        let moved = try await s.system.waitlist.accept(offer.id ?? 0, clientId: s.bob)
        #expect(moved.id == bobs.id && moved.startsAt == monday0920 && moved.notes == "knee", "the same appointment, moved")
        #expect(try await s.system.appointments.getAppointmentsByClientId(s.bob).count == 1)
        // Wednesday is free now, and Carol is offered it.
        try await s.system.waitlist.work()
        #expect(try await s.system.waitlist.offers(clientId: s.carol).first?.startsAt == wednesday1000)
    }

    /// Issue 55 (A4): an "earlier time" offer goes when its appointment moves to before the
    /// offered time or ends: its time is free at once, and accepting it neither moves the visit
    /// later nor books a new one.
    @Test func anEarlierTimeOfferIsWithdrawnWhenItsAppointmentMovesEarlierOrEnds() async throws {
        for ending in [false, true] {
            let s = try scene()
            let annas = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                    doctorId: s.doctor)
            let bobs = try s.system.appointments.createAppointment(clientId: s.bob, departmentId: s.therapy, at: .instant(wednesday1000),
                                                                   doctorId: s.doctor)
            _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy, appointmentId: bobs.id))
            _ = try await s.system.waitlist.join(clientId: s.carol, .init(departmentId: s.therapy))
            _ = try s.system.appointments.cancelAppointment(annas.id ?? 0, clientId: s.anna)
            try await s.system.waitlist.work()
            let offer = try await #require(try s.system.waitlist.offers(clientId: s.bob).first)
            #expect(offer.startsAt == monday0920)
            if ending {
                _ = try s.system.appointments.cancelAppointment(bobs.id ?? 0, clientId: s.bob)
            } else {
                // Monday 09:00, before the offered 09:20.
                _ = try s.system.appointments.rescheduleAppointment(bobs.id ?? 0, clientId: s.bob, to: .instant(monday0920.addingTimeInterval(-1200)))
            }
            #expect(try s.system.waitlist.offer(offer.id ?? 0, clientId: s.bob).status == .withdrawn, "ending: \(ending)")
            #expect(expectError(.invalidTransition) { _ = try s.system.waitlist.accept(offer.id ?? 0, clientId: s.bob) } != nil)
            let visits = try await s.system.appointments.getAppointmentsByClientId(s.bob)
            #expect(visits.count == (ending ? 0 : 1) && visits.allSatisfy { $0.startsAt < monday0920 }, "\(visits)")
            // The time is free at once: nobody's hold stands in the way of a booking.
            let daves = try s.system.appointments.createAppointment(clientId: s.dave, departmentId: s.therapy, at: .instant(monday0920),
                                                                    doctorId: s.doctor)
            #expect(daves.startsAt == monday0920)
        }
    }

    @Test func aTimeOutsideTheEntrysDaysHoursOrWeekdaysIsNotOffered() async throws {
        let s = try scene()
        let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                 doctorId: s.doctor)
        // Monday 09:20 in Los Angeles: Bob waits on Tuesdays, Carol in the afternoon, Dave from Tuesday on.
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy, weekdays: [2]))
        _ = try await s.system.waitlist.join(clientId: s.carol, .init(departmentId: s.therapy, hoursFrom: "13:00", hoursTo: "17:00"))
        _ = try await s.system.waitlist.join(clientId: s.dave, .init(departmentId: s.therapy, from: "2026-11-24"))
        _ = try s.system.appointments.cancelAppointment(booked.id ?? 0, clientId: s.anna)
        try await s.system.waitlist.work()
        for patient in [s.bob, s.carol, s.dave] { #expect(try await s.system.waitlist.offers(clientId: patient).isEmpty) }
        // Leaving takes the entry off the list.
        let entry = try await #require(try s.system.waitlist.entries(clientId: s.bob).first)
        try await s.system.waitlist.leave(entry.id ?? 0, clientId: s.bob)
        #expect(try await s.system.waitlist.entries(clientId: s.bob).isEmpty)
        #expect(expectError(.notFound) { try s.system.waitlist.leave(entry.id ?? 0, clientId: s.bob) } != nil)
    }

    @Test func badRequestsAreRefusedAndChangeNothing() async throws {
        let s = try scene()
        let cardiology = try department(s.system, "LA1", "cardiology").id ?? 0
        let before = try fingerprint(s.system)
        let refusals: [(ClinicError.Code, WaitlistController.Request)] = [
            (.invalidInput, .init(departmentId: s.therapy, from: "2026-11-01", to: "2026-11-20")),
            (.invalidInput, .init(departmentId: s.therapy, from: "2026-12-10", to: "2026-12-01")),
            (.invalidInput, .init(departmentId: s.therapy, to: "2029-01-01")),
            (.invalidInput, .init(departmentId: s.therapy, from: "2026-13-01")),
            (.invalidInput, .init(departmentId: s.therapy, hoursFrom: "22:00", hoursTo: "02:00")),
            (.invalidInput, .init(departmentId: s.therapy, hoursFrom: "09:00")),
            (.invalidInput, .init(departmentId: s.therapy, hoursFrom: "9", hoursTo: "10:00")),
            (.invalidInput, .init(departmentId: s.therapy, weekdays: [0, 8])),
            (.invalidInput, .init(departmentId: s.therapy, weekdays: [])),  // issue 55 (A10): none is not every day
            (.notFound, .init(departmentId: 999_999)),
            (.notFound, .init(departmentId: s.therapy, doctorId: 999_999)),
            (.invalidInput, .init(departmentId: s.therapy, appointmentId: 999_999)),
        ]
        for (code, request) in refusals {
            #expect(expectError(code) { _ = try s.system.waitlist.join(clientId: s.bob, request) } != nil, "\(request)")
        }
        // A visit type of another department.
        let cardiologyVisit = try s.system.database.writing { tx in
            try tx.insertVisitType(departmentId: cardiology, nameEn: "ECG", nameRu: "ЭКГ", durationMinutes: 20, priceCents: nil)
        }
        let afterVisitType = try fingerprint(s.system)
        #expect(expectError(.notFound) {
            _ = try s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy, visitTypeId: cardiologyVisit))
        } != nil)
        #expect(try fingerprint(s.system) == afterVisitType, "refusals change nothing")
        #expect(before != afterVisitType)
        // Twice at one department; past the number of waitlists a patient may be on.
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        #expect(await expectError(.alreadyWaiting) { _ = try s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy)) } != nil)
        _ = try await s.system.appointments.setBookingRule("booking.waitlist_entries", to: "1")
        #expect(expectError(.limitReached) { _ = try s.system.waitlist.join(clientId: s.bob, .init(departmentId: cardiology)) } != nil)
        // Someone else's offer or entry, or none.
        #expect(expectError(.notFound) { _ = try s.system.waitlist.accept(424_242, clientId: s.bob) } != nil)
        #expect(expectError(.notFound) { try s.system.waitlist.decline(424_242, clientId: s.bob) } != nil)
        let bobs = try await #require(try s.system.waitlist.entries(clientId: s.bob).first)
        #expect(expectError(.notFound) { try s.system.waitlist.leave(bobs.id ?? 0, clientId: s.carol) } != nil)
    }

    @Test func theFrontDeskSeesWhoWaitsPutsAPatientOnWithAPriorityAndTakesThemOff() async throws {
        let s = try scene()
        let la1 = try clinic(s.system, "LA1").id ?? 0, la2 = try clinic(s.system, "LA2").id ?? 0
        let desk = try s.system.staff.addStaff(StaffInput(login: "desk-a", name: "Sam", surname: "Lee", role: .receptionist,
                                                          clinicId: la1, doctorId: nil, password: "correct-horse-42"))
        let elsewhere = try s.system.staff.addStaff(StaffInput(login: "desk-b", name: "Sam", surname: "Lee", role: .receptionist,
                                                               clinicId: la2, doctorId: nil, password: "correct-horse-42"))
        let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                 doctorId: s.doctor)
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        // Carol phones: the desk puts her on, ahead of Bob.
        let carols = try await s.system.staff.addToWaitlist(desk, patientLogin: "carol", .init(departmentId: s.therapy, priority: 10),
                                                      note: "Mornings only; call her mobile first")
        #expect(carols.priority == 10 && carols.staffId == desk.id)
        #expect(try await s.system.staff.waitlist(desk).first?.note == "Mornings only; call her mobile first")
        #expect(try storedRows(s.system, "SELECT note FROM waitlist_entries").allSatisfy {
            !($0.columns["note"] ?? "").contains(Data("Mornings".utf8).map { String(format: "%02x", $0) }.joined())
        }, "the note is sealed")
        let before = try fingerprint(s.system)
        #expect(expectError(.invalidInput) {
            _ = try s.system.staff.changeWaitlistEntry(desk, entryId: carols.id ?? 0, priority: 11,
                                                       note: String(repeating: "x", count: 1001))
        } != nil)
        #expect(try fingerprint(s.system) == before, "a refused change changes nothing, the priority neither")
        _ = try await s.system.staff.changeWaitlistEntry(desk, entryId: carols.id ?? 0, priority: nil, note: "Afternoons too")
        #expect(try await s.system.staff.waitlist(desk).first?.note == "Afternoons too")
        #expect(expectError(.invalidInput) {
            _ = try s.system.staff.addToWaitlist(desk, patientLogin: "dave", .init(departmentId: s.therapy, priority: Int.max))
        } != nil, "a priority the database could not hold is refused, not a storage error")
        #expect(expectError(.notFound) {
            _ = try s.system.staff.addToWaitlist(elsewhere, patientLogin: "dave", .init(departmentId: s.therapy))
        } != nil, "another clinic's department")
        let listed = try await s.system.staff.waitlist(desk, departmentId: s.therapy)
        #expect(listed.map(\.entry.clientId) == [s.carol, s.bob] && listed.first?.patientName == "Anna Smith")
        #expect(try await s.system.staff.waitlist(elsewhere).isEmpty, "another clinic sees nobody")
        // Bob is moved up: the freed time is his.
        let bobs = try #require(listed.last?.entry.id)
        _ = try s.system.staff.prioritizeWaitlistEntry(desk, entryId: bobs, priority: 20)
        #expect(expectError(.invalidInput) { _ = try s.system.staff.prioritizeWaitlistEntry(desk, entryId: bobs, priority: 5000) } != nil)
        #expect(await expectError(.notFound) { _ = try s.system.staff.prioritizeWaitlistEntry(elsewhere, entryId: bobs, priority: 1) } != nil)
        _ = try s.system.appointments.cancelAppointment(booked.id ?? 0, clientId: s.anna)
        try await s.system.waitlist.work()
        #expect(try await s.system.waitlist.offers(clientId: s.bob).count == 1)
        #expect(try await s.system.waitlist.offers(clientId: s.carol).isEmpty)
        // Taken off by the desk: his offer is withdrawn and goes to Carol.
        try await s.system.staff.removeFromWaitlist(desk, entryId: bobs)
        try await s.system.waitlist.work()
        #expect(try await s.system.waitlist.offers(clientId: s.bob).isEmpty)
        #expect(try await s.system.waitlist.offers(clientId: s.carol).first?.startsAt == monday0920)
        #expect(try storedInt(s.system, "SELECT count(*) FROM audit_events WHERE action LIKE 'waitlist.%'") == 4)
    }

    /// The desk's join by both paths (the CLI's seam, a server's awaited
    /// `FrontDeskChangesStore.deskJoinWaitlist`): the same entry, note and audit row; the same
    /// refusals, which write nothing.
    @Test func theFrontDesksJoinAwaitedIsTheBlockingOne() async throws {
        func story(awaited: Bool) async throws -> (entry: WaitlistEntry, note: String?, refusals: [ClinicError.Code?], audits: Int?) {
            let s = try scene()
            let la1 = try clinic(s.system, "LA1").id ?? 0, la2 = try clinic(s.system, "LA2").id ?? 0
            func desk(_ login: String, _ clinicId: Int64) throws -> StaffMember {
                try s.system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: .receptionist, clinicId: clinicId,
                                                       doctorId: nil, password: "correct-horse-42"))
            }
            let here = try desk("desk-a", la1), elsewhere = try desk("desk-b", la2)
            func add(_ member: StaffMember, login: String? = nil, id: Int64? = nil, _ request: WaitlistController.Request,
                     note: String? = nil) async throws -> WaitlistEntry {
                if awaited { return try await s.system.staff.addToWaitlist(member, patientLogin: login, patientId: id, request, note: note) }
                return try { try s.system.staff.addToWaitlist(member, patientLogin: login, patientId: id, request, note: note) }()
            }
            let before = try fingerprint(s.system)
            var refusals: [ClinicError.Code?] = []
            for attempt in [{ _ = try await add(here, login: "dave", .init(departmentId: s.therapy, priority: Int.max)) },
                            { _ = try await add(elsewhere, login: "dave", .init(departmentId: s.therapy)) },
                            { _ = try await add(here, id: s.dave, .init(departmentId: s.therapy)) },
                            { _ = try await add(here, login: "nobody", .init(departmentId: s.therapy)) },
                            { _ = try await add(here, .init(departmentId: s.therapy)) },
                            { _ = try await add(here, login: "dave", .init(departmentId: s.therapy), note: String(repeating: "x", count: 1001)) }]
                as [() async throws -> Void] {
                do { try await attempt(); refusals.append(nil) } catch let error as ClinicError { refusals.append(error.code) }
            }
            #expect(try fingerprint(s.system) == before, "a refusal writes nothing")
            let entry = try await add(here, login: "carol", .init(departmentId: s.therapy, priority: 10), note: "Mornings only")
            let note = try { try s.system.staff.waitlist(here).first?.note }()
            return (entry, note, refusals, try storedInt(s.system, "SELECT count(*) FROM audit_events WHERE action = 'waitlist.add'"))
        }
        let seam = try await story(awaited: false), awaited = try await story(awaited: true)
        #expect(awaited.entry == seam.entry && awaited.note == seam.note && awaited.refusals == seam.refusals && awaited.audits == seam.audits)
        #expect(awaited.entry.priority == 10 && awaited.entry.status == .waiting && awaited.entry.staffId != nil)
        #expect(awaited.note == "Mornings only" && awaited.audits == 1)
        // A priority out of range, another clinic's department, an id that is not the clinic's
        // patient, a login nobody has, no patient named, a note too long.
        #expect(awaited.refusals == [.invalidInput, .notFound, .notFound, .notFound, .invalidInput, .invalidInput])
    }

    /// Issue 56: the new hours by both paths, the CLI's seam and a server's awaited store.
    @Test(arguments: [false, true]) func newHoursAndAHoldThatRanOutFreeTimesForWhoeverWaits(awaited: Bool) async throws {
        let s = try scene()
        let admin = try { try s.system.staff.addStaff(StaffInput(login: "boss-wl", name: "Ann", surname: "Wu", role: .clinicAdmin,
                                                                 clinicId: try clinic(s.system, "LA1").id ?? 0, doctorId: nil,
                                                                 password: "correct-horse-42")) }()
        func setHours(weekday: Int) async throws {
            let hours = [DoctorSchedule.Interval(startMinute: 600, endMinute: 660, slotMinutes: 30)]
            if awaited { _ = try await s.system.staff.setHours(admin, doctorId: s.doctor, weekday: weekday, intervals: hours) } else {
                _ = try { try s.system.staff.setHours(admin, doctorId: s.doctor, weekday: weekday, intervals: hours) }()
            }
        }
        // Nobody waits: new hours queue nothing.
        try await setHours(weekday: 6)
        #expect(try storedInt(s.system, "SELECT count(*) FROM waitlist_freed") == 0)

        _ = try { try s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy, doctorId: s.doctor)) }()
        // Sundays 10:00-11:00 are new: each new slot within the days Bob waits for is queued once,
        // the Saturdays given before are not.
        try await setHours(weekday: 7)
        let queued = try storedInt(s.system, "SELECT count(*) FROM waitlist_freed") ?? 0
        #expect((2 * 8)...(2 * 10) ~= queued, "two slots on each Sunday of the next 62 days: \(queued)")
        try await afterTheNewHours(s)
    }

    /// The rest of `newHoursAndAHoldThatRanOutFreeTimesForWhoeverWaits`, on the seam.
    func afterTheNewHours(_ s: Scene) async throws {
        try await s.system.waitlist.work()
        let offer = try await #require(try s.system.waitlist.offers(clientId: s.bob).first)
        let la = try #require(TimeZone(identifier: "America/Los_Angeles"))
        let local = LocalDateTime.of(offer.startsAt, in: la)
        #expect(local.weekday == 7 && local.minuteOfDay >= 600 && local.minuteOfDay < 660, "\(local.dayText) \(local.minuteOfDay)")
        try await s.system.waitlist.decline(offer.id ?? 0, clientId: s.bob)
        _ = try await s.system.waitlist.work()
        try await s.system.waitlist.leave(try #require(try s.system.waitlist.entries(clientId: s.bob).first?.id), clientId: s.bob)

        // A patient's hold that runs out frees its time for whoever waits.
        let carols = try await s.system.waitlist.join(clientId: s.carol, .init(departmentId: s.therapy, to: "2026-11-23"))
        let hold = try s.system.appointments.holdSlot(clientId: s.dave, departmentId: s.therapy, doctorId: s.doctor, at: monday0920)
        #expect(try await s.system.waitlist.work() >= 0)
        #expect(try await s.system.waitlist.offers(clientId: s.carol).isEmpty, "held, not free")
        s.clock.advance(301)
        #expect(try await s.system.waitlist.work() >= 1)
        let carolsOffer = try await #require(try s.system.waitlist.offers(clientId: s.carol).first)
        #expect(carolsOffer.startsAt == hold.startsAt && carolsOffer.entryId == carols.id)
    }

    @Test func anEntryWhoseDaysArePastOrWhoseAppointmentIsGoneNoLongerCountsOrShows() async throws {
        let s = try scene()
        _ = try await s.system.appointments.setBookingRule("booking.waitlist_entries", to: "2")
        let cardiology = try department(s.system, "LA1", "cardiology").id ?? 0
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy, to: "2026-11-24"))
        let bobs = try s.system.appointments.createAppointment(clientId: s.bob, departmentId: cardiology,
                                                               at: .instant(wednesday1000))
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: cardiology, appointmentId: bobs.id))
        let dermatology = try department(s.system, "LA1", "neurology").id ?? 0
        #expect(expectError(.limitReached) { _ = try s.system.waitlist.join(clientId: s.bob, .init(departmentId: dermatology)) } != nil)
        // Three days on, the first entry's days are past; and Bob cancels the appointment the other was for.
        s.clock.advance(3 * 86_400)
        _ = try s.system.appointments.cancelAppointment(bobs.id ?? 0, clientId: s.bob)
        #expect(try await s.system.waitlist.entries(clientId: s.bob).isEmpty)
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: dermatology))
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        #expect(try await s.system.waitlist.entries(clientId: s.bob).count == 2, "the two that were over neither count nor block")
    }

    /// Issue 55 (A2): a decline and an accept of one offer at once (on PostgreSQL, two
    /// connections): the first answer wins and the other is `invalid_transition`; the offer
    /// ends as the one that was answered "yes" says, never declined and booked both.
    @Test func aDeclineAndAnAcceptAtOnceHaveOneWinnerAndTheLoserIsTold() async throws {
        let s = try scene()
        for round in 0..<4 {
            let start = monday0920.addingTimeInterval(TimeInterval(round * 20 * 60))
            let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(start),
                                                                     doctorId: s.doctor)
            let waiting = try register(s.system, "racer\(round)").id ?? 0
            _ = try await s.system.waitlist.join(clientId: waiting, .init(departmentId: s.therapy))
            _ = try s.system.appointments.cancelAppointment(booked.id ?? 0, clientId: s.anna)
            #expect(try await s.system.waitlist.work() >= 1)
            let offer = try await #require(try s.system.waitlist.offers(clientId: waiting).first)
            let result = atOnce(2) { index in
                if index == 0 { try s.system.waitlist.decline(offer.id ?? 0, clientId: waiting) } else {
                    _ = try s.system.waitlist.accept(offer.id ?? 0, clientId: waiting)
                }
            }
            #expect(Set(result) == ["ok", "invalid_transition"], "round \(round) (decline, accept): \(result)")
            let status = try s.system.waitlist.offer(offer.id ?? 0, clientId: waiting).status
            #expect(status == (result[1] == "ok" ? .accepted : .declined), "round \(round): \(result), \(status)")
            let visits = try await s.system.appointments.getAppointmentsByClientId(waiting)
            #expect(visits.count == (status == .accepted ? 1 : 0), "round \(round)")
        }
    }

    /// Issue 55 (A3): an entry whose offer lapses goes to the back of its line; after two lapses
    /// it is paused (no time offered to it, nobody's time held for it) until its patient
    /// resumes it.
    @Test func anUnansweredOfferSendsItsEntryBackAndTwoPauseIt() async throws {
        let s = try scene()
        func freed(_ start: Date) async throws {
            let visit = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(start),
                                                                    doctorId: s.doctor)
            _ = try s.system.appointments.cancelAppointment(visit.id ?? 0, clientId: s.anna)
            try await s.system.waitlist.work()
        }
        func lapse() async throws {
            s.clock.advance(16 * 60)
            try await s.system.waitlist.work()
        }
        let bobs = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        _ = try await s.system.waitlist.join(clientId: s.carol, .init(departmentId: s.therapy))
        try await freed(monday0920)
        #expect(try await s.system.waitlist.offers(clientId: s.bob).first?.startsAt == monday0920, "Bob joined first")
        try await lapse()
        let carols = try await #require(try s.system.waitlist.offers(clientId: s.carol).first)
        try await s.system.waitlist.decline(carols.id ?? 0, clientId: s.carol)
        // The next time: Carol first now, Bob having gone to the back of the line.
        try await freed(monday0920.addingTimeInterval(40 * 60))
        #expect(try await s.system.waitlist.offers(clientId: s.carol).first?.startsAt == monday0920.addingTimeInterval(40 * 60))
        #expect(try await s.system.waitlist.offers(clientId: s.bob).isEmpty)
        let second = try await #require(try s.system.waitlist.offers(clientId: s.carol).first)
        _ = try await s.system.waitlist.accept(second.id ?? 0, clientId: s.carol)
        // Bob's second lapse pauses his entry: a third time is held for nobody.
        try await freed(monday0920.addingTimeInterval(80 * 60))
        #expect(try await s.system.waitlist.offers(clientId: s.bob).count == 1)
        try await lapse()
        let paused = try await #require(try s.system.waitlist.entries(clientId: s.bob).first)
        #expect(paused.isPaused && paused.lapses == 2 && WaitlistEntryJSON(paused).paused)
        try await freed(monday0920.addingTimeInterval(120 * 60))
        #expect(try await s.system.waitlist.offers(clientId: s.bob).isEmpty, "paused: nothing offered")
        let walkIn = try s.system.appointments.createAppointment(clientId: s.dave, departmentId: s.therapy,
                                                                 at: .instant(monday0920.addingTimeInterval(120 * 60)), doctorId: s.doctor)
        #expect(walkIn.clientId == s.dave, "and the time is free for anyone at once")
        // Bob says he still wants a time: back in line, and offered the next one.
        let resumed = try await s.system.waitlist.resume(bobs.id ?? 0, clientId: s.bob)
        #expect(!resumed.isPaused && resumed.lapses == 0)
        #expect(expectError(.notFound) { _ = try s.system.waitlist.resume(bobs.id ?? 0, clientId: s.carol) } != nil)
        try await freed(monday0920.addingTimeInterval(140 * 60))
        #expect(try await s.system.waitlist.offers(clientId: s.bob).first?.startsAt == monday0920.addingTimeInterval(140 * 60))
    }

    /// Issue 55 (A3): the front desk can always book a time an offer holds; the offer is
    /// withdrawn, its patient waits again and is told.
    @Test(arguments: [false, true]) func theFrontDeskBooksATimeAnOfferHoldsAndThePatientOfferedItIsTold(awaited: Bool) async throws {
        let s = try scene()
        let la1 = try clinic(s.system, "LA1").id ?? 0
        let desk = try s.system.staff.addStaff(StaffInput(login: "desk-w", name: "Sam", surname: "Lee", role: .receptionist,
                                                          clinicId: la1, doctorId: nil, password: "correct-horse-42"))
        let visit = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                doctorId: s.doctor)
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        _ = try s.system.appointments.cancelAppointment(visit.id ?? 0, clientId: s.anna)
        try await s.system.waitlist.work()
        let offer = try #require(try await s.system.waitlist.offers(clientId: s.bob).first)
        let booked = awaited
            ? try await s.system.staff.book(desk, patientLogin: "dave", departmentId: s.therapy, at: .instant(monday0920), doctorId: s.doctor)
            : try { try s.system.staff.book(desk, patientLogin: "dave", departmentId: s.therapy, at: .instant(monday0920),
                                            doctorId: s.doctor) }()
        #expect(try await s.system.waitlist.work() == 1, "the withdrawn time was queued, and is taken: nobody can have it")
        #expect(booked.clientId == s.dave && booked.startsAt == monday0920)
        #expect(try s.system.waitlist.offer(offer.id ?? 0, clientId: s.bob).status == .withdrawn)
        #expect(try await s.system.waitlist.entries(clientId: s.bob).first?.status == .waiting)
        #expect(try messages(s.system, s.bob).contains { $0.subject == "The time offered to you was booked by the clinic" })
    }
}
