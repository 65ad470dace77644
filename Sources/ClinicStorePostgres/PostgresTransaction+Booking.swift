import ClinicKit
import Foundation
import PostgresNIO

// A booking's storage work on PostgreSQL in four round trips (issue 44; 18 and more before):
// BEGIN, the locks (with the new appointment's id), the gather, the write; then COMMIT.
//
// Under READ COMMITTED each statement reads a snapshot taken when it starts, so the locks must
// be a statement of their own, before the one that reads what they protect: a booking that
// waited for another's lock then reads that booking's committed rows. The gather is one
// statement of subqueries; the directory rows (a handful: the department, its clinic, the
// candidate doctors, their hours and exceptions) come as JSON objects read into rows of
// ClinicKit's own, and the taken times as text lists of whole seconds. The write is one
// data-modifying statement: the appointment, its history entry, the message and its delivery.

extension PostgresTransaction {
    func bookingFacts(_ ask: BookingFactsRequest) throws -> BookingFacts {
        try bookingGather(ask, appointmentId: try bookingLocks(ask, reservingId: true))
    }

    /// A hold's storage work before its write: the booking's locks (no id reserved), the
    /// release of the patient's holds and every expired one, then the booking's gather with the
    /// candidate doctors' live holds (three round trips).
    func holdFacts(_ ask: BookingFactsRequest) throws -> HoldFacts {
        var ask = ask
        ask.holds = true
        _ = try bookingLocks(ask, reservingId: false)
        let released = try rows(ReleaseHoldsStatement([ask.clientId, ask.now])).map(SlotHold.init(row:))
        return HoldFacts(facts: try bookingGather(ask, appointmentId: nil), released: HoldFacts.reported(released, ask))
    }

    func bookingLocks(_ ask: BookingFactsRequest, reservingId: Bool) throws -> Int64? {
        // 1. The locks, in one order everywhere: the candidate doctors' rows (FOR SHARE: a
        //    change of their hours, `lockDoctor`, waits for this booking and this booking for
        //    it), then each doctor's advisory lock by id (a hold and a booking of one doctor's
        //    time are one after the other: two tables, which no exclusion constraint spans),
        //    then the patient's (the active-appointment limit is counted under it). And the id
        //    the appointment will have, so that its notes and message are written with it.
        try value(Int64.self, BookingLocksStatement(Self.bookingLocksBinds(ask, reservingId: reservingId)))
    }

    func bookingGather(_ ask: BookingFactsRequest, appointmentId: Int64?) throws -> BookingFacts {
        // 2. The gather.
        guard let row = try row(BookingGatherStatement(Self.bookingGatherBinds(ask)))
        else { throw ClinicError(.storage, .storageFailure, "the booking's gather returned no row") }
        let facts = try Self.bookingFacts(row, appointmentId: appointmentId)
        keyCheck.withLock { $0 = .some(facts.personalDataKeyCheck) }
        return facts
    }

    static func bookingLocksBinds(_ ask: BookingFactsRequest, reservingId: Bool) -> [any PostgresBindable] {
        [ask.departmentId, ask.onlyDoctorId, ask.clientId, reservingId]
    }

    static func bookingGatherBinds(_ ask: BookingFactsRequest) -> [any PostgresBindable] {
        [ask.departmentId, ask.onlyDoctorId, ask.clientId, ask.visitTypeId, ask.days.lowerBound, ask.days.upperBound,
         ask.span.lowerBound, ask.span.upperBound, ask.now, ask.exceptAppointment ?? -1, ask.exceptHold ?? -1,
         clientsKeyCheckSetting, ask.holds]
    }

    /// The gather's row as the facts.
    static func bookingFacts(_ row: StoredRowValues, appointmentId: Int64?) throws -> BookingFacts {
        func text(_ column: String) throws -> String { try row.value(column, in: "booking facts") }
        func optionalText(_ column: String) throws -> String? { try row.value(column, in: "booking facts") }
        let check = try optionalText("key_check")

        let department = try optionalText("department").map { try Department(row: try JSONRows.row($0)) }
        let clinic = try optionalText("clinic").map { try Clinic(row: try JSONRows.row($0)) }
        let clientExists: Bool = try row.value("client_exists", in: "booking facts")
        var context: AppointmentMessageContext?
        if clientExists, let department, let clinic {
            let language: String? = try row.value("language", in: "clients")
            context = AppointmentMessageContext(
                language: language.flatMap(Language.init(rawValue:)), emailConfirmed: try row.value("email_confirmed", in: "clients"),
                clinicName: clinic.name, address: clinic.address, city: clinic.city, state: clinic.state, zip: clinic.zip,
                timeZone: clinic.timeZone, specialization: department.specialization)
        }
        return BookingFacts(
            clientExists: clientExists, department: department, clinic: clinic,
            visitType: try optionalText("visit_type").map { try VisitType(row: try JSONRows.row($0)) },
            doctors: try JSONRows.rows(try text("doctors")).map(Doctor.init(row:)), hours: try Self.hoursByDoctor(try text("hours")),
            exceptions: try Self.byDoctor(try text("exceptions")), taken: try Self.takenByDoctor(try text("taken")),
            patientAppointments: try Self.spans(try text("patient"), column: "patient").map { PatientSpan(appointmentId: $0.0, span: $0.1) },
            activeCount: try row.value("active_count", in: "booking facts"),
            bookingSettings: try JSONRows.decode([String: String].self, try text("settings")),
            messageContext: context, appointmentId: appointmentId, personalDataKeyCheck: check,
            holds: try optionalText("holds").map { try JSONRows.rows($0).map(SlotHold.init(row:)) } ?? [],
            departmentVisits: try optionalText("department_visits").map {
                try Self.spans($0, column: "department_visits").map { PatientSpan(appointmentId: $0.0, span: $0.1) }
            } ?? [])
    }

