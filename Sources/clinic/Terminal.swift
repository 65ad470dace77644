import ClinicKit
import Foundation

/// The terminal, when there is one: prompts, passwords without echo, notes on stderr.
/// Nothing here waits for input unless standard input is a terminal.
struct Terminal {
    var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }
    var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

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
        var saved = termios()
        let canSilence = tcgetattr(STDIN_FILENO, &saved) == 0
        if canSilence {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        }
        defer {
            if canSilence { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
            FileHandle.standardOutput.write(Data("\n".utf8))
        }
        return readLine(strippingNewline: true)
    }

    /// The first line of standard input, for `--password-stdin`.
    func readSecretFromStdin() -> String? {
        guard let line = readLine(strippingNewline: true) else { return nil }
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
    }
}
