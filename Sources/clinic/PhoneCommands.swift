import ArgumentParser
import ClinicKit
import Foundation

extension Profile {
    /// `clinic profile phone`: the mobile number texts go to (issue 45).
    struct Phone: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Your mobile number: reminders and waitlist offers are also texted to it once it is confirmed (optional).",
            subcommands: [Show.self, Set.self, Confirm.self, Texts.self, Remove.self], defaultSubcommand: Show.self)

        static func describe(_ status: PhoneStatus, _ context: Context) -> String {
            guard let number = status.number else { return context.text(.phoneAbsent) }
            let on = context.text(.phoneOn), off = context.text(.phoneOff)
            var text = context.text(status.confirmed ? .phoneLine : .phonePendingLine, number)
            if status.confirmed {
                text += "\n" + context.text(.phoneTextsLine, status.textReminders ? on : off, status.textOffers ? on : off)
                if status.stopped { text += "\n" + context.text(.phoneStopped) }
            }
            return text
        }

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show your number and what comes by text.")
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                let status = try await system.clients.phone(clientId: client.id ?? 0)
                try context.emit(PhoneJSON(status)) { Phone.describe(status, context) }
            }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Give a mobile number in international form (+1 202 555 0143): a six-digit code is texted to it (valid 30 minutes).")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The number, with + and the country code.") var number: String

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                let status = try await system.clients.setPhone(clientId: client.id ?? 0, number: number)
                try context.emit(PhoneJSON(status)) {
                    status.confirmed ? Phone.describe(status, context) : context.text(.phoneCodeSent, status.number ?? number)
                }
            }
        }

        struct Confirm: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Confirm the number with the code texted to it.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The six-digit code.") var code: String

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                let status = try await system.clients.confirmPhone(clientId: client.id ?? 0, code: code)
                try context.emit(PhoneJSON(status)) { context.text(.phoneConfirmed, status.number ?? "") }
            }
        }

        struct Texts: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Choose what comes by text: reminders, waitlist offers.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Reminders (and a clinic's cancellations) by text: on or off.") var reminders: Switch?
            @Option(help: "Waitlist offers by text: on or off.") var offers: Switch?

            enum Switch: String, ExpressibleByArgument, CaseIterable { case on, off }

            func validate() throws {
                if reminders == nil && offers == nil { throw ValidationError("Give --reminders, --offers or both (on or off).") }
            }

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                let id = client.id ?? 0
                _ = try await system.clients.updateProfile(clientId: id, ProfileChanges(),
                                                     texts: (reminders.map { $0 == .on }, offers.map { $0 == .on }))
                let status = try await system.clients.phone(clientId: id)
                try context.emit(PhoneJSON(status)) { Phone.describe(status, context) }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove your number: nothing more is texted.")
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                try await system.clients.removePhone(clientId: client.id ?? 0)
                try context.emit(PhoneJSON(try await system.clients.phone(clientId: client.id ?? 0))) { context.text(.phoneRemoved) }
            }
        }
    }
}
