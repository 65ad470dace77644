import ArgumentParser
import ClinicKit
import Foundation

struct Profile: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Your profile and your data: show, edit, password, e-mail, calendar address, export everything, delete the account.",
        subcommands: [Show.self, Edit.self, Password.self, Email.self, Phone.self, CalendarURL.self, Export.self, AccessLog.self, Delete.self],
        defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show your profile.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await Context(global).emitSignedInClient()
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change your profile; a changed city is looked up again. --lang also saves your language.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "First name.") var name: String?
        @Option(help: "Surname.") var surname: String?
        @Option(help: "Street.") var street: String?
        @Option(help: "House number.") var house: String?
        @Option(help: "City, optionally with its state or country.") var city: String?
        @Option(help: "Home clinic id.") var clinic: Int64?

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            // A city several places share: asked on a terminal, else the first, said on stderr.
            var city: String?
            if let typed = self.city {
                city = try await chooseCity(context, system, typed, ask: context.terminal.stdinIsTerminal && context.terminal.stdoutIsTerminal)
            }
            let updated = try await system.clients.updateProfile(clientId: client.id ?? 0, ProfileChanges(
                name: name, surname: surname, street: street, house: house, city: city, clinicId: clinic, language: global.lang))
            try context.emitClient(updated)
        }
    }

    struct Password: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change your password (the old one is required); your other sessions end.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Read the old password, then the new one, from the first two lines of standard input.") var passwordStdin = false

        func run() async throws {
            let context = Context(global)
            let old = try context.password(fromStdin: passwordStdin, prompt: .promptOldPassword)
            let new = try context.password(fromStdin: passwordStdin, confirm: true)
            let (system, client, token) = try await context.awaitedSession()
            try await system.clients.changePassword(clientId: client.id ?? 0, old: old, new: new, keeping: token,
                                                    passwords: InlinePasswordRunner())
            try context.emit(ChangedJSON(changed: true)) { context.text(.passwordChanged) }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print everything stored about you, with your appointments and their history, as JSON.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let data = try await system.clients.export(clientId: client.id ?? 0)
            try Output.printJSON(ExportJSON(data))
        }
    }

    struct AccessLog: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "access-log",
            abstract: "Who on the clinic side read or changed your data, newest first (the audit trail).")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let entries = try await system.clients.accessLog(clientId: client.id ?? 0)
            let zone = system.clients.timeZone(of: client)
            try context.emit(entries.map(AccessLogEntryJSON.init)) {
                guard !entries.isEmpty else { return context.text(.accessLogNone) }
                return entries.map { entry in
                    let subject = entry.appointmentId.map { "#\($0)" } ?? ""
                    return context.text(.accessLogLine, DateText.dateTimeWithZone(entry.at, timeZone: zone, language: context.language),
                                        entry.role, AuditAction.text(of: entry.action, in: context.language),
                                        [subject, entry.detail].filter { !$0.isEmpty }.joined(separator: " "))
                }.joined(separator: "\n")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete your account: personal data and sessions go; appointments stay for the clinic without them.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Read the password from the first line of standard input.") var passwordStdin = false

        func run() async throws {
            let context = Context(global)
            let password = try context.password(fromStdin: passwordStdin)
            let (system, client) = try await context.awaitedSignedIn()
            try await system.clients.deleteAccount(clientId: client.id ?? 0, password: password, passwords: InlinePasswordRunner())
            context.sessionFile.delete()
            try context.emit(DeletedJSON(deleted: client.login)) { context.text(.accountDeleted, client.login) }
        }
    }
}
