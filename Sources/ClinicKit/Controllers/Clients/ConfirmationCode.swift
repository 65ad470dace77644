import Foundation

// A six-digit code typed to confirm a mobile number or an e-mail address (issue 56): whether it
// is the one waiting is a pure function of what waits, the code and the clock, one rule for
// both; what confirming a number writes is a plain value (`PhoneCodeDecision`) the stores write
// in the transaction that read the phone.

/// A code waiting to be typed: its hash, when it runs out, and the wrong guesses counted so far.
public struct WaitingCode: Sendable, Equatable {
    public let hash: String
    public let expiresAt: Date
    public let wrongAttempts: Int

    public init(hash: String, expiresAt: Date, wrongAttempts: Int) {
        self.hash = hash; self.expiresAt = expiresAt; self.wrongAttempts = wrongAttempts
    }
}

/// What a typed code is found to be.
public enum CodeCheck: Sendable, Equatable {
    /// The code waiting, within its time and its guesses.
    case right
    /// Another code, one run out, or any code once `attempts` wrong ones were given: a wrong
    /// guess, which is counted.
    case wrong
    /// Nothing waits to be confirmed.
    case nothingWaits

    /// `given` (spaces around it ignored) against the code waiting: right only while it has not
    /// run out at `now` and fewer than `attempts` wrong guesses were made; `hash` hashes a code
    /// as the waiting one was hashed.
    public static func of(_ given: String, against waiting: WaitingCode?, attempts: Int, now: Date,
                          hash: (String) -> String) -> CodeCheck {
        guard let waiting else { return .nothingWaits }
        let code = given.trimmingCharacters(in: .whitespaces)
        guard waiting.wrongAttempts < attempts, now.seconds < waiting.expiresAt.seconds, code.count == 6,
              hash(code) == waiting.hash else { return .wrong }
        return .right
    }
}

/// What a code typed to confirm the patient's mobile number writes.
public enum PhoneCodeDecision: Sendable, Equatable {
    /// The number confirmed: `phone` saved as it is, at `now`, and the number taken from any
    /// other patient who had confirmed it (whoever holds the phone confirms).
    case confirm(StoredPhone, now: Date)
    /// A wrong guess, counted (in one statement: guesses at once all count).
    case countWrong
    /// Nothing: no number waits to be confirmed.
    case none

    /// The decision written in the caller's transaction (the seam's path, and SQLite's).
    package func apply(_ tx: any StoreWriting, clientId: Int64) throws {
        switch self {
        case .confirm(let phone, let now):
            try tx.releaseConfirmedNumber(numberKey: phone.numberKey, exceptClient: clientId)
            try tx.savePhone(phone, at: now)
        case .countWrong: try tx.countWrongPhoneCode(ofClient: clientId)
        case .none: break
        }
    }
}

extension ClientController {
    /// What `code` does to the patient's phone as stored (nil: none) at `now`: a number waiting
    /// with its code confirmed by the right one, a wrong guess counted, or nothing.
    public static func confirmingPhone(_ phone: StoredPhone?, code: String, clientId: Int64, now: Date) -> PhoneCodeDecision {
        guard let phone, !phone.confirmed, let hash = phone.codeHash, let expires = phone.codeExpiresAt else { return .none }
        let waiting = WaitingCode(hash: hash, expiresAt: expires, wrongAttempts: phone.codeAttempts)
        switch CodeCheck.of(code, against: waiting, attempts: phoneCodeAttempts, now: now,
                            hash: { phoneCodeHash($0, clientId: clientId) }) {
        case .right:
            var confirmed = phone
            confirmed.confirmed = true
            confirmed.codeHash = nil
            confirmed.codeExpiresAt = nil
            confirmed.codeAttempts = 0
            return .confirm(confirmed, now: now)
        case .wrong: return .countWrong
        case .nothingWaits: return .none
        }
    }

    /// The answer to a confirmation once its decision is written: the confirmed number's status
    /// (`number`: the number opened), or the refusal (after the wrong guess was counted).
    static func confirmedPhone(_ decision: PhoneCodeDecision, number: () throws -> String) throws -> PhoneStatus {
        switch decision {
        case .confirm(let phone, _): return status(phone, number: try number())
        case .countWrong: throw ClinicError.invalid(.phoneCodeWrong)
        case .none: throw ClinicError(.notFound, .phoneNoPending)
        }
    }

    /// Confirms the waiting number with its code: from then on texts go to it. Another
    /// patient who had confirmed the same number loses it (whoever holds the phone confirms).
    /// The store's one awaited transaction (issue 56: `AccountSecurityStore`): the phone read
    /// under its row's lock, the decision, its write.
    public func confirmPhone(clientId: Int64, code: String) async throws -> PhoneStatus {
        let now = self.now()
        guard let done = try await database.confirmPhoneCode(ofClient: clientId, decide: { phone in
            Self.confirmingPhone(phone, code: code, clientId: clientId, now: now)
        }) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        return try Self.confirmedPhone(done.decision) {
            guard let number = done.number else { throw ClinicError(.storage, .storageFailure, "a confirmed number not opened") }
            return number
        }
    }
}

extension StoredPhone {
    /// The number, opened under `cipher` (`Texts.number`).
    package func number(cipher: FieldCipher) throws -> String { try Texts.number(self, cipher: cipher) }
}
