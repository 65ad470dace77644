import ClinicKit
import Foundation
import GRDB

// The staff area of the seam on SQLite: staff accounts (migration 11), their sessions, the
// clinic's day and the doctors' changes a clinic admin makes. The look-ups every staff request
// makes (the session, the account) use cached statements.

extension SQLiteTransaction {
    func staffMember(id: Int64) throws -> StaffMember? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM staff_accounts WHERE id = ?"), arguments: [id])
            .map(StaffMember.init(row:))
    }

    func staffMembers(ofClinic clinicId: Int64) throws -> [StaffMember] {
        try Row.fetchAll(db, sql: "SELECT * FROM staff_accounts WHERE clinic_id = ? ORDER BY id", arguments: [clinicId])
            .map(StaffMember.init(row:))
    }

    func staffCredentials(loginKey: String) throws -> (member: StaffMember, passwordHash: String)? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM staff_accounts WHERE login_key = ?"),
                                         arguments: [loginKey]) else { return nil }
        return (try StaffMember(row: row), try row.value("password_hash", in: "staff_accounts") as String)
    }

    func activeStaffSession(tokenHash: String) throws -> StaffSessionLookup? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT staff_accounts.*, staff_sessions.last_used_at AS session_last_used_at,
                   staff_sessions.idle_seconds AS session_idle_seconds
            FROM staff_sessions JOIN staff_accounts ON staff_accounts.id = staff_sessions.staff_id
            WHERE staff_sessions.token_hash = ? AND staff_accounts.is_active = 1
            """), arguments: [tokenHash]) else { return nil }
        return StaffSessionLookup(member: try StaffMember(row: row),
                                  lastUsedAt: try row.instant("session_last_used_at", in: "staff_sessions"),
                                  idleSeconds: try row.value("session_idle_seconds", in: "staff_sessions"))
    }

    func storedAppointments(ofClinic clinicId: Int64, startingIn span: Range<Date>, departmentId: Int64?,
                            doctorId: Int64?) throws -> [Appointment] {
        // `? IS NULL OR …` keeps one statement for every filter (one cached statement); the
        // (clinic_id, starts_at) index still bounds the scan.
        try Appointment.fetchAll(db.cachedStatement(sql: """
            SELECT * FROM appointments WHERE clinic_id = ?1 AND starts_at >= ?2 AND starts_at < ?3
            AND (?4 IS NULL OR department_id = ?4) AND (?5 IS NULL OR doctor_id = ?5) ORDER BY starts_at, id
            """), arguments: [clinicId, span.lowerBound.seconds, span.upperBound.seconds, departmentId, doctorId])
    }

    func activePatients(ofClinic clinicId: Int64, startingIn span: Range<Date>, departmentId: Int64?) throws -> [Int64] {
        try Int64.fetchAll(db, sql: """
            SELECT DISTINCT client_id FROM appointments
            WHERE clinic_id = ? AND \(AppointmentStatus.activeCondition) AND client_id IS NOT NULL
            AND starts_at >= ? AND starts_at < ? AND (? IS NULL OR department_id = ?) ORDER BY client_id
            """, arguments: [clinicId, span.lowerBound.seconds, span.upperBound.seconds, departmentId, departmentId])
    }

    func isPatient(_ clientId: Int64, ofClinic clinicId: Int64) throws -> Bool {
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM appointments WHERE client_id = ? AND clinic_id = ?)",
                             arguments: [clientId, clinicId]) == true { return true }
        guard try db.tableExists("walk_ins") else { return false }
        return try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM walk_ins WHERE client_id = ? AND clinic_id = ?)",
                                 arguments: [clientId, clinicId]) ?? false
    }

    func messageLanguage(ofClient clientId: Int64) throws -> Language? {
        try String.fetchOne(db, sql: "SELECT preferred_language FROM clients WHERE id = ?", arguments: [clientId])
            .flatMap(Language.init(rawValue:))
    }

    func storedFutureActiveAppointments(ofDoctor doctorId: Int64, from start: Date) throws -> [Appointment] {
        try Appointment.fetchAll(db, sql: """
            SELECT * FROM appointments WHERE doctor_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at >= ? ORDER BY starts_at
            """, arguments: [doctorId, start.seconds])
    }

    func doctorId(ofWorkingException exceptionId: Int64) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT doctor_id FROM working_exceptions WHERE id = ?", arguments: [exceptionId])
    }

    // MARK: Writes

    func insertStaffMember(login: String, loginKey: String, passwordHash: String, name: String, surname: String,
                           role: StaffRole, clinicId: Int64, doctorId: Int64?, createdAt: Date) throws -> StaffMember {
        do {
            try db.execute(sql: """
                INSERT INTO staff_accounts (login, login_key, password_hash, name, surname, role, clinic_id, doctor_id, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [login, loginKey, passwordHash, name, surname, role.rawValue, clinicId, doctorId, createdAt.seconds])
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            // The failed statement changed nothing; which unique index refused it is not told
            // (only the message names the column, and no code reads messages), so ask.
            let taken = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM staff_accounts WHERE login_key = ?)",
                                          arguments: [loginKey]) ?? false
            if taken { throw ClinicError(.loginTaken, .loginTaken, login) }
            throw error
        }
        let id = db.lastInsertedRowID
        guard let member = try staffMember(id: id) else { throw ClinicError(.notFound, .staffNotFound, String(id)) }
        return member
    }

    func deactivateStaffMember(id: Int64) throws {
        try db.execute(sql: "UPDATE staff_accounts SET is_active = 0 WHERE id = ?", arguments: [id])
    }

    func insertStaffSession(staffId: Int64, tokenHash: String, at: Date, idleSeconds: Int?) throws {
        try db.execute(sql: """
            INSERT INTO staff_sessions (staff_id, token_hash, created_at, last_used_at, idle_seconds) VALUES (?, ?, ?, ?, ?)
            """, arguments: [staffId, tokenHash, at.seconds, at.seconds, idleSeconds])
    }

    func touchStaffSession(tokenHash: String, at: Date) throws {
        try db.execute(sql: "UPDATE staff_sessions SET last_used_at = max(last_used_at, ?) WHERE token_hash = ?",
                       arguments: [at.seconds, tokenHash])
    }

    func deleteStaffSession(tokenHash: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM staff_sessions WHERE token_hash = ?", arguments: [tokenHash])
        return db.changesCount > 0
    }

    func deleteStaffSessions(ofStaff staffId: Int64) throws {
        try db.execute(sql: "DELETE FROM staff_sessions WHERE staff_id = ?", arguments: [staffId])
    }

    func deleteStaffSessions(lastUsedBefore cutoff: Date) throws {
        try db.execute(sql: "DELETE FROM staff_sessions WHERE last_used_at < ?", arguments: [cutoff.seconds])
    }

    func deactivateDoctor(id: Int64) throws {
        try db.execute(sql: "UPDATE doctors SET is_active = 0 WHERE id = ?", arguments: [id])
    }

    func replaceWorkingHours(ofDoctor doctorId: Int64, weekday: Int, with intervals: [DoctorSchedule.Interval]) throws {
        try db.execute(sql: "DELETE FROM working_hours WHERE doctor_id = ? AND weekday = ?", arguments: [doctorId, weekday])
        for interval in intervals {
            var row = WorkingHours(id: nil, doctorId: doctorId, weekday: weekday, startMinute: interval.startMinute,
                                   endMinute: interval.endMinute, slotMinutes: interval.slotMinutes)
            try row.insert(db)
        }
    }
}

