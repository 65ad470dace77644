import Foundation
import GRDB

/// A staff role, scoped to one clinic (the operator is not an account: see `AuditActor`).
public enum StaffRole: String, Sendable, CaseIterable {
    case clinicAdmin = "clinic-admin", receptionist, doctor

    var auditRole: AuditActor.Role {
        switch self {
        case .clinicAdmin: .clinicAdmin
        case .receptionist: .receptionist
        case .doctor: .doctor
        }
    }
}

/// A clinic staff account (migration 11). Not a patient: its own table and sessions.
public struct StaffMember: Sendable, Equatable {
    public let id: Int64
    public let login: String
    public let name: String
    public let surname: String
    public let role: StaffRole
    public let clinicId: Int64
    /// The doctor a `doctor` account is; nil for the other roles.
    public let doctorId: Int64?
    public let isActive: Bool
    public let createdAt: Date

    /// Booking for patients and writing to them is the front desk's: receptionists and clinic
    /// admins, not doctors (`book`, `message` refuse the others).
    public var runsTheFrontDesk: Bool { role != .doctor }

    /// Whether this member may take `action` on `appointment` now: the one permission rule
    /// (`StaffAction.refusal`) that `StaffController.act` enforces and that pages offer
    /// actions by.
    public func may(_ action: StaffAction, on appointment: Appointment, now: Date = Date()) -> Bool {
        action.refusal(by: self, on: appointment, now: now) == nil
    }

    init(row: Row) throws {
        let table = "staff_accounts"
        id = try row.value("id", in: table)
        login = try row.value("login", in: table)
        name = try row.value("name", in: table)
        surname = try row.value("surname", in: table)
        guard let role = StaffRole(rawValue: try row.value("role", in: table)) else {
            throw ClinicError(.storage, .staffRowInvalid, String(id))
        }
        self.role = role
        clinicId = try row.value("clinic_id", in: table)
        doctorId = try row.value("doctor_id", in: table)
        isActive = try row.value("is_active", in: table)
        createdAt = try row.instant("created_at", in: table)
    }

    public var auditActor: AuditActor { AuditActor(staffId: id, role: role.auditRole, clinicId: clinicId) }
}

/// What a new staff account is.
public struct StaffInput: Sendable {
    public var login: String
    public var name: String
    public var surname: String
    public var role: StaffRole
    public var clinicId: Int64
    public var doctorId: Int64?
    public var password: String

    public init(login: String, name: String, surname: String, role: StaffRole, clinicId: Int64, doctorId: Int64? = nil,
                password: String) {
        self.login = login; self.name = name; self.surname = surname; self.role = role; self.clinicId = clinicId
        self.doctorId = doctorId; self.password = password
    }
}

/// One appointment of a clinic's day, as staff see it: with the patient's name, decrypted
/// only here (and the read written to the audit trail).
public struct DayEntry: Sendable, Equatable {
    public let appointment: Appointment
    /// Nil when the patient deleted their account.
    public let patientName: String?
    public let patientLogin: String?
    /// What the member who read the day may do to it now (`StaffAction.refusal`): what a
    /// front offers, so that no button leads to a refusal.
    public let actions: [StaffAction]
}

/// What staff do to an appointment, and the status it leads to.
public enum StaffAction: String, Sendable, CaseIterable {
    case checkIn = "check-in", start, complete, noShow = "no-show", cancel

    public var status: AppointmentStatus {
        switch self {
        case .checkIn: .arrived
        case .start: .inProgress
        case .complete: .completed
        case .noShow: .noShow
        case .cancel: .cancelled
        }
    }