    /// The exceptions of the doctors `doctors` (a query of their ids) on the days `first`
    /// through `last` (parameters, 'YYYY-MM-DD'), as a JSON array of rows (`byDoctor`).
    static func exceptionsJSON(of doctors: String, first: String, last: String) -> String {
        """
        SELECT coalesce(json_agg(json_build_object('id', e.id, 'doctor_id', e.doctor_id, 'day', to_char(e.day, 'YYYY-MM-DD'),
                                                   'start_minute', e.start_minute, 'end_minute', e.end_minute,
                                                   'slot_minutes', e.slot_minutes) ORDER BY e.day, e.id), '[]')::text
        FROM working_exceptions e WHERE e.doctor_id IN (\(doctors)) AND e.day >= \(first)::date AND e.day <= \(last)::date
        """
    }

    /// Rows (of `appointments` or `slot_holds`, `alias.` when given) whose time overlaps
    /// `lower`..<`upper` (parameters or expressions), in the form the tables' exclusion
    /// constraints' GiST indexes answer: with `doctor_id` or `client_id` equal to one value, the
    /// index finds the rows of that doctor or patient within the span. The comparisons of the
    /// ends alone found the span only by scanning the doctor's or every active appointment
    /// (1.4 ms of a booking's gather with 6,000 appointments, growing with the table).
    static func overlapping(_ lower: String, _ upper: String, alias: String = "") -> String {
        "tstzrange(\(alias)starts_at, \(alias)ends_at) && tstzrange(\(lower), \(upper)) AND \(alias)starts_at < \(upper) AND \(alias)ends_at > \(lower)"
    }

    /// The times taken of the doctors `doctors` (a query of their ids) overlapping `lower`..<`upper`:
    /// active appointments but `exceptAppointment` and holds live at `now` but `exceptHold` and
    /// those of the patient `client` (whose own holds never stand in their way; all parameters), as a text list (`takenByDoctor`). Each doctor's rows are looked up
    /// through the doctor (`LATERAL`), so both tables' indexes are entered with the doctor and
    /// the span.
    static func takenList(of doctors: String, lower: String, upper: String, now: String, exceptAppointment: String,
                          exceptHold: String, exceptHoldsOf client: String = "NULL::bigint") -> String {
        """
        SELECT coalesce(string_agg(t.doctor_id || ' ' || t.s || ' ' || t.e, ',' ORDER BY t.s), '')
        FROM (\(doctors)) d (id) CROSS JOIN LATERAL (
            SELECT doctor_id, floor(extract(epoch FROM starts_at))::bigint AS s, floor(extract(epoch FROM ends_at))::bigint AS e
            FROM appointments
            WHERE doctor_id = d.id AND \(AppointmentStatus.activeCondition) AND \(overlapping(lower, upper))
                  AND id <> \(exceptAppointment)
            UNION ALL
            SELECT doctor_id, floor(extract(epoch FROM starts_at))::bigint, floor(extract(epoch FROM ends_at))::bigint
            FROM slot_holds
            WHERE doctor_id = d.id AND \(overlapping(lower, upper)) AND expires_at > \(now) AND id <> \(exceptHold)
                  AND client_id IS DISTINCT FROM \(client)) t
        """
    }

    /// The `booking.` settings as one JSON object.
    static let bookingSettingsJSON = "SELECT coalesce(json_object_agg(key, value), '{}')::text FROM settings WHERE starts_with(key, 'booking.')"

    /// `exceptionsJSON`'s text, by doctor.
    static func byDoctor(_ json: String) throws -> [Int64: [WorkingException]] {
        var exceptions: [Int64: [WorkingException]] = [:]
        for entry in try JSONRows.rows(json).map(WorkingException.init(row:)) { exceptions[entry.doctorId, default: []].append(entry) }
        return exceptions
    }

