import ArgumentParser
import ClinicKit
import Foundation

/// `clinic waitlist …`: wait for a time at a department, see and answer the times offered.
struct WaitlistCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waitlist",
        abstract: "Wait for a time at a department (or an earlier one than your appointment); accept or decline the times offered.",
        discussion: """
            When a time you wait for becomes free, it is offered to you (a message in your inbox, and e-mail when your \
            address is confirmed) and held for you for a while (booking.waitlist_offer_minutes, 15 by default): accept it \
            to book it, or decline it, and it goes to the next person waiting.
            """,
        subcommands: [List.self, Join.self, Leave.self, Resume.self, Offers.self, Accept.self, Decline.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your waitlist entries and the times offered to you.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let entries = try await system.waitlist.entries(clientId: client.id ?? 0)
            let offers = try await system.waitlist.offers(clientId: client.id ?? 0)
            try await context.emit(WaitlistJSON(items: entries.map(WaitlistEntryJSON.init), offers: offers.map(WaitlistOfferJSON.init))) {
                guard !entries.isEmpty else { return context.text(.waitlistNone) }
                var lines: [String] = []
                for entry in entries { if let line = try? await entryLine(entry, system, context) { lines.append(line) } }
                if !offers.isEmpty { lines.append(try await offerLines(offers, system, context)) }
                return lines.joined(separator: "\n")
            }
        }
    }

    struct Join: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wait for a time at a department.",
            discussion: "Days are the clinic's (YYYY-MM-DD); hours are the clinic's time of day, HH:MM-HH:MM.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var wait: WaitlistOptions

        func run() async throws {
            let context = Context(global)
            let request = try wait.request()
            let (system, client) = try await context.awaitedSignedIn()
            let entry = try await system.waitlist.join(clientId: client.id ?? 0, request)
            try await context.emit(WaitlistEntryJSON(entry)) { context.text(.waitlistJoined, try await entryLine(entry, system, context)) }
        }
    }

    struct Leave: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Leave a waitlist (an open offer of it goes to the next in line).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Waitlist entry id.") var entryId: Int64

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            try await system.waitlist.leave(entryId, clientId: client.id ?? 0)
            try context.emit(["left": entryId]) { context.text(.waitlistLeft, String(entryId)) }
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wait again after two offers ran out unanswered (the entry was paused); back in line, at its end.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Waitlist entry id.") var entryId: Int64

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let entry = try await system.waitlist.resume(entryId, clientId: client.id ?? 0)
            try await context.emit(WaitlistEntryJSON(entry)) { try await entryLine(entry, system, context) }
        }
    }

    struct Offers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The times offered to you now, each held until the time shown.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let offers = try await system.waitlist.offers(clientId: client.id ?? 0)
            try await context.emit(["items": offers.map(WaitlistOfferJSON.init)]) {
                offers.isEmpty ? context.text(.waitlistOffersNone) : try await offerLines(offers, system, context)
            }
        }
    }

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Book a time offered to you.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Offer id.") var offerId: Int64

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            try await emitBooked(try await system.waitlist.accept(offerId, clientId: client.id ?? 0), system, context)
        }
    }

    struct Decline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Let a time offered to you go to the next in line; you keep waiting.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Offer id.") var offerId: Int64

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            try await system.waitlist.decline(offerId, clientId: client.id ?? 0)
            try context.emit(["declined": offerId]) { context.text(.waitlistDeclined, String(offerId)) }
        }
    }
}

/// What an entry waits for, as `waitlist join` and `staff waitlist add` take it.
struct WaitlistOptions: ParsableArguments {
    @Option(help: "Department id.") var department: Int64
    @Option(help: "Only this doctor (default: any doctor of the department).") var doctor: Int64?
    @Option(name: .customLong("visit-type"), help: "A visit type of the department.") var visitType: Int64?
    @Option(help: ArgumentHelp("First day to wait for (default: today).", valueName: "day")) var from: String?
    @Option(help: ArgumentHelp("Last day to wait for (default: as far as bookings go).", valueName: "day")) var to: String?
    @Option(help: ArgumentHelp("Hours of the day, HH:MM-HH:MM (default: any).", valueName: "hours")) var hours: String?
    @Option(help: ArgumentHelp("ISO weekdays, 1 = Monday … 7 = Sunday, comma-separated (default: every day).",
                               valueName: "days")) var weekdays: String?
    @Option(name: .customLong("earlier-than"),
            help: ArgumentHelp("Wait for a time earlier than this appointment (accepting moves it).",
                               valueName: "appointment")) var earlierThan: Int64?

    func request(priority: Int = 0) throws -> WaitlistController.Request {
        let span = try hours.map { text -> (String, String) in
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else { throw ClinicError.invalid(.waitlistHoursInvalid, text) }
            return (parts[0], parts[1])
        }
        let days = try weekdays.map { text -> [Int] in
            try text.split(separator: ",", omittingEmptySubsequences: false).map {
                guard let day = Int($0.trimmingCharacters(in: .whitespaces)) else {
                    throw ClinicError.invalid(.waitlistWeekdaysInvalid, text)
                }
                return day
            }
        }
        return .init(departmentId: department, doctorId: doctor, visitTypeId: visitType, from: from, to: to, hoursFrom: span?.0,
                     hoursTo: span?.1, weekdays: days, appointmentId: earlierThan, priority: priority)
    }
}

