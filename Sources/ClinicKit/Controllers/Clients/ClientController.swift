import Foundation

/// What a patient gives to register.
public struct RegistrationRequest: Sendable {
    public var login: String
    public var password: String
    /// The second typing of the password, when it was asked for twice.
    public var confirmPassword: String?
    public var name: String
    public var surname: String
    public var street: String
    public var house: String
    public var city: String
    public var clinicId: Int64?
    public var language: Language
    public var acceptedPrivacy: Bool
    /// Date of birth (YYYY-MM-DD, past, from 1900) and a phone the clinic may call (7 to 15
    /// digits): optional, sealed with the other personal fields, as the front desk takes them
    /// for a walk-in (issue 55: the desk's printed day had blanks for every online patient).
    public var birthDate: String?
    public var phone: String?
    /// The date of birth must be given (the web's form asks it; the API and the CLI keep it
    /// optional for the apps and scripts written before it).
    public var birthDateRequired = false

    public init(login: String, password: String, confirmPassword: String? = nil, name: String, surname: String,
                street: String, house: String, city: String, clinicId: Int64? = nil,
                language: Language = .en, acceptedPrivacy: Bool, birthDate: String? = nil, phone: String? = nil) {
        self.login = login; self.password = password; self.confirmPassword = confirmPassword
        self.name = name; self.surname = surname; self.street = street; self.house = house
        self.city = city; self.clinicId = clinicId; self.language = language
        self.acceptedPrivacy = acceptedPrivacy
        self.birthDate = birthDate.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        self.phone = phone.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
    }
}

/// One problem of a form, beside the field it is about (`ClientController.registrationProblems`).
public struct FieldProblem: Sendable {
    /// The field's name as the forms and the API call it: `login`, `password`, `passwordAgain`, `city`, …
    public let field: String
    public let error: ClinicError

    public init(field: String, error: ClinicError) {
        self.field = field
        self.error = error
    }
}

/// The UML's `ClientController`: patients, their registration and their log-ins.
public final class ClientController: Sendable {
    let database: any ClinicStore
    let hasher: PasswordHasher
    let sessions = SessionManager()
    let now: @Sendable () -> Date
    let geocoding: GeocodingService
    let clinics: ClinicController
    /// The common-password list, when there is a Data/ folder to read it from.
    let commonPasswords: @Sendable () throws -> Set<String>
    /// How many confirmation codes may go out, and to which countries texts go.
    public let codeLimits: CodeLimits

    public init(database: any ClinicStore, hasher: PasswordHasher = PasswordHasher(),
                now: @escaping @Sendable () -> Date = { Date() }, geocoding: GeocodingService? = nil,
                clinics: ClinicController? = nil, commonPasswords: @escaping @Sendable () throws -> Set<String> = { [] },
                codeLimits: CodeLimits = .standard) {
        self.database = database
        self.codeLimits = codeLimits
        self.hasher = hasher
        self.now = now
        self.commonPasswords = commonPasswords
        self.geocoding = geocoding ?? GeocodingService(
            database: database, gazetteer: nil, now: now)
        self.clinics = clinics ?? ClinicController(database: database)
    }

    /// Why a password may not be used by this patient (`weak_password`), or nil: the policy of
    /// `Validator.passwordProblem` with the common-password list.
    public func passwordProblem(_ password: String, login: String, name: String, surname: String) throws -> ClinicError? {
        let validator = Validator(commonPasswords: try commonPasswords())
        guard let problem = validator.passwordProblem(password, login: login, name: name, surname: surname) else { return nil }
        return ClinicError(.weakPassword, problem, String(Validator.minimumPasswordLength), String(Validator.maximumPasswordLength))
    }

    /// A patient's city geocoded; one no source knows is `invalid_input` (`cityUnknown`).
    func resolveCity(_ city: String) throws -> GeocodeResult {
        do {
            return try geocoding.resolve(city)
        } catch let error as ClinicError where error.key == .geocodeFailed {
            throw ClinicError.invalid(.cityUnknown, city)
        }
    }

