import ArgumentParser
import ClinicKit
import ClinicTransports
import Foundation

/// `clinic messages`: the inbox.
struct Messages: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Your messages from the clinics: bookings, changes, reminders and notes from clinic staff.",
        subcommands: [List.self, Read.self, Write.self, Thread.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List your messages, newest first.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Only the unread ones.") var unread = false

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let messages = try await system.clients.messages(clientId: client.id ?? 0, unreadOnly: unread)
            let zone = system.clients.timeZone(of: client)
            try context.emit(messages.map(MessageJSON.init)) {
                guard !messages.isEmpty else { return context.text(.messagesNone) }
                return messages.map { message in
                    context.text(.messageLine, String(message.id), DateText.dateTimeWithZone(message.createdAt, timeZone: zone,
                                                                                             language: context.language),
                                 message.subject, message.readAt == nil ? context.text(.messageUnreadMark) : "")
                }.joined(separator: "\n")
            }
        }
    }

    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a message and mark it read.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Message id.") var messageId: Int64

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let message = try await system.clients.markRead(clientId: client.id ?? 0, messageId: messageId)
            try context.emit(MessageJSON(message)) { message.subject + "\n\n" + message.body }
        }
    }
}

extension Profile {
    struct Email: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Your e-mail address: messages are also e-mailed to it once it is confirmed (optional).",
            subcommands: [Show.self, Set.self, Confirm.self, Remove.self], defaultSubcommand: Show.self)

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show your address and one waiting for its code.")
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                let status = try await system.clients.email(clientId: client.id ?? 0)
                try context.emit(EmailJSON(status)) { emailText(status, context) }
            }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Give an address: a six-digit code is e-mailed to it (valid 30 minutes); your old address stays until then.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The address.") var address: String

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                let status = try await system.clients.setEmail(clientId: client.id ?? 0, address: address)
                try context.emit(EmailJSON(status)) { context.text(.emailCodeSent, status.pending ?? address) }
            }
        }

        struct Confirm: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Confirm the address with the code e-mailed to it.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The six-digit code.") var code: String

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                let status = try await system.clients.confirmEmail(clientId: client.id ?? 0, code: code)
                try context.emit(EmailJSON(status)) { context.text(.emailConfirmed, status.confirmed ?? "") }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove your address: messages stay in your inbox only.")
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                try await system.clients.removeEmail(clientId: client.id ?? 0)
                try context.emit(EmailJSON(EmailStatus(confirmed: nil, pending: nil))) { context.text(.emailRemoved) }
            }
        }
    }

    struct CalendarURL: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "calendar-url",
            abstract: "Your private calendar address: every appointment, for calendar apps to subscribe to.",
            discussion: "The address is the server's (CLINIC_PUBLIC_URL, default http://127.0.0.1:8080) with a read-only token of its own.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Make a new address; the old one stops working.") var rotate = false
        @Flag(help: "End the address without a new one.") var revoke = false

        func validate() throws {
            if rotate && revoke { throw ValidationError("Give --rotate or --revoke, not both.") }
        }

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            if revoke {
                try await system.clients.revokeCalendarToken(clientId: client.id ?? 0)
                struct Revoked: Encodable { let revoked: Bool }
                return try context.emit(Revoked(revoked: true)) { context.text(.calendarTokenInvalid) }
            }
            let token = try await system.clients.calendarToken(clientId: client.id ?? 0, rotate: rotate)
            let base = context.environment["CLINIC_PUBLIC_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:8080"
            let answer = CalendarTokenJSON(token: token, base: base.hasSuffix("/") ? String(base.dropLast()) : base)
            try context.emit(answer) { context.text(.calendarURL, answer.url) }
        }
    }
}

func emailText(_ status: EmailStatus, _ context: Context) -> String {
    var lines: [String] = []
    if let confirmed = status.confirmed { lines.append(context.text(.emailLine, confirmed)) }
    if let pending = status.pending { lines.append(context.text(.emailPendingLine, pending)) }
    return lines.isEmpty ? context.text(.emailNone) : lines.joined(separator: "\n")
}

extension AppointmentsCommand {
    struct ICS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ics",
            abstract: "One of your appointments as an iCalendar file (RFC 5545), for any calendar: clinic appointments ics ID > visit.ics",
            discussion: "The file is the output: --json does not change it.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Appointment id.") var appointmentId: Int64

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            FileHandle.standardOutput.write(Data(try await system.calendarFile(appointmentId, of: client).utf8))
        }
    }
}

extension StaffCommand {
    struct Message: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write to a patient of your clinic, or to every patient booked on a day (receptionists, clinic admins).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The patient's login (they must have an appointment at your clinic).") var patient: String?
        @Option(help: ArgumentHelp("Every patient with an active appointment that day (YYYY-MM-DD, the clinic's date).", valueName: "day"))
        var date: String?
        @Option(help: "With --date: only that department's patients.") var department: Int64?
        @Argument(help: "The message (up to 2,000 characters).") var text: String

        func run() async throws {
            let context = Context(global)
            let day = try date.map(TimeInput.parseDay)
            try await context.awaitedAsStaff { system, member in
                let count = try await system.staff.message(member, patientLogin: patient, day: day, departmentId: department, text: text)
                struct Sent: Encodable { let recipients: Int }
                try context.emit(Sent(recipients: count)) {
                    context.text(.staffMessageSent, Noun.patient.count(count, context.language))
                }
            }
        }
    }
}

extension Admin {
    struct Deliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Offer freed times from the waitlist, write the reminders that are due and send the e-mail that is due (what clinic serve does in the background).",
            discussion: """
                E-mail goes through CLINIC_SMTP_URL (smtp[s]://user:password@host:port) from CLINIC_MAIL_FROM; \
                without them only reminders are written. Texts go through Kannel when CLINIC_SMS_URL and the \
                other CLINIC_SMS_* settings are given (docs/DEPLOY.md). Run it every minute from cron where no server runs.
                """)
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = Context(global)
            let settings = try SMTPSettings.from(environment: context.environment)
            let sms = try SMSSettings.from(environment: context.environment)
            let system = try context.system()
            // The waitlist first: the offers it makes are messages this round then e-mails.
            let offered = try await system.waitlist.work()
            let site = context.environment["CLINIC_PUBLIC_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? sms?.callbackURL ?? ""
            let report = try await system.outbox.run(mailer: settings.map(SMTPMailer.init), from: settings?.from ?? "",
                                               texter: sms.map(KannelGateway.init), site: site)
            try context.emit(DeliveryReportJSON(report, waitlist: offered)) {
                var text = context.text(.deliverDone, String(report.reminders), String(report.sent - report.texts),
                                        String(report.retrying), String(report.failed))
                if offered > 0 { text += "\n" + context.text(.waitlistWorked, String(offered)) }
                if report.texts > 0 { text += "\n" + context.text(.deliverTexts, String(report.texts)) }
                if settings == nil && sms == nil { text += "\n" + context.text(.deliverNoSMTP) }
                return text
            }
        }
    }
}
