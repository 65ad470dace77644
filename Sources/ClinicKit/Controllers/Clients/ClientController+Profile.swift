import Foundation

/// Changes a patient may make to their profile; nil leaves a field as it is.
public struct ProfileChanges: Sendable {
    public var name: String?
    public var surname: String?
    public var street: String?
    public var house: String?
    public var city: String?
    public var clinicId: Int64?
    public var language: Language?

    public init(name: String? = nil, surname: String? = nil, street: String? = nil, house: String? = nil, city: String? = nil,
                clinicId: Int64? = nil, language: Language? = nil) {
        self.name = name; self.surname = surname; self.street = street; self.house = house; self.city = city
        self.clinicId = clinicId; self.language = language
    }
}

/// Everything stored about a patient, for `profile export`.
public struct PersonalExport: Sendable {
    public let client: Client
    public let appointments: [(Appointment, [AppointmentEvent])]
    public let sessions: [(createdAt: Date, lastUsedAt: Date)]
    /// The inbox, newest first.
    public let messages: [InboxMessage]
    /// The files on the patient's appointments (theirs and the clinic's), by appointment.
    public var attachments: [AttachmentInfo] = []
    /// The conversations with the clinics, the latest first.
    public var conversations: [Conversation] = []
    /// The mobile number and what comes by text (nil: none).
    public var phone: PhoneStatus? = nil
}

extension ClientController {
    /// Applies profile changes with the registration rules; a changed city is geocoded again
    /// (and, without an explicit clinic, the home clinic stays as it was).
    /// `texts`: what comes by text (nil: unchanged), in the same transaction; refused
    /// (`not_found`) without a mobile number.
    public func updateProfile(clientId: Int64, _ changes: ProfileChanges,
                              texts: (reminders: Bool?, offers: Bool?) = (nil, nil)) throws -> Client {
        try Self.checkProfile(changes)
        let place = try changes.city.map(resolveCity)
        let now = self.now(), geocode = place.flatMap(geocoding.cacheWrite)
        return try database.writing { tx in
            if let clinicId = changes.clinicId, try tx.clinic(id: clinicId) == nil {
                throw ClinicError(.notFound, .clinicNotFound, String(clinicId))
            }
            return try ClientChangeFacts.change(tx, store: database, id: clientId, phone: Self.changesTexts(texts)) { facts in
                try Self.changingProfile(facts, changes, place: place, geocode: geocode, texts: texts, now: now)
            }
        }
    }

    /// `updateProfile` awaited (issue 56): the city looked up awaited, the home clinic's existence
    /// read (the database's reference holds it at the write), then one change of the patient's
    /// locked record (`ClientChangesStore.changeClient`), decided by `changingProfile`.
    public func updateProfile(clientId: Int64, _ changes: ProfileChanges,
                              texts: (reminders: Bool?, offers: Bool?) = (nil, nil)) async throws -> Client {
        try Self.checkProfile(changes)
        var place: GeocodeResult?
        if let city = changes.city { place = try await resolveCity(city) }
        if let clinicId = changes.clinicId, try await database.clinicWithDepartments(id: clinicId) == nil {
            throw ClinicError(.notFound, .clinicNotFound, String(clinicId))
        }
        let now = self.now(), geocode = place.flatMap(geocoding.cacheWrite), known = place
        return try await database.changeClient(id: clientId, phone: Self.changesTexts(texts)) { facts in
            try Self.changingProfile(facts, changes, place: known, geocode: geocode, texts: texts, now: now)
        }
    }

    /// The fields typed, each by the registration's rule.
    static func checkProfile(_ changes: ProfileChanges) throws {
        let validator = Validator()
        let given: [(RegistrationField, String?)] = [(.name, changes.name), (.surname, changes.surname), (.street, changes.street),
                                                     (.house, changes.house), (.city, changes.city)]
        for case let (field, value?) in given {
            if let problem = validator.problem(field, value) { throw problem }
        }
    }

    static func changesTexts(_ texts: (reminders: Bool?, offers: Bool?)) -> Bool { texts.reminders != nil || texts.offers != nil }

    /// A profile's change decided on the patient's record (and their phone, when what comes by
    /// text changes): the record rewritten, the new city's geocode kept, the phone saved. No
    /// such patient: `not_logged_in`; texts without a mobile number: `not_found`.
    static func changingProfile(_ facts: ClientChangeFacts?, _ changes: ProfileChanges, place: GeocodeResult?,
                                geocode: GeocodeCacheWrite?, texts: (reminders: Bool?, offers: Bool?),
                                now: Date) throws -> ClientChange<Client> {
        guard let facts else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        var client = facts.client
        if let clinicId = changes.clinicId { client.homeClinicId = clinicId }
        client.name = changes.name?.trimmingCharacters(in: .whitespaces) ?? client.name
        client.surname = changes.surname?.trimmingCharacters(in: .whitespaces) ?? client.surname
        client.street = changes.street?.trimmingCharacters(in: .whitespaces) ?? client.street
        client.house = changes.house?.trimmingCharacters(in: .whitespaces) ?? client.house
        if let city = changes.city, let place {
            client.city = city.trimmingCharacters(in: .whitespaces)
            client.lat = place.coordinate.latitude
            client.lon = place.coordinate.longitude
        }
        if let language = changes.language { client.preferredLanguage = language.rawValue }
        var writes: [ClientWrite] = [.rewrite(client)]
        if let geocode { writes.append(.recordGeocode(geocode)) }
        if changesTexts(texts) {
            guard var phone = facts.phone else { throw ClinicError(.notFound, .phoneNone) }
            phone.textReminders = texts.reminders ?? phone.textReminders
            phone.textOffers = texts.offers ?? phone.textOffers
            writes.append(.savePhone(phone, at: now))
        }
        return ClientChange(writes: writes, result: client)
    }

