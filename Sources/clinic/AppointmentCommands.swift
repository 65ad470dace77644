import ArgumentParser
import ClinicKit
import Foundation

struct Book: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Book an appointment in a department.",
        discussion: "TIME is ISO 8601 with an offset or Z, or 'YYYY-MM-DD HH:MM' in the clinic's time zone.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Department id.") var department: Int64
    @Option(help: ArgumentHelp("Start of the slot.", valueName: "time")) var at: String
    @Option(help: "Doctor id (default: the first free doctor).") var doctor: Int64?
    @Option(help: "Notes for the clinic.") var notes: String = ""
    @Option(name: .customLong("visit-type"), help: "A visit type of the department (clinic visit-types).") var visitType: Int64?

    func run() async throws {
        let context = Context(global)
        let time = try TimeInput.parse(at)
        let (system, client) = try await context.awaitedSignedIn()
        let appointment = try await system.appointments.book(
            clientId: client.id ?? 0, departmentId: department, at: time, doctorId: doctor, notes: notes, visitTypeId: visitType)
        try await emitBooked(appointment, system, context)
    }
}

/// A new appointment: its JSON, or "Booked: …" in the clinic's time (`book`, `waitlist accept`);
/// the clinic is read only for the human text.
func emitBooked(_ appointment: Appointment, _ system: ClinicSystem, _ context: Context) async throws {
    try await context.emit(AppointmentJSON(appointment)) {
        let clinic = try await system.departmentWithClinic(appointment.departmentId).clinic
        return context.text(.booked, String(appointment.id ?? 0), localTime(appointment.startsAt, clinic, context),
                            clinic.name, appointment.doctorName)
    }
}

struct AppointmentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appointments",
        abstract: "Your appointments: list them (upcoming by default), show one with its history, or get one as a calendar file.",
        subcommands: [List.self, Show.self, ICS.self, Attach.self, Attachments.self, Attachment.self], defaultSubcommand: List.self)
}

extension AppointmentScope: EnumerableFlag {}

extension AppointmentsCommand {
  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List your appointments (upcoming by default).")

    @OptionGroup var global: GlobalOptions
    @Flag(exclusivity: .exclusive, help: "Which appointments: --upcoming (default), --past or --all.")
    var scope: AppointmentScope = .upcoming

    func run() async throws {
        let context = Context(global)
        let (system, client) = try await context.awaitedSignedIn()
        let list = try await system.appointments(ofPatient: client.id ?? 0, scope: scope)
        try context.emit(list.map { AppointmentJSON($0.appointment) }) {
            guard !list.isEmpty else { return context.text(.noAppointments) }
            return Noun.appointment.count(list.count, context.language) + "\n" + appointmentTable(list, context)
        }
    }
  }
}

/// Appointments as a table in the clinics' own time; `numbered` puts a choice number first.
func appointmentTable(_ list: [AppointmentAtClinic], _ context: Context, numbered: Bool = false) -> String {
    let shift = numbered ? 1 : 0
    return Output.table(
        (numbered ? ["#"] : []) + [context.text(.headerId), context.text(.headerStart), context.text(.headerClinic),
                                   context.text(.headerDepartment), context.text(.headerDoctor), context.text(.headerStatus)],
        list.enumerated().map { index, item in
            let appointment = item.appointment
            return (numbered ? [String(index + 1)] : []) + [
                String(appointment.id ?? 0), localTime(appointment.startsAt, item.clinic, context),
                item.clinic.name, Specialization.displayName(item.department.specialization, context.language),
                appointment.doctorName, appointment.status.text(context.language)]
        }, flexible: [shift + 2, shift + 3, shift + 4])
}

struct Reschedule: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Move one of your appointments to another time.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Appointment id.") var appointmentId: Int64
    @Option(help: ArgumentHelp("New start.", valueName: "time")) var to: String

    func run() async throws {
        let context = Context(global)
        let time = try TimeInput.parse(to)
        let (system, client) = try await context.awaitedSignedIn()
        let appointment = try await system.appointments.reschedule(appointmentId, clientId: client.id ?? 0, to: time)
        try await context.emit(AppointmentJSON(appointment)) {
            let clinic = try await system.departmentWithClinic(appointment.departmentId).clinic
            return context.text(.rescheduled, String(appointment.id ?? 0), localTime(appointment.startsAt, clinic, context),
                                appointment.doctorName)
        }
    }
}

struct Cancel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Cancel one of your appointments.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Appointment id.") var appointmentId: Int64

    func run() async throws {
        let context = Context(global)
        let (system, client) = try await context.awaitedSignedIn()
        let appointment = try await system.appointments.cancel(appointmentId, clientId: client.id ?? 0)
        try context.emit(AppointmentJSON(appointment)) { context.text(.cancelled, String(appointment.id ?? 0)) }
    }
}

/// A time in the clinic's own time, with the zone's name when the clinic's clock differs from
/// the user's at that moment.
func localTime(_ date: Date, _ clinic: Clinic, _ context: Context, userZone: TimeZone = .current) -> String {
    let text = DateText.dateTime(date, timeZone: clinic.zone, language: context.language)
    guard clockDiffers(clinic, at: date, userZone: userZone) else { return text }
    return text + " " + DateText.zoneName(date, timeZone: clinic.zone, language: context.language)
}

/// Whether the clinic's clock shows another time than the user's (`TZ`, else this computer's
/// zone) at that moment: then its times carry the zone's name.
func clockDiffers(_ clinic: Clinic, at date: Date, userZone: TimeZone = .current) -> Bool {
    clinic.zone.secondsFromGMT(for: date) != userZone.secondsFromGMT(for: date)
}
