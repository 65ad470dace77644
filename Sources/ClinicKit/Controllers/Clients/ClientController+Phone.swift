import Crypto
import Foundation

/// A patient's mobile number as the profile shows it, and what they take by text.
public struct PhoneStatus: Sendable, Equatable {
    /// The number (E.164), nil for none.
    public let number: String?
    public let confirmed: Bool
    public let textReminders: Bool
    public let textOffers: Bool
    /// The patient replied STOP: nothing is texted until START.
    public let stopped: Bool

    static let none = PhoneStatus(number: nil, confirmed: false, textReminders: false, textOffers: false, stopped: false)
}

extension ClientController {
    /// Minutes a number's code is valid; wrong codes allowed per code; seconds between codes.
    static let phoneCodeMinutes: Int64 = 30
    static let phoneCodeAttempts = 5
    static let phoneCodeInterval: Int64 = 60

    public func phone(clientId: Int64) throws -> PhoneStatus {
        try database.reading { tx in
            guard try tx.clientExists(id: clientId) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            guard let phone = try tx.phone(ofClient: clientId) else { return .none }
            return try Self.status(phone, number: Texts.number(phone, cipher: AppointmentNotes.cipher(tx)))
        }
    }

    static func status(_ phone: StoredPhone, number: String) -> PhoneStatus {
        PhoneStatus(number: number, confirmed: phone.confirmed, textReminders: phone.textReminders, textOffers: phone.textOffers,
                    stopped: phone.stopped)
    }

    /// Sets a mobile number to confirm: a six-digit code goes to it by text through the outbox
    /// (nothing else is texted to it before it is confirmed). The number must be in a country
    /// the deployment texts and no premium or non-geographic range (`PhoneNumber.checked`). The
    /// number already confirmed is left as it is (no code). A new code at most once a minute,
    /// and within `CodeLimits` (per account, per client `address`, per number, per day for the
    /// whole deployment), counted in the same transaction so that requests at once on several
    /// servers get one code and the rest `rate_limited`.
    /// The store's one awaited transaction (issue 56: `ClientChangesStore`): the
    /// record and the phone locked, the number's key, the counts, the phone, the code's text
    /// written together.
    public func setPhone(clientId: Int64, number text: String, from address: String? = nil) async throws -> PhoneStatus {
        let number = try PhoneNumber.checked(text, countries: codeLimits.textCountries)
        let now = self.now(), code = Self.newCode(), limits = codeLimits
        return try await database.changeClient(id: clientId, phone: true, number: number) { facts in
            try Self.settingPhone(facts, number: number, code: code, from: address, limits: limits, now: now)
        }
    }

    /// What setting `number` writes: nothing for the number already confirmed; refused when no
    /// gateway was seen lately (the code would wait for ever: `texts_unavailable`); at most one
    /// code a minute and within `CodeLimits` (counted in one statement each: requests at once
    /// get one code, the others `rate_limited`); the phone saved with the code's hash, unconfirmed
    /// (the choice of texts kept); texts still waiting for the number that was dropped (they are
    /// not for the new one); the code's text queued in the patient's language. `facts` must
    /// carry the phone and the number's key. `not_logged_in` for a patient gone.
    static func settingPhone(_ facts: ClientChangeFacts?, number: String, code: String, from address: String?,
                             limits: CodeLimits, now: Date) throws -> ClientChange<PhoneStatus> {
        guard let facts, let clientId = facts.client.id else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        guard let key = facts.numberKey else { throw ClinicError(.storage, .storageFailure, "a number's change without its key") }
        if let had = facts.phone, had.confirmed, had.numberKey == key { return ClientChange(writes: [], result: status(had, number: number)) }
        guard Outbox.textsAvailable(seen: facts.textGatewaySeen, now: now) else { throw ClinicError(.textsUnavailable, .textsUnavailable) }
        let minute = SendCount(key: "code:text:minute:\(clientId)", window: phoneCodeInterval, limit: 1,
                               refusal: ClinicError(.rateLimited, .phoneCodeTooSoon, String(phoneCodeInterval)))
        let counts = [minute] + limits.counts(channel: .text, clientId: clientId, destination: key, from: address)
        let phone = StoredPhone(
            clientId: clientId, numberSealed: Data(), numberKey: key, confirmed: false, codeHash: phoneCodeHash(code, clientId: clientId),
            codeExpiresAt: Date(seconds: now.seconds + phoneCodeMinutes * 60), codeAttempts: 0, codeSentAt: now,
            textReminders: facts.phone?.textReminders ?? true, textOffers: facts.phone?.textOffers ?? true, stopped: false)
        return ClientChange(writes: counts.map { ClientWrite.countSend($0, at: now) } + [
            .savePhoneNumber(number, phone, at: now),
            .dropPendingDeliveries([.text]),
            .enqueueCodeText(Strings.text(.textCode, facts.client.language, [code]), at: now),
        ], result: status(phone, number: number))
    }

    /// Whether a texted code would be sent: a process with an SMS gateway said so within the
    /// last hour (`Outbox.noteTextGateway`). The profile pages offer a number only then.
    public func textsAvailable() throws -> Bool {
        let now = self.now()
        return try database.reading { tx in try Outbox.textsAvailable(tx, now: now) }
    }

    /// `textsAvailable` awaited (issue 56: `ProfileReadsStore.textGatewaySeen`).
    public func textsAvailable() async throws -> Bool {
        Outbox.textsAvailable(seen: try await database.textGatewaySeen(), now: now())
    }

    /// Forgets the number; texts not yet sent are dropped.
    /// Awaited (issue 56: `AccountSecurityStore`).
    public func removePhone(clientId: Int64) async throws {
        guard try await database.removePhone(ofClient: clientId) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
    }

    /// The number forgotten and the texts not yet sent dropped, in the caller's transaction;
    /// false, and nothing written, for no such patient.
    package static func removePhone(_ tx: any StoreWriting, clientId: Int64) throws -> Bool {
        guard try tx.clientExists(id: clientId) else { return false }
        try tx.deletePhone(ofClient: clientId)
        try tx.dropPendingDeliveries(ofClient: clientId, channels: [.text])
        return true
    }

    /// The patient's phone status awaited, from the read `GET /v1/me` makes (`account`).
    public func phone(clientId: Int64) async throws -> PhoneStatus {
        try await account(clientId: clientId).phone
    }

    /// A code's hash (not bound to the number's lookup key, which a key rotation makes again:
    /// a new number gets a new code anyway).
    static func phoneCodeHash(_ code: String, clientId: Int64) -> String {
        Array(SHA256.hash(data: Data("phone-code:\(clientId):\(code)".utf8))).hexString
    }
}