    /// Changes the password: the old one is required, the new one must meet the policy, and
    /// every other session of the patient ends (the one in use, `keeping`, stays).
    /// The calendar address is renewed as well (`SessionsEnding`).
    /// The old password is checked under log-in's lock (`checkOwnPassword`).
    public func changePassword(clientId: Int64, old: String, new: String, confirmNew: String? = nil, keeping token: String?) throws {
        // The new password typed twice (the web's form) must match, before the old one is tried.
        if let confirmNew, !Validator().passwordsMatch(new, confirmNew) { throw ClinicError.invalid(.passwordsDiffer) }
        let client = try getUserById(clientId)
        let window = try checkOwnPassword(client, old)
        let hash: String
        do {
            if let problem = try passwordProblem(new, login: client.login, name: client.name, surname: client.surname) { throw problem }
            hash = try hasher.hash(new)
        } catch {
            // The old password was right: its check is given back, as a log-in's would be.
            try? database.writing { tx in try Self.releaseAttempt(tx, client.loginKey, window: window) }
            throw error
        }
        let change = PasswordChange(loginKey: client.loginKey, window: Date(seconds: window), newHash: hash,
                                    ending: SessionsEnding(clientId: clientId, keeping: token, now: now()))
        try database.writing { tx in try change.apply(tx, store: database) }
    }

    /// A password the signed-in patient types to confirm a change (password change, account
    /// deletion), checked under the same lock as log-in: each check first reserves one of the
    /// login's attempts (`reserveAttempt`), a wrong one keeps it, and a locked login is refused
    /// without a check. A stolen session must not be a way around the lock. Returns the window
    /// the attempt was counted in, for `releaseAttempt` once the change commits.
    func checkOwnPassword(_ client: Client, _ password: String) throws -> Int64 {
        let (_, window) = try Self.reserveAttempt(client.loginKey, store: database, now: now()) { _ in Optional(()) }
        guard hasher.verify(password, against: client.passwordHash) else { throw ClinicError(.invalidCredentials, .invalidCredentials) }
        return window
    }

    /// Everything stored about the patient: the profile, the appointments with their history,
    /// and when the sessions were opened and last used.
    /// Who on the clinic side read or changed the patient's data (the audit trail), newest first.
    public func accessLog(clientId: Int64) throws -> [AuditEntry] {
        try database.reading { tx in try AuditLog.entries(tx, clientId: clientId) }
    }

    /// `accessLog` awaited (issue 56: `AccountSecurityStore.accessLog`).
    public func accessLog(clientId: Int64) async throws -> [AuditEntry] {
        try await database.accessLog(ofClient: clientId, limit: AuditLog.accessLogLimit)
    }

    /// The history reason of an appointment cancelled because its patient deleted the account.
    public static let accountDeletedReason = "account deleted"

    /// Deletes the account, after checking the password: the patient's row and personal data,
    /// sessions and failed-log-in count go; future active appointments are cancelled in the
    /// same transaction (history: `cancelled` by the patient, reason "account deleted"), so
    /// their slots are free again; all appointments stay for the clinic's records with nothing
    /// personal (no patient, no notes); the login is free again.
    public func deleteAccount(clientId: Int64, password: String) throws {
        let client = try getUserById(clientId)
        _ = try checkOwnPassword(client, password) // the account's attempts go with it below
        let deletion = AccountDeletion(clientId: clientId, loginKey: client.loginKey, now: now())
        try database.writing { tx in try deletion.apply(tx) }
        database.truncateLog()
    }

    /// `deleteAccount` awaited (issue 56): the password checked as a password change's is
    /// (`AccountSecurityStore.reservePasswordCheck`, Argon2 on `passwords`), then
    /// `AccountSecurityStore.deleteAccount`.
    public func deleteAccount(clientId: Int64, password: String, passwords: some PasswordRunner) async throws {
        let now = self.now()
        let stored = try await checkOwnPassword(clientId: clientId, password, passwords: passwords, now: now).client.client
        // The account's attempts go with it.
        try await database.deleteAccount(AccountDeletion(clientId: clientId, loginKey: stored.loginKey, now: now))
    }
}
