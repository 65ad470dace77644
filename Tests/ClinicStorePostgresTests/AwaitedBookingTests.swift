import ClinicKit
import ClinicTestPostgres
import Foundation
import Testing
@testable import ClinicStorePostgres

/// A booking as the store's one awaited operation (issue 56, `PostgresStore.book`): the same
/// round trips as the seam's booking, the same rows written, the rules' refusals, and many at
/// once on a pool smaller than the bookings, with no thread waiting for PostgreSQL.
@Suite struct AwaitedBookingTests {
    static let now = Date(timeIntervalSince1970: 1_795_348_800) // Sunday 2026-11-22 08:00 UTC

    struct Setup: Sendable {
        let system: ClinicSystem
        let therapy: Int64
        let patients: [Int64]
        let free: [Slot]
    }

    /// A small directory and `patients` patients, made on a thread of their own (the seam's
    /// synchronous transactions).
    static func setUp(_ store: PostgresStore, patients count: Int) async throws -> Setup {
        try await onOwnThread {
            let now = Self.now
            let system = ClinicSystem(store: store, resources: nil,
                                      hasher: PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1)),
                                      now: { now })
            _ = try system.clinics.importClinics(Data("""
                external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
                LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE,0,1,America/Los_Angeles
                """.utf8), demo: true)
            let patients = try (0..<count).map { index in
                try #require(try system.clients.registerUser(RegistrationRequest(
                    login: "patient\(index)", password: "correct-horse-42", name: "Pat", surname: "Number" + String(repeating: "x", count: index + 1), street: "Main Street",
                    house: "12", city: "Los Angeles", acceptedPrivacy: true)).id)
            }
            let clinicId = try #require(try store.reading { tx in try tx.clinic(externalId: "LA1")?.id })
            let therapy = try #require(try system.departments.getDepartmentsByClinicId(clinicId).first { $0.specialization == "therapy" }?.id)
            let free = try system.appointments.slots(departmentId: therapy, days: 7).filter(\.isAvailable)
            return Setup(system: system, therapy: therapy, patients: patients, free: free)
        }
    }

    @Test func anAwaitedBookingCostsTheSameRoundTripsAndWritesTheSame() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            let setup = try await Self.setUp(store, patients: 2)
            let slot = try #require(setup.free.first)
            let anna = setup.patients[0], boris = setup.patients[1]
            let before = store.statementsSent.current
            let booked = try await setup.system.appointments.book(clientId: anna, departmentId: setup.therapy, at: .instant(slot.start),
                                                                  doctorId: slot.doctorId, notes: "Knee, left")
            // BEGIN, the locks with the id, the gather, the one write, COMMIT.
            #expect(store.statementsSent.current - before == 5)
            #expect(booked.notes == "Knee, left" && booked.startsAt == slot.start && booked.doctorId == slot.doctorId && booked.id != nil)
            // What it wrote reads back through the seam: the notes sealed to the id, the history, the message.
            let id = try #require(booked.id)
            let (reread, history, stored) = try await onOwnThread {
                (try setup.system.appointments.getAppointmentById(id, clientId: anna),
                 try setup.system.appointments.history(id, clientId: anna).map(\.event),
                 try store.reading { tx in try tx.storedAppointment(id: id)?.notes })
            }
            #expect(reread == booked)
            #expect(history == ["booked"])
            #expect(stored != "Knee, left" && stored?.isEmpty == false, "the notes are stored sealed")
            let messages = try await onOwnThread { try store.reading { tx in try tx.inboxMessages(ofClient: anna, unreadOnly: false, limit: 5) } }
            #expect(messages.contains { $0.appointmentId == id && $0.kind == .booked && $0.body.contains(String(id)) })

            // The rules' refusals come back as the domain's errors, and write nothing.
            let taken = await clinicError {
                _ = try await setup.system.appointments.book(clientId: boris, departmentId: setup.therapy, at: .instant(slot.start),
                                                             doctorId: slot.doctorId)
            }
            #expect(taken?.code == .slotTaken)
            let overlap = await clinicError {
                _ = try await setup.system.appointments.book(clientId: anna, departmentId: setup.therapy, at: .instant(slot.start))
            }
            #expect(overlap?.code == .overlappingAppointment)
            try await setup.system.appointments.setBookingRule("booking.department_days_between", to: "3")
            let later = try #require(setup.free.first { $0.start > slot.start.addingTimeInterval(86_400) && $0.start < slot.start.addingTimeInterval(2 * 86_400) })
            let close = await clinicError {
                _ = try await setup.system.appointments.book(clientId: anna, departmentId: setup.therapy, at: .instant(later.start))
            }
            #expect(close?.code == .tooClose)
            #expect(try await onOwnThread { try store.reading { tx in try tx.storedAppointments(ofClient: boris).count } } == 0)

            // A move: BEGIN, the appointment with what its change is decided on, the booking's
            // locks and gather, the one write, COMMIT. The notes come back opened.
            let target = try #require(setup.free.first { $0.doctorId == slot.doctorId && $0.start > slot.start })
            var sentBefore = store.statementsSent.current
            let moved = try await setup.system.appointments.reschedule(id, clientId: anna, to: .instant(target.start))
            #expect(store.statementsSent.current - sentBefore == 6)
            #expect(moved.startsAt == target.start && moved.notes == "Knee, left" && moved.doctorId == slot.doctorId)
            // A cancellation: BEGIN, the appointment's facts, the one write, COMMIT.
            sentBefore = store.statementsSent.current
            let cancelled = try await setup.system.appointments.cancel(id, clientId: anna)
            #expect(store.statementsSent.current - sentBefore == 4)
            #expect(cancelled.status == .cancelled && cancelled.notes == "Knee, left")
            let events = try await onOwnThread { try setup.system.appointments.history(id, clientId: anna).map(\.event) }
            #expect(events == ["booked", "rescheduled", "cancelled"])
            // Another patient's appointment is not theirs to change, and nothing changes.
            let notYours = await clinicError { _ = try await setup.system.appointments.cancel(id, clientId: boris) }
            #expect(notYours?.key == .notYourAppointment)

            // With an Idempotency-Key, in the same awaited transaction: BEGIN, the purge (the
            // first request's), the key's lock, the kept answer's look-up with the key check,
            // a savepoint, the booking's locks, gather and write, the answer kept, COMMIT. A
            // retry: BEGIN, the lock, the look-up, COMMIT.
            let idempotency = IdempotencyStore(database: store, now: { Self.now })
            let keeping = AnswerKeeping<Appointment>(store: idempotency, key: "book-1", fingerprint: "f") { outcome in
                .init(status: 201, body: Data(String(describing: try outcome.get().id ?? 0).utf8))
            }
            let keyed = try #require(setup.free.first { $0.doctorId != slot.doctorId && $0.start > target.start.addingTimeInterval(7200) })
            func bookKeyed() async throws -> IdempotencyStore.Response {
                try await setup.system.appointments.book(clientId: boris, departmentId: setup.therapy, at: .instant(keyed.start),
                                                         doctorId: keyed.doctorId, keeping: keeping)
            }
            sentBefore = store.statementsSent.current
            let first = try await bookKeyed()
            #expect(store.statementsSent.current - sentBefore == 10)
            sentBefore = store.statementsSent.current
            let replay = try await bookKeyed()
            #expect(store.statementsSent.current - sentBefore == 4)
            #expect(!first.replayed && replay.replayed && replay.body == first.body)
            let borisBooked = try await onOwnThread { try store.reading { tx in try tx.storedAppointments(ofClient: boris) } }
            #expect(borisBooked.map { String($0.id ?? 0) } == [String(decoding: first.body, as: UTF8.self)])
            // A refusal by the rules is kept after the savepoint is rolled back to: a second
            // request for the same time under another key, by Anna.
            let other = AnswerKeeping<Appointment>(store: idempotency, key: "book-2", fingerprint: "f") { outcome in
                switch outcome {
                case .success: .init(status: 201, body: Data())
                case .failure(let error): .init(status: 409, body: Data(error.code.rawValue.utf8))
                }
            }
            for expectReplay in [false, true] {
                let refused = try await setup.system.appointments.book(clientId: anna, departmentId: setup.therapy, at: .instant(keyed.start),
                                                                       doctorId: keyed.doctorId, keeping: other)
                #expect(refused.status == 409 && refused.body == Data("slot_taken".utf8) && refused.replayed == expectReplay)
            }
        }
    }

    /// Twenty bookings awaited at once on a pool of four connections, two of them for the same
    /// time: each answered, one of the pair `slot_taken`, every answered booking stored once.
    @Test func manyAwaitedBookingsAtOnceOnASmallPool() async throws {
        try await TestPostgres.withStore(maximumConnections: 4) { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            let setup = try await Self.setUp(store, patients: 20)
            try #require(setup.free.count >= 19)
            let asks = (0..<20).map { index in (setup.patients[index], setup.free[min(index, 18)]) }
            let outcomes = await withTaskGroup(of: Result<Appointment, ClinicError>.self) { group in
                for (patient, slot) in asks {
                    group.addTask {
                        do {
                            return .success(try await setup.system.appointments.book(clientId: patient, departmentId: setup.therapy,
                                                                                      at: .instant(slot.start), doctorId: slot.doctorId))
                        } catch let error as ClinicError {
                            return .failure(error)
                        } catch {
                            return .failure(ClinicError(.internalError, .internalError, "\(error)"))
                        }
                    }
                }
                var all: [Result<Appointment, ClinicError>] = []
                for await outcome in group { all.append(outcome) }
                return all
            }
            let booked = outcomes.compactMap { try? $0.get() }
            let refused = outcomes.compactMap { if case .failure(let error) = $0 { error.code } else { nil } }
            #expect(booked.count == 19 && refused == [.slotTaken], "\(refused)")
            let stored = try await onOwnThread {
                try store.reading { tx in try setup.patients.flatMap { try tx.storedAppointments(ofClient: $0) } }
            }
            #expect(Set(stored.compactMap(\.id)) == Set(booked.compactMap(\.id)))
        }
    }

    /// A session's look-up awaited: the one statement the synchronous one sends, outside a
    /// transaction, on a connection the task leases; the same answers.
    @Test func aSessionsLookUpAwaitedIsOneStatement() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            let setup = try await Self.setUp(store, patients: 1)
            let token = try await onOwnThread { try setup.system.clients.logIn(login: "patient0", password: "correct-horse-42").token }
            let before = store.statementsSent.current
            let client = try await setup.system.clients.signedInPatient(token: token)
            #expect(store.statementsSent.current - before == 1)
            #expect(client.id == setup.patients[0] && client.name == "Pat")
            let unknown = await clinicError { _ = try await setup.system.clients.signedInPatient(token: String(repeating: "b", count: 64)) }
            #expect(unknown?.code == .notLoggedIn)
            let clinicId = try #require(try await onOwnThread { try store.reading { tx in try tx.clinic(externalId: "LA1")?.id } })
            let staffToken = try await onOwnThread {
                _ = try setup.system.staff.addStaff(StaffInput(login: "dana", name: "Dana", surname: "Desk", role: .receptionist,
                                                               clinicId: clinicId, password: "counter-shift-73"))
                return try setup.system.staff.logIn(login: "dana", password: "counter-shift-73").token
            }
            let staffBefore = store.statementsSent.current
            let member = try await setup.system.staff.signedIn(token: staffToken)
            #expect(store.statementsSent.current - staffBefore == 1)
            #expect(member.login == "dana" && member.clinicId == clinicId)
        }
    }

    /// A department's slots awaited: the day's one statement, and the schedule's once (kept
    /// after); the same slots as the synchronous gather's.
    @Test func slotsAwaitedAreOneStatementOnceTheScheduleIsKept() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            let setup = try await Self.setUp(store, patients: 1)
            // Another department than the set-up's, whose schedule no request has read yet.
            let found = try await onOwnThread {
                try store.reading { tx in
                    try tx.departments(ofClinic: tx.clinic(externalId: "LA1")?.id ?? 0).first { $0.id != setup.therapy }?.id
                }
            }
            let other = try #require(found)
            var before = store.statementsSent.current
            let first = try await setup.system.slotsAwaited(departmentId: other).slots
            #expect(store.statementsSent.current - before == 2)
            before = store.statementsSent.current
            let again = try await setup.system.slotsAwaited(departmentId: other).slots
            #expect(store.statementsSent.current - before == 1)
            let blocking = try await onOwnThread { try setup.system.slots(departmentId: other).slots }
            #expect(!first.isEmpty && first == again && again == blocking)
            let therapy = try await setup.system.slotsAwaited(departmentId: setup.therapy).slots
            #expect(therapy.filter(\.isAvailable) == setup.free)
        }
    }

    /// A statement on a connection that closes while it waits is answered `busy`
    /// (`ClosedConnectionGuard`): postgres-nio would never answer one whose connection closed
    /// before its handler took it, which left bookings unanswered through a failover (CI).
    @Test func aStatementWhoseConnectionClosesIsAnsweredBusy() async throws {
        try await TestPostgres.withStore { store, _ in
            let outcome = try await store.withConnection { connection in
                // Closed by someone else a moment after the statement went out.
                Task {
                    try await Task.sleep(for: .milliseconds(200))
                    try await connection.close()
                }
                do {
                    _ = try await ClosedConnectionGuard.run(connection) { () async throws -> Int in
                        // A statement never answered.
                        while true { try await Task.sleep(for: .seconds(3600)) }
                    }
                    return "answered"
                } catch let error as ClinicError {
                    return error.key == .storeConnectionLost ? "busy" : error.code.rawValue
                }
            }
            #expect(outcome == "busy")
            // Closed before: refused at once, and an awaited statement on it too.
            let closed = try await store.withConnection { connection in
                try await connection.close()
                let tx = AwaitedConnection(connection: connection, logger: TestPostgres.logger, sent: store.statementsSent)
                do {
                    _ = try await tx.rows(SignedInStaffStatement([String(repeating: "a", count: 64)]))
                    return "answered"
                } catch let error as ClinicError {
                    return error.key == .storeConnectionLost ? "busy" : error.code.rawValue
                }
            }
            #expect(closed == "busy")
        }
    }
}
