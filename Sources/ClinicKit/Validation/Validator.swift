import Foundation

/// The UML's `Validator`: small, pure checks used by the controllers before anything is
/// written. "Letters" means any alphabet's letters (Latin with accents, Cyrillic, …).
public struct Validator: Sendable {
    /// An allow-list of cities, folded for case- and accent-insensitive comparison; empty means
    /// "not checked". Registration checks a city by geocoding it instead (a city the gazetteer,
    /// the directory or the configured geocoder does not know is refused), so it passes none.
    public let CITIES: Set<String>
    /// Passwords too common to allow, in lower case (Data/common-passwords.txt).
    public let commonPasswords: Set<String>

    public init(cities: some Sequence<String> = [], commonPasswords: Set<String> = []) {
        CITIES = Set(cities.map(Text.fold))
        self.commonPasswords = commonPasswords
    }

    public static let minimumPasswordLength = 10

    /// The password's rules in words, for a form to show before they are broken.
    public static func passwordRules(_ language: Language) -> String {
        Strings.text(.passwordRules, language, [String(minimumPasswordLength)])
    }
    public static let maximumPasswordLength = 128

    public func isEmpty(_ text: String) -> Bool {
        text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    }

    /// The password policy without the personal rules (see `passwordProblem`).
    public func isStrongPassword(_ password: String) -> Bool {
        passwordProblem(password) == nil
    }

    /// Which rule a password breaks, or nil if it is strong enough: 10 to 128 characters; not
    /// containing the login, nor the name or surname when they have 3 letters or more (any
    /// case); not one of the common passwords. Length beats character classes: a long
    /// passphrase of words is allowed, "Password1!" is not.
    public func passwordProblem(_ password: String, login: String? = nil, name: String? = nil,
                                surname: String? = nil) -> MessageKey? {
        let count = password.count
        if count < Self.minimumPasswordLength { return .passwordTooShort }
        if count > Self.maximumPasswordLength { return .passwordTooLong }
        let lowered = password.lowercased()
        if let login, login.count >= 3, lowered.contains(Client.key(forLogin: login)) {
            return .passwordContainsLogin
        }
        for part in [name, surname].compactMap({ $0?.trimmingCharacters(in: .whitespaces).lowercased() })
        where part.filter(\.isLetter).count >= 3 && lowered.contains(part) {
            return .passwordContainsName
        }
        if commonPasswords.contains(lowered) { return .passwordCommon }
        return nil
    }

