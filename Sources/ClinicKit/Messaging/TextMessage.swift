import Foundation

/// A text message's body and how it travels (3GPP TS 23.038): GSM-7 when every character is in
/// the GSM default alphabet or its extension table (160 characters in one segment, 153 in each
/// of several; an extension character counts two), otherwise UCS-2 (70 UTF-16 units, 67 each
/// of several). A body longer than `maxSegments` is cut at a character, with "...", so no
/// text ever costs more than that many segments.
public struct TextMessage: Sendable, Equatable {
    public enum Coding: Int, Sendable { case gsm7 = 0, ucs2 = 2 }

    public let body: String
    public let coding: Coding
    public let segments: Int

    /// The most segments one text may take.
    public static let maxSegments = 3

    public init(_ text: String) {
        let coding: Coding = Self.isGSM7(text) ? .gsm7 : .ucs2
        var body = text
        if Self.units(body, coding) > Self.capacity(coding, segments: Self.maxSegments) {
            let room = Self.capacity(coding, segments: Self.maxSegments) - 3
            var cut = ""
            for character in body {
                let next = cut + String(character)
                if Self.units(next, coding) > room { break }
                cut = next
            }
            body = cut + "..."
        }
        self.body = body
        self.coding = coding
        segments = Self.segments(Self.units(body, coding), coding)
    }

    static let basic: Set<Character> = Set(
        "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà")
    static let extended: Set<Character> = Set("^{}\\[~]|€\u{0C}")

    public static func isGSM7(_ text: String) -> Bool {
        text.allSatisfy { basic.contains($0) || extended.contains($0) }
    }

    /// Septets (GSM-7) or UTF-16 units (UCS-2) of `text`.
    static func units(_ text: String, _ coding: Coding) -> Int {
        switch coding {
        case .gsm7: text.reduce(0) { $0 + (extended.contains($1) ? 2 : 1) }
        case .ucs2: text.utf16.count
        }
    }

    static func capacity(_ coding: Coding, segments: Int) -> Int {
        switch coding {
        case .gsm7: segments == 1 ? 160 : 153 * segments
        case .ucs2: segments == 1 ? 70 : 67 * segments
        }
    }

    static func segments(_ units: Int, _ coding: Coding) -> Int {
        if units <= capacity(coding, segments: 1) { return 1 }
        let each = capacity(coding, segments: 2) / 2
        return (units + each - 1) / each
    }
}

