import ClinicKit
@testable import ClinicStoreSQLite
import ClinicTestPostgres
import Foundation
import GRDB
import Testing
@testable import ClinicStorePostgres

/// The appointment, client and geo areas of the storage seam on PostgreSQL
/// (PostgresTransaction+Appointments.swift, +Clients.swift, +Geo.swift): what SQLite's do, and
/// the store's own last word on double booking and on a patient's active-appointment count.
@Suite struct PostgresAppointmentSeamTests {
    // MARK: Fixtures

    /// A whole second, as the stores keep instants.
    static let base = Date(timeIntervalSince1970: 1_900_000_000)
    static func at(_ minutes: Int) -> Date { base.addingTimeInterval(TimeInterval(minutes * 60)) }
    static func span(_ from: Int, _ to: Int) -> Range<Date> { at(from)..<at(to) }
    static func rounded(_ date: Date) -> Date { Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)) }

    struct Fixture: Sendable {
        let clinic: Int64, otherClinic: Int64
        /// cardiology and dermatology at `clinic`, cardiology at `otherClinic`.
        let cardiology: Int64, dermatology: Int64, otherCardiology: Int64
        /// In cardiology (`inactive` deactivated); `elsewhere` in the other clinic's cardiology.
        let doctor: Int64, otherDoctor: Int64, inactive: Int64, elsewhere: Int64
    }

    static func id(_ tx: PostgresTransaction, _ sql: String, _ binds: [any PostgresBindable]) throws -> Int64 {
        guard let id = try tx.value(Int64.self, sql, binds) else { throw ClinicError(.internalError, .internalError, "no id") }
        return id
    }

    static func insertClinic(_ tx: PostgresTransaction, _ externalId: String, city: String = "Reno", cityKey: String = "reno",
                             state: String = "NV", lat: Double = 39.5, lon: Double = -119.8) throws -> Int64 {
        try id(tx, """
            INSERT INTO clinics (external_id, name, address, city, city_key, state, zip, lat, lon, is_pediatric, time_zone, phone)
            VALUES ($1, $2, '1 Main St', $3, $4, $5, '89501', $6, $7, $8, 'America/Los_Angeles', '+1 775 555 0100') RETURNING id
            """, [externalId, "Clinic " + externalId, city, cityKey, state, lat, lon, true])
    }

    static func insertDepartment(_ tx: PostgresTransaction, clinic: Int64, _ specialization: String) throws -> Int64 {
        try id(tx, "INSERT INTO departments (clinic_id, specialization) VALUES ($1, $2) RETURNING id", [clinic, specialization])
    }

    static func insertDoctor(_ tx: PostgresTransaction, department: Int64, _ name: String, active: Bool = true) throws -> Int64 {
        try id(tx, "INSERT INTO doctors (department_id, name, is_active) VALUES ($1, $2, $3) RETURNING id", [department, name, active])
    }

    static func fixture(_ tx: PostgresTransaction) throws -> Fixture {
        let clinic = try insertClinic(tx, "C1"), otherClinic = try insertClinic(tx, "C2")
        let cardiology = try insertDepartment(tx, clinic: clinic, "cardiology")
        let dermatology = try insertDepartment(tx, clinic: clinic, "dermatology")
        let otherCardiology = try insertDepartment(tx, clinic: otherClinic, "cardiology")
        let doctor = try insertDoctor(tx, department: cardiology, "Dr Ada")
        let inactive = try insertDoctor(tx, department: cardiology, "Dr Gone", active: false)
        let otherDoctor = try insertDoctor(tx, department: cardiology, "Dr Bob")
        let elsewhere = try insertDoctor(tx, department: otherCardiology, "Dr Cy")
        return Fixture(clinic: clinic, otherClinic: otherClinic, cardiology: cardiology, dermatology: dermatology,
                       otherCardiology: otherCardiology, doctor: doctor, otherDoctor: otherDoctor, inactive: inactive,
                       elsewhere: elsewhere)
    }

    static func client(_ login: String, lat: Double? = nil, lon: Double? = nil, home: Int64? = nil,
                       privacyAt: Date? = nil, privacyVersion: Int? = nil, created: Date = base) throws -> Client {
        try Client(row: Row([
            "id": nil, "login": login, "login_key": Client.key(forLogin: login), "password_hash": "hash-" + login,
            "name": "", "surname": "", "street": "", "house": "", "city": "Reno", "lat": lat, "lon": lon,
            "home_clinic_id": home, "preferred_language": "ru",
            "privacy_accepted_at": privacyAt.map { Int64($0.timeIntervalSince1970.rounded(.down)) }, "privacy_version": privacyVersion,
            "created_at": Int64(created.timeIntervalSince1970.rounded(.down)),
        ]))
    }

    static func appointment(client: Int64?, _ f: Fixture, doctor: Int64? = nil, start: Date, minutes: Int = 30,
                            status: String = "scheduled", notes: String = "", visitType: Int64? = nil,
                            created: Date = base) throws -> Appointment {
        try Appointment(row: Row([
            "id": nil, "client_id": client, "clinic_id": f.clinic, "department_id": f.cardiology, "doctor_id": doctor ?? f.doctor,
            "doctor_name": "Dr Ada", "starts_at": Int64(start.timeIntervalSince1970),
            "ends_at": Int64(start.timeIntervalSince1970) + Int64(minutes * 60), "status": status, "notes": notes,
            "created_at": Int64(created.timeIntervalSince1970.rounded(.down)),
            "updated_at": Int64(created.timeIntervalSince1970.rounded(.down)) + 7, "visit_type_id": visitType,
        ]))
    }

    static func event(_ appointment: Int64, _ event: String, at: Date, startsAt: Date? = nil, doctor: Int64? = nil,
                      reason: String? = nil, staff: Int64? = nil) throws -> AppointmentEvent {
        try AppointmentEvent(row: Row([
            "id": nil, "appointment_id": appointment, "event": event, "actor": staff == nil ? "patient" : "staff",
            "at": Int64(at.timeIntervalSince1970), "starts_at": startsAt.map { Int64($0.timeIntervalSince1970) },
            "doctor_id": doctor, "reason": reason, "staff_id": staff,
        ]))
    }

    /// `und-x-icu` (a natural-language order) on a column when the server has ICU, so that an
    /// ORDER BY or min() without COLLATE "C" would answer otherwise than SQLite's bytewise order.
    static func naturalOrder(_ tx: PostgresTransaction, _ table: String, _ column: String) throws {
        guard try tx.value(Bool.self, "SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')") == true else { return }
        try tx.execute("ALTER TABLE \(table) ALTER COLUMN \(column) TYPE text COLLATE \"und-x-icu\"")
    }

    // MARK: Appointments

    @Test func appointmentsRoundTripEveryFieldInOrder() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(TestPostgres.migrations())
            try await onOwnThread {
                try store.writeTransaction { tx in
                    let f = try Self.fixture(tx)
                    let anna = try tx.insertClient(Self.client("anna"), personal: Data([1]))
                    let boris = try tx.insertClient(Self.client("boris"), personal: Data([2]))
                    let type = try tx.insertVisitType(departmentId: f.cardiology, nameEn: "First", nameRu: "Первый", durationMinutes: 30,
                                                      priceCents: 5000)
                    let staff = try Self.id(tx, """
                        INSERT INTO staff_accounts (login, login_key, password_hash, name, surname, role, clinic_id, created_at)
                        VALUES ('desk', 'desk', 'x', 'Desk', 'Clerk', 'receptionist', $1, now()) RETURNING id
                        """, [f.clinic])

                    // Every field, the optional ones set; instants with a fraction are kept to the second below.
                    var first = try Self.appointment(client: anna, f, start: Self.at(120), minutes: 45, notes: "knee, «left»",
                                                     visitType: type, created: Self.base.addingTimeInterval(-0.25))
                    first.createdAt = Self.base.addingTimeInterval(-86_400.75)
                    first.updatedAt = Self.base.addingTimeInterval(0.999)
                    let stored = try tx.insertAppointment(first)
                    let firstId = try #require(stored.id)
                    var expected = first
                    expected.id = firstId
                    #expect(stored == expected, "returned as given, with its id")
                    expected.createdAt = Self.rounded(first.createdAt)
                    expected.updatedAt = Self.rounded(first.updatedAt)
                    #expect(try tx.appointment(id: firstId) == expected)
                    #expect(try tx.appointment(id: firstId)?.createdAt == Date(timeIntervalSince1970: 1_899_913_599))
                    #expect(try tx.appointment(id: firstId + 1000) == nil)

                    // The optional ones unset, another status; a patient's list by (start, id).
                    let orphan = try tx.insertAppointment(Self.appointment(client: nil, f, doctor: f.otherDoctor, start: Self.at(0),
                                                                           status: "completed"))
                    #expect(try tx.appointment(id: orphan.id!) == orphan)
                    #expect(orphan.clientId == nil && orphan.visitTypeId == nil)
                    let later = try tx.insertAppointment(Self.appointment(client: anna, f, start: Self.at(600), status: "confirmed"))
                    let cancelledEarly = try tx.insertAppointment(Self.appointment(client: anna, f, start: Self.at(120), status: "cancelled"))
                    let earliest = try tx.insertAppointment(Self.appointment(client: anna, f, doctor: f.otherDoctor, start: Self.at(-60),
                                                                             status: "no_show"))
                    _ = try tx.insertAppointment(Self.appointment(client: boris, f, start: Self.at(300)))
                    #expect(try tx.appointments(ofClient: anna).map(\.id) == [earliest.id, firstId, cancelledEarly.id, later.id])
                    #expect(try tx.appointments(ofClient: anna).map(\.status) == [.noShow, .scheduled, .cancelled, .confirmed])
                    #expect(try tx.appointments(ofClient: boris).count == 1)
                    #expect(try tx.appointments(ofClient: 999_999).isEmpty)

                    // A rewrite: every column; without a visit type the stored one stays (as GRDB's update).
                    var moved = expected
                    moved.clientId = boris
                    moved.doctorId = f.otherDoctor
                    moved.doctorName = "Dr Bob"
                    moved.departmentId = f.dermatology
                    moved.startsAt = Self.at(900)
                    moved.endsAt = Self.at(915)
                    moved.status = .arrived
                    moved.notes = ""
                    moved.updatedAt = Self.at(1)
                    try tx.updateAppointment(moved)
                    #expect(try tx.appointment(id: firstId) == moved)
                    var untyped = moved
                    untyped.visitTypeId = nil
                    untyped.status = .inProgress
                    try tx.updateAppointment(untyped)
                    #expect(try tx.appointment(id: firstId)?.visitTypeId == type)
                    #expect(try tx.appointment(id: firstId)?.status == .inProgress)
                    var gone = moved
                    gone.id = 999_999
                    #expect(clinicError { try tx.updateAppointment(gone) }?.code == .storage)

                    // Histories: the requested appointments', in the order written; every field.
                    let events = [
                        try Self.event(firstId, "booked", at: Self.at(-10), startsAt: Self.at(120), doctor: f.doctor),
                        try Self.event(later.id!, "booked", at: Self.at(-9), startsAt: Self.at(600), doctor: f.doctor),
                        try Self.event(firstId, "rescheduled", at: Self.at(-8), startsAt: Self.at(900), doctor: f.otherDoctor,
                                       staff: staff),
                        try Self.event(orphan.id!, "cancelled", at: Self.at(-7), reason: "account deleted"),
                        try Self.event(firstId, "arrived", at: Self.at(-6), staff: staff),
                    ]
                    for event in events { try tx.insertAppointmentEvent(event) }
                    let read = try tx.appointmentEvents(of: [orphan.id!, firstId])
                    #expect(read.map(\.event) == ["booked", "rescheduled", "cancelled", "arrived"])
                    #expect(read.compactMap(\.id) == read.compactMap(\.id).sorted() && Set(read.compactMap(\.id)).count == 4)
                    let withoutIds = read.map { event -> AppointmentEvent in
                        var event = event
                        event.id = nil
                        return event
                    }
                    #expect(withoutIds == [events[0], events[2], events[3], events[4]])
                    #expect(read[2].startsAt == nil && read[2].doctorId == nil && read[2].staffId == nil && read[2].actor == "patient")
                    #expect(read[1].staffId == staff && read[1].actor == "staff")
                    #expect(try tx.appointmentEvents(of: []).isEmpty)
                    #expect(try tx.appointmentEvents(of: [999_999]).isEmpty)
                    #expect(try tx.appointmentEvents(of: [later.id!]).map(\.event) == ["booked"])
                }
            }
        }
    }

    @Test func activeAppointmentsAreFoundByOverlapAndStatus() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(TestPostgres.migrations())
            let (f, ids) = try await onOwnThread { () -> (Fixture, [String: Int64]) in
                try store.writeTransaction { tx in
                    let f = try Self.fixture(tx)
                    var ids: [String: Int64] = [:]
                    for login in ["p1", "p2", "p3", "p4", "p5", "p6"] {
                        ids[login] = try tx.insertClient(Self.client(login), personal: Data())
                    }
                    // The doctor's day, written out of order: active ones 10:00-12:00, others around them.
                    let rows: [(String, String, Int64?, Int)] = [
                        ("inProgress", "in_progress", ids["p4"], 690), ("arrived", "arrived", ids["p3"], 660),
                        ("scheduled", "scheduled", ids["p1"], 600), ("confirmed", "confirmed", ids["p2"], 630),
                        ("cancelled", "cancelled", ids["p5"], 600), ("noShow", "no_show", ids["p5"], 615),
                        ("completed", "completed", ids["p1"], 540), ("orphan", "scheduled", nil, 720),
                    ]
                    for (name, status, client, minute) in rows {
                        ids[name] = try tx.insertAppointment(Self.appointment(client: client, f, start: Self.at(minute), status: status)).id
                    }
                    ids["otherDoctors"] = try tx.insertAppointment(Self.appointment(client: ids["p6"], f, doctor: f.otherDoctor,
                                                                                    start: Self.at(600))).id
                    ids["p1Tomorrow"] = try tx.insertAppointment(Self.appointment(client: ids["p1"], f, doctor: f.elsewhere,
                                                                                  start: Self.at(600 + 1440), status: "confirmed")).id
                    return (f, ids)
                }
            }
            try await onOwnThread {
                try store.readTransaction { (tx) throws in
                    // Spans of active appointments overlapping, by start; touching ends do not overlap.
                    #expect(try tx.activeAppointmentSpans(doctorId: f.doctor, overlapping: Self.span(615, 675))
                            == [Self.span(600, 630), Self.span(630, 660), Self.span(660, 690)])
                    #expect(try tx.activeAppointmentSpans(doctorId: f.doctor, overlapping: Self.span(0, 1440))
                            == [Self.span(600, 630), Self.span(630, 660), Self.span(660, 690), Self.span(690, 720), Self.span(720, 750)])
                    #expect(try tx.activeAppointmentSpans(doctorId: f.doctor, overlapping: Self.span(540, 600)).isEmpty)
                    #expect(try tx.activeAppointmentSpans(doctorId: f.doctor, overlapping: Self.span(750, 800)).isEmpty)
                    #expect(try tx.activeAppointmentSpans(doctorId: f.otherDoctor, overlapping: Self.span(0, 1440)) == [Self.span(600, 630)])
                    // Parts of a second: the bounds are taken to the second below, as SQLite's `seconds`.
                    let fraction = Self.at(629).addingTimeInterval(59.9)..<Self.at(640)
                    #expect(try tx.activeAppointmentSpans(doctorId: f.doctor, overlapping: fraction) == [Self.span(600, 630), Self.span(630, 660)])

                    #expect(try tx.doctorIsBooked(f.doctor, overlapping: Self.span(610, 620), except: nil))
                    #expect(try !tx.doctorIsBooked(f.doctor, overlapping: Self.span(610, 620), except: ids["scheduled"]))
                    #expect(try tx.doctorIsBooked(f.doctor, overlapping: Self.span(610, 640), except: ids["scheduled"]))
                    #expect(try !tx.doctorIsBooked(f.doctor, overlapping: Self.span(540, 600), except: nil), "completed, touching")
                    #expect(try !tx.doctorIsBooked(f.doctor, overlapping: Self.span(750, 780), except: nil))
                    #expect(try tx.doctorIsBooked(f.doctor, overlapping: Self.span(749, 780), except: nil), "an appointment without a patient")
                    #expect(try !tx.doctorIsBooked(f.inactive, overlapping: Self.span(0, 1440), except: nil))

                    #expect(try tx.activeAppointment(ofClient: ids["p1"]!, overlapping: Self.span(610, 620), except: nil) == ids["scheduled"])
                    #expect(try tx.activeAppointment(ofClient: ids["p1"]!, overlapping: Self.span(610, 620), except: ids["scheduled"]) == nil)
                    #expect(try tx.activeAppointment(ofClient: ids["p1"]!, overlapping: Self.span(540, 570), except: nil) == nil, "completed")
                    #expect(try tx.activeAppointment(ofClient: ids["p1"]!, overlapping: Self.span(2000, 2100), except: nil) == ids["p1Tomorrow"])
                    #expect(try tx.activeAppointment(ofClient: ids["p5"]!, overlapping: Self.span(0, 1440), except: nil) == nil)
                    #expect(try tx.activeAppointment(ofClient: ids["p3"]!, overlapping: Self.span(689, 700), except: nil) == ids["arrived"])
                    #expect(try tx.activeAppointment(ofClient: ids["p3"]!, overlapping: Self.span(690, 700), except: nil) == nil)

                    #expect(try tx.activeAppointmentCount(ofClient: ids["p1"]!, startingFrom: Self.at(0)) == 2)
                    #expect(try tx.activeAppointmentCount(ofClient: ids["p1"]!, startingFrom: Self.at(600)) == 2)
                    #expect(try tx.activeAppointmentCount(ofClient: ids["p1"]!, startingFrom: Self.at(600).addingTimeInterval(1)) == 1)
                    #expect(try tx.activeAppointmentCount(ofClient: ids["p1"]!, startingFrom: Self.at(3000)) == 0)
                    #expect(try tx.activeAppointmentCount(ofClient: ids["p5"]!, startingFrom: Self.at(0)) == 0)
                    #expect(try tx.activeAppointmentCount(ofClient: ids["p4"]!, startingFrom: Self.at(0)) == 1)
                }
                // The same counts in a write transaction (which first locks the patient).
                try store.writeTransaction { (tx) throws in
                    #expect(try tx.activeAppointmentCount(ofClient: ids["p1"]!, startingFrom: Self.at(0)) == 2)
                    #expect(try tx.activeAppointmentCount(ofClient: ids["p1"]!, startingFrom: Self.at(600).addingTimeInterval(1)) == 1)
                    #expect(try tx.activeAppointmentCount(ofClient: ids["p2"]!, startingFrom: Self.at(0)) == 1)
                }
            }
        }
    }

    /// The exclusion constraints refuse what the rules' checks might let through in a race: a
    /// doctor's overlap is `slot_taken`, the patient's own `overlapping_appointment`, whether or
    /// not the starts are equal; the operation itself throws the domain's error.
    @Test func doubleBookingsAreRefusedByTheConstraints() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(TestPostgres.migrations())
            let (f, anna, boris, booked) = try await onOwnThread { () -> (Fixture, Int64, Int64, Appointment) in
                try store.writeTransaction { tx in
                    let f = try Self.fixture(tx)
                    let anna = try tx.insertClient(Self.client("anna"), personal: Data())
                    let boris = try tx.insertClient(Self.client("boris"), personal: Data())
                    let booked = try tx.insertAppointment(Self.appointment(client: anna, f, start: Self.at(600)))
                    return (f, anna, boris, booked)
                }
            }
            /// The error the operation threw inside the transaction, and the one that left it.
            func refused(_ change: @escaping @Sendable (PostgresTransaction) throws -> Void) async throws -> (ClinicError?, ClinicError?) {
                try await onOwnThread { () -> (ClinicError?, ClinicError?) in
                    let inside = Inside()
                    let outside = clinicError {
                        try store.writeTransaction { tx in
                            do {
                                try change(tx)
                            } catch {
                                inside.error = error as? ClinicError
                                throw error
                            }
                        }
                    }
                    return (inside.error, outside)
                }
            }
            for (start, minutes) in [(600, 30), (615, 30), (590, 15), (605, 10), (570, 120)] {
                let (inside, outside) = try await refused { tx in
                    _ = try tx.insertAppointment(Self.appointment(client: boris, f, start: Self.at(start), minutes: minutes))
                }
                #expect(inside?.code == .slotTaken && inside?.key == .slotTaken, "\(start)+\(minutes): \(String(describing: inside))")
                #expect(outside?.code == .slotTaken, "\(start)+\(minutes)")
            }
            for (start, minutes) in [(600, 30), (610, 30), (595, 10)] {
                let (inside, outside) = try await refused { tx in
                    _ = try tx.insertAppointment(Self.appointment(client: anna, f, doctor: f.otherDoctor, start: Self.at(start),
                                                                  minutes: minutes))
                }
                #expect(inside?.code == .overlappingAppointment && inside?.key == .overlappingUnknown, "\(start)+\(minutes)")
                #expect(outside?.code == .overlappingAppointment, "\(start)+\(minutes)")
            }
            // A move onto the doctor's booked slot, or onto the patient's own time.
            let other = try await onOwnThread {
                try store.writeTransaction { tx in
                    try tx.insertAppointment(Self.appointment(client: boris, f, doctor: f.otherDoctor, start: Self.at(700)))
                }
            }
            let (moveInside, moveOutside) = try await refused { tx in
                var moved = other
                moved.doctorId = f.doctor
                moved.startsAt = Self.at(620)
                moved.endsAt = Self.at(650)
                try tx.updateAppointment(moved)
            }
            #expect(moveInside?.code == .slotTaken && moveOutside?.code == .slotTaken)
            let (ownInside, _) = try await refused { tx in
                _ = try tx.insertAppointment(Self.appointment(client: boris, f, doctor: f.elsewhere, start: Self.at(710)))
            }
            #expect(ownInside?.code == .overlappingAppointment)

            // Allowed: touching ends, the doctor's slot once cancelled, an inactive status over an
            // active one, and rewriting an appointment in its own slot.
            try await onOwnThread {
                try store.writeTransaction { tx in
                    _ = try tx.insertAppointment(Self.appointment(client: boris, f, start: Self.at(630)))
                    _ = try tx.insertAppointment(Self.appointment(client: boris, f, start: Self.at(590), minutes: 10))
                    _ = try tx.insertAppointment(Self.appointment(client: boris, f, start: Self.at(600), status: "cancelled"))
                    var again = booked
                    again.notes = "rewritten"
                    again.endsAt = Self.at(625)
                    try tx.updateAppointment(again)
                    var cancelled = booked
                    cancelled.status = .cancelled
                    try tx.updateAppointment(cancelled)
                    _ = try tx.insertAppointment(Self.appointment(client: boris, f, start: Self.at(605), minutes: 20))
                }
                try store.readTransaction { (tx) throws in
                    #expect(try tx.activeAppointmentSpans(doctorId: f.doctor, overlapping: Self.at(0)..<Self.at(1440))
                            == [Self.at(590)..<Self.at(600), Self.at(605)..<Self.at(625), Self.at(630)..<Self.at(660)])
                    #expect(try tx.appointments(ofClient: boris).filter { $0.status.isActive }.count == 4)
                }
            }
        }
    }

    /// Holds (migration 3): a live hold takes its doctor's time for `doctorIsTaken` and
    /// `takenSpans` (an expired one does not, the hold being booked does not); two overlapping
    /// holds are refused by the exclusion constraint, also when two servers insert them at once.
    @Test func holdsTakeTheirTimeAndNeverOverlap() async throws {
        try await TestPostgres.withStore { store, server in
            try await store.migrate(TestPostgres.migrations())
            let now = Self.at(0)
            @Sendable func hold(_ client: Int64, _ f: Fixture, start: Int, minutes: Int = 30, expires: Int = 5) -> SlotHold {
                SlotHold(clientId: client, clinicId: f.clinic, departmentId: f.cardiology, doctorId: f.doctor, visitTypeId: nil,
                         startsAt: Self.at(start), endsAt: Self.at(start + minutes), expiresAt: Self.at(expires), createdAt: now)
            }
            let (f, anna, boris, held) = try await onOwnThread { () -> (Fixture, Int64, Int64, SlotHold) in
                try store.writeTransaction { tx in
                    let f = try Self.fixture(tx)
                    let anna = try tx.insertClient(Self.client("anna"), personal: Data())
                    let boris = try tx.insertClient(Self.client("boris"), personal: Data())
                    _ = try tx.insertAppointment(Self.appointment(client: boris, f, start: Self.at(700)))
                    return (f, anna, boris, try tx.insertSlotHold(hold(anna, f, start: 600)))
                }
            }
            try await onOwnThread {
                try store.readTransaction { (tx) throws in
                    #expect(try tx.doctorIsTaken(f.doctor, overlapping: Self.span(615, 645), exceptAppointment: nil, exceptHold: nil, at: now))
                    #expect(try !tx.doctorIsTaken(f.doctor, overlapping: Self.span(615, 645), exceptAppointment: nil,
                                                  exceptHold: held.id, at: now), "the hold being booked")
                    #expect(try !tx.doctorIsTaken(f.doctor, overlapping: Self.span(615, 645), exceptAppointment: nil, exceptHold: nil,
                                                  at: Self.at(5)), "expired at its expiry")
                    #expect(try tx.doctorIsTaken(f.doctor, overlapping: Self.span(710, 720), exceptAppointment: nil, exceptHold: nil,
                                                 at: Self.at(5)), "a booking still takes its time")
                    #expect(try tx.takenSpans(doctorId: f.doctor, overlapping: Self.span(0, 1440), at: now, exceptAppointment: nil, exceptHold: nil)
                            == [Self.span(600, 630), Self.span(700, 730)])
                    #expect(try tx.takenSpans(doctorId: f.doctor, overlapping: Self.span(0, 1440), at: Self.at(5), exceptAppointment: nil, exceptHold: nil) == [Self.span(700, 730)])
                    #expect(try tx.slotHold(id: held.id ?? 0) == held)
                }
            }
            let overlapping = try await onOwnThread {
                clinicError { try store.writeTransaction { tx in _ = try tx.insertSlotHold(hold(boris, f, start: 620)) } }
            }
            #expect(overlapping?.code == .slotTaken)
            // Two servers holding one new time at once: exactly one gets it.
            let second = try await PostgresStore.open(store.url, environment: server.environment, logger: TestPostgres.logger)
            async let first: Bool = onOwnThread {
                (try? store.writeTransaction { tx in _ = try tx.insertSlotHold(hold(anna, f, start: 800)) }) != nil
            }
            async let other: Bool = onOwnThread {
                (try? second.writeTransaction { tx in _ = try tx.insertSlotHold(hold(boris, f, start: 810)) }) != nil
            }
            let won = try await [first, other]
            #expect(won.filter { $0 }.count == 1, "\(won)")
            await second.shutdown()
            // Expired holds are deleted; a patient's holds go with them.
            try await onOwnThread {
                try store.writeTransaction { tx in
                    try tx.deleteExpiredSlotHolds(at: Self.at(5))
                    #expect(try tx.slotHold(id: held.id ?? 0) == nil)
                    _ = try tx.insertSlotHold(hold(anna, f, start: 620, expires: 10))
                    try tx.deleteSlotHolds(ofClient: anna)
                    #expect(try tx.value(Int64.self, "SELECT count(*) FROM slot_holds WHERE client_id = $1", [anna]) == 0)
                }
            }
        }
    }

    /// Two servers booking for one patient at once: each counts the patient's active
    /// appointments, then inserts. The second's count waits for the first's transaction (the
    /// patient's advisory lock) and then sees its booking; a read transaction does not wait.
    @Test func theActiveCountOfAWriteWaitsForAnotherBookingOfThePatient() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(TestPostgres.migrations())
            let (f, anna, boris) = try await onOwnThread { () -> (Fixture, Int64, Int64) in
                try store.writeTransaction { tx in
                    (try Self.fixture(tx), try tx.insertClient(Self.client("anna"), personal: Data()),
                     try tx.insertClient(Self.client("boris"), personal: Data()))
                }
            }
            let counted = DispatchSemaphore(value: 0)
            let notHeldUp = DispatchSemaphore(value: 0)
            let timeline = Timeline()
            async let first: (Int, Bool) = onOwnThread {
                try store.writeTransaction { tx in
                    let count = try tx.activeAppointmentCount(ofClient: anna, startingFrom: Self.base)
                    counted.signal()
                    counted.signal()
                    counted.signal()
                    // The reader and the other patient count while this holds anna's lock (a
                    // minute at most, then the test fails instead of hanging); the second
                    // meanwhile has time to reach the lock and wait.
                    let waited = notHeldUp.wait(timeout: .now() + 60) == .success && notHeldUp.wait(timeout: .now() + 60) == .success
                    Thread.sleep(forTimeInterval: 0.3)
                    _ = try tx.insertAppointment(Self.appointment(client: anna, f, start: Self.at(600)))
                    timeline.mark("first done")
                    return (count, waited)
                }
            }
            async let second: Int = onOwnThread {
                counted.wait()
                return try store.writeTransaction { tx in
                    let count = try tx.activeAppointmentCount(ofClient: anna, startingFrom: Self.base)
                    timeline.mark("second counted")
                    _ = try tx.insertAppointment(Self.appointment(client: anna, f, doctor: f.otherDoctor, start: Self.at(700)))
                    return count
                }
            }
            async let reader: Int = onOwnThread {
                counted.wait()
                return try store.readTransaction { tx in
                    let count = try tx.activeAppointmentCount(ofClient: anna, startingFrom: Self.base)
                    timeline.mark("read counted")
                    notHeldUp.signal()
                    return count
                }
            }
            // Another patient is not held up by anna's lock.
            async let otherPatient: Int = onOwnThread {
                counted.wait()
                return try store.writeTransaction { tx in
                    let count = try tx.activeAppointmentCount(ofClient: boris, startingFrom: Self.base)
                    timeline.mark("other patient counted")
                    notHeldUp.signal()
                    return count
                }
            }
            let counts = try await (first, second, reader, otherPatient)
            #expect(counts.0.0 == 0)
            #expect(counts.0.1, "the reader and the other patient counted while anna's lock was held")
            #expect(counts.1 == 1, "the second count sees the first's committed booking")
            #expect(counts.2 == 0 && counts.3 == 0)
            let order = timeline.events
            func at(_ event: String) -> Int { order.firstIndex(of: event) ?? -1 }
            #expect(at("first done") >= 0 && at("second counted") > at("first done"), "\(order)")
            #expect(at("read counted") >= 0 && at("read counted") < at("first done"), "\(order)")
            #expect(at("other patient counted") >= 0 && at("other patient counted") < at("first done"), "\(order)")
            let total = try await onOwnThread {
                try store.readTransaction { tx in try tx.activeAppointmentCount(ofClient: anna, startingFrom: Self.base) }
            }
            #expect(total == 2)
        }
    }

    // MARK: The directory rows booking reads

    @Test func directoryRowsForBookingAndSlots() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(TestPostgres.migrations())
            try await onOwnThread {
                try store.writeTransaction { tx in
                    try Self.naturalOrder(tx, "departments", "specialization")
                    let f = try Self.fixture(tx)
                    let clinic = try #require(try tx.clinic(id: f.clinic))
                    #expect(clinic.id == f.clinic && clinic.externalId == "C1" && clinic.name == "Clinic C1" && clinic.city == "Reno"
                            && clinic.cityKey == "reno" && clinic.state == "NV" && clinic.zip == "89501" && clinic.lat == 39.5
                            && clinic.lon == -119.8 && clinic.isPediatric && !clinic.isHospital
                            && clinic.timeZone == "America/Los_Angeles" && clinic.phone == "+1 775 555 0100" && clinic.website == "")
                    #expect(try tx.clinic(id: 999_999) == nil)
                    let department = try #require(try tx.department(id: f.dermatology))
                    #expect(department.id == f.dermatology && department.clinicId == f.clinic
                            && department.specialization == "dermatology" && !department.isDemo)
                    #expect(try tx.department(id: 999_999) == nil)

                    let doctors = try tx.activeDoctors(inDepartment: f.cardiology)
                    #expect(doctors.map(\.id) == [f.doctor, f.otherDoctor])
                    #expect(doctors.map(\.name) == ["Dr Ada", "Dr Bob"] && doctors.allSatisfy { $0.isActive && !$0.isDemo })
                    #expect(try tx.activeDoctors(inDepartment: f.dermatology).isEmpty)

                    #expect(try tx.departmentsByClinic(specialization: "cardiology") == [f.clinic: f.cardiology,
                                                                                         f.otherClinic: f.otherCardiology])
                    #expect(try tx.departmentsByClinic(specialization: "neurology").isEmpty)
                    #expect(try tx.specializationExists("dermatology"))
                    #expect(try !tx.specializationExists("Dermatology"))
                    for key in ["alpha", "Zeta", "ärzte", "_x"] { _ = try Self.insertDepartment(tx, clinic: f.otherClinic, key) }
                    // Bytewise, as SQLite: upper case, "_", lower case, then non-ASCII; each once.
                    #expect(try tx.specializationKeys() == ["Zeta", "_x", "alpha", "cardiology", "dermatology", "ärzte"])

                    // The longest stretch: weekly or a day's hours (a day off counts nothing).
                    #expect(try tx.longestWorkingStretch(specialization: "cardiology") == 0)
                    let hours: [(Int64, Int, Int, Int)] = [(f.doctor, 3, 600, 700), (f.doctor, 1, 780, 900), (f.doctor, 1, 540, 720),
                                                          (f.otherDoctor, 2, 480, 960), (f.elsewhere, 5, 0, 300)]
                    for (doctor, weekday, start, end) in hours {
                        try tx.execute("""
                            INSERT INTO working_hours (doctor_id, weekday, start_minute, end_minute, slot_minutes) VALUES ($1, $2, $3, $4, 15)
                            """, [doctor, weekday, start, end])
                    }
                    #expect(try tx.longestWorkingStretch(specialization: "cardiology") == 480)
                    let exceptions: [(Int64, String, Int?, Int?)] = [(f.doctor, "2030-01-09", 60, 1200), (f.doctor, "2030-01-07", nil, nil),
                                                                    (f.doctor, "2030-01-05", 300, 400), (f.doctor, "2030-01-10", 0, 1440),
                                                                    (f.otherDoctor, "2030-01-07", 400, 500)]
                    for (doctor, day, start, end) in exceptions {
                        try tx.execute("""
                            INSERT INTO working_exceptions (doctor_id, day, start_minute, end_minute, slot_minutes)
                            VALUES ($1, $2::date, $3, $4, $5)
                            """, [doctor, day, start, end, start == nil ? nil : 30 as Int?])
                    }
                    #expect(try tx.longestWorkingStretch(specialization: "cardiology") == 1440)
                    #expect(try tx.longestWorkingStretch(specialization: "dermatology") == 0)
                    #expect(try tx.longestWorkingStretch(specialization: "nothing") == 0)

                    let weekly = try tx.workingHours(ofDoctor: f.doctor)
                    #expect(weekly.map { [$0.weekday, $0.startMinute, $0.endMinute, $0.slotMinutes] }
                            == [[1, 540, 720, 15], [1, 780, 900, 15], [3, 600, 700, 15]])
                    #expect(weekly.allSatisfy { $0.doctorId == f.doctor && $0.id != nil })
                    #expect(try tx.workingHours(ofDoctor: f.inactive).isEmpty)

                    let days = try tx.workingExceptions(ofDoctor: f.doctor, from: "2030-01-06", through: "2030-01-09")
                    #expect(days.map(\.day) == ["2030-01-07", "2030-01-09"])
                    #expect(days[0].isDayOff && days[0].endMinute == nil && days[0].slotMinutes == nil && days[0].doctorId == f.doctor)
                    #expect(days[1].startMinute == 60 && days[1].endMinute == 1200 && days[1].slotMinutes == 30)
                    #expect(try tx.workingExceptions(ofDoctor: f.doctor, from: "2030-01-05", through: "2030-01-10").map(\.day)
                            == ["2030-01-05", "2030-01-07", "2030-01-09", "2030-01-10"])
                    #expect(try tx.workingExceptions(ofDoctor: f.doctor, from: "2030-01-11", through: "2030-12-31").isEmpty)
                    #expect(try tx.workingExceptions(ofDoctor: f.otherDoctor, from: "2030-01-07", through: "2030-01-07").map(\.startMinute)
                            == [400])

                    // Visit types: by length then id; inactive ones only when asked.
                    let long = try tx.insertVisitType(departmentId: f.cardiology, nameEn: "Long", nameRu: "Долгий", durationMinutes: 45,
                                                      priceCents: 12_000)
                    let short = try tx.insertVisitType(departmentId: f.cardiology, nameEn: "Short", nameRu: "Короткий", durationMinutes: 15,
                                                       priceCents: nil)
                    let mid = try tx.insertVisitType(departmentId: f.cardiology, nameEn: "Mid", nameRu: "Средний", durationMinutes: 45,
                                                     priceCents: 0)
                    let elsewhere = try tx.insertVisitType(departmentId: f.dermatology, nameEn: "Skin", nameRu: "Кожа", durationMinutes: 20,
                                                           priceCents: 1)
                    #expect(Set([long, short, mid, elsewhere]).count == 4)
                    let read = try #require(try tx.visitType(id: long))
                    #expect(read.id == long && read.departmentId == f.cardiology && read.nameEn == "Long" && read.nameRu == "Долгий"
                            && read.durationMinutes == 45 && read.priceCents == 12_000 && read.isActive)
                    #expect(try tx.visitType(id: short)?.priceCents == nil)
                    #expect(try tx.visitType(id: 999_999) == nil)
                    #expect(try tx.visitTypes(ofDepartment: f.cardiology, includingInactive: false).map(\.id) == [short, long, mid])
                    try tx.deactivateVisitType(id: long)
                    #expect(try tx.visitType(id: long)?.isActive == false)
                    #expect(try tx.visitTypes(ofDepartment: f.cardiology, includingInactive: false).map(\.id) == [short, mid])
                    #expect(try tx.visitTypes(ofDepartment: f.cardiology, includingInactive: true).map(\.id) == [short, long, mid])
                    try tx.updateVisitType(id: mid, nameEn: "Middle", nameRu: "Средний приём", durationMinutes: 10, priceCents: nil)
                    let updated = try #require(try tx.visitType(id: mid))
                    #expect(updated.nameEn == "Middle" && updated.nameRu == "Средний приём" && updated.durationMinutes == 10
                            && updated.priceCents == nil && updated.isActive)
                    #expect(try tx.visitTypes(ofDepartment: f.cardiology, includingInactive: true).map(\.id) == [mid, short, long])
                    #expect(try tx.visitTypes(ofDepartment: f.dermatology, includingInactive: true).map(\.id) == [elsewhere])
                    #expect(try tx.visitTypes(ofDepartment: f.otherCardiology, includingInactive: true).isEmpty)

                    // Settings: one by key, by prefix (no wildcards), replaced in place.
                    #expect(try tx.setting("mail.from") == nil)
                    try tx.setSetting("mail.from", to: "a@example.org")
                    try tx.setSetting("mail.host", to: "smtp")
                    try tx.setSetting("mailXhost", to: "x")
                    try tx.setSetting("mail_host", to: "y")
                    try tx.setSetting("other", to: "z")
                    try tx.setSetting("mail.from", to: "b@example.org")
                    #expect(try tx.setting("mail.from") == "b@example.org")
                    #expect(try tx.settings(prefix: "mail.") == ["mail.from": "b@example.org", "mail.host": "smtp"])
                    #expect(try tx.settings(prefix: "mail").count == 4)
                    #expect(try tx.settings(prefix: "").count == 5)
                    #expect(try tx.settings(prefix: "nothing.").isEmpty)
                    #expect(try tx.value(Int.self, "SELECT count(*) FROM settings WHERE key = 'mail.from'") == 1)
                }
            }
        }
    }

    // MARK: Clients

    @Test func clientsRoundTripAndTheirLoginIsUnique() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(TestPostgres.migrations())
            let (f, anna, expected) = try await onOwnThread { () -> (Fixture, Int64, Client) in
                try store.writeTransaction { tx in
                    let f = try Self.fixture(tx)
                    #expect(try tx.personalDataKeyCheck() == nil)
                    let client = try Self.client("Anna", lat: 39.123456789, lon: -119.5, home: f.clinic,
                                                 privacyAt: Self.base.addingTimeInterval(3.9), privacyVersion: 3,
                                                 created: Self.base.addingTimeInterval(-5))
                    let anna = try tx.insertClient(client, personal: Data([0, 1, 2, 255]))
                    var expected = client
                    expected.id = anna
                    let stored = try #require(try tx.storedClient(id: anna))
                    #expect(stored.client == expected)
                    #expect(stored.client.privacyAcceptedAt == Self.base.addingTimeInterval(3))
                    #expect(stored.personal == Data([0, 1, 2, 255]))
                    #expect(try tx.storedClient(loginKey: "anna")?.client == expected)
                    #expect(try tx.storedClient(loginKey: "Anna") == nil)
                    #expect(try tx.storedClient(id: anna + 100) == nil)
                    #expect(try tx.clientExists(id: anna) && !tx.clientExists(id: anna + 100))
                    #expect(try tx.loginExists(loginKey: "anna") && !tx.loginExists(loginKey: "Anna") && !tx.loginExists(loginKey: "bob"))
                    #expect(try tx.value(Bool.self, "SELECT email_confirmed FROM clients WHERE id = $1", [anna]) == false)

                    // A taken login: refused, and the transaction goes on (nothing aborted it).
                    let taken = clinicError { _ = try tx.insertClient(Self.client("ANNA "), personal: Data()) }
                    #expect(taken?.code == .loginTaken && taken?.key == .loginTaken && taken?.arguments == ["ANNA "])
                    #expect(try tx.value(Int.self, "SELECT count(*) FROM clients") == 1)
                    let bob = try tx.insertClient(Self.client("bob"), personal: Data())
                    #expect(bob > anna)

                    // The key check: stored once, never replaced.
                    try tx.storePersonalDataKeyCheckIfMissing("check-1")
                    try tx.storePersonalDataKeyCheckIfMissing("check-2")
                    #expect(try tx.personalDataKeyCheck() == "check-1")
                    #expect(try tx.setting("encryption.key_check") == "check-1")
                    return (f, anna, expected)
                }
            }
            // Refused across transactions too, and the id of a refused insert is never reused.
            let refused = try await onOwnThread {
                clinicError { try store.writeTransaction { tx in _ = try tx.insertClient(Self.client("anna"), personal: Data()) } }
            }
            #expect(refused?.code == .loginTaken)

            try await onOwnThread {
                try store.writeTransaction { tx in
                    // A rewrite of every field; whether mail may go to the patient.
                    var changed = expected
                    changed.login = "Anya"
                    changed.loginKey = "anya"
                    changed.passwordHash = "new-hash"
                    changed.name = "n"
                    changed.surname = "s"
                    changed.street = "st"
                    changed.house = "h"
                    changed.city = "Sparks"
                    changed.lat = nil
                    changed.lon = nil
                    changed.homeClinicId = f.otherClinic
                    changed.preferredLanguage = "en"
                    changed.privacyAcceptedAt = nil
                    changed.privacyVersion = nil
                    changed.createdAt = Self.base
                    try tx.updateClient(changed, personal: Data([9]), hasEmail: true)
                    #expect(try tx.storedClient(id: anna)?.client == changed)
                    #expect(try tx.storedClient(id: anna)?.personal == Data([9]))
                    #expect(try tx.storedClient(loginKey: "anya")?.client.id == anna)
                    #expect(try tx.value(Bool.self, "SELECT email_confirmed FROM clients WHERE id = $1", [anna]) == true)
                    try tx.updateClient(changed, personal: Data(), hasEmail: false)
                    #expect(try tx.value(Bool.self, "SELECT email_confirmed FROM clients WHERE id = $1", [anna]) == false)
                    var missing = changed
                    missing.id = 999_999
                    #expect(clinicError { try tx.updateClient(missing, personal: Data(), hasEmail: false) }?.code == .storage)

                    try tx.setPasswordHash("hash-3", ofClient: anna)
                    #expect(try tx.storedClient(id: anna)?.client.passwordHash == "hash-3")
                    try tx.setPrivacyAccepted(ofClient: anna, version: 7, at: Self.base.addingTimeInterval(60.5))
                    let accepted = try tx.storedClient(id: anna)?.client
                    #expect(accepted?.privacyVersion == 7 && accepted?.privacyAcceptedAt == Self.base.addingTimeInterval(60))

                    // Calendar addresses: one per patient, replaced whole.
                    #expect(try tx.sealedCalendarToken(ofClient: anna) == nil)
                    #expect(try tx.calendarTokenOwner(tokenHash: "h1") == nil)
                    try tx.replaceCalendarToken(ofClient: anna, tokenHash: "h1", sealed: Data([1, 1]), at: Self.base)
                    #expect(try tx.sealedCalendarToken(ofClient: anna) == Data([1, 1]))
                    #expect(try tx.calendarTokenOwner(tokenHash: "h1") == anna)
                    try tx.replaceCalendarToken(ofClient: anna, tokenHash: "h2", sealed: Data([2, 2]), at: Self.base.addingTimeInterval(9.5))
                    #expect(try tx.sealedCalendarToken(ofClient: anna) == Data([2, 2]))
                    #expect(try tx.calendarTokenOwner(tokenHash: "h1") == nil)
                    #expect(try tx.calendarTokenOwner(tokenHash: "h2") == anna)
                    let created = try #require(try tx.row("SELECT created_at FROM calendar_feeds WHERE client_id = $1", [anna]))
                    #expect(try created.instant("created_at", in: "calendar_feeds") == Self.base.addingTimeInterval(9))
                    #expect(try tx.value(Int.self, "SELECT count(*) FROM calendar_feeds") == 1)
                    try tx.deleteCalendarToken(ofClient: anna)
                    #expect(try tx.sealedCalendarToken(ofClient: anna) == nil && tx.calendarTokenOwner(tokenHash: "h2") == nil)

                    // Leaving the appointments to the clinic, then the patient's row (their calendar address with it).
                    let bob = try #require(try tx.storedClient(loginKey: "bob")?.client.id)
                    let mine = try tx.insertStoredAppointment(Self.appointment(client: anna, f, start: Self.at(600), notes: "private"))
                    let past = try tx.insertStoredAppointment(Self.appointment(client: anna, f, start: Self.at(0), status: "completed", notes: "x"))
                    let his = try tx.insertStoredAppointment(Self.appointment(client: bob, f, start: Self.at(700), notes: "his"))
                    try tx.detachAppointments(ofClient: anna)
                    for id in [mine.id!, past.id!] {
                        let row = try tx.appointment(id: id)
                        #expect(row?.clientId == nil && row?.notes == "")
                    }
                    #expect(try tx.appointment(id: his.id!) == his)
                    #expect(try tx.appointments(ofClient: anna).isEmpty)
                    try tx.replaceCalendarToken(ofClient: anna, tokenHash: "h3", sealed: Data([3]), at: Self.base)
                    try tx.deleteClient(id: anna)
                    #expect(try !tx.clientExists(id: anna) && tx.storedClient(id: anna) == nil)
                    #expect(try tx.calendarTokenOwner(tokenHash: "h3") == nil)
                    #expect(try tx.clientExists(id: bob))
                    // A login freed by a deletion can be taken again, with a new id.
                    let again = try tx.insertClient(Self.client("anya"), personal: Data())
                    #expect(again > bob)
                }
            }
        }
    }

    // MARK: Geo

    @Test func geocodeCacheAndDirectoryPlaces() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(TestPostgres.migrations())
            try await onOwnThread {
                try store.writeTransaction { tx in
                    try Self.naturalOrder(tx, "clinics", "city")
                    try Self.naturalOrder(tx, "clinics", "state")
                    #expect(try tx.cachedGeocode(query: "reno nv") == nil)
                    #expect(try tx.clinicStates().isEmpty)
                    #expect(try tx.directoryCities(cityKey: "reno").isEmpty)

                    let geocode = CachedGeocode(latitude: 39.529_632_1, longitude: -119.813_803_4, precision: "city", source: "nominatim")
                    try tx.insertGeocode(query: "reno nv", geocode, at: Self.base.addingTimeInterval(0.5))
                    #expect(try tx.cachedGeocode(query: "reno nv") == geocode)
                    #expect(try tx.cachedGeocode(query: "Reno NV") == nil)
                    // One kept already stays as it is.
                    try tx.insertGeocode(query: "reno nv", CachedGeocode(latitude: 1, longitude: 2, precision: "zip", source: "x"),
                                         at: Self.base.addingTimeInterval(100))
                    #expect(try tx.cachedGeocode(query: "reno nv") == geocode)
                    try tx.countGeocodeHit(query: "reno nv")
                    try tx.countGeocodeHit(query: "reno nv")
                    try tx.countGeocodeHit(query: "nowhere")
                    let row = try #require(try tx.row("SELECT hits, created_at FROM geocode_cache WHERE query = 'reno nv'"))
                    #expect(try row.decode(Int64.self, forColumn: "hits") == 2)
                    #expect(try row.instant("created_at", in: "geocode_cache") == Self.base)
                    #expect(try tx.value(Int.self, "SELECT count(*) FROM geocode_cache") == 1)

                    // Cities: one per state, most clinics first, ties by state; a clinic's spelling (the least, bytewise).
                    let places: [(String, String, String, String, Double, Double)] = [
                        ("a", "Reno", "reno", "NV", 39.0, -119.0), ("b", "RENO", "reno", "NV", 40.0, -120.0),
                        ("c", "reno", "reno", "TX", 30.0, -100.0), ("d", "Reno", "reno", "CA", 38.0, -121.0),
                        ("e", "Sparks", "sparks", "NV", 39.5, -119.7), ("f", "Nowhere", "nowhere", "", 10.0, 10.0),
                        ("g", "Reno", "reno", "NV", 41.0, -121.0),
                    ]
                    for (external, city, key, state, lat, lon) in places {
                        _ = try Self.insertClinic(tx, external, city: city, cityKey: key, state: state, lat: lat, lon: lon)
                    }
                    #expect(try tx.clinicStates() == ["CA", "NV", "TX"])
                    let reno = try tx.directoryCities(cityKey: "reno")
                    #expect(reno.map(\.state) == ["NV", "CA", "TX"])
                    #expect(reno.map(\.clinics) == [3, 1, 1])
                    #expect(reno.map(\.name) == ["RENO", "Reno", "reno"])
                    #expect(abs(reno[0].latitude - 40.0) < 1e-9 && abs(reno[0].longitude - (-120.0)) < 1e-9)
                    #expect(reno[1] == DirectoryCity(latitude: 38.0, longitude: -121.0, state: "CA", name: "Reno", clinics: 1))
                    #expect(try tx.directoryCities(cityKey: "nowhere") == [DirectoryCity(latitude: 10, longitude: 10, state: "",
                                                                                         name: "Nowhere", clinics: 1)])
                    #expect(try tx.directoryCities(cityKey: "Reno").isEmpty)
                }
            }
        }
    }

    // MARK: Sealed notes

    /// An appointment's notes are sealed before the store sees them and opened after (issue
    /// 30); a note an older program left in clear is read as it is, sealed by the migration
    /// up, and every note is put back in clear before the migration's down part.
    @Test func notesAreSealedAtRestAndTheMigrationSealsAndOpensThem() async throws {
        try await TestPostgres.withStore { store, _ in
            let migrations = try TestPostgres.migrations()
            try await store.migrate(migrations)
            let (sealedId, legacyId) = try await onOwnThread {
                try store.writeTransaction { tx -> (Int64, Int64) in
                    let f = try Self.fixture(tx)
                    let anna = try tx.insertClient(Self.client("anna"), personal: Data([1]))
                    let sealed = try tx.insertAppointment(Self.appointment(client: anna, f, start: Self.at(60), notes: "Rash, «left» arm"))
                    #expect(sealed.notes == "Rash, «left» arm")
                    // As a program before the migration wrote it.
                    let legacy = try tx.insertStoredAppointment(Self.appointment(client: anna, f, start: Self.at(120), notes: "Knee"))
                    return (try #require(sealed.id), try #require(legacy.id))
                }
            }
            @Sendable func stored(_ id: Int64) throws -> String {
                try store.readTransaction { tx in try tx.value(String.self, "SELECT notes FROM appointments WHERE id = $1", [id]) ?? "" }
            }
            @Sendable func opened(_ id: Int64) throws -> String {
                try store.readTransaction { tx in try tx.appointment(id: id)?.notes ?? "" }
            }
            try await onOwnThread {
                let sealed = try stored(sealedId)
                #expect(sealed.hasPrefix("\u{1}") && !sealed.contains("Rash") && !sealed.contains("left"))
                #expect(try opened(sealedId) == "Rash, «left» arm")
                #expect(try opened(legacyId) == "Knee")
                #expect(try stored(legacyId) == "Knee")
            }
            // The versions after it go down and up with it (later migrations, such as 0008's undone check-ins).
            let fromSealed = migrations.map(\.version).filter { $0 >= PostgresStore.sealedNotesVersion }
            #expect(try await store.migrate(migrations, to: PostgresStore.sealedNotesVersion - 1) == fromSealed.reversed())
            try await onOwnThread { () throws -> Void in
                #expect(try stored(sealedId) == "Rash, «left» arm", "in clear before the version goes")
                #expect(try stored(legacyId) == "Knee")
            }
            #expect(try await store.migrate(migrations) == fromSealed)
            try await onOwnThread {
                for id in [sealedId, legacyId] {
                    #expect(try stored(id).hasPrefix("\u{1}"), "sealed by the migration up")
                }
                #expect(try opened(sealedId) == "Rash, «left» arm")
                #expect(try opened(legacyId) == "Knee")
                // A move and a cancellation keep the note, sealed once, not twice.
                try store.writeTransaction { tx in
                    var moved = try #require(try tx.appointment(id: sealedId))
                    moved.startsAt = Self.at(180); moved.endsAt = Self.at(210); moved.status = .cancelled
                    try tx.updateAppointment(moved)
                }
                #expect(try opened(sealedId) == "Rash, «left» arm")
                #expect(try stored(sealedId).hasPrefix("\u{1}"))
            }
        }
    }
}

/// The error an operation threw inside a transaction body (set on the body's thread, read after).
private final class Inside: @unchecked Sendable {
    var error: ClinicError?
}

/// What happened in which order, across threads.
private final class Timeline: @unchecked Sendable {
    private let lock = NSLock()
    private var marks: [String] = []
    func mark(_ event: String) { lock.withLock { marks.append(event) } }
    var events: [String] { lock.withLock { marks } }
}