    /// A JSON array of `working_hours` rows, by doctor.
    static func hoursByDoctor(_ json: String) throws -> [Int64: [WorkingHours]] {
        var hours: [Int64: [WorkingHours]] = [:]
        for entry in try JSONRows.rows(json).map(WorkingHours.init(row:)) { hours[entry.doctorId, default: []].append(entry) }
        return hours
    }

    /// `takenList`'s text, by doctor.
    static func takenByDoctor(_ text: String) throws -> [Int64: [Range<Date>]] {
        var taken: [Int64: [Range<Date>]] = [:]
        for (doctor, span) in try spans(text, column: "taken") { taken[doctor, default: []].append(span) }
        return taken
    }

    /// "a s e,a s e": a key and a span in whole seconds (an end before the start read as the start).
    static func spans(_ text: String, column: String) throws -> [(Int64, Range<Date>)] {
        try text.split(separator: ",").map { entry in
            let parts = entry.split(separator: " ").compactMap { Int64($0) }
            guard parts.count == 3 else { throw ClinicError(.storage, .storedValueUnreadable, "booking facts.\(column)", String(entry)) }
            return (parts[0], Date(seconds: parts[1])..<Date(seconds: max(parts[1], parts[2])))
        }
    }

    static func changeAppointmentBinds(_ appointment: Appointment, _ event: AppointmentEvent,
                                       _ message: NewInboxMessage?) -> [any PostgresBindable] {
        [appointment.id, appointment.doctorId, appointment.doctorName, appointment.startsAt, appointment.endsAt,
         appointment.status.rawValue, appointment.updatedAt] + historyAndMessageBinds(event, message)
    }

    static func insertBookingBinds(_ id: Int64, _ appointment: Appointment, _ event: AppointmentEvent,
                                   _ message: NewInboxMessage?) -> [any PostgresBindable] {
        [id, appointment.clientId, appointment.clinicId, appointment.departmentId, appointment.doctorId, appointment.doctorName,
         appointment.startsAt, appointment.endsAt, appointment.status.rawValue, appointment.notes, appointment.createdAt,
         appointment.updatedAt, appointment.visitTypeId] + historyAndMessageBinds(event, message)
    }

    /// The booking's one write: the appointment with the id the gather gave, its history entry,
    /// the message and its delivery. A refusal by the exclusion constraints (`ON CONFLICT DO
    /// NOTHING` takes them as arbiters) writes nothing, and the transaction asks which slot is
    /// held, as `insertStoredAppointment` does.
    func insertBooking(_ appointment: Appointment, event: AppointmentEvent, message: NewInboxMessage?) throws -> Appointment {
        guard let id = appointment.id else {
            // No id reserved: the seam's writes one by one.
            return try insertBookingOneByOne(appointment, event: event, message: message)
        }
        let written = try value(Int64.self, InsertBookingStatement(Self.insertBookingBinds(id, appointment, event, message)))
        guard written != nil else {
            let span = appointment.startsAt..<max(appointment.startsAt, appointment.endsAt)
            if try doctorIsBooked(appointment.doctorId, overlapping: span, except: nil) { throw ClinicError(.slotTaken, .slotTaken) }
            if let client = appointment.clientId, try activeAppointment(ofClient: client, overlapping: span, except: nil) != nil {
                throw ClinicError(.overlappingAppointment, .overlappingUnknown)
            }
            throw ClinicError(.storage, .storageFailure, "an appointment was neither stored nor refused by a held slot")
        }
        return appointment
    }
}

// A patient's cancellation in three round trips and COMMIT (ten before), a move in five and
// COMMIT: the appointment with what its change is decided on, in one statement; then (a move)
// the booking's locks and gather; then one write.

extension PostgresTransaction {
    func appointmentChangeFacts(id: Int64) throws -> AppointmentChangeFacts? {
        guard let row = try row(AppointmentChangeFactsStatement([id, Self.clientsKeyCheckSetting]))
        else { return nil }
        return try Self.changeFacts(row)
    }

    /// `AppointmentChangeFactsStatement`'s row as the facts.
    static func changeFacts(_ row: StoredRowValues) throws -> AppointmentChangeFacts {
        let appointment = try Appointment(row: row)
        var context: AppointmentMessageContext?
        if appointment.clientId != nil, let clinicName: String = try row.value("message_clinic_name", in: "clinics") {
            // As `messageContext` reads it: a department that is gone has no specialization.
            let language: String? = try row.value("message_language", in: "clients")
            context = AppointmentMessageContext(
                language: language.flatMap(Language.init(rawValue:)),
                emailConfirmed: try row.value("message_email_confirmed", in: "clients"),
                clinicName: clinicName, address: try row.value("message_address", in: "clinics"),
                city: try row.value("message_city", in: "clinics"), state: try row.value("message_state", in: "clinics"),
                zip: try row.value("message_zip", in: "clinics"), timeZone: try row.value("message_time_zone", in: "clinics"),
                specialization: try row.value("message_specialization", in: "departments") ?? "")
        }
        return AppointmentChangeFacts(
            appointment: appointment,
            bookingSettings: try JSONRows.decode([String: String].self, try row.value("booking_settings", in: "settings")),
            messageContext: context, personalDataKeyCheck: try row.value("key_check", in: "settings"),
            clinicTimeZone: try row.value("message_time_zone", in: "clinics"))
    }

