import Foundation

/// Rewrites the command line before it is parsed, so that people can type what they mean:
/// - global options (`--json`, `--lang X`, `--db X`) may come before the subcommand;
/// - a negative number may follow an option that takes a value, with a space (`--lat -13.8`,
///   `--at -13.8,-171.8`), which the parser would otherwise read as an option of its own: it
///   is joined as `--lat=-13.8`.
enum Arguments {
    static let globalFlags: Set<String> = ["--json"]
    static let globalOptions: Set<String> = ["--lang", "--db"]
    /// The options that take a value (every `@Option` of the commands): only after one of these
    /// is a negative number the option's value. A flag (`--json`, `--pediatric`) takes none.
    static let valueOptions: Set<String> = globalOptions.union([
        "--address", "--at", "--before", "--city", "--clinic", "--date", "--days", "--department", "--doctor",
        "--format", "--from", "--house", "--lat", "--limit", "--login", "--lon", "--name", "--notes", "--slot",
        "--specialization", "--street", "--surname", "--to", "--within-km",
    ])

    static func normalize(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var rest: [String] = []
        var index = 0
        // Globals before the first word that is not an option move to the end.
        while index < arguments.count {
            let argument = arguments[index]
            if globalFlags.contains(argument) || globalOptions.contains(where: { argument.hasPrefix($0 + "=") }) {
                leading.append(argument); index += 1; continue
            }
            if globalOptions.contains(argument), index + 1 < arguments.count {
                leading.append(argument + "=" + arguments[index + 1]); index += 2; continue
            }
            break
        }
        var positional: [String] = []
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                // Everything after `--` is positional: the moved globals go before it.
                positional = Array(arguments[index...])
                break
            }
            if valueOptions.contains(argument), index + 1 < arguments.count, isNegativeNumber(arguments[index + 1]) {
                rest.append(argument + "=" + arguments[index + 1])
                index += 2
                continue
            }
            rest.append(argument)
            index += 1
        }
        return rest + leading + positional
    }

    /// Whether a normalized command line holds only global options (or nothing): no command.
    static func onlyGlobal(_ arguments: [String]) -> Bool {
        arguments.allSatisfy { argument in
            globalFlags.contains(argument) || globalOptions.contains { argument.hasPrefix($0 + "=") }
        }
    }

    /// "-13.8", "-5", "-.5", "-13.8,-171.8": a minus sign then a digit or a point. No option
    /// of this program looks like that.
    static func isNegativeNumber(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars.prefix(2))
        guard scalars.count == 2, scalars[0] == "-" else { return false }
        return ("0"..."9").contains(scalars[1]) || scalars[1] == "."
    }
}
