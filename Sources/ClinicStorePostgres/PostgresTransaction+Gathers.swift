import ClinicKit
import Foundation

// The gathers of the hot requests (issue 44): what one request's rules need, read in one
// statement (one round trip) with subqueries that aggregate rows as JSON. Each JSON object is
// turned into a row of ClinicKit's own (`StoredRowValues`, in SQLite's form: flags and whole
// numbers integers, days 'YYYY-MM-DD' text, instants whole seconds), so each model decodes
// through its one mapping, as from any other row.

extension PostgresTransaction {
    /// `ClinicStore.slotFacts` in one statement.
    func slotFacts(departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>, takenSpan: Range<Date>,
                   at now: Date) throws -> SlotFacts? {
        let doctorsOf = "SELECT id FROM doctors WHERE department_id = d.id AND is_active"
        guard let row = try row("""
            SELECT row_to_json(d)::text AS department,
                   (SELECT row_to_json(c)::text FROM clinics c WHERE c.id = d.clinic_id) AS clinic,
                   (SELECT coalesce(json_agg(row_to_json(x) ORDER BY x.id), '[]')::text
                    FROM doctors x WHERE x.department_id = d.id AND x.is_active) AS doctors,
                   (SELECT coalesce(json_agg(row_to_json(h) ORDER BY h.weekday, h.start_minute, h.id), '[]')::text
                    FROM working_hours h WHERE h.doctor_id IN (\(doctorsOf))) AS hours,
                   (SELECT coalesce(json_agg(json_build_object('id', e.id, 'doctor_id', e.doctor_id, 'day', to_char(e.day, 'YYYY-MM-DD'),
                                                               'start_minute', e.start_minute, 'end_minute', e.end_minute,
                                                               'slot_minutes', e.slot_minutes) ORDER BY e.day, e.id), '[]')::text
                    FROM working_exceptions e
                    WHERE e.doctor_id IN (\(doctorsOf)) AND e.day >= $2::date AND e.day <= $3::date) AS exceptions,
                   (SELECT coalesce(json_agg(json_build_array(t.doctor_id, t.s, t.e) ORDER BY t.s), '[]')::text FROM (
                        SELECT doctor_id, floor(extract(epoch FROM starts_at))::bigint AS s, floor(extract(epoch FROM ends_at))::bigint AS e
                        FROM appointments
                        WHERE doctor_id IN (\(doctorsOf)) AND \(AppointmentStatus.activeCondition) AND starts_at < $5 AND ends_at > $4
                        UNION ALL
                        SELECT doctor_id, floor(extract(epoch FROM starts_at))::bigint, floor(extract(epoch FROM ends_at))::bigint
                        FROM slot_holds
                        WHERE doctor_id IN (\(doctorsOf)) AND starts_at < $5 AND ends_at > $4 AND expires_at > $6) t) AS taken,
                   (SELECT coalesce(json_object_agg(key, value), '{}')::text FROM settings WHERE starts_with(key, 'booking.')) AS settings,
                   (SELECT row_to_json(v)::text FROM visit_types v WHERE v.id = $7::bigint) AS visit_type
            FROM departments d WHERE d.id = $1
            """, [departmentId, days.lowerBound, days.upperBound, takenSpan.lowerBound, takenSpan.upperBound, now, visitTypeId])
        else { return nil }
        func json(_ column: String) throws -> String { try row.value(column, in: "slot facts") }
        func optionalJSON(_ column: String) throws -> String? { try row.value(column, in: "slot facts") }

        let doctors = try JSONRows.rows(try json("doctors")).map(Doctor.init(row:))
        var hours: [Int64: [WorkingHours]] = [:], exceptions: [Int64: [WorkingException]] = [:], taken: [Int64: [Range<Date>]] = [:]
        for entry in try JSONRows.rows(try json("hours")).map(WorkingHours.init(row:)) { hours[entry.doctorId, default: []].append(entry) }
        for entry in try JSONRows.rows(try json("exceptions")).map(WorkingException.init(row:)) {
            exceptions[entry.doctorId, default: []].append(entry)
        }
        for triple in try JSONRows.decode([[Int64]].self, try json("taken")) {
            guard triple.count == 3 else { throw ClinicError(.storage, .storedValueUnreadable, "slot facts.taken", "?") }
            let start = Date(seconds: triple[1])
            taken[triple[0], default: []].append(start..<max(start, Date(seconds: triple[2])))
        }
        return SlotFacts(department: try Department(row: try JSONRows.row(try json("department"))),
                         clinic: try optionalJSON("clinic").map { try Clinic(row: try JSONRows.row($0)) },
                         doctors: doctors, hours: hours, exceptions: exceptions, taken: taken,
                         bookingSettings: try JSONRows.decode([String: String].self, try json("settings")),
                         visitType: try optionalJSON("visit_type").map { try VisitType(row: try JSONRows.row($0)) })
    }
}

/// Rows aggregated as JSON by PostgreSQL (`row_to_json`, `json_agg`), as rows of ClinicKit's own.
enum JSONRows {
    /// One value of a JSON object, in SQLite's form.
    private enum Cell: Decodable {
        case value(StoredCell)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .value(.null); return }
            if let number = try? container.decode(Int64.self) { self = .value(.integer(number)); return }
            if let number = try? container.decode(Double.self) { self = .value(.real(number)); return }
            if let flag = try? container.decode(Bool.self) { self = .value(.integer(flag ? 1 : 0)); return }
            self = .value(.text(try container.decode(String.self)))
        }

        var cell: StoredCell { if case .value(let cell) = self { cell } else { .null } }
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