    /// `resolveCity` awaited.
    func resolveCity(_ city: String) async throws -> GeocodeResult {
        do {
            return try await geocoding.resolve(city)
        } catch let error as ClinicError where error.key == .geocodeFailed {
            throw ClinicError.invalid(.cityUnknown, city)
        }
    }

    /// Every problem of a registration at once, each with the field it is about (a form shows
    /// it there), in the form's order: the fields, the password typed twice, the password's
    /// rules, the privacy policy, a city no source knows, a login taken. `registerUser` refuses
    /// with the first of them; empty when it would store the patient (bar a login taken
    /// meanwhile, which its transaction refuses). The city is looked up only when typed well
    /// and the login read only when it could exist.
    public func registrationProblems(_ request: RegistrationRequest) throws -> [FieldProblem] {
        var problems = try formProblems(request)
        if !problems.contains(where: { $0.field == RegistrationField.city.rawValue }) {
            do { _ = try resolveCity(request.city) } catch let error as ClinicError {
                problems.append(FieldProblem(field: RegistrationField.city.rawValue, error: error))
            }
        }
        let login = request.login.trimmingCharacters(in: .whitespaces)
        if !problems.contains(where: { $0.field == RegistrationField.login.rawValue }), try isLoginTaken(login) {
            problems.append(Self.loginTakenProblem(login))
        }
        return problems
    }

    /// `registrationProblems` awaited (issue 56): the city looked up and the login read awaited.
    public func registrationProblems(_ request: RegistrationRequest) async throws -> [FieldProblem] {
        var problems = try formProblems(request)
        if !problems.contains(where: { $0.field == RegistrationField.city.rawValue }) {
            do { _ = try await resolveCity(request.city) } catch let error as ClinicError {
                problems.append(FieldProblem(field: RegistrationField.city.rawValue, error: error))
            }
        }
        let login = request.login.trimmingCharacters(in: .whitespaces)
        if !problems.contains(where: { $0.field == RegistrationField.login.rawValue }), try await isLoginTaken(login) {
            problems.append(Self.loginTakenProblem(login))
        }
        return problems
    }

    /// The problems of a registration that need neither the store nor a geocoder.
    func formProblems(_ request: RegistrationRequest) throws -> [FieldProblem] {
        let validator = Validator()
        let login = request.login.trimmingCharacters(in: .whitespaces)
        var problems: [FieldProblem] = RegistrationField.allCases.compactMap { field in
            validator.problem(field, request[field]).map { FieldProblem(field: field.rawValue, error: $0) }
        }
        if let confirm = request.confirmPassword, !validator.passwordsMatch(request.password, confirm) {
            problems.append(FieldProblem(field: "passwordAgain", error: ClinicError.invalid(.passwordsDiffer)))
        }
        if let problem = try passwordProblem(request.password, login: login, name: request.name, surname: request.surname) {
            problems.append(FieldProblem(field: "password", error: problem))
        }
        if !request.acceptedPrivacy {
            problems.append(FieldProblem(field: "acceptPrivacy", error: ClinicError(.privacyNotAccepted, .privacyRequired)))
        }
        if request.birthDateRequired && request.birthDate == nil {
            problems.append(FieldProblem(field: "birthDate", error: ClinicError.invalid(.walkInBirthDate)))
        }
        if let birthDate = request.birthDate {
            do { _ = try StaffController.checkedBirthDate(birthDate, now: now()) } catch let error as ClinicError {
                problems.append(FieldProblem(field: "birthDate", error: error))
            }
        }
        if let phone = request.phone {
            do { _ = try StaffController.checkedPhone(phone) } catch let error as ClinicError {
                problems.append(FieldProblem(field: "phone", error: error))
            }
        }
        return problems
    }

    static func loginTakenProblem(_ login: String) -> FieldProblem {
        FieldProblem(field: RegistrationField.login.rawValue, error: ClinicError(.loginTaken, .loginTaken, login))
    }

