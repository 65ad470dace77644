import ArgumentParser
import ClinicKit
import Foundation

struct Slots: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A department's slots with their availability, by day in the clinic's local time.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Department id.") var department: Int64
    @Option(help: "Only this doctor.") var doctor: Int64?
    @Option(help: ArgumentHelp("First day, YYYY-MM-DD in the clinic's calendar (default: today there).", valueName: "day"))
    var from: String?
    @Option(help: "How many days, 1 to 31 (default \(AppointmentController.defaultSlotDays)).") var days: Int?
    @Option(name: .customLong("visit-type"), help: "A visit type of the department (clinic visit-types): slots as long as the visit.")
    var visitType: Int64?

    func run() async throws {
        let context = Context(global)
        let first = try from.map(TimeInput.parseDay)
        let system = try await context.awaitedSystem()
        let (clinic, slots) = try await system.slotsAwaited(departmentId: department, doctorId: doctor, from: first, days: days,
                                                            visitTypeId: visitType)
        try context.emit(slots.map(SlotJSON.init)) {
            guard !slots.isEmpty else { return context.text(.noSlots) }
            var lines = [context.text(.clinicTime, clinic.timeZone, DateText.zoneName(slots[0].start, timeZone: clinic.zone,
                                                                                      language: context.language)), ""]
            // Slots by local day, in order.
            var days: [(heading: String, slots: [Slot])] = []
            for slot in slots {
                let heading = DateText.day(slot.start, timeZone: clinic.zone, language: context.language)
                if days.last?.heading == heading { days[days.count - 1].slots.append(slot) } else { days.append((heading, [slot])) }
            }
            for (heading, daySlots) in days {
                // On a day the clocks change, each of its times carries its zone name ("1:30 AM EDT"):
                // after a fall back, 1:30 AM comes twice. Other days show the times alone.
                let offsets = Set(daySlots.flatMap { [clinic.zone.secondsFromGMT(for: $0.start), clinic.zone.secondsFromGMT(for: $0.end)] })
                func time(_ date: Date) -> String {
                    let text = DateText.time(date, timeZone: clinic.zone, language: context.language)
                    return offsets.count > 1 ? text + " " + DateText.zoneName(date, timeZone: clinic.zone, language: context.language) : text
                }
                let rows = daySlots.map { slot in
                    [time(slot.start) + "–" + time(slot.end), slot.doctorName,
                     context.text(slot.isAvailable ? .available : slot.isTaken ? .taken : .tooSoon)]
                }
                lines.append(heading)
                lines.append(Output.table([context.text(.headerStart), context.text(.headerDoctor), context.text(.headerAvailable)], rows))
                lines.append("")
            }
            return lines.joined(separator: "\n").trimmingCharacters(in: .newlines)
        }
    }
}

struct Find: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The nearest clinics with a free slot for a specialization, each with its earliest slot.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Specialization, in English or Russian (cardiology, Кардиология, …).") var specialization: String
    @OptionGroup var location: LocationOptions
    @Option(help: ArgumentHelp("Only slots starting before this TIME (default: within 14 days; at most a year ahead). A wall time is read in this computer's zone.",
                               valueName: "time"))
    var before: String?
    @Option(help: "How many clinics, 1 to 100 (default 1).") var limit: Int = 1
    @Flag(help: "Only pediatric clinics.") var pediatric = false
    @Option(help: "A visit of this many minutes (5 to 480, in steps of 5): a time where it fits, as visit types are offered.")
    var minutes: Int?

    func run() async throws {
        let context = Context(global)
        try NearestQuery.checkLimit(limit) // before the database is opened or an address looked up
        try location.check()
        let deadline = try before.map { try TimeInput.resolve($0, in: .current) }
        let shownDeadline = min(deadline ?? Date().addingTimeInterval(AppointmentController.findWindow),
                                Date().addingTimeInterval(AppointmentController.findMaximumWindow))
        let system = try await context.awaitedSystem()
        let owner = try await location.patient(context, system)
        let result = try await system.findFreeSlots(from: try location.choice(), specialization: specialization, before: deadline,
                                                    limit: limit, pediatricOnly: pediatric, minutes: minutes, patient: owner)
        let search = result.found
        let found = search.slots
        context.noteAmbiguity(result.geocoded)
        if !search.complete { context.terminal.note(context.text(.findIncomplete, String(search.clinicsExamined))) }
        try context.emit(found.map(FreeSlotJSON.init)) {
            guard !found.isEmpty else {
                return context.text(.findNone, DateText.iso8601(shownDeadline))
            }
            return Output.table(
                [context.text(.headerClinic), context.text(.headerDistance), context.text(.headerDepartment),
                 context.text(.headerStart), context.text(.headerDoctor)],
                found.map { [$0.clinic.clinic.name, DistanceText.text($0.clinic.distance, context.language), String($0.departmentId),
                             localTime($0.slot.start, $0.clinic.clinic, context), $0.slot.doctorName] })
        }
    }
}

