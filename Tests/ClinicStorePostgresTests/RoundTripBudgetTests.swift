import ClinicKit
import ClinicTestPostgres
import Foundation
import Testing
@testable import ClinicStorePostgres

/// The round trips a hot request costs on PostgreSQL (issue 44's budgets), counted through the
/// store (`PostgresStore.statementsSent`: every statement, `BEGIN` and `COMMIT` included). A
/// request over its budget fails here, so the count cannot creep back.
@Suite struct RoundTripBudgetTests {
    static let now = Date(timeIntervalSince1970: 1_795_348_800)

    /// A bearer token's look-up (every signed-in request): one statement, not a read
    /// transaction of five (BEGIN, the session, the patient, the key check, COMMIT).
    @Test func aBearerTokensLookUpIsOneRoundTrip() async throws {
        try await TestPostgres.withStore { store, server in
            try await store.migrate(try TestPostgres.migrations())
            try await onOwnThread {
                let now = Self.now
                let system = ClinicSystem(store: store, resources: nil,
                                          hasher: PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1)),
                                          now: { now })
                _ = try system.clinics.importClinics(Data("""
                    external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
                    LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE,0,1,America/Los_Angeles
                    LA2,Children's Hospital,4650 Sunset Blvd,LOS ANGELES,CA,34.10,-118.29,CHILDREN,1,1,America/Los_Angeles
                    """.utf8), demo: true)
                _ = try system.clients.registerUser(RegistrationRequest(
                    login: "anna", password: "correct-horse-42", name: "Anna", surname: "Smith", street: "Main Street",
                    house: "12", city: "Los Angeles", acceptedPrivacy: true))
                let token = try system.clients.logIn(login: "anna", password: "correct-horse-42").token

                func roundTrips(_ body: () throws -> Void) rethrows -> Int {
                    let before = store.statementsSent.current
                    try body()
                    return store.statementsSent.current - before
                }
                var client: Client?
                #expect(try roundTrips { client = try system.clients.currentUser(token: token) } == 1)
                // The sealed fields opened under the store's key: the whole patient, not only the session.
                #expect(client?.name == "Anna" && client?.street == "Main Street")
                // An unknown token costs the same one statement and is refused; a malformed one costs none.
                let unknown = String(repeating: "a", count: 64)
                #expect(roundTrips { #expect(throws: ClinicError.self) { _ = try system.clients.currentUser(token: unknown) } } == 1)
                #expect(roundTrips { #expect(throws: ClinicError.self) { _ = try system.clients.currentUser(token: "x") } } == 0)
                // After the session ends, the same token is refused.
                try system.clients.logOut(token: token)
                #expect(throws: ClinicError.self) { _ = try system.clients.currentUser(token: token) }

                // A staff session's look-up: one statement too.
                let clinicId = try #require(try store.reading { tx in try tx.clinic(externalId: "LA1")?.id })
                _ = try system.staff.addStaff(StaffInput(login: "dana", name: "Dana", surname: "Desk", role: .receptionist,
                                                         clinicId: clinicId, password: "counter-shift-73"))
                let staffToken = try system.staff.logIn(login: "dana", password: "counter-shift-73").token
                var member: StaffMember?
                #expect(try roundTrips { member = try system.staff.current(token: staffToken) } == 1)
                #expect(member?.login == "dana")
                _ = try system.staff.logOut(token: staffToken)
                #expect(throws: ClinicError.self) { _ = try system.staff.current(token: staffToken) }

                // The nearest clinics, once the finder is kept: one statement (the directory's
                // version, and a specialization's clinics), where two read transactions took six.
                let point = try #require(Coordinate(latitude: 34.0, longitude: -118.2))
                _ = try system.clinics.nearest(to: point)
                var nearest: [NearbyClinic] = []
                #expect(try roundTrips { nearest = try system.clinics.nearest(to: point, NearestQuery(limit: 5)) } == 1)
                #expect(nearest.map(\.clinic.externalId) == ["LA1", "LA2"])
                #expect(try roundTrips { nearest = try system.clinics.nearest(to: point, NearestQuery(limit: 5, specialization: "pediatrics")) } == 1)
                #expect(nearest.map(\.clinic.externalId) == ["LA2"], "only the children's hospital has pediatrics")
                // An unknown specialization is still refused by name.
                #expect(throws: ClinicError.self) { _ = try system.clinics.nearest(to: point, NearestQuery(specialization: "astrology")) }

                // A department's slots (12 round trips for two doctors before, 18 earlier): the
                // day's part (exceptions, taken times, settings, the visit type) in one statement
                // with the schedule's version, and the schedule (the department, its clinic, its
                // doctors and their hours) once more only when the one kept is of another version.
                // With a booking, a hold and exceptions:
                let therapy = try #require(try system.departments.getDepartmentsByClinicId(clinicId)
                    .first { $0.specialization == "therapy" }?.id)
                var before: [Slot] = []
                #expect(try roundTrips { before = try system.appointments.slots(departmentId: therapy) } == 2)
                before = before.filter(\.isAvailable)
                let doctors = Array(Set(before.map(\.doctorId))).sorted()
                try #require(doctors.count == 2 && before.count > 10)
                let patient = try #require(try system.clients.registerUser(RegistrationRequest(
                    login: "boris", password: "correct-horse-42", name: "Boris", surname: "Ivanov", street: "Main Street",
                    house: "14", city: "Los Angeles", acceptedPrivacy: true)).id)
                let anna = try #require(try system.clients.logIn(login: "anna", password: "correct-horse-42").client.id)
                let booked = try #require(before.first { $0.doctorId == doctors[0] })
                _ = try system.appointments.createAppointment(clientId: anna, departmentId: therapy, at: .instant(booked.start))
                let held = try #require(before.first { $0.doctorId == doctors[1] })
                _ = try system.appointments.holdSlot(clientId: patient, departmentId: therapy, doctorId: doctors[1], at: held.start)
                let tuesday = try #require(LocalDateTime(year: 2026, month: 11, day: 24, hour: 0, minute: 0))
                _ = try store.writing { tx in
                    try tx.insertWorkingException(WorkingException(id: nil, doctorId: doctors[0], day: tuesday.dayText, startMinute: nil,
                                                                   endMinute: nil, slotMinutes: nil))
                    try tx.insertWorkingException(WorkingException(id: nil, doctorId: doctors[1], day: tuesday.dayText, startMinute: 600,
                                                                   endMinute: 720, slotMinutes: 30))
                }
                var slots: [Slot] = []
                #expect(try roundTrips { slots = try system.slots(departmentId: therapy).slots } == 1)
                #expect(slots.contains { $0.doctorId == booked.doctorId && $0.start == booked.start && $0.isTaken })
                #expect(slots.contains { $0.doctorId == held.doctorId && $0.start == held.start && $0.isTaken })
                #expect(try roundTrips { _ = try system.slots(departmentId: therapy, doctorId: doctors[1]) } == 1)
                // With a visit type (read in the same statement).
                let admin = try system.staff.addStaff(StaffInput(login: "olga", name: "Olga", surname: "Admin", role: .clinicAdmin,
                                                                 clinicId: clinicId, password: "counter-shift-73"))
                let visit = try #require(try system.staff.addVisitType(admin, departmentId: therapy, nameEn: "Long visit", nameRu: "Долгий приём",
                                                                       durationMinutes: 60, priceCents: 12_000).id)
                #expect(try roundTrips { slots = try system.slots(departmentId: therapy, visitTypeId: visit).slots } == 1)
                #expect(!slots.isEmpty && slots.allSatisfy { $0.end.timeIntervalSince($0.start) == 3600 })

                // A booking: BEGIN, the locks (and the new id), the gather, the one write,
                // COMMIT (18 and more before: each rule's read, then four writes). Budget 6.
                let free = try system.appointments.slots(departmentId: therapy).filter(\.isAvailable)
                let anyDoctor = try #require(free.first)
                var appointment: Appointment?
                #expect(try roundTrips { appointment = try system.appointments.createAppointment(
                    clientId: patient, departmentId: therapy, at: .instant(anyDoctor.start)) } <= 5)
                #expect(appointment?.doctorId == anyDoctor.doctorId && appointment?.startsAt == anyDoctor.start)
                // With a chosen doctor, notes and a visit type: the same four round trips and COMMIT.
                let later = try #require(try system.slots(departmentId: therapy, doctorId: doctors[1], visitTypeId: visit).slots
                    .first { $0.isAvailable && $0.start > anyDoctor.start.addingTimeInterval(7200) })
                #expect(try roundTrips { appointment = try system.appointments.createAppointment(
                    clientId: anna, departmentId: therapy, at: .instant(later.start), doctorId: doctors[1], notes: "Knee, left",
                    visitTypeId: visit) } <= 5)
                let stored = try #require(appointment)
                #expect(stored.notes == "Knee, left" && stored.endsAt == later.start.addingTimeInterval(3600))
                // What the write wrote: the appointment (its notes sealed to its id), its history and the message.
                let reread = try system.appointments.getAppointmentById(try #require(stored.id), clientId: anna)
                #expect(reread == stored)
                #expect(try system.appointments.history(try #require(stored.id), clientId: anna).map(\.event) == ["booked"])
                #expect(try store.reading { tx in try tx.inboxMessages(ofClient: anna, unreadOnly: false, limit: 10) }
                    .contains { $0.appointmentId == stored.id && $0.kind == .booked })
                // A refusal costs no more and writes nothing: the same time again is taken.
                let count = try store.reading { tx in try tx.storedAppointments(ofClient: patient).count }
                #expect(try roundTrips { #expect(throws: ClinicError.self) { _ = try system.appointments.createAppointment(
                    clientId: patient, departmentId: therapy, at: .instant(later.start), doctorId: doctors[1]) } } <= 5)
                #expect(try store.reading { tx in try tx.storedAppointments(ofClient: patient).count } == count)

                // The first and the last days a time can name are refused by the rules
                // (`slot_unavailable`), not by PostgreSQL's dates: the gather asks for no day of
                // year 0 (which PostgreSQL has not) nor of year 10000.
                for seconds: Int64 in [-62_135_596_800 + 36_000, 253_402_300_800 - 86_400 + 36_000] {
                    #expect { _ = try system.appointments.createAppointment(clientId: patient, departmentId: therapy,
                                                                             at: .instant(Date(seconds: seconds))) }
                        throws: { ($0 as? ClinicError)?.code == .slotUnavailable }
                }

                // A patient's move: BEGIN, the appointment with its settings and message context,
                // the booking's locks and gather, one write, COMMIT (six; eleven and more before).
                let moveTo = try #require(try system.appointments.rescheduleTimes(stored, from: LocalDateTime.of(later.start, in: TimeZone(identifier: "America/Los_Angeles")!).at(minuteOfDay: 0), days: 3)
                    .first { $0.start > later.start.addingTimeInterval(3600) })
                var moved: Appointment?
                #expect(try roundTrips { moved = try system.appointments.rescheduleAppointment(try #require(stored.id), clientId: anna,
                                                                                              to: .instant(moveTo.start)) } <= 6)
                #expect(moved?.startsAt == moveTo.start && moved?.notes == "Knee, left"
                        && moved?.endsAt == moveTo.start.addingTimeInterval(3600))
                #expect(try system.appointments.getAppointmentById(try #require(stored.id), clientId: anna) == moved)
                // A cancellation: BEGIN, the appointment with its settings and message context, one
                // write, COMMIT (four; ten before).
                var cancelled: Appointment?
                #expect(try roundTrips { cancelled = try system.appointments.cancelAppointment(try #require(stored.id), clientId: anna) } <= 4)
                #expect(cancelled?.status == .cancelled && cancelled?.notes == "Knee, left")
                #expect(try system.appointments.history(try #require(stored.id), clientId: anna).map(\.event)
                        == ["booked", "rescheduled", "cancelled"])
                #expect(try store.reading { tx in try tx.inboxMessages(ofClient: anna, unreadOnly: false, limit: 10) }
                    .filter { $0.appointmentId == stored.id }.map(\.kind) == [.cancelled, .rescheduled, .booked])
                // Someone else's appointment is refused, and costs the same.
                #expect(throws: ClinicError.self) { _ = try system.appointments.cancelAppointment(try #require(appointment?.id), clientId: patient) }

                // The one-statement gather reads what the seam's reads read (`BookingFacts.read`),
                // but for the id it reserves and the key check it brings along.
                // A booking with an Idempotency-Key, as the API makes it: BEGIN, the key's lock and
                // look-up, the joined write's savepoint, the booking's locks, gather and write, the
                // savepoint's release, the kept answer (sealed under the key check the gather
                // brought), COMMIT. A retry: BEGIN, the lock, the look-up, COMMIT (the kept answer
                // opened under the check the look-up's transaction reads once).
                let idempotency = IdempotencyStore(database: store, now: { now })
                _ = try idempotency.perform(clientId: anna, key: "purged-once", fingerprint: "f") { .init(status: 200, body: Data()) }
                let keyed = try #require(free.last { $0.doctorId == doctors[1] && abs($0.start.timeIntervalSince(booked.start)) > 7200 })
                func bookKeyed() throws -> IdempotencyStore.Response {
                    try idempotency.perform(clientId: anna, key: "book-1", fingerprint: "f") {
                        let made = try system.appointments.createAppointment(clientId: anna, departmentId: therapy, at: .instant(keyed.start),
                                                                         doctorId: doctors[1])
                        return IdempotencyStore.Response(status: 201, body: Data("{\"id\":\(made.id ?? 0)}".utf8))
                    }
                }
                var first: IdempotencyStore.Response?, replay: IdempotencyStore.Response?
                #expect(try roundTrips { first = try bookKeyed() } <= 10)
                #expect(try roundTrips { replay = try bookKeyed() } <= 5)
                #expect(first?.replayed == false && replay?.replayed == true && replay?.body == first?.body)

                // A hold: BEGIN, the booking's locks, the release of the patient's and expired
                // holds, the gather with the doctors' holds, the insert, COMMIT (ten before).
                var newHold: SlotHold?
                let holdAt = try #require(free.last { $0.doctorId == doctors[0] }).start
                #expect(try roundTrips { newHold = try system.appointments.holdSlot(clientId: patient, departmentId: therapy,
                                                                                  doctorId: doctors[0], at: holdAt) } <= 6)
                let hold = try #require(newHold)
                // Holding the same time again keeps the first expiry; holding another releases it.
                let again = try system.appointments.holdSlot(clientId: patient, departmentId: therapy, doctorId: doctors[0], at: holdAt)
                #expect(again.expiresAt == hold.expiresAt && again.id != hold.id)
                #expect(try store.reading { tx in try tx.liveSlotHolds(doctorId: doctors[0], overlapping: holdAt..<holdAt.addingTimeInterval(60),
                                                                         at: now) }.map(\.id) == [again.id])
                let day = later.start
                let asks = [
                    BookingFactsRequest(clientId: anna, departmentId: therapy, visitTypeId: visit, onlyDoctorId: nil,
                                        days: "2026-11-23"..."2026-11-25", span: day.addingTimeInterval(-86_400)..<day.addingTimeInterval(172_800),
                                        exceptAppointment: stored.id, exceptHold: nil, now: now),
                    BookingFactsRequest(clientId: patient, departmentId: therapy, visitTypeId: nil, onlyDoctorId: doctors[0],
                                        days: "2026-11-20"..."2026-12-31", span: now..<now.addingTimeInterval(40 * 86_400),
                                        exceptAppointment: nil, exceptHold: again.id, now: now),
                    BookingFactsRequest(clientId: patient, departmentId: therapy, visitTypeId: nil, onlyDoctorId: nil,
                                        days: "2026-11-20"..."2026-12-31", span: now..<now.addingTimeInterval(40 * 86_400),
                                        exceptAppointment: nil, exceptHold: nil, now: now),
                    BookingFactsRequest(clientId: 999_999, departmentId: 999_999, visitTypeId: 999_999, onlyDoctorId: nil,
                                        days: "2026-11-23"..."2026-11-25", span: now..<now.addingTimeInterval(86_400),
                                        exceptAppointment: nil, exceptHold: nil, now: now),
                    BookingFactsRequest(clientId: nil, departmentId: therapy, visitTypeId: nil, onlyDoctorId: doctors[1],
                                        days: "2026-11-23"..."2026-11-25", span: now..<now.addingTimeInterval(86_400),
                                        exceptAppointment: nil, exceptHold: nil, now: now),
                    BookingFactsRequest(clientId: anna, departmentId: therapy, visitTypeId: nil, onlyDoctorId: nil,
                                        days: "2026-11-20"..."2026-12-31", span: now..<now.addingTimeInterval(40 * 86_400),
                                        exceptAppointment: nil, exceptHold: nil, now: now, holds: true),
                ]
                for ask in asks {
                    let (gathered, read) = try store.writing { tx in (try tx.bookingFacts(ask), try BookingFacts.read(tx, ask)) }
                    var expected = read
                    expected.appointmentId = gathered.appointmentId
                    expected.personalDataKeyCheck = gathered.personalDataKeyCheck
                    #expect(gathered == expected)
                    #expect(gathered.appointmentId != nil)
                }
                // The doctors' live holds, when asked for: the patient's one.
                #expect(try store.writing { tx in try tx.bookingFacts(try #require(asks.last)) }.holds.map(\.id) == [again.id])
                // The asks see something: the taken times, the patient's appointments, the hours, the message's context.
                let full = try store.writing { tx in try tx.bookingFacts(asks[2]) }
                #expect(full.taken.values.joined().count >= 3 && full.patientAppointments.count == 1 && full.hours.count == 2
                        && full.exceptions.count == 2 && full.messageContext?.clinicName == "Adventist Medical Center"
                        && full.personalDataKeyCheck != nil && full.activeCount == 1)
                // With the department spacing rule set, the patient's visits in the department come
                // along in the same statement (no round trip more), as the seam's reads find them.
                try store.writing { tx in try tx.setSetting("booking.department_days_between", to: "6") }
                for ask in asks {
                    let (gathered, read) = try store.writing { tx in (try tx.bookingFacts(ask), try BookingFacts.read(tx, ask)) }
                    #expect(gathered.departmentVisits == read.departmentVisits)
                }
                #expect(try store.writing { tx in try tx.bookingFacts(asks[0]) }.departmentVisits.isEmpty == false)
                try store.writing { tx in try tx.setSetting("booking.department_days_between", to: "0") }

                // The slots' gather reads what the seam's reads read (`SlotFacts.read`), the kept
                // schedule included, for the department with its visit type, another
                // department's visit type, and no department.
                let days = "2026-11-20"..."2026-12-31", span = now..<now.addingTimeInterval(40 * 86_400)
                func slotFactsMatch(_ department: Int64, _ visitType: Int64?) throws -> Bool {
                    let gathered = try store.slotFacts(departmentId: department, visitTypeId: visitType, days: days, takenSpan: span, at: now)
                    let read = try store.reading { tx in
                        try SlotFacts.read(tx, departmentId: department, visitTypeId: visitType, days: days, takenSpan: span, at: now)
                    }
                    return gathered == read
                }
                let otherDepartment = try #require(try system.departments.getDepartmentsByClinicId(clinicId)
                    .first { $0.specialization != "therapy" }?.id)
                #expect(try slotFactsMatch(therapy, visit) && slotFactsMatch(otherDepartment, visit) && slotFactsMatch(999_999, nil))
                #expect(try store.slotFacts(departmentId: 999_999, visitTypeId: nil, days: days, takenSpan: span, at: now) == nil)

                // Another server (a store of its own on the same database) changes a doctor's
                // hours: this one's next slots request reads the schedule again (two round
                // trips), with no notice needed, and sees the new hours; the next is one again.
                let other = try TestPostgres.waitFor {
                    try await PostgresStore.open(store.url, environment: server.environment, logger: TestPostgres.logger, maximumConnections: 1)
                }
                let otherSystem = ClinicSystem(store: other, resources: nil,
                                               hasher: PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1)),
                                               now: { now })
                let olga = try otherSystem.staff.logIn(login: "olga", password: "counter-shift-73").member
                let evening = DoctorSchedule.Interval(startMinute: 1200, endMinute: 1260, slotMinutes: 30)
                for weekday in 1...7 {
                    _ = try otherSystem.staff.setHours(olga, doctorId: doctors[0], weekday: weekday, intervals: [evening], force: true)
                }
                try TestPostgres.waitFor { await other.shutdown() }
                #expect(try roundTrips { slots = try system.slots(departmentId: therapy, doctorId: doctors[0]).slots } == 2)
                let losAngeles = try #require(TimeZone(identifier: "America/Los_Angeles"))
                #expect(!slots.isEmpty && slots.allSatisfy { LocalDateTime.of($0.start, in: losAngeles).hour >= 20 })
                #expect(try slotFactsMatch(therapy, nil))
                #expect(try roundTrips { _ = try system.slots(departmentId: therapy) } == 1)
            }
        }
    }
}
