import Crypto
import Foundation

// Walk-in and phone patients (issue 29): the front desk registers a patient who has no online
// account, books for them, and gives them a one-time code to claim the account later
// (`ClientController.claim`).

/// What the front desk takes from a walk-in: name, surname, date of birth, phone, and an
/// e-mail address if they have one.
public struct WalkInRequest: Sendable {
    public var name: String
    public var surname: String
    public var birthDate: String
    public var phone: String
    public var email: String?
    /// The language the patient's messages are written in.
    public var language: Language

    public init(name: String, surname: String, birthDate: String, phone: String, email: String? = nil, language: Language = .en) {
        self.name = name; self.surname = surname; self.birthDate = birthDate; self.phone = phone; self.email = email
        self.language = language
    }
}

/// A claim code as the front desk hands it over (printed, or read out), and until when it works.
public struct ClaimCode: Sendable, Equatable {
    public let patientId: Int64
    public let code: String
    public let expiresAt: Date
    /// Whether it also went to the patient's e-mail address (through the outbox).
    public let emailed: Bool
    /// The zone of the clinic that gave it, in which its expiry is shown to the front desk.
    public let zone: TimeZone
}

extension StaffController {
    /// How long a claim code works.
    public static let claimCodeDays = 7

    /// Registers a patient without an online account at the member's clinic (receptionists and
    /// clinic admins): the fields are checked as registration checks them (letters for names; a
    /// past date of birth; 7 to 15 digits of phone; an e-mail address, taken as confirmed since the
    /// patient gave it in person). The patient has no password and a login no one can type until
    /// they claim the account; they are the clinic's patient from now on (found, booked by id).
    /// One transaction with the audit row `patient.register`.
    public func registerWalkIn(_ member: StaffMember, _ request: WalkInRequest, requestId: String? = nil) throws -> PatientMatch {
        let (ask, decide) = try Self.walkIn(member, request, requestId: requestId, now: now())
        let added = try database.writing { tx in try NewClient.add(tx, store: database, ask, decide) }
        return PatientMatch(added, id: added.id ?? -1)
    }

    /// `registerWalkIn` as the store's one awaited operation (issue 56), what a server runs.
    public func registerWalkIn(_ member: StaffMember, _ request: WalkInRequest, requestId: String? = nil) async throws -> PatientMatch {
        let (ask, decide) = try Self.walkIn(member, request, requestId: requestId, now: now())
        let added = try await database.addClient(ask, decide: decide)
        return PatientMatch(added, id: added.id ?? -1)
    }

    /// A walk-in's fields checked before anything is read, and the decision on what is: the
    /// member's clinic must exist (it is the patient's home clinic).
    static func walkIn(_ member: StaffMember, _ request: WalkInRequest, requestId: String?, now: Date) throws
        -> (ask: RegistrationFactsRequest, decide: @Sendable (RegistrationFacts) throws -> NewClient) {
        try member.checkFrontDesk()
        let validator = Validator()
        for (field, value) in [(RegistrationField.name, request.name), (.surname, request.surname)] {
            if let problem = validator.problem(field, value) { throw problem }
        }
        let birthDate = try Self.checkedBirthDate(request.birthDate, now: now)
        let phone = try Self.checkedPhone(request.phone)
        let email = try request.email.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : try Mail.checkedAddress($0) }
        // A login no one can type (registration takes letters, digits and . _ - @ only) and no
        // password: nobody logs in as a walk-in before the claim.
        let login = "~walk-in-" + Array((0..<10).map { _ in UInt8.random(in: 0...255) }).hexString
        var client = Client(id: nil, login: login, loginKey: Client.key(forLogin: login), passwordHash: "",
                            name: request.name.trimmingCharacters(in: .whitespaces),
                            surname: request.surname.trimmingCharacters(in: .whitespaces), street: "", house: "", city: "",
                            lat: nil, lon: nil, homeClinicId: member.clinicId, preferredLanguage: request.language.rawValue,
                            privacyAcceptedAt: nil, privacyVersion: nil, createdAt: now)
        client.email = email
        client.birthDate = birthDate
        client.phone = phone
        let walkIn = WalkInWrite(clinicId: member.clinicId, staffId: member.id, at: now,
                                 audit: AuditAsk(by: member.auditActor, action: .patientRegister, requestId: requestId,
                                                 detail: "walk-in at the front desk", now: now))
        return (RegistrationFactsRequest(loginKey: client.loginKey, homeClinicId: member.clinicId), { [client] facts in
            guard facts.homeClinicExists == true else { throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId)) }
            guard !facts.loginTaken else { throw ClinicError(.loginTaken, .loginTaken, client.login) }
            return NewClient(client: client, geocode: nil, walkIn: walkIn)
        })
    }

    /// A one-time code with which a walk-in of the member's clinic sets a login and a password
    /// (`ClientController.claim`), in place of any earlier code; it works for `claimCodeDays`,
    /// and goes by e-mail too when the patient gave an address.
    /// 12 characters of an alphabet without look-alikes (60 bits): not to be guessed within the
    /// per-address limit of the claim. Only the code's SHA-256 is stored. A patient who has an
    /// online account already is `invalid_input`; another clinic's is `not_found`.
    public func claimCode(_ member: StaffMember, patientId: Int64, requestId: String? = nil) throws -> ClaimCode {
        let rules = try claimCoding(member, patientId: patientId, requestId: requestId)
        return try database.writing { tx in try rules.run(tx, store: database) }
    }

    /// `claimCode` awaited: the store's one transaction (`FrontDeskChangesStore.deskClaimCode`).
    public func claimCode(_ member: StaffMember, patientId: Int64, requestId: String? = nil) async throws -> ClaimCode {
        try await database.deskClaimCode(try claimCoding(member, patientId: patientId, requestId: requestId))
    }

    /// The code's rules: the front desk's, a new code that works for `claimCodeDays`.
    func claimCoding(_ member: StaffMember, patientId: Int64, requestId: String?) throws -> ClaimCodeRules {
        try member.checkFrontDesk()
        let now = self.now()
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        let raw = String((0..<12).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        let code = [raw.prefix(4), raw.dropFirst(4).prefix(4), raw.suffix(4)].joined(separator: "-")
        return ClaimCodeRules(member: member, patientId: patientId, code: code,
                              expiresAt: Date(seconds: now.seconds + Int64(Self.claimCodeDays) * 86_400), requestId: requestId, now: now)
    }

    /// A date of birth: YYYY-MM-DD, a real date, from 1900 to yesterday or today (UTC).
    static func checkedBirthDate(_ text: String, now: Date) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.count == 10, let day = try? TimeInput.parseDay(trimmed), day.dayText == trimmed, day.year >= 1900,
              day.dayText <= LocalDateTime.of(now, in: .gmt).dayText else {
            throw ClinicError.invalid(.walkInBirthDate)
        }
        return day.dayText
    }

    /// A phone number: 7 to 15 digits, with spaces, +, -, ( ) or dots between them (kept as typed,
    /// spaces folded).
    static func checkedPhone(_ text: String) throws -> String {
        let trimmed = text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        let allowed = CharacterSet(charactersIn: "0123456789+-(). ")
        let digits = trimmed.unicodeScalars.filter { ("0"..."9").contains($0) }.count
        guard trimmed.count <= 30, (7...15).contains(digits), trimmed.unicodeScalars.allSatisfy({ allowed.contains($0) }) else {
            throw ClinicError.invalid(.walkInPhone)
        }
        return trimmed
    }
}