extension AppointmentsCommand {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One of your appointments with its history.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "Appointment id.") var appointmentId: Int64

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let (appointment, history) = try await system.appointments.appointmentWithHistory(appointmentId, clientId: client.id ?? 0)
            let json = AppointmentHistoryJSON(appointment, history)
            try await context.emit(json) {
                appointmentText(appointment, history, try await system.departmentWithClinic(appointment.departmentId).clinic, context)
            }
        }
    }
}

/// One appointment with its history, as `appointments show` and the session's "My
/// appointments" print it: when and where, the doctor and status, the reason, then the history.
func appointmentText(_ appointment: Appointment, _ history: [AppointmentEvent], _ clinic: Clinic, _ context: Context) -> String {
    var lines = [
        "\(appointment.id ?? 0): " + localTime(appointment.startsAt, clinic, context) + " · " + clinic.name,
        appointment.doctorName + " · " + appointment.status.text(context.language),
    ]
    if !appointment.notes.isEmpty { lines.append(appointment.notes) }
    lines.append("")
    lines.append(Output.table(
        [context.text(.headerWhen), context.text(.headerEvent), context.text(.headerActor), context.text(.headerStart)],
        history.map { event in
            [localTime(event.at, clinic, context),
             event.text(context.language) + (event.reason.map { " (" + $0 + ")" } ?? ""),
             context.text(event.actor == ChangedBy.staff.rawValue ? .actorStaff : .actorPatient),
             event.startsAt.map { localTime($0, clinic, context) } ?? ""]
        }))
    return lines.joined(separator: "\n")
}

extension AppointmentStatus: ExpressibleByArgument {}

