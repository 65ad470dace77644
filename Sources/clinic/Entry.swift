import ArgumentParser
import ClinicKit
import ClinicServer
import Foundation

enum Entry {
    static func main(_ rawArguments: [String]) -> Never {
        var arguments = Arguments.normalize(rawArguments)
        let environment = ProcessInfo.processInfo.environment
        // Known before parsing, so that even a parse error is reported as asked.
        let json = arguments.contains("--json")
        var language: Language { requestedLanguage(arguments) ?? SavedLanguage.shared.value ?? Language.fromEnvironment(environment) }
        if Arguments.onlyGlobal(arguments) {
            // No command: the session on a terminal; elsewhere the usage, and a failure (a
            // script that forgot its command must neither hang nor pass).
            let terminal = Terminal()
            if terminal.stdinIsTerminal && terminal.stdoutIsTerminal && !json {
                arguments.insert("shell", at: 0)
            } else {
                if !json { FileHandle.standardError.write(Data((ClinicCommand.helpMessage() + "\n").utf8)) }
                report(TerminalError.invalid(.usageNoCommand), json: json, language: language)
            }
        }
        do {
            var command = try ClinicCommand.parseAsRoot(arguments)
            if let awaited = command as? any AsyncParsableCommand {
                try AsyncEdge.run(awaited)
            } else {
                try command.run()
            }
            SessionUse.shared.finish()
            exit(0)
        } catch let error as ClinicError {
            report(error, json: json, language: language)
        } catch let error as TerminalError {
            report(error, json: json, language: language)
        } catch let error as ServerSettingError {
            report(code: error.code, message: error.message(in: language), problems: [], json: json, language: language)
        } catch let error as ExitCode {
            exit(error.rawValue)
        } catch {
            // Help and --version are "errors" with exit code 0 for the parser.
            guard let code = code(for: error) else { ClinicCommand.exit(withError: error) }
            let message = ClinicCommand.message(for: error)
            if json {
                writeJSONError(code: code.rawValue, message: message, problems: [], language: language)
            } else {
                let text = code == .invalidInput ? ClinicCommand.fullMessage(for: error)
                    : Strings.text(.internalError, language, [message])
                FileHandle.standardError.write(Data((text + "\n").utf8))
            }
            exit(code.exitStatus)
        }
    }

    /// The code an error that is not a `ClinicError` is reported with: the parser's own errors
    /// are bad input, anything else is a bug of ours; nil for help and --version.
    static func code(for error: Error) -> ClinicError.Code? {
        if let error = error as? ClinicError { return error.code }
        if let error = error as? TerminalError { return error.code }
        if let error = error as? ServerSettingError { return error.code }
        if error is CleanExit || ClinicCommand.exitCode(for: error) == .success { return nil }
        return ClinicCommand.exitCode(for: error) == .validationFailure ? .invalidInput : .internalError
    }

    static func requestedLanguage(_ arguments: [String]) -> Language? {
        for (index, argument) in arguments.enumerated() {
            if argument.hasPrefix("--lang=") { return Language(rawValue: String(argument.dropFirst(7))) }
            if argument == "--lang", index + 1 < arguments.count { return Language(rawValue: arguments[index + 1]) }
        }
        return nil
    }

    static func report(_ error: ClinicError, json: Bool, language: Language) -> Never {
        let message = error.message(in: language) + (CLIHints.hint(error.key, language).map { " " + $0 } ?? "")
        report(code: error.code, message: message, problems: error.problems, json: json, language: language)
    }

    /// The command line's own errors, reported as ClinicKit's are (they have no hint and no problems).
    static func report(_ error: TerminalError, json: Bool, language: Language) -> Never {
        report(code: error.code, message: error.message(in: language), problems: [], json: json, language: language)
    }

    static func report(code: ClinicError.Code, message: String, problems: [ImportProblem], json: Bool,
                       language: Language) -> Never {
        if json {
            writeJSONError(code: code.rawValue, message: message, problems: problems, language: language)
        } else {
            var text = message + "\n"
            for problem in problems {
                text += "  " + Strings.text(.importProblem, language,
                                            [String(problem.line), Strings.text(problem.key, language, problem.arguments)]) + "\n"
            }
            FileHandle.standardError.write(Data(text.utf8))
        }
        exit(code.exitStatus)
    }

    static func writeJSONError(code: String, message: String, problems: [ImportProblem], language: Language) {
        let body = ErrorJSON(code: code, message: message, problems: problems.isEmpty ? nil : problems.map {
            ErrorJSON.Body.Problem(line: $0.line, reason: Strings.text($0.key, language, $0.arguments))
        })
        let data = (try? Output.encoder(pretty: false).encode(body)) ?? Data()
        FileHandle.standardError.write(data + Data("\n".utf8))
    }
}