    /// Whether a login is taken (any case), without opening anyone's personal data.
    public func isLoginTaken(_ login: String) throws -> Bool {
        guard Client.couldExist(login: login) else { return false }
        return try database.reading { tx in try tx.loginExists(loginKey: Client.key(forLogin: login)) }
    }

    /// `isLoginTaken` awaited (`RegistrationStore.loginTaken`).
    public func isLoginTaken(_ login: String) async throws -> Bool {
        guard Client.couldExist(login: login) else { return false }
        return try await database.loginTaken(loginKey: Client.key(forLogin: login))
    }

    /// Checks every field, geocodes the city (one no source knows is refused: the UML's CITIES
    /// check), then stores the patient with an Argon2id hash of the password and the city's
    /// coordinates. Only the city is looked up: the street and house are never sent to a
    /// geocoder nor kept in the geocode cache. Without `clinicId`, the home clinic is the
    /// nearest one.
    public func registerUser(_ request: RegistrationRequest) throws -> Client {
        if let first = try registrationProblems(request).first { throw first.error }
        let place = try resolveCity(request.city)
        let nearest = request.clinicId == nil ? try clinics.nearest(to: place.coordinate).first?.clinic.id : nil
        let checked = try Self.checkedExtras(request, now: now())
        // Hash before the write transaction: Argon2 takes tens of milliseconds by design.
        let hash = try hasher.hash(request.password)
        let now = self.now(), geocode = geocoding.cacheWrite(place)
        return try database.writing { tx in
            try NewClient.add(tx, store: database, Self.registrationAsk(request)) { facts in
                try Self.registering(facts, request, place: place, nearest: nearest, extras: checked, hash: hash,
                                     geocode: geocode, now: now)
            }
        }
    }

    /// `registerUser` awaited (issue 56): the problems and the nearest clinic read awaited, the
    /// hash on `passwords`, then one write (`RegistrationStore.addClient`) decided by `registering`.
    public func registerUser(_ request: RegistrationRequest, passwords: some PasswordRunner) async throws -> Client {
        if let first = try await registrationProblems(request).first { throw first.error }
        let place = try await resolveCity(request.city)
        let nearest = request.clinicId == nil ? try await clinics.nearest(to: place.coordinate).first?.clinic.id : nil
        let checked = try Self.checkedExtras(request, now: now())
        let hasher = self.hasher, password = request.password
        let hash = try await passwords.run { try hasher.hash(password) }
        let now = self.now(), geocode = geocoding.cacheWrite(place)
        return try await database.addClient(Self.registrationAsk(request)) { facts in
            try Self.registering(facts, request, place: place, nearest: nearest, extras: checked, hash: hash, geocode: geocode, now: now)
        }
    }

    static func registrationAsk(_ request: RegistrationRequest) -> RegistrationFactsRequest {
        RegistrationFactsRequest(loginKey: Client.key(forLogin: request.login.trimmingCharacters(in: .whitespaces)),
                                 homeClinicId: request.clinicId)
    }

    /// The date of birth and the phone, checked.
    static func checkedExtras(_ request: RegistrationRequest, now: Date) throws -> (birthDate: String?, phone: String?) {
        (try request.birthDate.map { try StaffController.checkedBirthDate($0, now: now) }, try request.phone.map(StaffController.checkedPhone))
    }

