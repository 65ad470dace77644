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
        let messages = try await system.clients.messages(clientId: anna).map(\.kind)
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

    /// A change with an `Idempotency-Key` as the store's one awaited transaction (`ClinicStore.perform(_:keeping:answer:)`):
    /// made once and its answer kept; the same request again replayed, changing nothing; another
    /// request under the key refused; a refusal kept with nothing of the change; two copies at
    /// once make one booking; the outcome is counted once, not at a replay.
    @Test func keptAnswersAwaited() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0, boris = try register(system, "boris").id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let told = LockedBox<[String]>([])
        system.appointments.changes.observe { operation, outcome in told.withLock { $0.append(operation + " " + outcome) } }
        let store = system.makeIdempotencyStore()
        func keeping(_ key: String, _ fingerprint: String = "f") -> AnswerKeeping<Appointment> {
            AnswerKeeping(store: store, key: key, fingerprint: fingerprint) { outcome in
                switch outcome {
                case .success(let appointment):
                    return .init(status: 201, body: Data("\(appointment.id ?? 0) \(appointment.status.rawValue) \(appointment.notes)".utf8))
                case .failure(let error):
                    return error.code == .busy ? nil : .init(status: 409, body: Data(error.code.rawValue.utf8))
                }
            }
        }
        func book(_ client: Int64, _ key: String, at time: String, doctor: Int64? = nil) async throws -> IdempotencyStore.Response {
            try await system.appointments.book(clientId: client, departmentId: therapy, at: local(time), doctorId: doctor,
                                               notes: "Knee, left", keeping: keeping(key))
        }

        let first = try await book(anna, "k1", at: "2026-11-24 09:00")
        #expect(first.status == 201 && !first.replayed)
        let id = try #require(Int64(String(decoding: first.body, as: UTF8.self).split(separator: " ")[0]))
        let booked = try system.appointments.getAppointmentById(id, clientId: anna)
        #expect(String(decoding: first.body, as: UTF8.self) == "\(id) scheduled Knee, left")
        // Kept sealed: the notes are not in the stored answer.
        let kept = try #require(try system.database.writing { tx in try tx.idempotentResponse(ofClient: anna, key: "k1") })
        #expect(kept.body.first == 1 && kept.body.range(of: Data("Knee".utf8)) == nil)

        let unchanged = try fingerprint(system)
        let replay = try await book(anna, "k1", at: "2026-11-24 09:00")
        #expect(replay.replayed && replay.status == 201 && replay.body == first.body)
        let reused = await #expect(throws: ClinicError.self) {
            _ = try await system.appointments.cancel(id, clientId: anna, keeping: keeping("k1", "other"))
        }
        #expect(reused?.code == .idempotencyKeyReused)
        #expect(try fingerprint(system) == unchanged)

        // Boris is refused the same doctor's time: the refusal is kept and nothing else is
        // written; once the time is free again his retry still gets the refusal.
        let beforeRefusal = try fingerprint(system, excluding: ["idempotency_keys"])
        let refused = try await book(boris, "b1", at: "2026-11-24 09:00", doctor: booked.doctorId)
        #expect(refused.status == 409 && String(decoding: refused.body, as: UTF8.self) == "slot_taken" && !refused.replayed)
        #expect(try fingerprint(system, excluding: ["idempotency_keys"]) == beforeRefusal)
        #expect(try system.database.writing { tx in try tx.idempotentResponse(ofClient: boris, key: "b1") } != nil)
        let moved = try await system.appointments.reschedule(id, clientId: anna, to: local("2026-11-25 10:00"), keeping: keeping("k2"))
        #expect(moved.status == 201 && !moved.replayed)
        #expect(try system.appointments.getAppointmentById(id, clientId: anna).startsAt != booked.startsAt)
        let stillRefused = try await book(boris, "b1", at: "2026-11-24 09:00", doctor: booked.doctorId)
        #expect(stillRefused.replayed && stillRefused.body == refused.body)
        #expect(try await system.appointments.getAppointmentsByClientId(boris, scope: .all).isEmpty)

        // Two copies of one cancellation at once: one cancels, the other replays its answer.
        async let one = system.appointments.cancel(id, clientId: anna, keeping: keeping("k3"))
        async let two = system.appointments.cancel(id, clientId: anna, keeping: keeping("k3"))
        let both = try await [one, two]
        #expect(both.filter(\.replayed).count == 1 && both[0].body == both[1].body)
        #expect(String(decoding: both[0].body, as: UTF8.self) == "\(id) cancelled Knee, left")
        #expect(try system.appointments.history(id, clientId: anna).map(\.event) == ["booked", "rescheduled", "cancelled"])
        #expect(told.current == ["book ok", "book slot_taken", "reschedule ok", "cancel ok"])
    }

    /// The sessions' look-ups awaited (`ClinicStore.lookUpPatientSession`, `lookUpStaffSession`)
    /// answer as the synchronous ones: the patient with the sealed fields opened, the staff
    /// member; a malformed, unknown, ended or idle session is `not_logged_in`.
    @Test func sessionLookUpsAwaited() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        _ = try register(system, "anna")
        let token = try system.clients.logIn(login: "anna", password: "correct-horse-42").token
        let awaited = try await system.clients.signedInPatient(token: token)
        #expect(awaited == (try system.clients.currentUser(token: token)))
        #expect(awaited.name == "Anna" && awaited.street == "Main Street")
        for bad in ["x", String(repeating: "a", count: 64)] {
            let refused = await #expect(throws: ClinicError.self) { _ = try await system.clients.signedInPatient(token: bad) }
            #expect(refused?.code == .notLoggedIn)
        }

        let la1 = try clinic(system, "LA1").id ?? 0
        _ = try system.staff.addStaff(StaffInput(login: "dana", name: "Dana", surname: "Desk", role: .receptionist, clinicId: la1,
                                                 password: "counter-shift-73"))
        let staffToken = try system.staff.logIn(login: "dana", password: "counter-shift-73").token
        let member = try await system.staff.signedIn(token: staffToken)
        #expect(member == (try system.staff.current(token: staffToken)) && member.login == "dana")
        // A patient's token is not a staff member's, nor the other way round.
        #expect(await (try? system.staff.signedIn(token: token)) == nil)
        #expect(await (try? system.clients.signedInPatient(token: staffToken)) == nil)

        // Idle past the limit: both refused.
        clock.advance(StaffController.idleLimit + 1)
        let idle = await #expect(throws: ClinicError.self) { _ = try await system.staff.signedIn(token: staffToken) }
        #expect(idle?.code == .notLoggedIn)
        clock.advance(SessionManager.idleLimit)
        let ended = await #expect(throws: ClinicError.self) { _ = try await system.clients.signedInPatient(token: token) }
        #expect(ended?.code == .notLoggedIn)
    }

    /// A department's slots from the facts gathered awaited (`ClinicStore.gatherSlotFacts`) are
    /// the synchronous ones, a booked time and a doctor's day off included; the refusals are the same.
    @Test func slotsAwaited() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let booked = try await system.appointments.book(clientId: anna, departmentId: therapy, at: local("2026-11-24 09:00"))
        let from = try #require(LocalDateTime(year: 2026, month: 11, day: 23, hour: 0, minute: 0))
        for (doctor, days, start) in [(nil, nil, nil), (booked.doctorId, 3, from), (nil, 1, from.adding(days: 1))] as [(Int64?, Int?, LocalDateTime?)] {
            let awaited = try await system.slotsAwaited(departmentId: therapy, doctorId: doctor, from: start, days: days)
            let blocking = try system.slots(departmentId: therapy, doctorId: doctor, from: start, days: days)
            #expect(awaited.clinic == blocking.clinic && awaited.slots == blocking.slots)
            #expect(!awaited.slots.isEmpty)
        }
        let day = try await system.slotsAwaited(departmentId: therapy, doctorId: booked.doctorId, from: from.adding(days: 1), days: 1).slots
        #expect(day.contains { $0.start == booked.startsAt && !$0.isAvailable })
        for (department, days, code) in [(999_999, 7, ClinicError.Code.notFound), (therapy, 32, .invalidInput)] as [(Int64, Int, ClinicError.Code)] {
            let refused = await #expect(throws: ClinicError.self) { _ = try await system.slotsAwaited(departmentId: department, days: days) }
            #expect(refused?.code == code)
        }
    }

    /// `GET /v1/me`'s one awaited read (`ClientController.account`): the same unread count and
    /// phone status as `unreadCount` and `phone`, the number opened under the stored key check.
    @Test func theAccountsUnreadMessagesAndPhoneAwaited() async throws {
        let texts = TextTests(), s = try await texts.scene()
        let none = try await s.system.clients.account(clientId: s.anna)
        #expect(none.unreadMessages == 0 && none.phone == PhoneStatus.none)
        _ = try await s.system.appointments.book(clientId: s.anna, departmentId: s.therapy, at: local("2026-11-24 09:00"))
        _ = try await s.system.appointments.book(clientId: s.anna, departmentId: s.therapy, at: local("2026-11-24 10:00"))
        try await texts.confirm(s, s.anna, "+13035550123")
        let account = try await s.system.clients.account(clientId: s.anna)
        func phoneBySeam() throws -> PhoneStatus { try s.system.clients.phone(clientId: s.anna) }
        let unread = try await s.system.clients.unreadCount(clientId: s.anna), phone = try phoneBySeam()
        #expect(account.unreadMessages == 2 && account.unreadMessages == unread)
        #expect(account.phone == phone)
        #expect(account.phone.number == "+13035550123" && account.phone.confirmed)
        let first = try #require(try await s.system.clients.messages(clientId: s.anna).first)
        try await s.system.clients.markRead(clientId: s.anna, messageId: first.id)
        #expect(try await s.system.clients.account(clientId: s.anna).unreadMessages == 1)
        // Bob's are his own; a patient who is not there is not signed in.
        #expect(try await s.system.clients.account(clientId: s.bob).unreadMessages == 0)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) {
            _ = try await s.system.clients.account(clientId: s.bob + 1000)
        }
    }

    /// The inbox awaited (`InboxStore`): the same lists as the synchronous reads, a message read
    /// again keeps its first time, another patient's is not found and changes nothing, "all read"
    /// counts what it marked, a patient with no messages has an empty inbox and one who is gone
    /// is not signed in.
    @Test func theInboxAwaited() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna").id ?? 0, boris = try register(system, "boris").id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        for time in ["2026-11-24 09:00", "2026-11-24 10:00", "2026-11-24 11:00"] {
            _ = try await system.appointments.book(clientId: anna, departmentId: therapy, at: local(time))
        }
        let synchronous = try Self.synchronousInbox(system, anna)
        let awaited = try await system.clients.messages(clientId: anna)
        #expect(awaited.count == 3 && awaited == synchronous)
        #expect(awaited.map(\.id) == awaited.map(\.id).sorted(by: >))
        #expect(try await system.clients.messages(clientId: boris).isEmpty)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await system.clients.messages(clientId: anna + 1000) }

        // Boris cannot mark Anna's message, and nothing changes.
        let newest = try #require(awaited.first)
        let refused = await #expect(throws: ClinicError.self) { try await system.clients.markRead(clientId: boris, messageId: newest.id) }
        #expect(refused?.key == .messageNotFound)
        #expect(try await system.clients.messages(clientId: anna, unreadOnly: true).count == 3)

        let read = try await system.clients.markRead(clientId: anna, messageId: newest.id)
        #expect(read.id == newest.id && read.readAt?.seconds == clock.now.seconds)
        // An hour later: read again, it keeps the first time; the others take the new one.
        clock.advance(3600)
        let again = try await system.clients.markRead(clientId: anna, messageId: newest.id)
        #expect(again == read)
        let unread = try await system.clients.messages(clientId: anna, unreadOnly: true)
        #expect(unread.map(\.id) == awaited.dropFirst().map(\.id))
        #expect(unread == (try Self.synchronousInbox(system, anna, unreadOnly: true)))

        #expect(try await system.clients.markAllRead(clientId: anna) == 2)
        let marked = try await system.clients.messages(clientId: anna).filter { $0.id != newest.id }
        #expect(marked.count == 2 && marked.allSatisfy { $0.readAt?.seconds == clock.now.seconds })
        #expect(try await system.clients.markAllRead(clientId: anna) == 0)
        #expect(try await system.clients.messages(clientId: anna, unreadOnly: true).isEmpty)
        #expect(try await system.clients.unreadCount(clientId: anna) == 0)
        #expect(try await system.clients.messages(clientId: anna).first == read)
    }

    /// Sessions ended awaited (`SessionStore`): another patient's session is not found and stays,
    /// an ended one no longer signs in (on PostgreSQL also when its look-up was kept), a log-out
    /// says whether the token was a session's; a staff member's log-out the same.
    @Test func sessionsEndedAwaited() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0
        _ = try register(system, "boris")
        let first = try system.clients.logIn(login: "anna", password: "correct-horse-42").token
        let second = try system.clients.logIn(login: "anna", password: "correct-horse-42").token
        let boris = try system.clients.logIn(login: "boris", password: "correct-horse-42").client.id ?? 0
        _ = try await system.clients.signedInPatient(token: second)
        let other = try #require(try await system.clients.signedInSessions(clientId: anna, current: first).first { !$0.isCurrent })

        let notHis = await #expect(throws: ClinicError.self) { try await system.clients.endSession(other.id, clientId: boris) }
        #expect(notHis?.key == .sessionNotFound)
        #expect(try await system.clients.signedInPatient(token: second).id == anna)
        try await system.clients.endSession(other.id, clientId: anna)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await system.clients.signedInPatient(token: second) }
        let again = await #expect(throws: ClinicError.self) { try await system.clients.endSession(other.id, clientId: anna) }
        #expect(again?.key == .sessionNotFound)

        #expect(try await system.clients.signedInPatient(token: first).id == anna)
        #expect(try await system.clients.logOut(token: first))
        #expect(try await !system.clients.logOut(token: first))
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await system.clients.signedInPatient(token: first) }

        let la1 = try clinic(system, "LA1").id ?? 0
        _ = try system.staff.addStaff(StaffInput(login: "dana", name: "Dana", surname: "Desk", role: .receptionist, clinicId: la1,
                                                 password: "counter-shift-73"))
        let staffToken = try system.staff.logIn(login: "dana", password: "counter-shift-73").token
        #expect(try await system.staff.signedIn(token: staffToken).login == "dana")
        #expect(try await system.staff.logOut(token: staffToken))
        #expect(try await !system.staff.logOut(token: staffToken))
        let gone = await #expect(throws: ClinicError.self) { _ = try await system.staff.signedIn(token: staffToken) }
        #expect(gone?.code == .notLoggedIn)
    }

    /// Uses recorded awaited (`SessionStore.touchPatientSession`, `touchStaffSession`) keep a
    /// session alive past the idle limit it would have reached, and never move its last use back;
    /// the awaited list of a patient's sessions is the synchronous one: live sessions only, the
    /// current one marked, another patient's not there.
    @Test func sessionsUsedAndListedAwaited() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna").id ?? 0
        let boris = try register(system, "boris").id ?? 0
        let first = try system.clients.logIn(login: "anna", password: "correct-horse-42").token
        clock.advance(60)
        let second = try system.clients.logIn(login: "anna", password: "correct-horse-42").token
        _ = try system.clients.logIn(login: "boris", password: "correct-horse-42")
        let listed = try await system.clients.signedInSessions(clientId: anna, current: second)
        #expect(listed == (try Self.synchronousSessions(system, clientId: anna, current: second)))
        #expect(listed.count == 2 && listed.map(\.isCurrent) == [false, true])
        #expect(try await system.clients.signedInSessions(clientId: boris, current: second).map(\.isCurrent) == [false])

        // Nearly idle; the first is used, the second not: past the limit only the first lives.
        clock.advance(SessionManager.idleLimit - 120)
        try await system.clients.touchSession(token: first)
        let used = try #require(try await system.clients.signedInSessions(clientId: anna, current: first).first { $0.isCurrent })
        #expect(used.lastUsedAt.seconds == clock.now.seconds)
        clock.advance(600)
        #expect(try await system.clients.signedInPatient(token: first).id == anna)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await system.clients.signedInPatient(token: second) }
        #expect(try await system.clients.signedInSessions(clientId: anna, current: first).map(\.isCurrent) == [true])
        // A use recorded with an earlier time (a slow request) does not move the last use back.
        let later = try #require(try await system.clients.signedInSessions(clientId: anna, current: first).first)
        try await system.clients.touchSession(token: first)
        let touchedAgain = try #require(try await system.clients.signedInSessions(clientId: anna, current: first).first)
        #expect(touchedAgain.lastUsedAt.seconds == clock.now.seconds && touchedAgain.lastUsedAt >= later.lastUsedAt)
        try await system.database.touchPatientSession(tokenHash: SessionManager.hash(first), at: Date(seconds: clock.now.seconds - 3600))
        #expect(try await system.clients.signedInSessions(clientId: anna, current: first).first?.lastUsedAt.seconds == clock.now.seconds)

        // A staff session the same.
        let la1 = try clinic(system, "LA1").id ?? 0
        _ = try system.staff.addStaff(StaffInput(login: "dana", name: "Dana", surname: "Desk", role: .receptionist, clinicId: la1,
                                                 password: "counter-shift-73"))
        let staffToken = try system.staff.logIn(login: "dana", password: "counter-shift-73").token
        clock.advance(StaffController.idleLimit - 60)
        try await system.staff.touch(token: staffToken)
        clock.advance(120)
        #expect(try await system.staff.signedIn(token: staffToken).login == "dana")
        try await system.database.touchStaffSession(tokenHash: SessionManager.hash(staffToken), at: Date(seconds: 0))
        clock.advance(StaffController.idleLimit - 180)
        #expect(try await system.staff.signedIn(token: staffToken).login == "dana")
        clock.advance(120)
        await #expect(throws: ClinicError.self) { _ = try await system.staff.signedIn(token: staffToken) }
    }

    /// A patient's appointments awaited (`PatientAppointmentsStore`): the same pages, in each
    /// scope and across a cursor, and the same appointment with its history as the synchronous
    /// reads, notes opened; another patient's is `not_your_appointment`, none is `not_found`.
    @Test func aPatientsAppointmentsAwaited() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0, boris = try register(system, "boris").id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        var booked: [Appointment] = []
        for (time, notes) in [("2026-11-24 09:00", "Knee, left"), ("2026-11-24 10:00", ""), ("2026-11-25 09:00", "Back")] {
            booked.append(try await system.appointments.book(clientId: anna, departmentId: therapy, at: local(time), notes: notes))
        }
        let cancelled = try #require(booked[1].id)
        _ = try await system.appointments.cancel(cancelled, clientId: anna)
        let his = try await system.appointments.book(clientId: boris, departmentId: therapy, at: local("2026-11-24 09:00"))

        for scope in [AppointmentScope.all, .upcoming, .past] {
            var cursor: String?, pages = 0
            repeat {
                let awaited = try await system.appointments.appointmentsPage(anna, scope: scope, limit: 2, cursor: cursor)
                let synchronous = try Self.synchronousPage(system, anna, scope, cursor)
                #expect(awaited.items == synchronous.items && awaited.nextCursor == synchronous.nextCursor,
                        "\(scope): \(awaited.items.map(\.id)) \(String(describing: awaited.nextCursor)) against \(synchronous.items.map(\.id)) \(String(describing: synchronous.nextCursor))")
                cursor = awaited.nextCursor
                pages += 1
            } while cursor != nil && pages < 5
        }
        // With their places, as the web's pages show them: the synchronous read's.
        for scope in [AppointmentScope.all, .upcoming] {
            let placed = try await system.appointments(ofPatient: anna, scope: scope)
            let synchronous = try Self.synchronousPlaces(system, anna, scope)
            #expect(placed.map(\.appointment) == synchronous.map(\.appointment) && placed.map(\.clinic) == synchronous.map(\.clinic)
                    && placed.map(\.department) == synchronous.map(\.department) && !placed.isEmpty)
            #expect(placed.allSatisfy { $0.clinic.externalId == "LA1" && $0.department.id == therapy })
        }
        let all = try await system.appointments.appointmentsPage(anna, scope: .all, limit: 100, cursor: nil).items
        #expect(all.map(\.id) == booked.map(\.id) && all.map(\.notes) == ["Knee, left", "", "Back"])
        #expect(try await system.appointments.appointmentsPage(anna, scope: .upcoming, limit: 100, cursor: nil).items.count == 2)

        let shown = try await system.appointments.appointmentWithHistory(cancelled, clientId: anna)
        let synchronous = try Self.synchronousHistory(system, cancelled, anna)
        #expect(shown.appointment == synchronous.appointment && shown.history == synchronous.history)
        #expect(shown.history.map(\.event) == ["booked", "cancelled"] && shown.appointment.status == .cancelled)
        let first = try await system.appointments.appointmentWithHistory(try #require(booked[0].id), clientId: anna)
        #expect(first.appointment.notes == "Knee, left" && first.history.map(\.startsAt) == [booked[0].startsAt])
        let notYours = await #expect(throws: ClinicError.self) {
            _ = try await system.appointments.appointmentWithHistory(try #require(his.id), clientId: anna)
        }
        #expect(notYours?.key == .notYourAppointment)
        let none = await #expect(throws: ClinicError.self) { _ = try await system.appointments.appointmentWithHistory(999_999, clientId: anna) }
        #expect(none?.key == .appointmentNotFound)
        let badCursor = await #expect(throws: ClinicError.self) {
            _ = try await system.appointments.appointmentsPage(anna, scope: .all, limit: 2, cursor: "x")
        }
        let synchronousRefusal = #expect(throws: ClinicError.self) { _ = try Self.synchronousPage(system, anna, .all, "x") }
        #expect(badCursor != nil && badCursor?.key == synchronousRefusal?.key)
    }

    /// The patient's appointment page and a move's summary, read awaited with the free times
    /// computed by a runner (what `clinic serve` runs): the times are the synchronous
    /// `rescheduleTimes` of the day shown, the appointment's own start never among them.
    @Test func anAppointmentsPageAndItsMovesAwaited() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0, boris = try register(system, "boris").id ?? 0
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let booked = try await system.appointments.book(clientId: anna, departmentId: therapy, at: local("2026-11-24 09:00"),
                                                        notes: "Knee, left")
        let id = try #require(booked.id), runner = InlinePasswordRunner()

        // No day asked: the first day with a free time (Monday 23rd in Los Angeles).
        let page = try await system.appointmentDetails(id, ofPatient: anna, computing: runner)
        #expect(page.appointment == booked && page.history.map(\.event) == ["booked"] && page.patientMayChange)
        #expect(page.clinic.externalId == "LA1" && page.department?.id == therapy && page.folder.files.isEmpty)
        let shown = try #require(page.rescheduleDay)
        #expect(shown.dayText == "2026-11-23" && page.rescheduleFreeDays.contains("2026-11-24"))
        let firstDay = try Self.synchronousMoveTimes(system, booked, shown)
        #expect(page.rescheduleTimes == firstDay && !firstDay.isEmpty)

        // A day of the look-ahead, and one beyond it: each the synchronous times of that day.
        let tuesday = try #require(LocalDateTime(year: 2026, month: 11, day: 24, hour: 0, minute: 0))
        for day in [tuesday, tuesday.adding(days: 30)] {
            let asked = try await system.appointmentDetails(id, ofPatient: anna, rescheduleDay: day, computing: runner)
            let times = asked.rescheduleTimes, synchronous = try Self.synchronousMoveTimes(system, booked, day)
            #expect(asked.rescheduleDay == day && times == synchronous && !times.isEmpty)
            #expect(!times.contains { $0.start == booked.startsAt } && Set(times.map(\.start)).count == times.count)
        }

        // A move's summary: a free time is offered, the appointment's own is not.
        let later = try #require(page.rescheduleTimes.last)
        let choice = try await system.moveChoice(id, ofPatient: anna, to: later.start, computing: runner)
        #expect(choice.slot == later && choice.department.id == therapy && choice.day == shown && choice.clinic == page.clinic)
        #expect(try await system.moveChoice(id, ofPatient: anna, to: booked.startsAt, computing: runner).slot == nil)

        for (clientId, key) in [(boris, MessageKey.notYourAppointment)] {
            let page = await #expect(throws: ClinicError.self) { _ = try await system.appointmentDetails(id, ofPatient: clientId, computing: runner) }
            let move = await #expect(throws: ClinicError.self) {
                _ = try await system.moveChoice(id, ofPatient: clientId, to: later.start, computing: runner)
            }
            #expect(page?.key == key && move?.key == key)
        }
        let none = await #expect(throws: ClinicError.self) { _ = try await system.appointmentDetails(999_999, ofPatient: anna, computing: runner) }
        #expect(none?.key == .appointmentNotFound)

        // Cancelled, it moves nowhere: no times, no move.
        _ = try await system.appointments.cancel(id, clientId: anna)
        let cancelled = try await system.appointmentDetails(id, ofPatient: anna, computing: runner)
        #expect(!cancelled.patientMayChange && cancelled.rescheduleTimes.isEmpty && cancelled.rescheduleFreeDays.isEmpty)
        #expect(cancelled.history.map(\.event) == ["booked", "cancelled"])
        #expect(try await system.moveChoice(id, ofPatient: anna, to: later.start, computing: runner).slot == nil)
    }

    /// The synchronous free times of a day to move `appointment` to.
    static func synchronousMoveTimes(_ system: ClinicSystem, _ appointment: Appointment, _ day: LocalDateTime) throws -> [Slot] {
        try system.appointments.rescheduleTimes(appointment, from: day)
    }

    static func synchronousPage(_ system: ClinicSystem, _ clientId: Int64, _ scope: AppointmentScope, _ cursor: String?) throws -> Page<Appointment> {
        try system.appointments.appointmentsPage(clientId, scope: scope, limit: 2, cursor: cursor)
    }

    static func synchronousHistory(_ system: ClinicSystem, _ id: Int64, _ clientId: Int64) throws
        -> (appointment: Appointment, history: [AppointmentEvent]) {
        try system.appointments.appointmentWithHistory(id, clientId: clientId)
    }

    /// The synchronous list of a patient's sessions (in an async context the awaited one is chosen).
    static func synchronousSessions(_ system: ClinicSystem, clientId: Int64, current: String?) throws -> [SessionInfo] {
        try system.clients.signedInSessions(clientId: clientId, current: current)
    }

    /// The synchronous appointments with their places.
    static func synchronousPlaces(_ system: ClinicSystem, _ clientId: Int64, _ scope: AppointmentScope) throws -> [AppointmentAtClinic] {
        try system.appointments(ofPatient: clientId, scope: scope)
    }

    /// The synchronous read of the inbox (an async caller would otherwise get the awaited one).
    static func synchronousInbox(_ system: ClinicSystem, _ clientId: Int64, unreadOnly: Bool = false) throws -> [InboxMessage] {
        try system.clients.messages(clientId: clientId, unreadOnly: unreadOnly)
    }
}