    /// Why `member` may not take this action on `appointment` at `now`, nil when they may: the
    /// one rule that `StaffController.act` enforces and that fronts offer actions by.
    /// Another clinic's appointment, or another doctor's for a doctor, is `not_found`; an
    /// action the role may not take is `forbidden`; a status that cannot move there, or a
    /// completion or no-show before the start, is `invalid_transition`.
    public func refusal(by member: StaffMember, on appointment: Appointment, now: Date) -> ClinicError? {
        guard appointment.clinicId == member.clinicId, member.role != .doctor || appointment.doctorId == member.doctorId else {
            return ClinicError(.notFound, .appointmentNotFound, String(appointment.id ?? 0))
        }
        guard isAllowed(for: member.role) else { return ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        guard appointment.status.canMove(to: status) else {
            return ClinicError(.invalidTransition, .transitionRefused, appointment.status.rawValue, status.rawValue)
        }
        if (status == .completed || status == .noShow) && now < appointment.startsAt {
            return ClinicError(.invalidTransition, .notStartedYet, status.rawValue)
        }
        return nil
    }

    /// Who may: receptionists (and clinic admins) run the front desk; doctors start and
    /// complete their own appointments. Clinic admins may do everything.
    func isAllowed(for role: StaffRole) -> Bool {
        switch (self, role) {
        case (_, .clinicAdmin): true
        case (.checkIn, .receptionist), (.noShow, .receptionist), (.cancel, .receptionist): true
        case (.start, .doctor), (.complete, .doctor): true
        default: false
        }
    }
}

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

    // MARK: The clinic's day

