import ClinicKit

/// An error the command line raises itself, in its own words (a missing option, no password on
/// a pipe, no command): the same `code` vocabulary as ClinicKit's `ClinicError`, and reported
/// exactly like one (`Entry.report`): the same text, JSON shape and exit status.
struct TerminalError: Error, Equatable, Sendable, CustomStringConvertible {
    let code: ClinicError.Code
    let key: TerminalKey
    let arguments: [String]

    init(_ code: ClinicError.Code, _ key: TerminalKey, _ arguments: String...) {
        self.init(code, key, arguments: arguments)
    }

    init(_ code: ClinicError.Code, _ key: TerminalKey, arguments: [String]) {
        self.code = code
        self.key = key
        self.arguments = arguments
    }

    func message(in language: Language) -> String {
        TerminalWords.text(key, language, arguments)
    }

    var description: String { "\(code.rawValue): \(message(in: .en))" }

    static func invalid(_ key: TerminalKey, _ arguments: String...) -> TerminalError {
        TerminalError(.invalidInput, key, arguments: arguments)
    }
}