    /// The common passwords of a Data/ folder, read once per process.
    public static func commonPasswords(in data: URL) throws -> Set<String> {
        try loadedPasswords.withLock { cache in
            if let set = cache[data.path] { return set }
            let url = data.appendingPathComponent("common-passwords.txt")
            guard let bytes = FileManager.default.contents(atPath: url.path) else {
                throw ClinicError(.storage, .gazetteerMissing, url.path)
            }
            let set = Set(String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init))
            cache[data.path] = set
            return set
        }
    }

    private static let loadedPasswords = LockedBox<[String: Set<String>]>([:])

    /// U+200C ZERO WIDTH NON-JOINER and U+200D ZERO WIDTH JOINER.
    static let joiners: Set<Unicode.Scalar> = ["\u{200C}", "\u{200D}"]

    public func passwordsMatch(_ password: String, _ confirmPassword: String) -> Bool {
        password == confirmPassword
    }

    /// Letters of any alphabet, with single spaces, hyphens or apostrophes between them
    /// ("Anne-Marie", "O'Brien", "Жанна д'Арк"); inside a word also the zero-width non-joiner
    /// and joiner that some scripts spell with (Persian "می‌خواهم").
    public func containsOnlyLetters(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let first = trimmed.unicodeScalars.first, let last = trimmed.unicodeScalars.last,
              CharacterSet.letters.contains(first), CharacterSet.letters.contains(last)
        else { return false }
        var previousWasSeparator = false
        for scalar in trimmed.unicodeScalars {
            if CharacterSet.letters.contains(scalar) || CharacterSet.nonBaseCharacters.contains(scalar)
                || Self.joiners.contains(scalar) {
                previousWasSeparator = false
            } else if scalar == " " || scalar == "-" || scalar == "'" || scalar == "\u{2019}" {
                if previousWasSeparator { return false }
                previousWasSeparator = true
            } else {
                return false
            }
        }
        return true
    }

    /// ASCII digits only, at least one.
    public func containsOnlyNumbers(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
    }

    /// A login: 3 to 64 characters of letters, digits, '.', '_', '-' or '@'.
    public func isValidLogin(_ login: String) -> Bool {
        let count = login.count
        guard (3...64).contains(count) else { return false }
        return login.unicodeScalars.allSatisfy {
            CharacterSet.letters.contains($0) || CharacterSet.decimalDigits.contains($0) || "._-@".unicodeScalars.contains($0)
        }
    }

    /// A house number: a number with an optional letter or suffix ("12", "12A", "12/3", "12-14").
    public func isValidHouse(_ house: String) -> Bool {
        let trimmed = house.trimmingCharacters(in: .whitespaces)
        guard (1...16).contains(trimmed.count), let first = trimmed.unicodeScalars.first,
              CharacterSet.decimalDigits.contains(first) else { return false }
        return trimmed.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "/- ".unicodeScalars.contains($0)
        }
    }

    /// A street name: 1 to 100 characters, with at least one letter, and no control characters
    /// (`Text.isForbiddenControl`: joiners and other format characters of spelling are fine).
    public func isValidStreet(_ street: String) -> Bool {
        let trimmed = street.trimmingCharacters(in: .whitespaces)
        guard (1...100).contains(trimmed.count) else { return false }
        let scalars = trimmed.unicodeScalars
        return scalars.contains { CharacterSet.letters.contains($0) }
            && !Text.hasForbiddenControl(trimmed)
    }

    /// A city as a patient types it: 1 to 100 characters of letters, spaces, hyphens,
    /// apostrophes and dots, optionally followed by ", STATE" or ", Country" ("St. Louis, MO"),
    /// and a U.S. ZIP code at the very end ("Georgetown, IN 47122": what the choice among
    /// places of one name gives when a name and a state are not enough).
    public func isValidCity(_ city: String) -> Bool {
        let trimmed = city.trimmingCharacters(in: .whitespaces)
        guard (1...100).contains(trimmed.count) else { return false }
        var parts = trimmed.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        if var last = parts.last?.split(separator: " ").map(String.init), let zip = last.last, last.count > 1,
           zip.range(of: #"^[0-9]{5}(-[0-9]{4})?$"#, options: .regularExpression) != nil {
            last.removeLast()
            parts[parts.count - 1] = last.joined(separator: " ")
        }
        return parts.allSatisfy { part in
            containsOnlyLetters(part.replacingOccurrences(of: ".", with: " ").split(separator: " ").joined(separator: " "))
        }
    }

    public func isKnownCity(_ city: String) -> Bool {
        CITIES.isEmpty || CITIES.contains(Text.fold(city))
    }

    /// Why a registration field is refused (`invalid_input`), or nil when it is fine; the
    /// checks `registerUser` makes, one field at a time, so that a form can ask again at once.
    public func problem(_ field: RegistrationField, _ value: String) -> ClinicError? {
        switch field {
        case .login:
            return isValidLogin(value.trimmingCharacters(in: .whitespaces)) ? nil : .invalid(.loginInvalid)
        case .name, .surname:
            if isEmpty(value) { return .invalid(.fieldEmpty, field.rawValue) }
            // NFC, bounded in code points and bytes, no blank letters or mixed look-alike
            // scripts (`Text.checkedPersonName`), and then letters only.
            guard let normal = Text.checkedPersonName(value, maximum: 100), containsOnlyLetters(normal) else {
                return .invalid(.fieldLettersOnly, field.rawValue)
            }
            return nil
        case .street:
            if isEmpty(value) { return .invalid(.fieldEmpty, field.rawValue) }
            return isValidStreet(value) ? nil : .invalid(.streetInvalid)
        case .house:
            if isEmpty(value) { return .invalid(.fieldEmpty, field.rawValue) }
            return isValidHouse(value) ? nil : .invalid(.houseInvalid)
        case .city:
            if isEmpty(value) { return .invalid(.fieldEmpty, field.rawValue) }
            return isValidCity(value) ? nil : .invalid(.cityInvalid)
        }
    }
}

/// The fields of the registration form, in the order they are checked and asked for.
public enum RegistrationField: String, CaseIterable, Sendable {
    case login, name, surname, street, house, city
}

extension RegistrationRequest {
    public subscript(field: RegistrationField) -> String {
        switch field {
        case .login: login
        case .name: name
        case .surname: surname
        case .street: street
        case .house: house
        case .city: city
        }
    }
}
