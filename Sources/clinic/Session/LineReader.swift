import ClinicKit
import Foundation

/// Set by the session's SIGINT handler; read and cleared by `LineReader`.
nonisolated(unsafe) private var interruptPending: sig_atomic_t = 0
/// The thread that reads answers: a SIGINT delivered to another thread is passed on to it,
/// so that its read returns.
nonisolated(unsafe) private var readingThread = pthread_self()

/// Whole lines from a file descriptor, read with read(2) so that the session can tell apart a
/// line, the end of input (Ctrl-D), an interruption (Ctrl-C), a line too long to be an answer
/// and bytes that are not text. Nothing typed is ever executed or stored unchecked.
final class LineReader {
    enum Line: Equatable {
        case text(String)
        /// Ctrl-D on an empty line, or the input was closed.
        case end
        /// Ctrl-C: the line being typed is dropped.
        case interrupted
        /// Longer than `maximumLength` bytes: the whole line is dropped.
        case tooLong
        /// Not UTF-8, or holding control characters (arrow keys, escape sequences).
        case unreadable
    }

    static let maximumLength = 1000

    let descriptor: Int32
    private var buffer: [UInt8] = []
    private var discarding = false

    init(descriptor: Int32 = STDIN_FILENO) {
        self.descriptor = descriptor
    }

    /// Makes Ctrl-C interrupt a read instead of ending the program: a change under way is
    /// finished (each is one transaction) and the session goes back one step. No SA_RESTART,
    /// so a read waiting for input returns with EINTR.
    static func catchInterrupts() {
        readingThread = pthread_self()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            interruptPending = 1
            if pthread_equal(pthread_self(), readingThread) == 0 { pthread_kill(readingThread, SIGINT) }
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        // A parent may have started us with SIGINT blocked; Ctrl-C must still reach this thread.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Set when Ctrl-C ended a read of `nextByte`: the editor's line is given up.
    private var editInterrupted = false

    /// The next byte for the line editor: what is buffered first, else read(2); -1 at the end
    /// of input, -2 when Ctrl-C was pressed (`takeEditInterrupt` then says so).
    func nextByte() -> Int32 {
        if Self.takeInterrupt() { buffer.removeAll(); editInterrupted = true; return -2 }
        while buffer.isEmpty {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { buffer += chunk[..<count]; break }
            if count < 0 && errno == EINTR {
                guard Self.takeInterrupt() else { continue }
                editInterrupted = true
                return -2
            }
            return -1
        }
        return Int32(buffer.removeFirst())
    }

    /// Whether Ctrl-C ended the editor's last line; clears it.
    func takeEditInterrupt() -> Bool {
        defer { editInterrupted = false }
        return editInterrupted || Self.takeInterrupt()
    }

    /// Whether Ctrl-C was pressed since the last call; clears it.
    static func takeInterrupt() -> Bool {
        guard interruptPending != 0 else { return false }
        interruptPending = 0
        return true
    }

    func next() -> Line {
        if Self.takeInterrupt() { buffer.removeAll(); discarding = false; return .interrupted }
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let bytes = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if discarding || bytes.count > Self.maximumLength { discarding = false; return .tooLong }
                return Self.decode(bytes)
            }
            if buffer.count > Self.maximumLength {
                // Keep reading to the end of the line, keeping nothing of it.
                buffer.removeAll()
                discarding = true
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer += chunk[..<count]
                continue
            }
            if count < 0 && errno == EINTR {
                guard Self.takeInterrupt() else { continue }
                buffer.removeAll(); discarding = false
                return .interrupted
            }
            // The end of input (or an error reading it): a last line without a newline counts.
            if discarding { discarding = false; buffer.removeAll(); return .tooLong }
            guard !buffer.isEmpty else { return .end }
            if buffer.count > Self.maximumLength { buffer.removeAll(); return .tooLong }
            let bytes = buffer
            buffer.removeAll()
            return Self.decode(bytes)
        }
    }

    /// UTF-8 text without control characters; a trailing carriage return is dropped, a tab
    /// is a space.
    static func decode(_ bytes: [UInt8]) -> Line {
        var bytes = bytes
        if bytes.last == 0x0D { bytes.removeLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .unreadable }
        let cleaned = text.replacingOccurrences(of: "\t", with: " ")
        if cleaned.unicodeScalars.contains(where: { $0.properties.generalCategory == .control
            || $0.properties.generalCategory == .format && $0 != "\u{200D}" }) {
            return .unreadable
        }
        return .text(cleaned)
    }
}

/// Questions and answers for the interactive session: numbered choices, Enter for the
/// default, `q` (or Ctrl-D, Ctrl-C) to go back. A bad answer is explained and asked again; an
/// answer that means "back" is nil.
final class Prompt {
    let reader: LineReader
    /// Line editing and history on a terminal (nil: piped input, read as before).
    let editor: LineEditor?
    var language: Language
    let style: Style
    /// Columns for long lists: the terminal's width, else 80.
    var width: Int { Terminal().columns ?? 80 }

    init(reader: LineReader, language: Language, style: Style, editor: LineEditor? = nil) {
        self.reader = reader
        self.editor = editor
        self.language = language
        self.style = style
    }

    func text(_ key: MessageKey, _ arguments: String...) -> String { Strings.text(key, language, arguments) }
    func text(_ key: TerminalKey, _ arguments: String...) -> String { TerminalWords.text(key, language, arguments) }