    /// The appointments of one local day of the member's clinic (default: today there), by
    /// start, optionally of one department or doctor; a doctor sees their own only. Each
    /// patient shown is one `patient.read` row in the audit trail, in the same transaction.
    public func schedule(_ member: StaffMember, day: LocalDateTime? = nil, departmentId: Int64? = nil, doctorId: Int64? = nil,
                         requestId: String? = nil) throws -> (day: LocalDateTime, zone: TimeZone, entries: [DayEntry]) {
        let now = self.now()
        return try database.write { db in
            guard let clinic = try database.getClinicById(db, member.clinicId) else {
                throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId))
            }
            let zone = clinic.zone
            let local = day ?? LocalDateTime.of(now, in: zone)
            // Midnight may not exist (a zone that springs forward at 0:00): then 1:00 starts the day.
            func dayStart(_ day: LocalDateTime) -> Date? {
                day.at(minuteOfDay: 0).firstInstant(in: zone) ?? day.at(minuteOfDay: 60).firstInstant(in: zone)
            }
            guard let start = dayStart(local), let end = dayStart(local.adding(days: 1)) else {
                throw ClinicError.invalid(.invalidDay, local.dayText)
            }
            if let departmentId {
                guard let department = try database.getDepartmentById(db, departmentId), department.clinicId == member.clinicId else {
                    throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
                }
            }
            var doctor = doctorId
            if member.role == .doctor {
                if let doctorId, doctorId != member.doctorId { throw ClinicError(.notFound, .doctorNotFound, String(doctorId)) }
                doctor = member.doctorId ?? -1
            } else if let doctorId, try DepartmentController.clinicId(db, doctorId: doctorId) != member.clinicId {
                throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
            }
            var sql = "SELECT * FROM appointments WHERE clinic_id = ? AND starts_at >= ? AND starts_at < ?"
            var arguments: StatementArguments = [member.clinicId, start.seconds, end.seconds]
            if let departmentId { sql += " AND department_id = ?"; arguments += [departmentId] }
            if let doctor { sql += " AND doctor_id = ?"; arguments += [doctor] }
            sql += " ORDER BY starts_at, id"
            let appointments = try Appointment.fetchAll(db, sql: sql, arguments: arguments)
            var patients: [Int64: Client] = [:]
            for clientId in Set(appointments.compactMap(\.clientId)).sorted() {
                guard let client = try database.getUserById(db, clientId) else { continue }
                patients[clientId] = client
                try AuditLog.append(db, by: member.auditActor, action: "patient.read", clientId: clientId, requestId: requestId,
                                    detail: "schedule \(local.dayText)", now: now)
            }
            let entries = appointments.map { appointment in
                let patient = appointment.clientId.flatMap { patients[$0] }
                return DayEntry(appointment: appointment, patientName: patient.map { "\($0.name) \($0.surname)" },
                                patientLogin: patient?.login,
                                actions: StaffAction.allCases.filter { member.may($0, on: appointment, now: now) })
            }
            return (local, zone, entries)
        }
    }

    /// Moves an appointment of the member's clinic along the lifecycle: check-in, start,
    /// complete, no-show, cancel (with a reason). Another clinic's appointment, or another
    /// doctor's for a doctor, is `not_found`; an action the role may not take is `forbidden`.
    public func act(_ member: StaffMember, _ action: StaffAction, appointmentId: Int64, reason: String? = nil,
                    requestId: String? = nil) throws -> Appointment {
        try appointments.changes.count(action == .cancel ? "staff-cancel" : action.rawValue) {
            try act(member, action, appointmentId, reason: reason, requestId: requestId)
        }
    }

    private func act(_ member: StaffMember, _ action: StaffAction, _ appointmentId: Int64, reason: String?,
                     requestId: String?) throws -> Appointment {
        let reason = try Self.checkedReason(reason)
        if action == .cancel && reason == nil { throw ClinicError.invalid(.staffReasonRequired) }
        let now = self.now()
        return try database.write { db in
            guard let appointment = try database.getAppointmentById(db, appointmentId) else {
                throw ClinicError(.notFound, .appointmentNotFound, String(appointmentId))
            }
            if let refusal = action.refusal(by: member, on: appointment, now: now) { throw refusal }
            let status = action.status
            let moved = try AppointmentController.move(db, database, appointment, to: status, by: .staff, now: now,
                                                       reason: action == .cancel ? reason : nil, staffId: member.id)
            try AuditLog.append(db, by: member.auditActor, action: "appointment.\(action.rawValue)", clientId: appointment.clientId,
                                appointmentId: appointmentId, requestId: requestId,
                                detail: "\(appointment.status.rawValue) -> \(status.rawValue)" + (action == .cancel ? ": \(reason ?? "")" : ""),
                                now: now)
            if action == .cancel { try Inbox.about(db, moved, kind: .clinicCancelled, reason: reason, staffId: member.id, now: now) }
            return moved
        }
    }

    /// Books for a patient (by login) at the member's clinic: receptionists and clinic admins.
    /// The patient's rules hold (lead time, their limit and overlaps); the history says which
    /// staff account booked, and the audit trail has it, in the booking's transaction.
    public func book(_ member: StaffMember, patientLogin: String, departmentId: Int64, at time: TimeInput.Parsed,
                     doctorId: Int64? = nil, visitTypeId: Int64? = nil, requestId: String? = nil) throws -> Appointment {
        guard member.runsTheFrontDesk else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        let now = self.now()
        var found: Int64?
        do {
            return try database.writeJoined { db in
                guard let department = try database.getDepartmentById(db, departmentId), department.clinicId == member.clinicId else {
                    throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
                }
                guard patientLogin.count <= 64, let patient = try database.getSealedUserByLogin(db, patientLogin),
                      let clientId = patient.id else {
                    throw ClinicError(.notFound, .staffPatientNotFound, patientLogin)
                }
                found = clientId
                let booked = try appointments.createAppointment(clientId: clientId, departmentId: departmentId, at: time,
                                                                doctorId: doctorId, staffId: member.id, visitTypeId: visitTypeId)
                try AuditLog.append(db, by: member.auditActor, action: "appointment.book", clientId: clientId,
                                    appointmentId: booked.id, requestId: requestId, detail: DateText.iso8601(booked.startsAt), now: now)
                return booked
            }
        } catch let error as ClinicError {
            guard let clientId = found else { throw error }
            // The patient was looked up: the refusal is in their access log too (the one write a
            // refused staff booking makes, on purpose), and says nothing of their other bookings.
            let shown = Self.staffFacing(error)
            try database.write { db in
                try AuditLog.append(db, by: member.auditActor, action: "appointment.book-refused", clientId: clientId,
                                    requestId: requestId, detail: shown.code.rawValue, now: now)
            }
            throw shown
        }
    }

    /// What staff are told of a refusal that comes from the patient's other bookings: neither
    /// where they are (an overlapping appointment's id may be at another clinic) nor how many
    /// (the limit's count). Refusals about the clinic's own slot stay as they are.
    static func staffFacing(_ error: ClinicError) -> ClinicError {
        switch error.code {
        case .overlappingAppointment, .limitReached: ClinicError(.patientUnavailable, .staffPatientUnavailable)
        default: error
        }
    }

    // MARK: Messages to patients

    /// Writes a message from the clinic (receptionists and clinic admins): to one patient who
    /// has an appointment at the clinic (`patientLogin`), or to every patient with an active
    /// appointment there on a local date (`day`, optionally in one department). Each patient
    /// gets it in their inbox (and by e-mail), in the audit trail as `message.send`. Returns how
    /// many patients it went to.
    public func message(_ member: StaffMember, patientLogin: String? = nil, day: LocalDateTime? = nil,
                        departmentId: Int64? = nil, text: String, requestId: String? = nil) throws -> Int {
        guard member.runsTheFrontDesk else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        guard (patientLogin == nil) != (day == nil), patientLogin == nil || departmentId == nil else {
            throw ClinicError.invalid(.staffMessageTarget)
        }
        let text = try Inbox.checkedText(text)
        let now = self.now()
        return try database.write { db in
            guard let clinic = try database.getClinicById(db, member.clinicId) else {
                throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId))
            }
            var recipients: [Int64] = []
            if let patientLogin {
                // Only a patient of this clinic: staff see no one else.
                guard patientLogin.count <= 64, let patient = try database.getSealedUserByLogin(db, patientLogin),
                      let clientId = patient.id,
                      try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM appointments WHERE client_id = ? AND clinic_id = ?)",
                                        arguments: [clientId, member.clinicId]) == true else {
                    throw ClinicError(.notFound, .staffPatientNotFound, patientLogin)
                }
                recipients = [clientId]
            } else if let day {
                if let departmentId {
                    guard let department = try database.getDepartmentById(db, departmentId), department.clinicId == member.clinicId else {
                        throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
                    }
                }
                let zone = clinic.zone
                func dayStart(_ day: LocalDateTime) -> Date? {
                    day.at(minuteOfDay: 0).firstInstant(in: zone) ?? day.at(minuteOfDay: 60).firstInstant(in: zone)
                }
                guard let first = dayStart(day), let next = dayStart(day.adding(days: 1)) else {
                    throw ClinicError.invalid(.invalidDay, day.dayText)
                }
                recipients = try Int64.fetchAll(db, sql: """
                    SELECT DISTINCT client_id FROM appointments
                    WHERE clinic_id = ? AND \(AppointmentStatus.activeCondition) AND client_id IS NOT NULL
                    AND starts_at >= ? AND starts_at < ? AND (? IS NULL OR department_id = ?) ORDER BY client_id
                    """, arguments: [member.clinicId, first.seconds, next.seconds, departmentId, departmentId])
            }
            for clientId in recipients {
                let language = Language(rawValue: try String.fetchOne(db, sql: "SELECT preferred_language FROM clients WHERE id = ?",
                                                                      arguments: [clientId]) ?? "en") ?? .en
                try Inbox.post(db, clientId: clientId, kind: .clinic,
                               subject: Strings.text(.messageClinicSubject, language, ["", clinic.name]), body: text,
                               clinicId: member.clinicId, staffId: member.id, now: now)
                try AuditLog.append(db, by: member.auditActor, action: "message.send", clientId: clientId, requestId: requestId,
                                    detail: String(text.prefix(200)), now: now)
            }
            return recipients.count
        }
    }

    // MARK: Doctors, hours and exceptions (clinic admins)

    /// A clinic admin, and the doctor is of their clinic (else `not_found`).
    func checkAdmin(_ db: Database, _ member: StaffMember, doctorId: Int64) throws {
        guard member.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        guard try DepartmentController.clinicId(db, doctorId: doctorId) == member.clinicId else {
            throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
        }
    }

    /// The clinic's doctors with their departments (any staff member of the clinic).
    public func doctors(_ member: StaffMember) throws -> [(doctor: Doctor, department: Department)] {
        try database.read { db in
            try database.getDepartmentsByClinicId(db, member.clinicId).flatMap { department in
                try database.getDoctorsByDepartmentId(db, department.id ?? 0).map { ($0, department) }
            }
        }
    }

    /// A new doctor in a department of the admin's clinic, with weekly hours.
    public func addDoctor(_ member: StaffMember, departmentId: Int64, name: String, hours: [WorkingHours],
                          requestId: String? = nil) throws -> Doctor {
        guard member.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        let now = self.now()
        return try database.writeJoined { db in
            guard let department = try database.getDepartmentById(db, departmentId), department.clinicId == member.clinicId else {
                throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
            }
            let doctor = try DepartmentController(database: database).addDoctor(departmentId: departmentId, name: name, hours: hours)
            try AuditLog.append(db, by: member.auditActor, action: "doctor.add", requestId: requestId,
                                detail: "doctor \(doctor.id ?? 0) department \(departmentId)", now: now)
            return doctor
        }
    }

    /// Deactivates a doctor of the admin's clinic: no longer offered, booked or listed. Their
    /// upcoming appointments refuse it (`hours_conflict`) unless `force`, which cancels them
    /// for the clinic with the reason.
    public func deactivateDoctor(_ member: StaffMember, doctorId: Int64, force: Bool = false, reason: String? = nil,
                                 requestId: String? = nil) throws -> [Appointment] {
        let now = self.now()
        return try database.writeJoined { db in
            try checkAdmin(db, member, doctorId: doctorId)
            try db.execute(sql: "UPDATE doctors SET is_active = 0 WHERE id = ?", arguments: [doctorId])
            try AuditLog.append(db, by: member.auditActor, action: "doctor.deactivate", requestId: requestId,
                                detail: "doctor \(doctorId)", now: now)
            return try settle(db, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now,
                              keepingNone: true)
        }
    }

    /// A doctor's weekly hours (any staff member of the clinic).
    public func hours(_ member: StaffMember, doctorId: Int64) throws -> [WorkingHours] {
        try database.read { db in
            guard try DepartmentController.clinicId(db, doctorId: doctorId) == member.clinicId else {
                throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
            }
            return try database.getWorkingHours(db, doctorId: doctorId)
        }
    }

    /// Replaces a doctor's hours on one weekday (`intervals` empty: not working that day).
    /// Booked appointments the new hours no longer hold refuse the change (`hours_conflict`,
    /// with their ids), unless `force`: then they are cancelled for the clinic, with a reason.
    public func setHours(_ member: StaffMember, doctorId: Int64, weekday: Int, intervals: [DoctorSchedule.Interval],
                         force: Bool = false, reason: String? = nil, requestId: String? = nil) throws -> [Appointment] {
        guard (1...7).contains(weekday) else { throw ClinicError.invalid(.workingHoursInvalid) }
        for (index, interval) in intervals.enumerated() {
            guard interval.isValid, !intervals[..<index].contains(where: { $0.overlaps(interval) }) else {
                throw ClinicError.invalid(.workingHoursInvalid)
            }
        }
        let now = self.now()
        return try database.writeJoined { db in
            try checkAdmin(db, member, doctorId: doctorId)
            try db.execute(sql: "DELETE FROM working_hours WHERE doctor_id = ? AND weekday = ?", arguments: [doctorId, weekday])
            for interval in intervals {
                var row = WorkingHours(id: nil, doctorId: doctorId, weekday: weekday, startMinute: interval.startMinute,
                                       endMinute: interval.endMinute, slotMinutes: interval.slotMinutes)
                try row.insert(db)
            }
            let text = intervals.map { "\($0.startMinute)-\($0.endMinute)/\($0.slotMinutes)" }.joined(separator: ",")
            try AuditLog.append(db, by: member.auditActor, action: "hours.set", requestId: requestId,
                                detail: "doctor \(doctorId) weekday \(weekday) " + (text.isEmpty ? "off" : text), now: now)
            return try settle(db, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now)
        }
    }

    /// Adds an exception (a day off when `hours` is nil) for a doctor of the admin's clinic,
    /// with `setHours`' rule for the appointments it would leave outside the doctor's hours.
    public func addException(_ member: StaffMember, doctorId: Int64, day: LocalDateTime, hours: DoctorSchedule.Interval?,
                             force: Bool = false, reason: String? = nil,
                             requestId: String? = nil) throws -> (exception: WorkingException, cancelled: [Appointment]) {
        let now = self.now()
        return try database.writeJoined { db in
            try checkAdmin(db, member, doctorId: doctorId)
            let exception = try DepartmentController(database: database).addException(doctorId: doctorId, day: day, hours: hours,
                                                                                      by: member.auditActor)
            return (exception, try settle(db, member, doctorId: doctorId, force: force, reason: reason, requestId: requestId, now: now))
        }
    }

    /// Removes an exception of a doctor of the admin's clinic (the same rule: extra hours it
    /// gave may hold appointments).
    public func removeException(_ member: StaffMember, exceptionId: Int64, force: Bool = false, reason: String? = nil,
                                requestId: String? = nil) throws -> [Appointment] {
        let now = self.now()
        return try database.writeJoined { db in
            guard let exception = try WorkingException.fetchOne(db, key: exceptionId),
                  try DepartmentController.clinicId(db, doctorId: exception.doctorId) == member.clinicId else {
                throw ClinicError(.notFound, .exceptionNotFound, String(exceptionId))
            }
            try checkAdmin(db, member, doctorId: exception.doctorId)
            try DepartmentController(database: database).removeException(exceptionId, by: member.auditActor)
            return try settle(db, member, doctorId: exception.doctorId, force: force, reason: reason, requestId: requestId, now: now)
        }
    }

    /// After a change to a doctor's hours, in its transaction: the doctor's active future
    /// appointments whose slot the new schedule no longer has. None: nothing to do. Some:
    /// `hours_conflict` with their ids (the change rolls back), or with `force` they are
    /// cancelled for the clinic with the reason (history and audit trail).
    func settle(_ db: Database, _ member: StaffMember, doctorId: Int64, force: Bool, reason: String?, requestId: String?,
                now: Date, keepingNone: Bool = false) throws -> [Appointment] {
        guard let clinic = try database.getClinicById(db, member.clinicId) else { return [] }
        let zone = clinic.zone
        let future = try Appointment.fetchAll(db, sql: """
            SELECT * FROM appointments WHERE doctor_id = ? AND \(AppointmentStatus.activeCondition) AND starts_at >= ? ORDER BY starts_at
            """, arguments: [doctorId, now.seconds])
        var outside: [Appointment] = []
        // A visit under way (in progress) is left alone: hours change around it.
        for appointment in future where appointment.status.canMove(to: .cancelled) {
            let day = LocalDateTime.of(appointment.startsAt, in: zone)
            let schedule = try DoctorSchedule.load(db, doctorId: doctorId, from: day, through: day)
            let duration = try appointment.visitTypeId.flatMap { try VisitType.fetch(db, id: $0)?.durationMinutes }
            if keepingNone || schedule.slotEnd(startingAt: appointment.startsAt, zone: zone, duration: duration) != appointment.endsAt {
                outside.append(appointment)
            }
        }
        guard !outside.isEmpty else { return [] }
        guard force else {
            throw ClinicError(.hoursConflict, .staffHoursConflict, outside.map { String($0.id ?? 0) }.joined(separator: ", "))
        }
        let given = try Self.checkedReason(reason)
        let why = given ?? Strings.text(.staffHoursChanged, .en, [])
        return try outside.map { appointment in
            let cancelled = try AppointmentController.move(db, database, appointment, to: .cancelled, by: .staff, now: now,
                                                           reason: why, staffId: member.id)
            try AuditLog.append(db, by: member.auditActor, action: "appointment.cancel", clientId: appointment.clientId,
                                appointmentId: appointment.id, requestId: requestId, detail: "hours changed: \(why)", now: now)
            // The patient reads the reason in their language when the clinic gave none.
            try Inbox.about(db, cancelled, kind: .clinicCancelled, reason: given, defaultReason: .staffHoursChanged,
                            staffId: member.id, now: now)
            return cancelled
        }
    }

    /// A reason the clinic gives a patient (a cancellation, a forced hours change): trimmed,
    /// nil when blank, `invalid_input` past 500 characters or with control characters.
    static func checkedReason(_ reason: String?) throws -> String? {
        guard let reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines), !reason.isEmpty else { return nil }
        guard reason.count <= 500, !reason.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw ClinicError.invalid(.staffReasonInvalid)
        }
        return reason
    }
}