    /// A registration decided on what the store read: a login taken meanwhile is `login_taken`,
    /// a home clinic asked for that does not exist `not_found`; otherwise the patient (the
    /// clinic asked for, else `nearest`) and the city's geocode to keep.
    static func registering(_ facts: RegistrationFacts, _ request: RegistrationRequest, place: GeocodeResult, nearest: Int64?,
                            extras: (birthDate: String?, phone: String?), hash: String, geocode: GeocodeCacheWrite?,
                            now: Date) throws -> NewClient {
        let login = request.login.trimmingCharacters(in: .whitespaces)
        if facts.loginTaken { throw ClinicError(.loginTaken, .loginTaken, login) }
        if facts.homeClinicExists == false, let clinicId = request.clinicId {
            throw ClinicError(.notFound, .clinicNotFound, String(clinicId))
        }
        var client = Client(
            id: nil, login: login, loginKey: Client.key(forLogin: login), passwordHash: hash,
            name: request.name.trimmingCharacters(in: .whitespaces),
            surname: request.surname.trimmingCharacters(in: .whitespaces),
            street: request.street.trimmingCharacters(in: .whitespaces),
            house: request.house.trimmingCharacters(in: .whitespaces),
            city: request.city.trimmingCharacters(in: .whitespaces),
            lat: place.coordinate.latitude, lon: place.coordinate.longitude,
            homeClinicId: request.clinicId ?? nearest, preferredLanguage: request.language.rawValue,
            privacyAcceptedAt: now, privacyVersion: PrivacyPolicy.version, createdAt: now)
        client.birthDate = extras.birthDate
        client.phone = extras.phone
        return NewClient(client: client, geocode: geocode)
    }

    public func getUserById(_ id: Int64) throws -> Client {
        guard let client = try database.reading({ tx in try database.client(tx, id: id) }) else {
            throw ClinicError(.notFound, .clientNotFound, String(id))
        }
        return client
    }

    /// `getUserById` awaited (issue 56: `ProfileReadsStore.client`).
    public func getUserById(_ id: Int64) async throws -> Client {
        guard let client = try await database.client(id: id) else { throw ClinicError(.notFound, .clientNotFound, String(id)) }
        return client
    }

    public func getUserByLogin(_ login: String) throws -> Client {
        guard Client.couldExist(login: login), let client = try database.reading({ tx in try database.client(tx, login: login) }) else {
            throw ClinicError(.notFound, .clientNotFound, login)
        }
        return client
    }

    /// Failed log-ins allowed for one login name within `throttleWindow` before it is locked
    /// until the window ends.
    public static let throttleLimit = 5
    public static let throttleWindow: TimeInterval = 15 * 60