/// A mobile number in E.164 (`+` and 8 to 15 digits, the country code first).
public enum PhoneNumber {
    /// The number typed, in E.164: spaces, dashes, dots and brackets dropped; refused when it is
    /// not international form (`phone_invalid`), is in no country `countries` lists
    /// (`phoneCountry`), or cannot receive texts or is a premium, satellite or other
    /// non-geographic range (`phoneNotMobile`, `mobileCapable`).
    public static func checked(_ text: String, countries: TextCountries = .standard) throws -> String {
        let shown = String(text.prefix(40))
        let kept = text.filter { !" -.()\u{00A0}".contains($0) }
        guard kept.hasPrefix("+") else { throw ClinicError.invalid(.phoneInvalid, shown) }
        let digits = kept.dropFirst()
        guard (8...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.first != "0" else {
            throw ClinicError.invalid(.phoneInvalid, shown)
        }
        // North America's and Russia's numbers are eleven digits with their country code.
        if digits.first == "1" || digits.first == "7", digits.count != 11 { throw ClinicError.invalid(.phoneInvalid, shown) }
        let number = "+" + digits
        guard mobileCapable(number) else { throw ClinicError.invalid(.phoneNotMobile, number) }
        guard countries.allows(number) else { throw ClinicError.invalid(.phoneCountry, number, countries.description) }
        return number
    }

    /// A stored number as people write it: North America's `+1 503-555-0142`, Russia's and
    /// Kazakhstan's `+7 912 345-67-89`; any other as stored.
    public static func display(_ number: String) -> String {
        let digits = Array(number.dropFirst())
        guard number.hasPrefix("+"), digits.count == 11, digits.allSatisfy(\.isASCII) else { return number }
        func part(_ range: Range<Int>) -> String { String(digits[range]) }
        switch digits[0] {
        case "1": return "+1 \(part(1..<4))-\(part(4..<7))-\(part(7..<11))"
        case "7": return "+7 \(part(1..<4)) \(part(4..<7))-\(part(7..<9))-\(part(9..<11))"
        default: return number
        }
    }

    /// International ranges that are no country's: texts to them are billed at premium or
    /// satellite rates and are the usual toll-fraud destinations (ITU-T E.164 assignments):
    /// freephone and shared cost (+800, +808), Inmarsat (+870), UPT (+878), satellite and
    /// international networks (+881, +882, +883), OCHA (+888), international premium rate
    /// (+979), trials (+991). Refused whatever a deployment lists.
    static let nonGeographic: [String] = ["800", "808", "870", "878", "881", "882", "883", "888", "979", "991"]

    /// North American area codes that are no place: N00 (500 personal, 600 Canadian
    /// non-geographic, 700, 800 toll-free, 900 premium), N11 service codes, the easily
    /// recognisable codes (second and third digit alike: 8YY toll-free, 5YY personal
    /// communications), 37X and 96X (reserved), 456 (inbound international), 710 (U.S.
    /// government), 880–889 (paid toll-free), and the personal-communications 5XX codes that
    /// NANPA assigned outside the pattern.
    static func northAmericanNonGeographic(_ area: String) -> Bool {
        let d = Array(area)
        guard d.count == 3 else { return true }
        if d[1] == d[2] { return true } // N00, N11, N22 … N99
        if area.hasPrefix("37") || area.hasPrefix("96") || area.hasPrefix("88") { return true }
        let personal: Set<String> = ["456", "521", "522", "523", "524", "525", "526", "527", "528", "529", "532", "535", "538",
                                     "542", "543", "545", "546", "547", "549", "550", "552", "553", "554", "556", "569", "578",
                                     "589", "622", "710"]
        return personal.contains(area)
    }

    /// Whether a number can take texts, as far as its numbering plan tells: never a
    /// non-geographic international range (`nonGeographic`); in North America (+1) a valid area
    /// and exchange code, not toll-free, premium, personal or reserved
    /// (`northAmericanNonGeographic`), not a service code (N11) or the premium exchange 976; in
    /// Russia and Kazakhstan (+7) a mobile range; in the United Kingdom (+44) a mobile (07…),
    /// not a personal number (070) or pager (076). Other plans are taken as given.
    public static func mobileCapable(_ number: String) -> Bool {
        let digits = Array(number.dropFirst())
        let text = String(digits)
        if nonGeographic.contains(where: { text.hasPrefix($0) }) { return false }
        if digits.first == "1" {
            guard digits.count == 11 else { return false }
            let area = String(digits[1...3]), exchange = String(digits[4...6])
            guard let a = area.first, let e = exchange.first, a >= "2", e >= "2" else { return false }
            if northAmericanNonGeographic(area) { return false }
            if exchange.dropFirst() == "11" || exchange == "976" { return false }
            return true
        }
        // Russia's mobiles are +79…; Kazakhstan's (+7 7…) +770…, +774…–+777….
        if digits.first == "7", digits.count == 11 { return digits[1] == "9" || (digits[1] == "7" && "04567".contains(digits[2])) }
        if text.hasPrefix("44") {
            return text.hasPrefix("447") && !text.hasPrefix("4470") && !text.hasPrefix("4476") && digits.count == 12
        }
        return true
    }

    /// The last four digits, for showing a number without showing it whole.
    public static func masked(_ number: String) -> String { "•••" + String(number.suffix(4)) }
}

/// The countries a deployment texts (`CLINIC_SMS_COUNTRIES`: calling codes such as `+1,+7`):
/// a code is taken only for a number of one of them, so that nobody can run texts up to a
/// country the clinics do not serve. `+1` is the United States and Canada with their
/// territories: the Caribbean countries that share +1 (Jamaica's 876, the Dominican Republic's
/// 809 …) are billed as international and are common toll-fraud destinations, so each is
/// taken only when listed by its own prefix (`+1876`).
public struct TextCountries: Sendable, Equatable, CustomStringConvertible {
    /// The listed prefixes, digits only ("1", "7", "1876").
    public let prefixes: [String]

    /// The default: North America (+1) and Russia and Kazakhstan (+7), the plans validated here.
    public static let standard = TextCountries(checked: ["1", "7"])

    /// The North American area codes of other countries than the United States and Canada.
    static let caribbean: Set<String> = ["242", "246", "264", "268", "284", "345", "441", "473", "649", "658", "664", "721",
                                         "758", "767", "784", "809", "829", "849", "868", "869", "876"]

    init(checked prefixes: [String]) { self.prefixes = prefixes }

    /// A setting's value: prefixes separated by commas or spaces, each `+` and 1 to 4 digits;
    /// a non-geographic range (+881, +979 …) is refused (`sms_setting_invalid`).
    public init(setting: String) throws {
        let items = setting.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        var prefixes: [String] = []
        for item in items {
            let digits = item.dropFirst()
            guard item.hasPrefix("+"), (1...4).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  digits.first != "0", !PhoneNumber.nonGeographic.contains(where: { digits.hasPrefix($0) }) else {
                throw ClinicError(.invalidInput, .smsSettingInvalid, "CLINIC_SMS_COUNTRIES",
                                  "country calling codes such as +1,+7 (no +8xx satellite or +979 premium range)")
            }
            if !prefixes.contains(String(digits)) { prefixes.append(String(digits)) }
        }
        guard !prefixes.isEmpty else {
            throw ClinicError(.invalidInput, .smsSettingInvalid, "CLINIC_SMS_COUNTRIES", "country calling codes such as +1,+7")
        }
        self.prefixes = prefixes
    }

    /// Whether a number (E.164) is in a listed country: the longest listed prefix it starts
    /// with decides; "+1" alone does not take the Caribbean area codes.
    public func allows(_ number: String) -> Bool {
        let digits = number.hasPrefix("+") ? String(number.dropFirst()) : number
        guard let prefix = prefixes.filter({ digits.hasPrefix($0) }).max(by: { $0.count < $1.count }) else { return false }
        if prefix == "1", digits.count >= 4, Self.caribbean.contains(String(digits.dropFirst().prefix(3))) { return false }
        return true
    }

    public var description: String { prefixes.map { "+" + $0 }.joined(separator: ", ") }
}
