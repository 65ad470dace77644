import ClinicKit
import ClinicTestPostgres
import Foundation
import Testing
@testable import ClinicStorePostgres

/// The staff's transition and `GET /v1/me` as awaited operations on PostgreSQL (issue 56): their
/// round trips, and the audit row the transition chains in its own transaction.
@Suite struct AwaitedStaffTests {
    @Test func aStaffTransitionAwaitedIsSixStatementsWithItsAuditRow() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            let setup = try await AwaitedBookingTests.setUp(store, patients: 1)
            let slot = try #require(setup.free.first), anna = setup.patients[0]
            let booked = try await setup.system.appointments.book(clientId: anna, departmentId: setup.therapy, at: .instant(slot.start),
                                                                  doctorId: slot.doctorId)
            let id = try #require(booked.id)
            // The clinic's clock ten minutes after the visit's start: a no-show may be marked.
            let later = slot.start.addingTimeInterval(600)
            let clinic = ClinicSystem(store: store, resources: nil,
                                      hasher: PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1)),
                                      now: { later })
            let desk = try await onOwnThread {
                let clinicId = try #require(try store.reading { tx in try tx.clinic(externalId: "LA1")?.id })
                return try clinic.staff.addStaff(StaffInput(login: "dana", name: "Dana", surname: "Desk", role: .receptionist,
                                                            clinicId: clinicId, password: "counter-shift-73"))
            }
            // A refusal: BEGIN, the appointment's facts, then a ROLLBACK (which `statementsSent`
            // does not count); nothing written.
            var before = store.statementsSent.current
            let refused = await clinicError { _ = try await clinic.staff.act(desk, .start, appointmentId: id) }
            #expect(refused?.code == .forbidden)
            #expect(store.statementsSent.current - before == 2)
            // BEGIN, the appointment's facts (with its clinic's zone), the one write, the audit
            // head locked with the key's marker, the row and the head moved, COMMIT. (The key
            // is this process's already: the account's creation was audited.)
            before = store.statementsSent.current
            let marked = try await clinic.staff.act(desk, .noShow, appointmentId: id)
            #expect(store.statementsSent.current - before == 6)
            #expect(marked.status == .noShow)
            let (events, actions, check) = try await onOwnThread {
                (try clinic.appointments.history(id, clientId: anna).map(\.event),
                 try clinic.clients.accessLog(clientId: anna).map(\.action), try clinic.auditCheck())
            }
            #expect(events == ["booked", "no_show"])
            #expect(actions == ["appointment.no-show"])
            #expect(check.problem == nil && check.broken == [])
        }
    }

    @Test func theAccountsFactsAreOneStatement() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            let setup = try await AwaitedBookingTests.setUp(store, patients: 1)
            let slot = try #require(setup.free.first), anna = setup.patients[0]
            _ = try await setup.system.appointments.book(clientId: anna, departmentId: setup.therapy, at: .instant(slot.start))
            let before = store.statementsSent.current
            let account = try await setup.system.clients.account(clientId: anna)
            #expect(store.statementsSent.current - before == 1)
            #expect(account.unreadMessages == 1 && account.phone.number == nil)
        }
    }

    /// The inbox's use cases are one statement each: the list (with whether the patient is
    /// there), a message marked read, all of them marked read; so are a patient's appointments
    /// and one with its history.
    @Test func thePatientsReadsAreOneStatementEach() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            let setup = try await AwaitedBookingTests.setUp(store, patients: 1)
            let anna = setup.patients[0]
            // Two times (the free slots of one time are each doctor's).
            let times = setup.free.reduce(into: [Slot]()) { kept, slot in
                if kept.count < 2, !kept.contains(where: { $0.start == slot.start }) { kept.append(slot) }
            }
            for slot in times {
                _ = try await setup.system.appointments.book(clientId: anna, departmentId: setup.therapy, at: .instant(slot.start),
                                                             doctorId: slot.doctorId)
            }
            var before = store.statementsSent.current
            let messages = try await setup.system.clients.messages(clientId: anna)
            #expect(store.statementsSent.current - before == 1 && messages.count == 2)
            before = store.statementsSent.current
            let read = try await setup.system.clients.markRead(clientId: anna, messageId: messages[0].id)
            #expect(store.statementsSent.current - before == 1 && read.readAt != nil)
            before = store.statementsSent.current
            before = store.statementsSent.current
            #expect(try await setup.system.clients.unreadCount(clientId: anna) == 1)
            #expect(store.statementsSent.current - before == 1)
            before = store.statementsSent.current
            #expect(try await setup.system.clients.markAllRead(clientId: anna) == 1)
            #expect(store.statementsSent.current - before == 1)
            #expect(try await setup.system.clients.unreadCount(clientId: anna) == 0)

            // A use of a session recorded, and the patient's sessions listed: one statement each.
            // A log-in: the attempt reserved (BEGIN, the old windows, the count, the patient,
            // COMMIT), then completed (BEGIN, the patient read and locked, the attempt's row
            // locked and given back, the purge, the session, COMMIT).
            before = store.statementsSent.current
            let token = try await setup.system.clients.logIn(login: "patient0", password: "correct-horse-42",
                                                             passwords: InlinePasswordRunner()).token
            #expect(store.statementsSent.current - before == 12, "one fewer than the seam's log-in, none of them blocking a thread")
            before = store.statementsSent.current
            try await setup.system.clients.touchSession(token: token)
            #expect(store.statementsSent.current - before == 1)
            before = store.statementsSent.current
            let sessions = try await setup.system.clients.signedInSessions(clientId: anna, current: token)
            #expect(store.statementsSent.current - before == 1 && sessions.map(\.isCurrent) == [true])

            // The calendar address: shown in one statement; made in BEGIN, the patient with
            // their token and the key check, the token, COMMIT. "Sign out everywhere else" with
            // one: BEGIN, the patient locked, the sessions, the new token, the message, COMMIT.
            before = store.statementsSent.current
            #expect(try await setup.system.clients.existingCalendarToken(clientId: anna) == nil)
            #expect(store.statementsSent.current - before == 1)
            before = store.statementsSent.current
            let calendar = try await setup.system.clients.calendarToken(clientId: anna)
            #expect(store.statementsSent.current - before == 4)
            before = store.statementsSent.current
            #expect(try await setup.system.clients.endOtherSessions(clientId: anna, keeping: token) == 0)
            #expect(store.statementsSent.current - before == 6)
            let renewed = try #require(try await setup.system.clients.existingCalendarToken(clientId: anna))
            #expect(renewed != calendar)
            // The feed a subscribed calendar polls: the appointments with their changes in one
            // statement, then their one clinic with its departments (a read-only snapshot: 4).
            before = store.statementsSent.current
            let feed = try await setup.system.calendarFeed(token: renewed)
            #expect(store.statementsSent.current - before == 5 && feed.components(separatedBy: "BEGIN:VEVENT").count == 3)

            // A number removed, with its pending texts: one statement.
            before = store.statementsSent.current
            try await setup.system.clients.removePhone(clientId: anna)
            #expect(store.statementsSent.current - before == 1)

            // A patient's waitlist: the entries with their facts and the offers, in one snapshot.
            before = store.statementsSent.current
            #expect(try await setup.system.waitlist.entries(clientId: anna).isEmpty)
            #expect(store.statementsSent.current - before == 4)

            // A page of the directory: one statement.
            before = store.statementsSent.current
            let clinics = try await setup.system.clinics.clinicsPage(limit: 5, cursor: nil)
            #expect(store.statementsSent.current - before == 1 && !clinics.items.isEmpty)

            // A patient's appointments, and one with its history: one statement each too.
            before = store.statementsSent.current
            let page = try await setup.system.appointments.appointmentsPage(anna, scope: .all, limit: 10, cursor: nil)
            #expect(store.statementsSent.current - before == 1 && page.items.count == 2)
            before = store.statementsSent.current
            let shown = try await setup.system.appointments.appointmentWithHistory(try #require(page.items[0].id), clientId: anna)
            #expect(store.statementsSent.current - before == 1 && shown.history.map(\.event) == ["booked"])
        }
    }

    /// A patient's waitlist changes awaited (`WaitlistChangesStore`): one transaction each, the
    /// gather's locks first, each write one statement.
    @Test func theWaitlistsChangesAreOneTransactionEach() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            let setup = try await AwaitedBookingTests.setUp(store, patients: 2)
            let slot = try #require(setup.free.first), anna = setup.patients[0], boris = setup.patients[1]
            let system = setup.system, therapy = setup.therapy
            // Boris's visit is cancelled and its time offered to Anna, who waits.
            let entry = try await onOwnThread {
                let entry = try system.waitlist.join(clientId: anna, .init(departmentId: therapy))
                let visit = try system.appointments.createAppointment(clientId: boris, departmentId: therapy, at: .instant(slot.start),
                                                                      doctorId: slot.doctorId)
                _ = try system.appointments.cancelAppointment(visit.id ?? 0, clientId: boris)
                return entry
            }
            _ = try await system.waitlist.work()
            let offer = try #require(try await system.waitlist.offers(clientId: anna).first)
            #expect(offer.holdId != nil)
            // Declined: BEGIN, the offer locked with its entry's status, the offer closed, its
            // hold deleted, the entry waiting again, the time queued, COMMIT.
            var before = store.statementsSent.current
            try await system.waitlist.decline(offer.id ?? 0, clientId: anna)
            #expect(store.statementsSent.current - before == 7)
            // Resumed: BEGIN, the entry locked, its open offers locked (none), the entry, COMMIT.
            before = store.statementsSent.current
            let resumed = try await system.waitlist.resume(entry.id ?? 0, clientId: anna)
            #expect(store.statementsSent.current - before == 5 && resumed.status == .waiting && resumed.lapses == 0)
            // Left: the same, the entry left. Left again, refused: BEGIN, the entry, its offers, ROLLBACK.
            before = store.statementsSent.current
            try await system.waitlist.leave(entry.id ?? 0, clientId: anna)
            #expect(store.statementsSent.current - before == 5)
            before = store.statementsSent.current
            let refused = await clinicError { try await system.waitlist.leave(entry.id ?? 0, clientId: anna) }
            #expect(refused?.code == .notFound && store.statementsSent.current - before == 3)
            #expect(try await system.waitlist.entries(clientId: anna).isEmpty)
            // Joined again: BEGIN, the patient's lock with the directory's rows and the settings,
            // the patient's entries under it, the entry, COMMIT. Twice: refused at the insert.
            before = store.statementsSent.current
            let again = try await system.waitlist.join(clientId: anna, .init(departmentId: therapy))
            #expect(store.statementsSent.current - before == 5 && again.id != nil && again.id != entry.id)
            let twice = await clinicError { _ = try await system.waitlist.join(clientId: anna, .init(departmentId: therapy)) }
            #expect(twice?.code == .alreadyWaiting)
            #expect(try await system.waitlist.entries(clientId: anna) == [again])
        }
    }
}
