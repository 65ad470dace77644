import Foundation
import GRDB


/// Clinic staff: accounts, log-in (same Argon2id and throttling as patients, 12-hour idle
/// sessions of their own), the clinic's day, and the appointment lifecycle. Every read of
/// patients' personal fields and every change is in the audit trail, in the same transaction.
public final class StaffController: Sendable {
    let database: DatabaseManager
    let hasher: PasswordHasher
    let now: @Sendable () -> Date
    let passwordCheck: @Sendable (String, String, String, String) throws -> ClinicError?
    let appointments: AppointmentController

    /// A staff session ends after this long without use.
    public static let idleLimit: TimeInterval = 12 * 3600

    init(database: DatabaseManager, hasher: PasswordHasher, now: @escaping @Sendable () -> Date, appointments: AppointmentController,
         passwordCheck: @escaping @Sendable (String, String, String, String) throws -> ClinicError?) {
        self.appointments = appointments
        self.database = database
        self.hasher = hasher
        self.now = now
        self.passwordCheck = passwordCheck
    }

    // MARK: Accounts

    /// Creates a staff account. `by` nil is the operator (who owns the database file); a
    /// clinic admin may create accounts of their own clinic only; nobody else may.
    public func addStaff(_ input: StaffInput, by creator: StaffMember? = nil, requestId: String? = nil) throws -> StaffMember {
        if let creator {
            guard creator.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, creator.role.rawValue) }
            guard creator.clinicId == input.clinicId else { throw ClinicError(.notFound, .clinicNotFound, String(input.clinicId)) }
        }
        let validator = Validator()
        let login = input.login.trimmingCharacters(in: .whitespaces)
        if let problem = validator.problem(.login, login) ?? validator.problem(.name, input.name)
            ?? validator.problem(.surname, input.surname) { throw problem }
        if let problem = try passwordCheck(input.password, login, input.name, input.surname) { throw problem }
        if input.role == .doctor && input.doctorId == nil { throw ClinicError.invalid(.staffDoctorRequired) }
        if input.role != .doctor && input.doctorId != nil { throw ClinicError.invalid(.staffDoctorOnlyForDoctors) }
        let hash = try hasher.hash(input.password)
        let now = self.now()
        return try database.write { db in
            guard try database.getClinicById(db, input.clinicId) != nil else {
                throw ClinicError(.notFound, .clinicNotFound, String(input.clinicId))
            }
            if let doctorId = input.doctorId,
               try DepartmentController.clinicId(db, doctorId: doctorId) != input.clinicId {
                throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
            }
            let key = Client.key(forLogin: login)
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM staff_accounts WHERE login_key = ?)", arguments: [key]) == true {
                throw ClinicError(.loginTaken, .loginTaken, login)
            }
            try db.execute(sql: """
                INSERT INTO staff_accounts (login, login_key, password_hash, name, surname, role, clinic_id, doctor_id, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [login, key, hash, input.name.trimmingCharacters(in: .whitespaces),
                                 input.surname.trimmingCharacters(in: .whitespaces), input.role.rawValue, input.clinicId,
                                 input.doctorId, now.seconds])
            let member = try Self.member(db, id: db.lastInsertedRowID)
            try AuditLog.append(db, by: creator?.auditActor ?? .operator, action: "staff.add", clinicId: input.clinicId,
                                requestId: requestId, detail: "\(member.role.rawValue) \(member.login)", now: now)
            return member
        }
    }

    /// A clinic's staff accounts (a clinic admin's own clinic; the operator any).
    public func accounts(clinicId: Int64, by viewer: StaffMember? = nil) throws -> [StaffMember] {
        if let viewer {
            guard viewer.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, viewer.role.rawValue) }
            guard viewer.clinicId == clinicId else { throw ClinicError(.notFound, .clinicNotFound, String(clinicId)) }
        }
        return try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM staff_accounts WHERE clinic_id = ? ORDER BY id", arguments: [clinicId])
                .map(StaffMember.init(row:))
        }
    }

    /// Disables an account and ends its sessions (a clinic admin of its clinic, or the operator).
    public func disable(_ id: Int64, by viewer: StaffMember? = nil, requestId: String? = nil) throws -> StaffMember {
        let now = self.now()
        return try database.write { db in
            guard let member = try? Self.member(db, id: id),
                  viewer.map({ $0.clinicId == member.clinicId }) ?? true else {
                throw ClinicError(.notFound, .staffNotFound, String(id))
            }
            if let viewer, viewer.role != .clinicAdmin { throw ClinicError(.forbidden, .staffForbidden, viewer.role.rawValue) }
            try db.execute(sql: "UPDATE staff_accounts SET is_active = 0 WHERE id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM staff_sessions WHERE staff_id = ?", arguments: [id])
            try AuditLog.append(db, by: viewer?.auditActor ?? .operator, action: "staff.disable", clinicId: member.clinicId,
                                requestId: requestId, detail: member.login, now: now)
            return try Self.member(db, id: id)
        }
    }

    static func member(_ db: Database, id: Int64) throws -> StaffMember {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM staff_accounts WHERE id = ?", arguments: [id]) else {
            throw ClinicError(.notFound, .staffNotFound, String(id))
        }
        return try StaffMember(row: row)
    }

    // MARK: Sessions

    /// Checks the password (Argon2id, throttled per login name like patients' log-ins, in
    /// the same table under a `staff:` key) and opens a session; returns its token.
    public func logIn(login: String, password: String) throws -> (member: StaffMember, token: String) {
        guard login.count <= 64 else {
            _ = hasher.verify(password, against: ClientController.decoyHash(hasher))
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        let key = "staff:" + Client.key(forLogin: login)
        let (found, window) = try ClientController.reserveAttempt(key, database: database, now: now()) { db -> (StaffMember, String)? in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM staff_accounts WHERE login_key = ?",
                                             arguments: [Client.key(forLogin: login)]) else { return nil }
            return (try StaffMember(row: row), try row.value("password_hash", in: "staff_accounts") as String)
        }
        let matched = found.map { hasher.verify(password, against: $0.1) }
            ?? { _ = hasher.verify(password, against: ClientController.decoyHash(hasher)); return false }()
        // A disabled account fails as a wrong password does: no telling which accounts exist.
        guard let (member, _) = found, matched, member.isActive else {
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        let now = self.now()
        return try database.write { db in
            try ClientController.releaseAttempt(db, key, window: window)
            try db.execute(sql: "DELETE FROM staff_sessions WHERE last_used_at < ?", arguments: [now.seconds - Int64(Self.idleLimit)])
            let token = SessionManager.newToken()
            try db.execute(sql: "INSERT INTO staff_sessions (staff_id, token_hash, created_at, last_used_at) VALUES (?, ?, ?, ?)",
                           arguments: [member.id, SessionManager.hash(token), now.seconds, now.seconds])
            return (member, token)
        }
    }

    /// The staff member of a live session; `not_logged_in` otherwise (an expired session, a
    /// disabled account, a patient's token).
    public func current(token: String?) throws -> StaffMember {
        guard let token, SessionManager.isWellFormed(token) else { throw ClinicError(.notLoggedIn, .staffNotLoggedIn) }
        let now = self.now()
        let member = try database.read { db -> StaffMember? in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT staff_accounts.* FROM staff_sessions JOIN staff_accounts ON staff_accounts.id = staff_sessions.staff_id
                WHERE staff_sessions.token_hash = ? AND staff_sessions.last_used_at >= ? AND staff_accounts.is_active = 1
                """), arguments: [SessionManager.hash(token), now.seconds - Int64(Self.idleLimit)]) else { return nil }
            return try StaffMember(row: row)
        }
        guard let member else { throw ClinicError(.notLoggedIn, .staffNotLoggedIn) }
        return member
    }

    /// Keeps a staff session alive after a command made with it succeeded.
    public func touch(token: String) throws {
        let now = self.now()
        try database.write { db in
            try db.execute(sql: "UPDATE staff_sessions SET last_used_at = max(last_used_at, ?) WHERE token_hash = ?",
                           arguments: [now.seconds, SessionManager.hash(token)])
        }
    }

    @discardableResult
    public func logOut(token: String) throws -> Bool {
        try database.write { db in
            try db.execute(sql: "DELETE FROM staff_sessions WHERE token_hash = ?", arguments: [SessionManager.hash(token)])
            return db.changesCount > 0
        }
    }
}
