import ClinicKit

// Parsing, running and error reporting live in `Entry` so that every failure — a parser
// error, a ClinicError, anything unexpected — leaves through one place with a stable code.
Entry.main(Array(CommandLine.arguments.dropFirst()))
