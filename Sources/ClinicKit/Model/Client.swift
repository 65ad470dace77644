import Foundation

/// A registered patient. `login` is kept as typed; uniqueness is on `loginKey`, its
/// case-folded form, so "Anna" and "anna" are the same account in any alphabet.
public struct Client: Hashable, Sendable {

    public var id: Int64?
    public var login: String
    public var loginKey: String
    public var passwordHash: String
    public var name: String
    public var surname: String
    public var street: String
    public var house: String
    public var city: String
    public var lat: Double?
    public var lon: Double?
    public var homeClinicId: Int64?
    public var preferredLanguage: String
    public var privacyAcceptedAt: Date?
    public var privacyVersion: Int?
    public var createdAt: Date
    /// The confirmed e-mail address (sealed with the other personal fields), nil for none.
    public var email: String? = nil
    /// An address waiting for its confirmation code.
    public var pendingEmail: String? = nil
    /// Date of birth (YYYY-MM-DD) and phone: sealed, taken by the front desk for a walk-in.
    public var birthDate: String? = nil
    public var phone: String? = nil

    /// A walk-in's account has no password until the patient claims it (`ClientController.claim`).
    public var hasOnlineAccount: Bool { !passwordHash.isEmpty }

    public var coordinate: Coordinate? {
        guard let lat, let lon else { return nil }
        return Coordinate(latitude: lat, longitude: lon)
    }

    public var language: Language { Language(rawValue: preferredLanguage) ?? .en }


    /// Whether an account could have this login name: at most 64 characters and no control
    /// character (a NUL, a newline inside). Registration takes less than this
    /// (`Validator.isValidLogin`); this is only what no version ever stored, so a log-in with
    /// such a name is refused as a wrong password without asking the store (PostgreSQL cannot
    /// even compare a text holding a NUL).
    public static func couldExist(login: String) -> Bool {
        let trimmed = login.trimmingCharacters(in: .whitespacesAndNewlines)
        return login.count <= 64
            && !trimmed.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) })
    }

    /// The case-folded form used for uniqueness and look-up.
    public static func key(forLogin login: String) -> String {
        login.trimmingCharacters(in: .whitespacesAndNewlines)
            .precomposedStringWithCompatibilityMapping
            .lowercased()
    }
}
