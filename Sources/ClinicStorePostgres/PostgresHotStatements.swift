import ClinicKit
import Foundation
import PostgresNIO

// The statements of the hot requests (a token's look-up, slots, nearest, a booking, a move, a
// cancellation), as postgres-nio's prepared statements: each connection parses and plans one
// once (the first time it runs it), then only binds and executes it. A booking's gather took
// about 0.9 ms of the database's time each time it was planned, 0.09 ms prepared (pgbench,
// `-M extended` against `-M prepared`, on this machine).
//
// A statement's parameter types are those of the Swift values bound to it (`PostgresBindable`'s
// `dataType`), declared when it is prepared, so PostgreSQL never has to guess them (a text
// bound where it would infer a `date` would otherwise be refused); every later use must bind the
// same types (it is checked, `HotStatementTypes`).

/// A hot path's statement: its SQL is a constant of its type, its name the type's.
protocol HotStatement: PostgresPreparedStatement where Row == PostgresRow {
    var bindings: PostgresBindings { get }
    var types: [PostgresDataType] { get }
}

extension HotStatement {
    static var bindingDataTypes: [PostgresDataType] { HotStatementTypes.shared.types(of: name) }

    /// The values as bound, once their types are checked against those the statement was
    /// first bound with (and is prepared with, `bindingDataTypes`).
    func makeBindings() throws -> PostgresBindings {
        try HotStatementTypes.shared.check(types, for: Self.name)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }

    static func bound(_ binds: [any PostgresBindable]) -> (PostgresBindings, [PostgresDataType]) {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds { bind.bind(into: &bindings) }
        return (bindings, binds.map { type(of: $0).dataType })
    }
}

/// The parameter types each hot statement was first bound with.
final class HotStatementTypes: Sendable {
    static let shared = HotStatementTypes()
    private let known = LockedBox<[String: [PostgresDataType]]>([:])

    func types(of name: String) -> [PostgresDataType] { known.withLock { $0[name] } ?? [] }

    func check(_ types: [PostgresDataType], for name: String) throws {
        let first = known.withLock { known in
            if let first = known[name] { return first }
            known[name] = types
            return types
        }
        guard first == types else {
            throw ClinicError(.internalError, .internalError, "\(name) bound with other types than before")
        }
    }
}

// MARK: The statements