extension Admin {
    struct AppointmentAdmin: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "appointment", abstract: "Clinic staff: change an appointment's status.",
            subcommands: [SetStatus.self])

        struct SetStatus: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "set-status",
                abstract: "Set the status: confirmed, completed, cancelled or no_show (along the allowed transitions).")

            @OptionGroup var global: GlobalOptions
            @Argument(help: "Appointment id.") var appointmentId: Int64
            @Argument(help: "New status.") var status: AppointmentStatus

            func run() async throws {
                let context = Context(global)
                let system = try await context.awaitedSystem()
                let appointment = try await system.appointments.setStatus(appointmentId, to: status)
                try context.emit(AppointmentJSON(appointment)) {
                    context.text(.statusSet, String(appointment.id ?? 0), appointment.status.text(context.language))
                }
            }
        }
    }

    struct Exceptions: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "exception", abstract: "A doctor's day off or changed hours on a date.",
            subcommands: [Add.self, List.self, Remove.self])

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add a day off (--off) or hours that replace the weekly ones that day; visits left outside them refuse it unless --force.")

            @OptionGroup var global: GlobalOptions
            @Option(help: "Doctor id.") var doctor: Int64
            @Option(help: ArgumentHelp("The clinic's local date, YYYY-MM-DD.", valueName: "day")) var date: String
            @OptionGroup var hoursOptions: HoursOptions
            @Flag(help: "Cancel the appointments the change leaves outside the hours.") var force = false
            @Option(help: "Why, for the patients whose appointments are cancelled.") var reason: String?

            func run() async throws {
                let context = Context(global)
                let day = try TimeInput.parseDay(date)
                let hours = try hoursOptions.interval()
                let system = try await context.awaitedSystem()
                let (exception, cancelled) = try await system.departments.addException(doctorId: doctor, day: day, hours: hours,
                                                                                        force: force, reason: reason)
                try emitExceptionAdded(context, exception, cancelled: cancelled)
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "A doctor's exceptions.")

            @OptionGroup var global: GlobalOptions
            @Option(help: "Doctor id.") var doctor: Int64

            func run() async throws {
                let context = Context(global)
                let system = try await context.awaitedSystem()
                let exceptions = try await system.departments.exceptions(doctorId: doctor)
                try context.emit(exceptions.map(ExceptionJSON.init)) {
                    Output.table([context.text(.headerId), context.text(.headerDate), context.text(.headerHours)], exceptions.map {
                        [String($0.id ?? 0), $0.day, $0.isDayOff ? context.text(.dayOff)
                            : hoursText($0.startMinute ?? 0, $0.endMinute ?? 0, slot: $0.slotMinutes ?? 0)]
                    })
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove an exception (the same rule: --force, --reason).")

            @OptionGroup var global: GlobalOptions
            @Argument(help: "Exception id.") var exceptionId: Int64
            @Flag(help: "Cancel the appointments the change leaves outside the hours.") var force = false
            @Option(help: "Why, for the patients whose appointments are cancelled.") var reason: String?

            func run() async throws {
                let context = Context(global)
                let system = try await context.awaitedSystem()
                let cancelled = try await system.departments.removeException(exceptionId, force: force, reason: reason)
                try emitExceptionRemoved(context, exceptionId, cancelled: cancelled)
            }
        }
    }

    struct Settings: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Booking rules: booking.lead_minutes, booking.cutoff_minutes, booking.max_active, booking.hold_seconds, ….",
            subcommands: [Show.self, Set.self], defaultSubcommand: Show.self)

        /// Prints every booking rule with its value.
        static func show(_ context: Context, _ policy: BookingPolicy) throws {
            let values = BookingPolicy.keys.map { ($0.key, policy[keyPath: $0.path]) }
            try context.emit(Dictionary(uniqueKeysWithValues: values)) {
                values.map { context.text(.settingLine, $0.0, String($0.1)) }.joined(separator: "\n")
            }
        }

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show the booking rules.")
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let context = Context(global)
                try Settings.show(context, try await context.awaitedSystem().appointments.bookingPolicy())
            }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Change a booking rule.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The setting.") var key: String
            @Argument(help: "Its new value (minutes, or a count).") var value: String

            func run() async throws {
                let context = Context(global)
                try Settings.show(context, try await context.awaitedSystem().appointments.setBookingRule(key, to: value))
            }
        }
    }
}

/// `--off` or `--from HH:MM --to HH:MM [--slot N]`: a day off, or working hours (exceptions,
/// `staff hours set`).
struct HoursOptions: ParsableArguments {
    @Flag(help: "The doctor does not work then.")
    var off = false
    @Option(help: ArgumentHelp("Start, HH:MM local.", valueName: "time")) var from: String?
    @Option(help: ArgumentHelp("End, HH:MM local.", valueName: "time")) var to: String?
    @Option(help: "Slot length in minutes (default \(DoctorSchedule.Interval.defaultSlotMinutes)).") var slot: Int?

    /// nil for `--off`; `invalid_input` unless exactly one of the two forms is given.
    func interval() throws -> DoctorSchedule.Interval? {
        try DoctorSchedule.Interval.parse(off: off, start: from, end: to, slotMinutes: slot)
    }
}
