import Foundation

/// Clinic staff: accounts, log-in (same Argon2id and throttling as patients, 12-hour idle
/// sessions of their own), the clinic's day, and the appointment lifecycle. Every read of
/// patients' personal fields and every change is in the audit trail, in the same transaction.
public final class StaffController: Sendable {
    let database: any ClinicStore
    let hasher: PasswordHasher
    let now: @Sendable () -> Date
    let passwordCheck: @Sendable (String, String, String, String) throws -> ClinicError?
    let appointments: AppointmentController
    let waitlist: WaitlistController

    /// A staff session ends after this long without use.
    public static let idleLimit: TimeInterval = 12 * 3600

    /// The last use a live session has had at the latest, at `now` (whole seconds, as stored).
    static func idleCutoff(_ now: Date) -> Date { Date(seconds: now.seconds - Int64(idleLimit)) }

    init(database: any ClinicStore, hasher: PasswordHasher, now: @escaping @Sendable () -> Date, appointments: AppointmentController,
         waitlist: WaitlistController, passwordCheck: @escaping @Sendable (String, String, String, String) throws -> ClinicError?) {
        self.appointments = appointments
        self.waitlist = waitlist
        self.database = database
        self.hasher = hasher
        self.now = now
        self.passwordCheck = passwordCheck
    }

    // MARK: Accounts

    /// Creates a staff account. `by` nil is the operator (who owns the database file); a
    /// clinic admin may create accounts of their own clinic only; nobody else may.
    public func addStaff(_ input: StaffInput, by creator: StaffMember? = nil, requestId: String? = nil) throws -> StaffMember {
        let login = try adding(input, by: creator)
        if let problem = try passwordCheck(input.password, login, input.name, input.surname) { throw problem }
        let addition = StaffAddition(input, login: login, passwordHash: try hasher.hash(input.password),
                                     actor: creator?.auditActor ?? .operator, requestId: requestId, now: now())
        return try database.writing { tx in try addition.apply(tx) }
    }

    /// `addStaff` awaited (issue 56): the fields checked, the hash made on `passwords`, then the
    /// store's one transaction (`StaffAccountsStore.addStaff`).
    public func addStaff(_ input: StaffInput, by creator: StaffMember?, requestId: String? = nil,
                         passwords: some PasswordRunner) async throws -> StaffMember {
        let login = try adding(input, by: creator)
        // The policy on the runner too: its common-password list is read from a file once per process.
        let hasher = self.hasher, check = passwordCheck, (password, name, surname) = (input.password, input.name, input.surname)
        let hash = try await passwords.run {
            if let problem = try check(password, login, name, surname) { throw problem }
            return try hasher.hash(password)
        }
        return try await database.addStaff(StaffAddition(input, login: login, passwordHash: hash, actor: creator?.auditActor ?? .operator,
                                                         requestId: requestId, now: now()))
    }

