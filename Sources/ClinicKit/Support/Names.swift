import Foundation

/// The one check of every name a person gives that the system stores and shows again
/// (issue 55): patients, walk-ins, staff, doctors. What a screen shows as one character can be
/// thousands of code points ("A" and 20,000 combining marks), and some letters show as nothing
/// (the Hangul fillers): the limits count code points and bytes of the NFC form, and a name
/// must show what it is.
extension Text {
    /// Letters that show as blank: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the
    /// Braille blank (U+2800), and Khmer's inherent vowels (U+17B4, U+17B5), which Unicode
    /// advises against using.
    static let blankLetters: Set<Unicode.Scalar> = ["\u{115F}", "\u{1160}", "\u{3164}", "\u{FFA0}", "\u{2800}", "\u{17B4}", "\u{17B5}"]

    /// Combining marks one letter may carry: Vietnamese stacks two, some Indic and Hebrew
    /// spellings three; more is a Zalgo stack or a limit being played with.
    static let marksPerLetter = 3

    /// A label or name, NFC, trimmed: 1 to `maximum` characters, at most twice as many code
    /// points and four times as many UTF-8 bytes, no forbidden control, no blank letter, at
    /// most `marksPerLetter` combining marks on a letter, and at least one letter or digit.
    /// Nil when it fails.
    static func checkedText(_ text: String, maximum: Int) -> String? {
        let normal = text.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !normal.isEmpty, normal.utf8.count <= maximum * 4, normal.unicodeScalars.count <= maximum * 2,
              normal.count <= maximum, !hasForbiddenControl(normal) else { return nil }
        var marks = 0, shows = false
        for scalar in normal.unicodeScalars {
            if blankLetters.contains(scalar) { return nil }
            let category = scalar.properties.generalCategory
            if category == .nonspacingMark || category == .enclosingMark || category == .spacingMark {
                marks += 1
                if marks > marksPerLetter { return nil }
            } else {
                marks = 0
                if scalar.properties.isAlphabetic || scalar.properties.numericType != nil { shows = true }
            }
        }
        return shows ? normal : nil
    }

    /// A person's name (or one part of it), `checkedText` and more: a joiner only between two
    /// letters of a script that spells with it (Arabic, Indic and others from U+0600 on: not
    /// inside a Latin, Greek or Cyrillic word), and no word that mixes Latin, Greek and Cyrillic
    /// letters ("Аnna" with a Cyrillic А looks like "Anna" and is not).
    static func checkedPersonName(_ text: String, maximum: Int) -> String? {
        guard let normal = checkedText(text, maximum: maximum) else { return nil }
        let scalars = Array(normal.unicodeScalars)
        for (index, scalar) in scalars.enumerated() where scalar == "\u{200C}" || scalar == "\u{200D}" {
            guard index > 0, index + 1 < scalars.count, scalars[index - 1].value >= 0x0600, scalars[index + 1].value >= 0x0600,
                  scalars[index - 1].properties.isAlphabetic, scalars[index + 1].properties.isAlphabetic else { return nil }
        }
        for word in normal.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == "'" || $0 == "\u{2019}" }) {
            let scripts = Set(word.unicodeScalars.compactMap(confusableScript))
            if scripts.count > 1 { return nil }
        }
        return normal
    }

    enum Script { case latin, greek, cyrillic }

    /// The script of a letter among the three whose letters look alike; nil for others.
    static func confusableScript(_ scalar: Unicode.Scalar) -> Script? {
        guard scalar.properties.isAlphabetic else { return nil }
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF: return .latin
        case 0x370...0x3FF, 0x1F00...0x1FFF: return .greek
        case 0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F: return .cyrillic
        default: return nil
        }
    }
}
