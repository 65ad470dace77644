import Foundation

package enum Text {
    /// The key two names match on: compatibility-decomposed, combining marks dropped, lower
    /// case, '-' and '_' as spaces, '.' dropped, whitespace collapsed. "Zürich" and "zurich",
    /// "Winston-Salem" and "winston salem", "St. Louis" and "st louis", "Пётр" and "петр" match.
    /// scripts/derive-gazetteer.py folds the gazetteer's names the same way: keep them in step.
    static func fold(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCompatibilityMapping.unicodeScalars
        where scalar.properties.generalCategory != .nonspacingMark {
            switch scalar {
            case "-", "_": scalars.append(" ")
            case ".": continue
            default: scalars.append(scalar)
            }
        }
        return String(scalars).lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

extension Text {
    /// A plain decimal number: an optional leading sign, ASCII digits, at most one point; no
    /// "nan", "inf", exponents ("4e1") or hex, which `Double(_:)` would take. The one reader of
    /// numbers people and files give: coordinates on the command line and in imports, settings.
    package static func decimal(_ text: some StringProtocol) -> Double? {
        var digits = 0, points = 0
        for (offset, character) in text.enumerated() {
            if character.isASCII, character.isNumber { digits += 1 }
            else if character == "." { points += 1 }
            else if (character == "-" || character == "+") && offset == 0 { continue }
            else { return nil }
        }
        guard digits > 0, points <= 1, let value = Double(String(text)), value.isFinite else { return nil }
        return value
    }

    /// A character no text a person types should hold: the C0 and C1 controls (tab and line
    /// breaks included; callers that allow a newline say so), and the bidirectional overrides
    /// and isolates (U+202A–U+202E, U+2066–U+2069), which can make text read differently from
    /// what it is. Other format characters are spelling: the zero-width joiner in emoji
    /// sequences (U+200D), the non-joiner of Persian names (U+200C), direction marks.
    static func isForbiddenControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The one check of a label that is stored and shown again (a visit type's names, a
    /// specialization): `checkedText` (NFC, trimmed, 1 to `maximum` characters and bounded in
    /// code points and bytes, something that shows), with no `isForbiddenControl` character,
    /// which would reach a terminal as an escape sequence, an e-mail or an `.ics` file as a
    /// line break, or any page as reversed text. Nil when it fails.
    static func checkedLabel(_ text: String, maximum: Int) -> String? { checkedText(text, maximum: maximum) }

    /// Whether the text holds an `isForbiddenControl` character other than those allowed.
    static func hasForbiddenControl(_ text: String, allowing allowed: Set<Unicode.Scalar> = []) -> Bool {
        text.unicodeScalars.contains { isForbiddenControl($0) && !allowed.contains($0) }
    }
}

/// A value shared between threads behind a lock.
package final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// The value, read without writing it back. Reading through `withLock { $0 }` writes the
    /// value back through `inout`, and a stored closure is then wrapped in one more
    /// reabstraction thunk on every read: each call slower than the last, until the stack
    /// overflows (an `AppointmentChanges` observer read once per booking).
    package var current: Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

extension Text {
    /// Levenshtein distance over characters (suggestions for a mistyped name; short strings only).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a.prefix(100)), y = Array(b.prefix(100))
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }
}

extension String {
    /// The text with every `Text.isForbiddenControl` character (but those `keeping`) shown as
    /// U+FFFD: what goes out to a terminal, an e-mail body or an `.ics` file, so that text
    /// stored before the checks (or by an older version) cannot move a cursor, add a line or
    /// reverse what follows. Text that has none comes back as it is.
    public func withoutControls(keeping kept: Set<Unicode.Scalar> = []) -> String {
        guard Text.hasForbiddenControl(self, allowing: kept) else { return self }
        var scalars = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            scalars.append(Text.isForbiddenControl(scalar) && !kept.contains(scalar) ? "\u{FFFD}" : scalar)
        }
        return String(scalars)
    }
}