    /// Writes to stdout; a terminal that went away (EIO) ends the session through the next
    /// read, never a crash.
    func write(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
    }

    func say(_ text: String = "") { write(text + "\n") }

    func heading(_ text: String) { say(); say(style.bold(text)) }

    func problem(_ text: String) { say(style.red(text)) }

    func success(_ text: String) { say(style.green(text)) }

    /// Records an answer that found something (a place found, a clinic that exists) for Up to
    /// bring back at prompts of `kind`.
    func keep(_ answer: String, as kind: HistoryKind) { editor?.remember(answer, as: kind) }

    /// "q" alone, or "й" (the same key on a Russian keyboard), means back.
    static func isBack(_ answer: String) -> Bool {
        ["q", "й", "quit", "back", "выход", "назад"].contains(answer.lowercased())
    }

    /// The next answer, trimmed; nil to go back. Empty answers are returned as "". Up and Down
    /// go through `history`'s answers (none at a numbered menu).
    private func answer(_ prompt: String, history: HistoryKind? = nil) -> String? {
        while true {
            let next: LineReader.Line
            if let editor {
                next = editor.line(prompt, history: history)
            } else {
                write(prompt)
                next = reader.next()
            }
            switch next {
            case .end, .interrupted:
                say()
                return nil
            case .tooLong:
                problem(text(.answerTooLong, String(LineReader.maximumLength)))
            case .unreadable:
                problem(text(.answerUnreadable))
            case .text(let line):
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                return Self.isBack(trimmed) ? nil : trimmed
            }
        }
    }

    /// A line of text; Enter takes `defaultValue` when there is one, else asks again.
    /// `history`: Up brings back earlier answers of that kind, which `keep` recorded once they
    /// found something; never personal data.
    func line(_ label: String, default defaultValue: String? = nil, history: HistoryKind? = nil) -> String? {
        let prompt = label + (defaultValue.map { " [" + $0 + "]" } ?? "") + ": "
        while true {
            guard let answer = answer(prompt, history: history) else { return nil }
            if !answer.isEmpty { return answer }
            if let defaultValue { return defaultValue }
            problem(text(.answerEmpty))
        }
    }

    /// A line that may be left empty (Enter: ""); nil to go back.
    func optionalLine(_ label: String) -> String? {
        answer(label + ": ")
    }

    /// A number from 1 to `count` (returned from 0); Enter takes `defaultIndex`, or goes back
    /// when there is none.
    func pick(_ count: Int, default defaultIndex: Int? = 0) -> Int? {
        guard count > 0 else { return nil }
        let defaultText = " [" + (defaultIndex.map { String($0 + 1) } ?? "q") + "]"
        let prompt = (count == 1 ? text(.pickOne) : text(.pickNumber, "1", String(count))) + defaultText + ": "
        while true {
            guard let answer = answer(prompt) else { return nil }
            if answer.isEmpty { return defaultIndex }
            if let number = Int(answer), (1...count).contains(number) { return number - 1 }
            problem(text(.pickInvalid, String(count)))
        }
    }

    /// A numbered list under a heading, then `pick`.
    func choose(_ title: String, _ items: [String], default defaultIndex: Int? = 0, back: TerminalKey = .menuBack) -> Int? {
        heading(title)
        let digits = String(items.count).count
        let cells = items.enumerated().map { index, item in
            let number = String(index + 1)
            return (String(repeating: " ", count: digits - number.count) + style.cyan(number) + "  " + item,
                    digits + 2 + Output.displayWidth(item))
        }
        // A long list (a day's slots) goes into as many columns as the terminal has room for.
        let cellWidth = (cells.map(\.1).max() ?? 0) + 4
        let columns = items.count > 12 ? max(1, min(4, (width - 2) / max(cellWidth, 1))) : 1
        let rows = (cells.count + columns - 1) / columns
        for row in 0..<rows {
            var line = " "
            for column in 0..<columns {
                let index = column * rows + row
                guard index < cells.count else { break }
                let isLast = column == columns - 1 || index + rows >= cells.count
                line += " " + cells[index].0 + (isLast ? "" : String(repeating: " ", count: cellWidth - cells[index].1 - 1))
            }
            say(line)
        }
        say("  " + String(repeating: " ", count: digits - 1) + style.cyan("q") + "  " + style.dim(text(back)))
        return pick(items.count, default: defaultIndex)
    }

    /// Yes or no (English or Russian); Enter takes the default; back is no.
    func confirm(_ question: String, default defaultAnswer: Bool) -> Bool {
        let prompt = question + " " + text(defaultAnswer ? .answerDefaultYes : .answerDefaultNo) + ": "
        while true {
            guard let answer = answer(prompt) else { return false }
            if answer.isEmpty { return defaultAnswer }
            if let yes = Terminal.yes(answer) { return yes }
            problem(text(.answerYesNo))
        }
    }

    /// A password, without echo on a terminal; nil to go back.
    func secret(_ label: String) -> String? {
        Terminal.withoutEcho(reader.descriptor) {
            while true {
                write(label + ": ")
                switch reader.next() {
                case .end, .interrupted: return nil
                case .tooLong, .unreadable:
                    say()
                    problem(text(.answerUnreadable))
                case .text(let line):
                    return line == "q" ? nil : line
                }
            }
        }
    }
}