/// `clinic waitlist --json`: the entries (`items`, as the API lists them) and the open offers.
struct WaitlistJSON: Encodable {
    let items: [WaitlistEntryJSON]
    let offers: [WaitlistOfferJSON]
}

/// One entry as a line: its id and state, where, which doctor, the days, the hours, the weekdays.
func entryLine(_ entry: WaitlistEntry, _ system: ClinicSystem, _ context: Context) async throws -> String {
    let (department, clinic) = try await system.departmentWithClinic(entry.departmentId)
    var doctor = context.text(MessageKey.waitlistAnyDoctor)
    if let id = entry.doctorId { doctor = try await system.doctorPlace(id).doctor.name }
    var when = entry.firstDay + " – " + entry.lastDay
    if let from = entry.fromMinute, let to = entry.toMinute {
        when += ", " + WaitlistEntryJSON.clock(from) + "–" + WaitlistEntryJSON.clock(to)
    }
    if entry.weekdays != WaitlistEntry.everyDay {
        let names = context.text(.weekdays).split(separator: ",").map(String.init)
        when += ", " + entry.weekdayList.map { names.indices.contains($0 - 1) ? names[$0 - 1] : String($0) }.joined(separator: " ")
    }
    if let earlier = entry.beforeAppointmentId { when += ", " + context.text(.waitlistEarlierThan, String(earlier)) }
    return context.text(.waitlistLine, String(entry.id ?? 0), entry.statusText(context.language), clinic.name,
                        Specialization.displayName(department.specialization, context.language),
                        doctor, when)
}

/// The open offers as a table: id, start in the clinic's time, the clinic, held until.
func offerLines(_ offers: [WaitlistOffer], _ system: ClinicSystem, _ context: Context) async throws -> String {
    var rows: [[String]] = []
    for offer in offers {
        let clinic = try await system.departmentWithClinic(offer.departmentId).clinic
        rows.append([String(offer.id ?? 0), localTime(offer.startsAt, clinic, context), clinic.name, localTime(offer.expiresAt, clinic, context)])
    }
    return Output.table([context.text(.headerId), context.text(.headerStart), context.text(.headerClinic), context.text(.waitlistHeldUntil)],
                        rows, flexible: [2])
}

/// `clinic staff waitlist …`: the front desk's waitlist (receptionists and clinic admins).
struct StaffWaitlist: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waitlist",
        abstract: "Who waits at your clinic; put a patient on a waitlist, change their priority, take them off.",
        subcommands: [List.self, Add.self, Priority.self, Remove.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The entries waiting at your clinic, in the order times are offered.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only this department.") var department: Int64?

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let entries = try await system.staff.waitlist(member, departmentId: department)
                try await context.emit(["items": entries.map(StaffWaitlistEntryJSON.init)]) {
                    guard !entries.isEmpty else { return context.text(.staffWaitlistNone) }
                    var lines: [String] = []
                    for item in entries {
                        lines.append(context.text(.staffWaitlistLine, item.patientName, String(item.entry.priority),
                                                  try await entryLine(item.entry, system, context))
                                     + (item.note.map { "\n    " + $0.replacingOccurrences(of: "\n", with: "\n    ") } ?? ""))
                    }
                    return lines.joined(separator: "\n")
                }
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put a patient on a waitlist (a phone call: \"tell me if something frees up\").")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The patient's login.") var patient: String?
        @Option(name: .customLong("patient-id"), help: "Or the patient's id (a patient of your clinic).") var patientId: Int64?
        @Option(help: "Priority: higher is offered first (default 0).") var priority: Int = 0
        @Option(help: "A note for the front desk (\"mornings only\"), kept sealed.") var note: String?
        @OptionGroup var wait: WaitlistOptions

        func run() async throws {
            let context = Context(global)
            let request = try wait.request(priority: priority)
            try await context.awaitedAsStaff { system, member in
                let entry = try await system.staff.addToWaitlist(member, patientLogin: patient, patientId: patientId, request, note: note)
                try await context.emit(WaitlistEntryJSON(entry)) { context.text(.waitlistJoined, try await entryLine(entry, system, context)) }
            }
        }
    }

    struct Priority: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set an entry's priority (-1000 to 1000; higher is offered first).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Waitlist entry id.") var entryId: Int64
        @Argument(help: "The new priority.") var priority: Int
        @Option(help: "Replace the front desk's note (empty: remove it).") var note: String?

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let entry = try await system.staff.changeWaitlistEntry(member, entryId: entryId, priority: priority, note: note)
                try await context.emit(WaitlistEntryJSON(entry)) { try await entryLine(entry, system, context) }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take an entry off the waitlist (an open offer of it goes to the next in line).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Waitlist entry id.") var entryId: Int64

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                try await system.staff.removeFromWaitlist(member, entryId: entryId)
                try context.emit(["removed": entryId]) { context.text(.waitlistLeft, String(entryId)) }
            }
        }
    }
}
