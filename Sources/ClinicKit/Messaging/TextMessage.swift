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
    /// not international form, or cannot receive texts (`mobileCapable`).
    public static func checked(_ text: String) throws -> String {
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
        return number
    }

    /// Whether a number can take texts, as far as its numbering plan tells: in North America
    /// (+1) a valid area and exchange code, not toll-free (8XX) or premium (900), not a service
    /// code (N11); in Russia and Kazakhstan (+7) a mobile range. Other plans are taken as given.
    public static func mobileCapable(_ number: String) -> Bool {
        let digits = Array(number.dropFirst())
        if digits.first == "1" {
            guard digits.count == 11 else { return false }
            let area = String(digits[1...3]), exchange = String(digits[4...6])
            guard let a = area.first, let e = exchange.first, a >= "2", e >= "2" else { return false }
            if ["800", "833", "844", "855", "866", "877", "888", "900"].contains(area) { return false }
            if area.dropFirst() == "11" || exchange.dropFirst() == "11" { return false }
            return true
        }
        // Russia's mobiles are +79…; Kazakhstan's (+7 7…) +770…, +774…–+777….
        if digits.first == "7", digits.count == 11 { return digits[1] == "9" || (digits[1] == "7" && "04567".contains(digits[2])) }
        return true
    }

    /// The last four digits, for showing a number without showing it whole.
    public static func masked(_ number: String) -> String { "•••" + String(number.suffix(4)) }
}
