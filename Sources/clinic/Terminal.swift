import ClinicKit
import Foundation

/// The terminal, when there is one: prompts, passwords without echo, notes on stderr.
/// Nothing here waits for input unless standard input is a terminal.
struct Terminal: Sendable {
    var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }
    var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// The width of the terminal on stdout in columns; nil when stdout is not a terminal (a
    /// script gets every character).
    var columns: Int? {
        guard stdoutIsTerminal else { return nil }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return 80
    }

    func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Asks for a line; nil at end of input.
    func ask(_ prompt: String) -> String? {
        FileHandle.standardOutput.write(Data(prompt.utf8))
        return readLine(strippingNewline: true)
    }

    /// Asks for a secret with echo off, restoring the terminal afterwards.
    func askSecret(_ prompt: String) -> String? {
        FileHandle.standardOutput.write(Data(prompt.utf8))
        return Self.withoutEcho(STDIN_FILENO) { readLine(strippingNewline: true) }
    }

    /// Runs `body` with the terminal's echo off (when `descriptor` is a terminal), then
    /// restores it and ends the silent line. TCSADRAIN, not TCSAFLUSH: what was typed ahead
    /// stays to be read.
    static func withoutEcho<T>(_ descriptor: Int32, _ body: () -> T) -> T {
        var saved = termios()
        guard isatty(descriptor) == 1, tcgetattr(descriptor, &saved) == 0 else { return body() }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(descriptor, TCSADRAIN, &silent)
        defer {
            tcsetattr(descriptor, TCSADRAIN, &saved)
            FileHandle.standardOutput.write(Data("\n".utf8))
        }
        return body()
    }

    /// The privacy policy, then "do you accept?" (only on a terminal: false elsewhere).
    func askConsent(_ language: Language) -> Bool {
        guard stdinIsTerminal else { return false }
        print(PrivacyPolicy.text(language))
        return Self.yes(ask(Strings.text(.promptAccept, language)) ?? "") == true
    }

    /// A yes or no answer in English or Russian: true, false, or nil for anything else.
    static func yes(_ answer: String) -> Bool? {
        switch answer.trimmingCharacters(in: .whitespaces).lowercased() {
        case "y", "yes", "д", "да": true
        case "n", "no", "н", "нет": false
        default: nil
        }
    }

    /// The first line of standard input, for `--password-stdin`.
    func readSecretFromStdin() -> String? {
        guard let line = readLine(strippingNewline: true) else { return nil }
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
    }
}

/// Colour and emphasis, only for a terminal and never when `NO_COLOR` is set (no-color.org)
/// or `TERM` is `dumb`.
struct Style: Sendable {
    let enabled: Bool

    static let stdout = Style(for: STDOUT_FILENO)
    static let stderr = Style(for: STDERR_FILENO)
    static let plain = Style(enabled: false)

    init(enabled: Bool) { self.enabled = enabled }

    init(for descriptor: Int32, environment: [String: String] = ProcessInfo.processInfo.environment) {
        enabled = Self.allowed(isTerminal: isatty(descriptor) == 1, environment: environment)
    }

    static func allowed(isTerminal: Bool, environment: [String: String]) -> Bool {
        guard isTerminal else { return false }
        if let value = environment["NO_COLOR"], !value.isEmpty { return false }
        return environment["TERM"] != "dumb"
    }

    private func wrap(_ text: String, _ code: String) -> String {
        enabled && !text.isEmpty ? "\u{1B}[" + code + "m" + text + "\u{1B}[0m" : text
    }

    func bold(_ text: String) -> String { wrap(text, "1") }
    func dim(_ text: String) -> String { wrap(text, "2") }
    func red(_ text: String) -> String { wrap(text, "31") }
    func green(_ text: String) -> String { wrap(text, "32") }
    func cyan(_ text: String) -> String { wrap(text, "36") }
}

/// A progress bar on stderr for work that takes more than a second; drawn only on a
/// terminal, and wiped when the work ends.
final class ProgressBar {
    private let label: String
    private let enabled: Bool
    private let started = Date()
    private var drawn = false

    init(_ label: String, terminal: Terminal = Terminal()) {
        self.label = label
        enabled = terminal.stderrIsTerminal
    }

    func update(_ done: Int, _ total: Int) {
        guard enabled, total > 0, Date().timeIntervalSince(started) >= 1 else { return }
        let fraction = min(1, max(0, Double(done) / Double(total)))
        let cells = 30, filled = Int(fraction * Double(cells))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: cells - filled)
        FileHandle.standardError.write(Data(("\r" + label + " [" + bar + "] " + String(Int(fraction * 100)) + "%\u{1B}[K").utf8))
        drawn = true
    }

    func finish() {
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        drawn = false
    }
}
