import Foundation

enum Text {
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

/// A value shared between threads behind a lock.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