/// A bearer token's look-up (`PostgresTransaction.signedInPatient`): $1 the token's hash, $2 the key check's setting.
struct SignedInPatientStatement: HotStatement {
    static let sql = """
        SELECT s.id AS session_id, s.client_id AS session_client_id, s.token_hash, s.last_used_at, s.idle_seconds, c.*,
               (SELECT value FROM settings WHERE key = $2) AS personal_key_check
        FROM sessions s JOIN clients c ON c.id = s.client_id
        WHERE s.token_hash = $1
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// What `GET /v1/me` shows besides the patient (`accountFacts`): $1 the patient, $2 the
/// personal-data key check's setting. One row: the phone's columns (NULL for none).
struct AccountFactsStatement: HotStatement {
    static let sql = """
        SELECT p.*, EXISTS (SELECT 1 FROM clients WHERE id = $1)::int AS client_exists,
               (SELECT count(*) FROM messages WHERE client_id = $1 AND read_at IS NULL) AS unread_count,
               (SELECT value FROM settings WHERE key = $2) AS key_check
        FROM (SELECT 1) AS one LEFT JOIN phones p ON p.client_id = $1
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// A staff token's look-up (`activeStaffSession`): $1 the token's hash.
struct SignedInStaffStatement: HotStatement {
    static let sql = """
        SELECT staff_accounts.*, staff_sessions.last_used_at AS session_last_used_at,
               staff_sessions.idle_seconds AS session_idle_seconds
        FROM staff_sessions JOIN staff_accounts ON staff_accounts.id = staff_sessions.staff_id
        WHERE staff_sessions.token_hash = $1 AND staff_accounts.is_active
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// What a nearest search reads besides the finder (`nearestSearchFacts`): $1 the specialization or NULL.
struct NearestSearchStatement: HotStatement {
    static let sql = """
        SELECT (SELECT version FROM directory_version WHERE id = 1) AS version,
               CASE WHEN $1::text IS NULL THEN NULL
                    ELSE (SELECT coalesce(string_agg(DISTINCT clinic_id::text, ','), '') FROM departments WHERE specialization = $1)
               END AS clinic_ids
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// A slots request's every-time part (`slotDayFacts`): $1 the department, $2…$3 the days,
/// $4..<$5 the span, $6 now, $7 the visit type or NULL.
struct SlotDayStatement: HotStatement {
    static let sql: String = {
        let doctorsOf = "SELECT x.id FROM doctors x WHERE x.department_id = $1 AND x.is_active"
        return """
            SELECT (SELECT version FROM schedule_version WHERE id = 1) AS version,
                   (\(PostgresTransaction.exceptionsJSON(of: doctorsOf, first: "$2", last: "$3"))) AS exceptions,
                   (\(PostgresTransaction.takenList(of: doctorsOf, lower: "$4", upper: "$5", now: "$6", exceptAppointment: "-1",
                                                    exceptHold: "-1"))) AS taken,
                   (\(PostgresTransaction.bookingSettingsJSON)) AS settings,
                   (SELECT row_to_json(v)::text FROM visit_types v WHERE v.id = $7::bigint) AS visit_type
            """
    }()
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// A department's schedule with its version (`departmentSchedule`): $1 the department.
struct DepartmentScheduleStatement: HotStatement {
    static let sql = """
        SELECT (SELECT version FROM schedule_version WHERE id = 1) AS version,
               row_to_json(p)::text AS department,
               (SELECT row_to_json(c)::text FROM clinics c WHERE c.id = p.clinic_id) AS clinic,
               (SELECT coalesce(json_agg(row_to_json(x) ORDER BY x.id), '[]')::text
                FROM doctors x WHERE x.department_id = p.id AND x.is_active) AS doctors,
               (SELECT coalesce(json_agg(row_to_json(h) ORDER BY h.weekday, h.start_minute, h.id), '[]')::text
                FROM working_hours h JOIN doctors x ON x.id = h.doctor_id
                WHERE x.department_id = p.id AND x.is_active) AS hours
        FROM departments p WHERE p.id = $1
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// A booking's (or a hold's) locks and the new appointment's id (`bookingFacts`, step 1): $1
/// the department, $2 the only doctor or NULL, $3 the patient or NULL, $4 whether to reserve an id.
struct BookingLocksStatement: HotStatement {
    static let sql = """
        SELECT CASE WHEN $4 THEN nextval(pg_get_serial_sequence('appointments', 'id')) END AS appointment_id,
               (SELECT count(*) FROM (
                    SELECT pg_advisory_xact_lock(hashtextextended('\(PostgresTransaction.doctorAdvisoryLockNamespace)' || d.id::text, 0))
                    FROM (SELECT x.id FROM doctors x WHERE \(BookingGatherStatement.candidates) ORDER BY x.id FOR SHARE) d) l) AS doctors,
               pg_advisory_xact_lock(hashtextextended('\(PostgresTransaction.clientAdvisoryLockNamespace)' || $3::bigint::text, 0))::text AS client
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// A booking's gather (`bookingFacts`, step 2): $1 the department, $2 the only doctor or NULL,
/// $3 the patient or NULL, $4 the visit type or NULL, $5…$6 the days, $7..<$8 the span, $9
/// now, $10 the appointment being moved or -1, $11 the hold being booked or -1, $12 the key
/// check's setting, $13 whether to gather the candidate doctors' live holds.
struct BookingGatherStatement: HotStatement {
    static let candidates = "x.department_id = $1 AND x.is_active AND ($2::bigint IS NULL OR x.id = $2::bigint)"
    static let sql: String = {
        let doctorsOf = "SELECT x.id FROM doctors x WHERE \(candidates)"
        // `BookingFactsRequest.departmentSpan`'s widening.
        let reach = "interval '\(Int(BookingFactsRequest.departmentReach / 86_400)) days'"
        return """
            SELECT EXISTS (SELECT 1 FROM clients WHERE id = $3::bigint) AS client_exists,
                   (SELECT preferred_language FROM clients WHERE id = $3::bigint) AS language,
                   (SELECT email_confirmed FROM clients WHERE id = $3::bigint) AS email_confirmed,
                   (SELECT row_to_json(p)::text FROM departments p WHERE p.id = $1) AS department,
                   (SELECT row_to_json(c)::text FROM clinics c WHERE c.id = (SELECT clinic_id FROM departments WHERE id = $1)) AS clinic,
                   (SELECT row_to_json(v)::text FROM visit_types v WHERE v.id = $4::bigint) AS visit_type,
                   (SELECT coalesce(json_agg(row_to_json(x) ORDER BY x.id), '[]')::text FROM doctors x WHERE \(candidates)) AS doctors,
                   (SELECT coalesce(json_agg(row_to_json(h) ORDER BY h.weekday, h.start_minute, h.id), '[]')::text
                    FROM working_hours h WHERE h.doctor_id IN (\(doctorsOf))) AS hours,
                   (\(PostgresTransaction.exceptionsJSON(of: doctorsOf, first: "$5", last: "$6"))) AS exceptions,
                   (\(PostgresTransaction.takenList(of: doctorsOf, lower: "$7", upper: "$8", now: "$9", exceptAppointment: "$10",
                                                    exceptHold: "$11", exceptHoldsOf: "$3::bigint"))) AS taken,
                   (SELECT coalesce(string_agg(a.id || ' ' || floor(extract(epoch FROM a.starts_at))::bigint || ' '
                                               || floor(extract(epoch FROM a.ends_at))::bigint, ',' ORDER BY a.starts_at, a.id), '')
                    FROM appointments a WHERE a.client_id = $3::bigint AND \(AppointmentStatus.activeCondition)
                    AND \(PostgresTransaction.overlapping("$7", "$8", alias: "a."))) AS patient,
                   (SELECT count(*) FROM appointments WHERE client_id = $3::bigint AND \(AppointmentStatus.activeCondition)
                    AND starts_at >= $9) AS active_count,
                   (\(PostgresTransaction.bookingSettingsJSON)) AS settings,
                   (SELECT value FROM settings WHERE key = $12) AS key_check,
                   CASE WHEN $13 THEN (
                       SELECT coalesce(json_agg(json_build_object(
                                  'id', h.id, 'client_id', h.client_id, 'clinic_id', h.clinic_id, 'department_id', h.department_id,
                                  'doctor_id', h.doctor_id, 'visit_type_id', h.visit_type_id,
                                  'starts_at', floor(extract(epoch FROM h.starts_at))::bigint,
                                  'ends_at', floor(extract(epoch FROM h.ends_at))::bigint,
                                  'expires_at', floor(extract(epoch FROM h.expires_at))::bigint,
                                  'created_at', floor(extract(epoch FROM h.created_at))::bigint)
                              ORDER BY h.doctor_id, h.starts_at, h.id), '[]')::text
                       FROM slot_holds h
                       WHERE h.doctor_id IN (\(doctorsOf)) AND \(PostgresTransaction.overlapping("$7", "$8", alias: "h."))
                             AND h.expires_at > $9)
                   END AS holds,
                   CASE WHEN coalesce((SELECT value FROM settings WHERE key = 'booking.department_days_between'), '0') <> '0' THEN (
                       SELECT coalesce(string_agg(a.id || ' ' || floor(extract(epoch FROM a.starts_at))::bigint || ' '
                                                  || floor(extract(epoch FROM a.ends_at))::bigint, ',' ORDER BY a.starts_at, a.id), '')
                       FROM appointments a WHERE a.client_id = $3::bigint AND a.department_id = $1
                            AND \(AppointmentStatus.activeCondition)
                            AND \(PostgresTransaction.overlapping("($7 - \(reach))", "($8 + \(reach))", alias: "a.")))
                   END AS department_visits
            """
    }()
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// A booking's one write (`insertBooking`): $1…$13 the appointment, then `historyAndMessageBinds`.
struct InsertBookingStatement: HotStatement {
    static let sql = """
        WITH a AS (
            INSERT INTO appointments (id, client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at, status,
                                      notes, created_at, updated_at, visit_type_id)
            OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
            ON CONFLICT DO NOTHING RETURNING id),
        \(PostgresTransaction.historyAndMessage(of: "a", parametersFrom: 14))
        SELECT id FROM a
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// An appointment with what its change is decided on (`appointmentChangeFacts`): $1 its id,
/// $2 the key check's setting.
struct AppointmentChangeFactsStatement: HotStatement {
    static let sql = """
        SELECT a.*,
               (\(PostgresTransaction.bookingSettingsJSON)) AS booking_settings,
               (SELECT value FROM settings WHERE key = $2) AS key_check,
               c.preferred_language AS message_language, c.email_confirmed AS message_email_confirmed,
               k.name AS message_clinic_name, k.address AS message_address, k.city AS message_city, k.state AS message_state,
               k.zip AS message_zip, k.time_zone AS message_time_zone, p.specialization AS message_specialization
        FROM appointments a
        LEFT JOIN clients c ON c.id = a.client_id
        LEFT JOIN clinics k ON k.id = a.clinic_id
        LEFT JOIN departments p ON p.id = a.department_id
        WHERE a.id = $1
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// A change's one write (`changeAppointment`): $1…$7 the appointment's new time, doctor and
/// status, then `historyAndMessageBinds`. Returns the appointment's id (no row: not found) and
/// the message's (NULL: none).
struct ChangeAppointmentStatement: HotStatement {
    static let sql = """
        WITH u AS (
            UPDATE appointments SET doctor_id = $2, doctor_name = $3, starts_at = $4, ends_at = $5, status = $6, updated_at = $7
            WHERE id = $1 RETURNING id),
        \(PostgresTransaction.historyAndMessage(of: "u", parametersFrom: 8))
        SELECT id, (SELECT id FROM m) AS message_id FROM u
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// A hold's release (`holdFacts`): every expired hold and the patient's own (not an offer's), $1
/// the patient, $2 now;
/// returns the patient's.
struct ReleaseHoldsStatement: HotStatement {
    static let sql = "DELETE FROM slot_holds WHERE expires_at <= $2 OR (client_id = $1 AND NOT for_offer) RETURNING *"
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}

/// A new hold (`insertSlotHold`): $1…$9 its fields; the exclusion constraint is the arbiter.
struct InsertHoldStatement: HotStatement {
    static let sql = """
        INSERT INTO slot_holds (client_id, clinic_id, department_id, doctor_id, visit_type_id, starts_at, ends_at, expires_at,
                                created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
        ON CONFLICT DO NOTHING RETURNING id
        """
    let bindings: PostgresBindings, types: [PostgresDataType]
    init(_ binds: [any PostgresBindable]) { let bound = Self.bound(binds); bindings = bound.0; types = bound.1 }
}