    /// Who may add the account (the operator, `creator` nil, or its clinic's admin; another
    /// role is `forbidden`, another clinic's admin `not_found`) and its fields checked, before
    /// the password's policy and hash (Argon2 takes tens of milliseconds by design); the login trimmed.
    func adding(_ input: StaffInput, by creator: StaffMember?) throws -> String {
        if let creator {
            guard creator.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, creator.role.rawValue) }
            guard creator.clinicId == input.clinicId else { throw ClinicError(.notFound, .clinicNotFound, String(input.clinicId)) }
        }
        let validator = Validator()
        let login = input.login.trimmingCharacters(in: .whitespaces)
        if let problem = validator.problem(.login, login) ?? validator.problem(.name, input.name)
            ?? validator.problem(.surname, input.surname) { throw problem }
        if input.role == .doctor && input.doctorId == nil { throw ClinicError.invalid(.staffDoctorRequired) }
        if input.role != .doctor && input.doctorId != nil { throw ClinicError.invalid(.staffDoctorOnlyForDoctors) }
        return login
    }

    /// A clinic's staff accounts (a clinic admin's own clinic; the operator any).
    public func accounts(clinicId: Int64, by viewer: StaffMember? = nil) throws -> [StaffMember] {
        try Self.checkAccountsViewer(viewer, clinicId: clinicId)
        return try database.reading { tx in try tx.staffMembers(ofClinic: clinicId) }
    }

    /// `accounts` awaited (issue 56: `ClinicAdminReadsStore.staffAccounts`).
    public func accounts(clinicId: Int64, by viewer: StaffMember? = nil) async throws -> [StaffMember] {
        try Self.checkAccountsViewer(viewer, clinicId: clinicId)
        return try await database.staffAccounts(clinicId: clinicId)
    }

    /// Who may list a clinic's accounts: its clinic admin (another role is `forbidden`, another
    /// clinic's admin `not_found`), or the operator (no viewer).
    static func checkAccountsViewer(_ viewer: StaffMember?, clinicId: Int64) throws {
        guard let viewer else { return }
        guard viewer.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, viewer.role.rawValue) }
        guard viewer.clinicId == clinicId else { throw ClinicError(.notFound, .clinicNotFound, String(clinicId)) }
    }

    /// Disables an account and ends its sessions (a clinic admin of its clinic, or the operator).
    public func disable(_ id: Int64, by viewer: StaffMember? = nil, requestId: String? = nil) throws -> StaffMember {
        let decide = Self.disabling(id, by: viewer, requestId: requestId, now: now())
        return try database.writing { tx in try StaffDisabling.apply(tx, id: id, decide: decide) }
    }

    /// `disable` as the store's one awaited operation (issue 56), what a server runs.
    public func disable(_ id: Int64, by viewer: StaffMember?, requestId: String? = nil) async throws -> StaffMember {
        try await database.disableStaff(id: id, decide: Self.disabling(id, by: viewer, requestId: requestId, now: now()))
    }

    /// Who may disable the account read: the operator (`viewer` nil), or the clinic admin of its
    /// clinic; another clinic's account, or none, is `not_found`. The audit row names the login.
    static func disabling(_ id: Int64, by viewer: StaffMember?, requestId: String?, now: Date)
        -> @Sendable (StaffMember?) throws -> AuditAsk {
        { member in
            guard let member, viewer.map({ $0.clinicId == member.clinicId }) ?? true else {
                throw ClinicError(.notFound, .staffNotFound, String(id))
            }
            if let viewer, viewer.role != .clinicAdmin { throw ClinicError(.forbidden, .staffForbidden, viewer.role.rawValue) }
            return AuditAsk(by: viewer?.auditActor ?? .operator, action: .staffDisable, clinicId: member.clinicId, requestId: requestId,
                            detail: member.login, now: now)
        }
    }

    // MARK: Sessions

    /// Checks the password (Argon2id, throttled per login name like patients' log-ins, in
    /// the same table under a `staff:` key) and opens a session; returns its token.
    /// `idleSeconds`: the session's own, shorter idle limit (the web's, `WebSessionLimits`); nil: `idleLimit`.
    public func logIn(login: String, password: String, idleSeconds: Int? = nil) throws -> (member: StaffMember, token: String) {
        guard Client.couldExist(login: login) else {
            _ = hasher.verify(password, against: ClientController.decoyHash(hasher))
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        let key = "staff:" + Client.key(forLogin: login)
        let (found, window) = try ClientController.reserveAttempt(key, store: database, now: now()) { tx in
            try tx.staffCredentials(loginKey: Client.key(forLogin: login))
        }
        let matched = found.map { hasher.verify(password, against: $0.passwordHash) }
            ?? { _ = hasher.verify(password, against: ClientController.decoyHash(hasher)); return false }()
        // A disabled account fails as a wrong password does: no telling which accounts exist.
        guard let (member, _) = found, matched, member.isActive else {
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        let token = SessionManager.newToken()
        let completion = StaffLogInCompletion(staffId: member.id, attemptKey: key, window: Date(seconds: window),
                                              session: Self.opening(token: token, now: now(), idleSeconds: idleSeconds))
        try database.writing { tx in try completion.apply(tx) }
        return (member, token)
    }

    /// The session a log-in opens for `token` (its own idle limit at most `idleLimit`), and the
    /// last use before which staff sessions are purged on the way: `SessionManager.opening`'s twin.
    static func opening(token: String, now: Date, idleSeconds: Int?) -> NewSession {
        NewSession(tokenHash: SessionManager.hash(token), at: now, device: nil, idleSeconds: idleSeconds.map { min($0, Int(idleLimit)) },
                   purgeBefore: idleCutoff(now))
    }

    /// `logIn` awaited (issue 56: `LogInStore`): the same rules and answers, each transaction
    /// awaited and the Argon2 runs on `passwords`.
    public func logIn(login: String, password: String, idleSeconds: Int? = nil,
                      passwords: some PasswordRunner) async throws -> (member: StaffMember, token: String) {
        let hasher = self.hasher
        guard Client.couldExist(login: login) else {
            _ = try await passwords.run { hasher.verify(password, against: ClientController.decoyHash(hasher)) }
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        let loginKey = Client.key(forLogin: login), attemptKey = "staff:" + loginKey, now = self.now()
        let reserved = try await database.reserveStaffLogIn(attemptKey: attemptKey, loginKey: loginKey, at: now,
                                                            forgetBefore: ClientController.forgottenWindows(now)) { attempts in
            try ClientController.refuseIfLocked(attempts, now: now)
        }
        let stored = reserved.passwordHash
        let matched = try await passwords.run {
            stored.map { hasher.verify(password, against: $0) }
                ?? { _ = hasher.verify(password, against: ClientController.decoyHash(hasher)); return false }()
        }
        // A disabled account fails as a wrong password does: no telling which accounts exist.
        guard let member = reserved.member, matched, member.isActive else {
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        let token = SessionManager.newToken()
        try await database.completeStaffLogIn(StaffLogInCompletion(
            staffId: member.id, attemptKey: attemptKey, window: reserved.window,
            session: Self.opening(token: token, now: now, idleSeconds: idleSeconds)))
        return (member, token)
    }

    /// The staff member of a live session; `not_logged_in` otherwise (an expired session, a
    /// disabled account, a patient's token).
    public func current(token: String?) throws -> StaffMember {
        guard let token, SessionManager.isWellFormed(token) else { throw ClinicError(.notLoggedIn, .staffNotLoggedIn) }
        return try live(try database.signedInStaff(tokenHash: SessionManager.hash(token)), now: now())
    }

    /// `current` awaited (issue 56): the session looked up with no thread waiting for the store.
    public func signedIn(token: String) async throws -> StaffMember {
        guard SessionManager.isWellFormed(token) else { throw ClinicError(.notLoggedIn, .staffNotLoggedIn) }
        return try live(try await database.lookUpStaffSession(tokenHash: SessionManager.hash(token)), now: now())
    }

    /// The member of a session still live at `now`; `not_logged_in` otherwise.
    private func live(_ session: StaffSessionLookup?, now: Date) throws -> StaffMember {
        guard let session, now.seconds - session.lastUsedAt.seconds <= Int64(session.idleSeconds ?? Int(Self.idleLimit))
        else { throw ClinicError(.notLoggedIn, .staffNotLoggedIn) }
        return session.member
    }

    /// Keeps a staff session alive after a command made with it succeeded.
    public func touch(token: String) throws {
        let now = self.now()
        try database.writing { tx in try tx.touchStaffSession(tokenHash: SessionManager.hash(token), at: now) }
    }

    /// `touch` awaited (`SessionStore.touchStaffSession`).
    public func touch(token: String) async throws {
        try await database.touchStaffSession(tokenHash: SessionManager.hash(token), at: now())
    }

    @discardableResult
    public func logOut(token: String) throws -> Bool {
        try database.writing { tx in try tx.deleteStaffSession(tokenHash: SessionManager.hash(token)) }
    }

    /// `logOut` awaited (issue 56: `SessionStore`).
    @discardableResult
    public func logOut(token: String) async throws -> Bool {
        try await database.endStaffSession(tokenHash: SessionManager.hash(token))
    }
}
