import Foundation

// The JSON shapes both fronts print: the CLI with `--json` and the HTTP API (docs/CLI.md,
// docs/API.md and openapi.yaml pin them). camelCase keys, integer ids, ISO 8601 UTC instants.
// They only copy what a controller returned; nothing here reads the database.

public enum Shapes {
    /// The encoder both fronts use: sorted keys, slashes as they are.
    public static func encoder(pretty: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
                                          : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// "08:30" for 510 minutes after midnight.
    public static func minutesText(_ minutes: Int) -> String {
        String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    /// "HH:MM" (24:00 allowed as an end) → minutes after midnight; nil for anything else.
    public static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              (parts[0] + parts[1]).allSatisfy({ $0.isASCII && $0.isNumber }),
              let hours = Int(parts[0]), let minutes = Int(parts[1]),
              (0...24).contains(hours), (0...59).contains(minutes), hours * 60 + minutes <= 1440 else { return nil }
        return hours * 60 + minutes
    }
}

/// `{"error":{"code","message"}}`, with the refused rows of an import as `problems`.
public struct ErrorJSON: Encodable, Sendable {
    public struct Body: Encodable, Sendable {
        public struct Problem: Encodable, Sendable {
            public let line: Int; public let reason: String
            public init(line: Int, reason: String) { self.line = line; self.reason = reason }
        }
        public let code: String
        public let message: String
        public let problems: [Problem]?
    }
    public let error: Body

    public init(code: String, message: String, problems: [Body.Problem]? = nil) {
        error = Body(code: code, message: message, problems: problems)
    }

    public init(_ error: ClinicError, language: Language) {
        self.init(code: error.code.rawValue, message: error.message(in: language), problems: error.problems.isEmpty ? nil : error.problems.map {
            Body.Problem(line: $0.line, reason: Strings.text($0.key, language, $0.arguments))
        })
    }
}

/// `{"changed": true}` (a password change).
public struct ChangedJSON: Encodable, Sendable {
    public let changed: Bool
    public init(changed: Bool) { self.changed = changed }
}

/// `{"deleted": "login"}` (an account deleted).
public struct DeletedJSON: Encodable, Sendable {
    public let deleted: String
    public init(deleted: String) { self.deleted = deleted }
}