    /// Checks the password and opens a session; returns the patient and the session token.
    /// An unknown login and a wrong password fail the same way, after the same work, and are
    /// throttled the same way: at most `throttleLimit` passwords per login name are ever checked
    /// within `throttleWindow`, however many attempts arrive at once. Each attempt first
    /// reserves one of those checks in a write transaction (`reserveAttempt`), before the slow
    /// Argon2 run; a name with none left is refused with `account_locked` without the password
    /// being checked. A failed check keeps its reservation: that is the counted failure. A
    /// success, or a check that ends in `privacy_not_accepted`, gives its own reservation back,
    /// and only its own: failures of the same window stay counted until the window ends, so a
    /// right password racing wrong ones opens no room for more guesses. The counters live in
    /// the database (shared by every process); recording an attempt is the one write a failed
    /// command makes, on purpose. A hash made with weaker parameters than the current ones, or
    /// from a password before it was prepared (`PasswordHasher.prepared`), is replaced.
    /// A patient who accepted an older version of the privacy policy must accept the current
    /// one (`acceptPrivacy`) to log in; otherwise `privacy_not_accepted`, after the password
    /// was checked (so it says nothing to someone without it), and no failure is counted.
    /// `idleSeconds`: the session's own, shorter idle limit (the web's, `WebSessionLimits`);
    /// nil: `SessionManager.idleLimit`.
    public func logIn(login: String, password: String, acceptPrivacy: Bool = false,
                      device: Device? = nil, idleSeconds: Int? = nil) throws -> (client: Client, token: String) {
        let device = try device?.validated()
        // A name no account can have (too long, a control character) is not looked up.
        guard Client.couldExist(login: login) else {
            _ = hasher.verify(password, against: Self.decoyHash(hasher))
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        let key = Client.key(forLogin: login)
        let (client, window) = try reserveAttempt(key, login: login)
        let match = client.map { hasher.match(password, against: $0.passwordHash) }
            ?? { _ = hasher.verify(password, against: Self.decoyHash(hasher)); return .none }()
        guard let client, match.matched else { throw ClinicError(.invalidCredentials, .invalidCredentials) }
        let outdatedConsent = client.privacyVersion != PrivacyPolicy.version
        if outdatedConsent && !acceptPrivacy {
            try database.writing { tx in try Self.releaseAttempt(tx, key, window: window) }
            throw ClinicError(.privacyNotAccepted, .privacyChanged, String(PrivacyPolicy.version))
        }
        let newHash = match == .raw || hasher.needsRehash(client.passwordHash) ? try hasher.hash(password) : nil
        let now = self.now(), token = SessionManager.newToken()
        let completion = LogInCompletion(
            clientId: client.id ?? -1, loginKey: key, window: Date(seconds: window), newHash: newHash.map { ($0, client.passwordHash) },
            acceptedPrivacyVersion: outdatedConsent ? PrivacyPolicy.version : nil, now: now,
            session: SessionManager.opening(token: token, now: now, device: device, idleSeconds: idleSeconds))
        guard let done = try database.writing({ tx in try completion.apply(tx) }) else {
            throw ClinicError(.invalidCredentials, .invalidCredentials)
        }
        return (try Self.opened(done, key: database.personalDataKey), token)
    }

    /// Reserves one password check for a login name, in one write transaction: windows that
    /// ended are forgotten; a name whose window holds `throttleLimit` attempts already is
    /// `account_locked`; otherwise this attempt is counted (starting a window when there is
    /// none) and the patient, if any, is read (sealed: the key is needed only after the
    /// password matched), with the start of the window the attempt was
    /// counted in. Counting before checking is what makes the limit hold for attempts that
    /// arrive together.
    func reserveAttempt(_ key: String, login: String) throws -> (client: Client?, window: Int64) {
        let (client, window) = try Self.reserveAttempt(key, store: database, now: now()) { tx in
            try database.sealedClient(tx, login: login)
        }
        return (client, window)
    }

    /// `reserveAttempt` for any kind of account (patients, staff): `read` fetches the account
    /// in the transaction that counted the attempt. The attempt is counted first and refused
    /// after: a refusal throws, which rolls its count back with the transaction, so that the
    /// store's atomic count (`countLoginAttempt`) is the only thing parallel attempts share.
    static func reserveAttempt<Account>(_ key: String, store: any ClinicStore, now: Date,
                                        read: (any StoreWriting) throws -> Account?) throws -> (account: Account?, window: Int64) {
        try store.writing { tx in
            try tx.forgetLoginAttempts(windowStartedBy: forgottenWindows(now))
            let attempts = try tx.countLoginAttempt(loginKey: key, at: now)
            try refuseIfLocked(attempts, now: now)
            return (try read(tx), attempts.windowStart.seconds)
        }
    }

    /// The lock: a name whose window holds more than `throttleLimit` attempts, this one counted,
    /// is `account_locked` until the window ends.
    static func refuseIfLocked(_ attempts: LoginAttempts, now: Date) throws {
        guard attempts.count > throttleLimit else { return }
        let until = attempts.windowStart.addingTimeInterval(throttleWindow)
        throw ClinicError(.accountLocked, .accountLocked, DateText.iso8601(until),
                          String(Int((until.timeIntervalSince(now) / 60).rounded(.up))))
    }

    /// The start of the oldest window still counting at `now`: windows started then or earlier are forgotten.
    static func forgottenWindows(_ now: Date) -> Date {
        Date(seconds: now.seconds - Int64(throttleWindow))
    }

    /// Gives back the check `reserveAttempt` reserved for this attempt, in the window it was
    /// counted in: once that window has ended, a new one's attempts are not this one's to undo.
    package static func releaseAttempt(_ tx: any SecurityWriting, _ key: String, window: Int64) throws {
        try tx.withdrawLoginAttempt(loginKey: key, windowStart: Date(seconds: window))
    }

    /// The patient a session token belongs to; `not_logged_in` for none, unknown or expired.
    public func currentUser(token: String?) throws -> Client {
        guard let token else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        return try opened(try sessions.signedIn(database, token: token, now: now()))
    }

    /// `currentUser` awaited (issue 56): the session looked up with no thread waiting for the
    /// store; what a server's signed-in request does first.
    public func signedInPatient(token: String) async throws -> Client {
        try opened(try await sessions.signedIn(awaiting: database, token: token, now: now()))
    }

    /// The patient of a live session with the personal fields opened; `not_logged_in` for none.
    private func opened(_ facts: SignedInPatientFacts?) throws -> Client {
        guard let facts else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        guard facts.client.personal != nil else { return facts.client.client }
        return try facts.client.opened(with: database.personalDataKey.cipher(keyCheck: facts.personalDataKeyCheck))
    }

    /// Keeps a session alive: call it when a command made with the session has succeeded.
    public func touchSession(token: String) throws {
        let now = self.now()
        try database.writing { tx in try sessions.touch(tx, token: token, now: now) }
    }

    /// The patient's signed-in sessions (devices), marking the one `token` belongs to.
    public func signedInSessions(clientId: Int64, current token: String?) throws -> [SessionInfo] {
        let now = self.now()
        return try database.reading { tx in try sessions.list(tx, clientId: clientId, current: token, now: now) }
    }

    /// Signs one of the patient's sessions out; `not_found` for a session that is not theirs.
    public func endSession(_ id: Int64, clientId: Int64) throws {
        let ended = try database.writing { tx in try sessions.delete(tx, id: id, clientId: clientId) }
        guard ended else { throw ClinicError(.notFound, .sessionNotFound, String(id)) }
    }

    @discardableResult
    public func logOut(token: String) throws -> Bool {
        try database.writing { tx in try sessions.delete(tx, token: token) }
    }

    /// `endSession` awaited (issue 56: `SessionStore`).
    public func endSession(_ id: Int64, clientId: Int64) async throws {
        guard try await database.endPatientSession(id: id, clientId: clientId) else {
            throw ClinicError(.notFound, .sessionNotFound, String(id))
        }
    }

    /// `touchSession` awaited (`SessionStore.touchPatientSession`).
    public func touchSession(token: String) async throws {
        try await database.touchPatientSession(tokenHash: SessionManager.hash(token), at: now())
    }

    /// `signedInSessions` awaited (`SessionStore.patientSessions`).
    public func signedInSessions(clientId: Int64, current token: String?) async throws -> [SessionInfo] {
        try await sessions.list(awaiting: database, clientId: clientId, current: token, now: now())
    }

    /// `logOut` awaited: whether the token was a session's.
    @discardableResult
    public func logOut(token: String) async throws -> Bool {
        try await database.endPatientSession(tokenHash: SessionManager.hash(token))
    }

    /// A valid hash of a random password, verified against when the login is unknown so that
    /// both failures cost one Argon2 run. For the default parameters it is a constant; other
    /// parameters (tests) make one per process.
    static func decoyHash(_ hasher: PasswordHasher) -> String {
        if hasher.parameters == .owaspMinimum { return owaspDecoy }
        return decoys.withLock { cache in
            if let hash = cache[hasher.parameters.memoryKiB] { return hash }
            let hash = (try? hasher.hash(SessionManager.newToken())) ?? owaspDecoy
            cache[hasher.parameters.memoryKiB] = hash
            return hash
        }
    }

    static let owaspDecoy = "$argon2id$v=19$m=19456,t=2,p=1$2N5AHzu4Y5dUWVzC9bqMHg$Y7E6wQAeOpbSmXLS0Q6yeOfVlEBsMlUo8rm9g1oMpvc"
    static let decoys = LockedBox<[UInt32: String]>([:])
}
