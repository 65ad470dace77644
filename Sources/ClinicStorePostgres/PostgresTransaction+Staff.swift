import ClinicKit
import Foundation
import PostgresNIO

// The staff area of the seam on PostgreSQL (`StaffReading`, `StaffWriting`), as
// SQLiteTransaction+Staff.swift does it: staff accounts, their sessions, the clinic's day and
// the doctors' changes a clinic admin makes.

extension PostgresTransaction {
    func staffMember(id: Int64) throws -> StaffMember? {
        try row(Self.staffOfIdSQL, [id]).map(Self.staffMember(row:))
    }

    static let staffOfIdSQL = "SELECT * FROM staff_accounts WHERE id = $1"

    func staffMembers(ofClinic clinicId: Int64) throws -> [StaffMember] {
        try rows(Self.staffOfClinicSQL, [clinicId]).map(Self.staffMember(row:))
    }

    /// A clinic's ($1) staff accounts, by id.
    static let staffOfClinicSQL = "SELECT * FROM staff_accounts WHERE clinic_id = $1 ORDER BY id"

    func staffCredentials(loginKey: String) throws -> (member: StaffMember, passwordHash: String)? {
        try row(Self.staffOfLoginKeySQL, [loginKey]).map(Self.staffCredentials)
    }

    /// The staff account whose login's key is `$1`.
    static let staffOfLoginKeySQL = "SELECT * FROM staff_accounts WHERE login_key = $1"

    static func staffCredentials(_ row: StoredRowValues) throws -> (member: StaffMember, passwordHash: String) {
        (try staffMember(row: row), try row.value("password_hash", in: "staff_accounts") as String)
    }

    /// The active staff account of a staff session with the session's last use and idle limit,
    /// whatever its age (`StaffController.current` decides; `PostgresStore.signedInStaff` keeps it).
    func activeStaffSession(tokenHash: String) throws -> StaffSessionLookup? {
        try row(SignedInStaffStatement([tokenHash])).map(Self.staffSessionLookup)
    }

    /// `SignedInStaffStatement`'s row.
    static func staffSessionLookup(_ row: StoredRowValues) throws -> StaffSessionLookup {
        StaffSessionLookup(member: try staffMember(row: row),
                                  lastUsedAt: try row.instant("session_last_used_at", in: "staff_sessions"),
                                  idleSeconds: try row.value("session_idle_seconds", in: "staff_sessions"))
    }

    func storedAppointments(ofClinic clinicId: Int64, startingIn span: Range<Date>, departmentId: Int64?,
                            doctorId: Int64?) throws -> [Appointment] {
        try rows(Self.appointmentsOfClinicDaySQL, [clinicId, span.lowerBound, span.upperBound, departmentId, doctorId])
            .map(Appointment.init(row:))
    }

    /// A clinic's ($1) appointments starting in $2..<$3, of a department ($4) and a doctor ($5) when not NULL.
    static let appointmentsOfClinicDaySQL = """
        SELECT * FROM appointments WHERE clinic_id = $1 AND starts_at >= $2 AND starts_at < $3
        AND ($4::bigint IS NULL OR department_id = $4) AND ($5::bigint IS NULL OR doctor_id = $5) ORDER BY starts_at, id
        """

    func activePatients(ofClinic clinicId: Int64, startingIn span: Range<Date>, departmentId: Int64?) throws -> [Int64] {
        try values(Int64.self, Self.activePatientsSQL, [clinicId, span.lowerBound, span.upperBound, departmentId])
    }

    /// The patients of clinic `$1` with an active appointment starting in `$2`..<`$3` (of department `$4`, or all), by id.
    static let activePatientsSQL = """
        SELECT DISTINCT client_id FROM appointments
        WHERE clinic_id = $1 AND \(AppointmentStatus.activeCondition) AND client_id IS NOT NULL
        AND starts_at >= $2 AND starts_at < $3 AND ($4::bigint IS NULL OR department_id = $4) ORDER BY client_id
        """

    func isPatient(_ clientId: Int64, ofClinic clinicId: Int64) throws -> Bool {
        try value(Bool.self, Self.isPatientSQL, [clientId, clinicId]) ?? false
    }

    /// Whether $1 is a patient of the clinic $2: an appointment there, or registered there as a walk-in.
    static let isPatientSQL = "SELECT " + isPatientCondition("$1", "$2")

    /// Whether `client` is a patient of `clinic` (parameters): an appointment there, or registered there as a walk-in.
    static func isPatientCondition(_ client: String, _ clinic: String) -> String {
        """
        (EXISTS (SELECT 1 FROM appointments WHERE client_id = \(client) AND clinic_id = \(clinic))
         OR EXISTS (SELECT 1 FROM walk_ins WHERE client_id = \(client) AND clinic_id = \(clinic)))
        """
    }

    /// The appointments of the patient $1 at the clinic $2, by start then id.
    static let appointmentsOfPatientAtClinicSQL = "SELECT * FROM appointments WHERE client_id = $1 AND clinic_id = $2 ORDER BY starts_at, id"

    func messageLanguage(ofClient clientId: Int64) throws -> Language? {
        try value(String.self, "SELECT preferred_language FROM clients WHERE id = $1", [clientId]).flatMap(Language.init(rawValue:))
    }