    /// The change's one write: the appointment's time, doctor and status (not its notes), its
    /// history entry, the message and its delivery. A refusal by the exclusion constraints
    /// fails the statement, and with it the transaction, as `slot_taken` or
    /// `overlapping_appointment`.
    @discardableResult
    func changeAppointment(_ appointment: Appointment, event: AppointmentEvent, message: NewInboxMessage?) throws -> Int64? {
        let changed: StoredRowValues?
        do {
            changed = try row(ChangeAppointmentStatement(Self.changeAppointmentBinds(appointment, event, message)))
        } catch let error as PSQLError where error.code == .server && error.serverInfo?[.sqlState] == "23P01" {
            throw PostgresErrorMapping.clinicError(error)
        }
        return try Self.changedMessageId(changed, appointment)
    }

    /// The message id `ChangeAppointmentStatement` returned; its row missing is the
    /// appointment's (`storage_failure`).
    static func changedMessageId(_ row: StoredRowValues?, _ appointment: Appointment) throws -> Int64? {
        guard let row else {
            throw ClinicError(.storage, .storageFailure, "appointments row \(appointment.id.map(String.init) ?? "without an id") not found")
        }
        return try row.value("message_id", in: "messages")
    }
}

extension PostgresTransaction {
    /// The rest of a write's one statement, after the CTE `source` that wrote the appointment's
    /// row and returns its id: the history entry, the message and its delivery (nothing when
    /// `source` wrote no row). Its parameters, from `$first`, are `historyAndMessageBinds`'.
    static func historyAndMessage(of source: String, parametersFrom first: Int) -> String {
        func p(_ offset: Int) -> String { "$\(first + offset)" }
        return """
            e AS (
                INSERT INTO appointment_events (appointment_id, event, actor, at, starts_at, doctor_id, reason, staff_id)
                SELECT id, \(p(0)), \(p(1)), \(p(2)), \(p(3)), \(p(4)), \(p(5)), \(p(6)) FROM \(source)),
            m AS (
                INSERT INTO messages (client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at)
                SELECT \(p(7))::bigint, \(p(8)), id, \(p(9))::bigint, \(p(10))::bigint, \(p(11)), \(p(12)), \(p(2))
                FROM \(source) WHERE \(p(7))::bigint IS NOT NULL
                RETURNING id),
            d AS (
                INSERT INTO deliveries (client_id, message_id, purpose, created_at, next_attempt_at)
                SELECT \(p(7))::bigint, id, 'message', \(p(2)), \(p(2)) FROM m WHERE \(p(13)))
            """
    }

    static func historyAndMessageBinds(_ event: AppointmentEvent, _ message: NewInboxMessage?) -> [any PostgresBindable] {
        [event.event, event.actor, event.at, event.startsAt, event.doctorId, event.reason, event.staffId,
         message?.clientId, message?.kind.rawValue ?? "", message?.clinicId, message?.staffId, message?.subject ?? "",
         message?.body ?? "", message?.emailed ?? false]
    }
}

/// Rows aggregated as JSON by PostgreSQL (`row_to_json`, `json_agg`), as rows of ClinicKit's own
/// (in SQLite's form: flags and whole numbers integers, days 'YYYY-MM-DD' text), so each model
/// decodes through its one mapping, as from any other row.
enum JSONRows {
    /// One value of a JSON object. Text is tried first: most columns are text, and each
    /// refused try costs a thrown error.
    private struct Cell: Decodable {
        let cell: StoredCell

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { cell = .null; return }
            if let text = try? container.decode(String.self) { cell = .text(text); return }
            if let number = try? container.decode(Int64.self) { cell = .integer(number); return }
            if let number = try? container.decode(Double.self) { cell = .real(number); return }
            cell = .integer(try container.decode(Bool.self) ? 1 : 0)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw ClinicError(.storage, .storedValueUnreadable, "json", "?")
        }
    }

    /// One JSON object as a row.
    static func row(_ text: String) throws -> StoredRowValues {
        StoredRowValues(try decode([String: Cell].self, text).mapValues(\.cell))
    }

    /// A JSON array of objects as rows.
    static func rows(_ text: String) throws -> [StoredRowValues] {
        try decode([[String: Cell]].self, text).map { StoredRowValues($0.mapValues(\.cell)) }
    }
}