    func storedFutureActiveAppointments(ofDoctor doctorId: Int64, from start: Date) throws -> [Appointment] {
        // `id` breaks ties of equal starts (SQLite returns them in its index's, i.e. id, order).
        try rows("""
            SELECT * FROM appointments WHERE doctor_id = $1 AND \(AppointmentStatus.activeCondition) AND starts_at >= $2
            ORDER BY starts_at, id
            """, [doctorId, start]).map(Appointment.init(row:))
    }

    func doctorId(ofWorkingException exceptionId: Int64) throws -> Int64? {
        try value(Int64.self, "SELECT doctor_id FROM working_exceptions WHERE id = $1", [exceptionId])
    }

    // MARK: Writes

    func insertStaffMember(login: String, loginKey: String, passwordHash: String, name: String, surname: String,
                           role: StaffRole, clinicId: Int64, doctorId: Int64?, createdAt: Date) throws -> StaffMember {
        // A taken login key inserts nothing and returns no row: the transaction goes on (a
        // failed statement would abort it), and no other refusal is taken for this one.
        guard let inserted = try row(Self.insertStaffSQL, [login, loginKey, passwordHash, name, surname, role.rawValue, clinicId,
                                                            doctorId, createdAt]) else {
            throw ClinicError(.loginTaken, .loginTaken, login)
        }
        return try Self.staffMember(row: inserted)
    }

    /// A staff account added: no row returned when its login key is taken.
    static let insertStaffSQL = """
        INSERT INTO staff_accounts (login, login_key, password_hash, name, surname, role, clinic_id, doctor_id, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
        ON CONFLICT (login_key) DO NOTHING RETURNING *
        """

    static func insertStaffBinds(_ a: StaffAddition) -> [any PostgresBindable] {
        [a.login, a.loginKey, a.passwordHash, a.name, a.surname, a.role.rawValue, a.clinicId, a.doctorId, a.now]
    }

    func deactivateStaffMember(id: Int64) throws {
        noteSessionsChanged()
        try execute(Self.deactivateStaffSQL, [id])
    }

    static let deactivateStaffSQL = "UPDATE staff_accounts SET is_active = false WHERE id = $1"

    func insertStaffSession(staffId: Int64, tokenHash: String, at: Date, idleSeconds: Int?) throws {
        try execute(Self.insertStaffSessionSQL, [staffId, tokenHash, at, idleSeconds])
    }

    /// A new staff session: the member `$1`, the token's hash `$2`, opened at `$3`, its own idle limit `$4`.
    static let insertStaffSessionSQL = """
        INSERT INTO staff_sessions (staff_id, token_hash, created_at, last_used_at, idle_seconds) VALUES ($1, $2, $3, $3, $4)
        """

    func touchStaffSession(tokenHash: String, at: Date) throws {
        try execute(Self.touchStaffSessionSQL, [at, tokenHash])
    }

    /// `touchSessionSQL` for a staff session.
    static let touchStaffSessionSQL = "UPDATE staff_sessions SET last_used_at = GREATEST(last_used_at, $1) WHERE token_hash = $2"

    func deleteStaffSession(tokenHash: String) throws -> Bool {
        noteSessionsChanged()
        return try execute(Self.deleteStaffSessionSQL, [tokenHash]) > 0
    }

    /// A staff session ended by its token's hash; its id returned.
    static let deleteStaffSessionSQL = "DELETE FROM staff_sessions WHERE token_hash = $1 RETURNING id"

    func deleteStaffSessions(ofStaff staffId: Int64) throws {
        noteSessionsChanged()
        try execute(Self.deleteSessionsOfStaffSQL, [staffId])
    }

    static let deleteSessionsOfStaffSQL = "DELETE FROM staff_sessions WHERE staff_id = $1"

    func deleteStaffSessions(lastUsedBefore cutoff: Date) throws {
        try execute(Self.purgeStaffSessionsSQL, [cutoff])
    }

    /// Staff sessions last used before `$1`.
    static let purgeStaffSessionsSQL = "DELETE FROM staff_sessions WHERE last_used_at < $1"

    func deactivateDoctor(id: Int64) throws {
        try execute(Self.deactivateDoctorSQL, [id])
    }

    static let deactivateDoctorSQL = "UPDATE doctors SET is_active = false WHERE id = $1"

    func replaceWorkingHours(ofDoctor doctorId: Int64, weekday: Int, with intervals: [DoctorSchedule.Interval]) throws {
        try lockDoctor(doctorId)
        try execute("DELETE FROM working_hours WHERE doctor_id = $1 AND weekday = $2", [doctorId, weekday])
        try insertWorkingHourRows(ofDoctor: doctorId, intervals.map { (weekday, $0.startMinute, $0.endMinute, $0.slotMinutes) })
    }

    /// A `staff_accounts` row (ClinicKit's `StaffMember.init(row:)` is internal to it); an
    /// unknown role is `staffRowInvalid` (a newer version's row).
    static func staffMember(row: StoredRowValues) throws -> StaffMember {
        let table = "staff_accounts"
        let id: Int64 = try row.value("id", in: table)
        guard let role = StaffRole(rawValue: try row.value("role", in: table)) else {
            throw ClinicError(.storage, .staffRowInvalid, String(id))
        }
        return StaffMember(id: id, login: try row.value("login", in: table), name: try row.value("name", in: table),
                           surname: try row.value("surname", in: table), role: role,
                           clinicId: try row.value("clinic_id", in: table),
                           doctorId: try row.value("doctor_id", in: table),
                           isActive: try row.value("is_active", in: table),
                           createdAt: Date(timeIntervalSince1970: TimeInterval(try row.value("created_at", in: table) as Int64)))
    }
}
