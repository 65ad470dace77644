import ArgumentParser
import ClinicKit
import Foundation

// The clinic admin's `clinic staff` commands: the month's report, visit types, doctors, their
// weekly hours and exceptions.

extension StaffCommand {
    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A month of your clinic (clinic admins): bookings, cancellations and how late, no-shows, freed times refilled.",
            discussion: "By department, by doctor and in all, in the clinic's calendar. --csv prints it as CSV (the web's download).")

        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("The month, YYYY-MM (default: this month in the clinic's calendar).", valueName: "month"))
        var month: String?
        @Flag(help: "CSV instead of a table.") var csv = false

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let report = try await system.staff.monthReport(member, month: month)
                if csv {
                    print(report.csv(context.language), terminator: "")
                    return
                }
                try context.emit(MonthReportJSON(report, language: context.language)) { reportTable(report, context) }
            }
        }
    }

    struct StaffVisitTypes: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "visit-types", abstract: "A department's visit types: list (any staff), add, update, remove (clinic admins).",
            subcommands: [List.self, Add.self, Update.self, Remove.self], defaultSubcommand: List.self)

        struct Fields: ParsableArguments {
            @Option(name: .customLong("name-en"), help: "English name.") var nameEn: String
            @Option(name: .customLong("name-ru"), help: "Russian name.") var nameRu: String
            @Option(help: "Duration in minutes: 5 to 480, in steps of 5; a doctor offers it where it is a whole number of their slots.")
            var minutes: Int
            @Option(name: .customLong("price-cents"), help: "Price in cents (optional).") var priceCents: Int?
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "A department's visit types, removed ones too.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Department id (of your clinic).") var department: Int64

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let types = try await system.staff.visitTypes(member, departmentId: department)
                    try context.emit(types.map { VisitTypeJSON($0, language: context.language) }) { visitTypeLines(types, context) }
                }
            }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Offer a visit type in a department of your clinic.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Department id (of your clinic).") var department: Int64
            @OptionGroup var fields: Fields

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let type = try await system.staff.addVisitType(member, departmentId: department, nameEn: fields.nameEn, nameRu: fields.nameRu,
                                                             durationMinutes: fields.minutes, priceCents: fields.priceCents)
                    try context.emit(VisitTypeJSON(type, language: context.language)) { visitTypeLines([type], context) }
                }
            }
        }

        struct Update: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Change a visit type (booked appointments keep their times).")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "Visit type id.") var id: Int64
            @OptionGroup var fields: Fields

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let type = try await system.staff.updateVisitType(member, id: id, nameEn: fields.nameEn, nameRu: fields.nameRu,
                                                                durationMinutes: fields.minutes, priceCents: fields.priceCents)
                    try context.emit(VisitTypeJSON(type, language: context.language)) { visitTypeLines([type], context) }
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Stop offering a visit type (appointments booked for it keep it).")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "Visit type id.") var id: Int64

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let type = try await system.staff.removeVisitType(member, id: id)
                    try context.emit(VisitTypeJSON(type, language: context.language)) { visitTypeLines([type], context) }
                }
            }
        }
    }

    struct Doctors: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Your clinic's doctors: list, add, deactivate (clinic admins).", subcommands: [List.self, Add.self, Deactivate.self],
            defaultSubcommand: List.self)

        struct Deactivate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "No longer offer, book or list a doctor (appointments and history are kept).",
                discussion: "Refused (hours_conflict) while the doctor has upcoming appointments, unless --force: then they are cancelled for the clinic with --reason.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "Doctor id (of your clinic).") var doctorId: Int64
            @Flag(help: "Cancel the doctor's upcoming appointments.") var force = false
            @Option(help: "Why, for the patients whose appointments are cancelled.") var reason: String?

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let cancelled = try await system.staff.deactivateDoctor(member, doctorId: doctorId, force: force, reason: reason)
                    try context.emit(cancelled.map(AppointmentJSON.init)) {
                        context.text(.staffHoursSet, String(doctorId), String(cancelled.count))
                    }
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Your clinic's doctors and their departments.")
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let doctors = try await system.staff.doctorsWithHours(member)
                    let shapes = doctors.map { DoctorJSON($0.doctor, hours: $0.hours) }
                    try context.emit(shapes) {
                        doctors.map { context.text(.staffDoctorLine, String($0.doctor.id ?? 0), $0.doctor.name, String($0.department.id ?? 0),
                                                   Specialization.displayName($0.department.specialization, context.language)) }
                            .joined(separator: "\n")
                    }
                }
            }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add a doctor to a department of your clinic; set the weekly hours with staff hours set.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Department id (of your clinic).") var department: Int64
            @Option(help: "The doctor's name.") var name: String

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let doctor = try await system.staff.addDoctor(member, departmentId: department, name: name, hours: [])
                    try context.emit(DoctorJSON(doctor, hours: [])) {
                        context.text(.staffDoctorLine, String(doctor.id ?? 0), doctor.name, String(department), "")
                    }
                }
            }
        }
    }

    struct Hours: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A doctor's weekly hours: show (any staff), set one weekday (clinic admins).",
            subcommands: [Show.self, Set.self], defaultSubcommand: Show.self)

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "A doctor's weekly hours.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Doctor id (of your clinic).") var doctor: Int64

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let hours = try await system.staff.doctorWeek(member, doctorId: doctor).hours
                    try context.emit(hours.map(DoctorJSON.Hours.init)) {
                        hours.map { context.text(.staffHoursLine, String($0.weekday), hoursText($0.startMinute, $0.endMinute, slot: $0.slotMinutes)) }
                            .joined(separator: "\n")
                    }
                }
            }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Replace a doctor's hours on one weekday (1 = Monday … 7 = Sunday); --off for none.",
                discussion: "Refused (hours_conflict) when booked appointments would fall outside the new hours, unless --force: then they are cancelled for the clinic with --reason.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Doctor id (of your clinic).") var doctor: Int64
            @Option(help: "ISO weekday, 1 = Monday … 7 = Sunday.") var weekday: Int
            @OptionGroup var hoursOptions: HoursOptions
            @Flag(help: "Cancel the appointments the change leaves outside the hours.") var force = false
            @Option(help: "Why, for the patients whose appointments are cancelled.") var reason: String?

            func run() async throws {
                let context = Context(global)
                let interval = try hoursOptions.interval()
                try await context.awaitedAsStaff { system, member in
                    let cancelled = try await system.staff.setHours(member, doctorId: doctor, weekday: weekday, intervals: interval.map { [$0] } ?? [],
                                                              force: force, reason: reason)
                    try context.emit(cancelled.map(AppointmentJSON.init)) {
                        context.text(.staffHoursSet, String(doctor), String(cancelled.count))
                    }
                }
            }
        }
    }

    struct StaffExceptions: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "exceptions", abstract: "A doctor's days off and changed days (clinic admins change them).",
            subcommands: [List.self, Add.self, Remove.self], defaultSubcommand: List.self)

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "A doctor's exceptions.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Doctor id (of your clinic).") var doctor: Int64

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    // Of the member's clinic, else not_found.
                    let exceptions = try await system.staff.doctorWeek(member, doctorId: doctor).exceptions
                    try context.emit(exceptions.map(ExceptionJSON.init)) {
                        exceptions.map { context.text(.staffHoursLine, $0.day, $0.isDayOff ? context.text(.dayOff)
                            : hoursText($0.startMinute ?? 0, $0.endMinute ?? 0, slot: $0.slotMinutes ?? 0)) }.joined(separator: "\n")
                    }
                }
            }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "A day off (--off) or other hours on a date, with the same rule as hours set (--force, --reason).")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Doctor id (of your clinic).") var doctor: Int64
            @Option(help: ArgumentHelp("The clinic's local date, YYYY-MM-DD.", valueName: "day")) var date: String
            @OptionGroup var hoursOptions: HoursOptions
            @Flag(help: "Cancel the appointments the change leaves outside the hours.") var force = false
            @Option(help: "Why, for the patients whose appointments are cancelled.") var reason: String?

            func run() async throws {
                let context = Context(global)
                let day = try TimeInput.parseDay(date)
                let interval = try hoursOptions.interval()
                try await context.awaitedAsStaff { system, member in
                    let (exception, cancelled) = try await system.staff.addException(member, doctorId: doctor, day: day, hours: interval,
                                                                               force: force, reason: reason)
                    try emitExceptionAdded(context, exception, cancelled: cancelled)
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
                try await context.awaitedAsStaff { system, member in
                    let cancelled = try await system.staff.removeException(member, exceptionId: exceptionId, force: force, reason: reason)
                    try emitExceptionRemoved(context, exceptionId, cancelled: cancelled)
                }
            }
        }
    }
}

/// An exception added (`staff exceptions add`, `admin exception add`), with how many visits it cancelled.
func emitExceptionAdded(_ context: Context, _ exception: WorkingException, cancelled: [Appointment]) throws {
    let doctor = String(exception.doctorId)
    try context.emit(ExceptionJSON(exception)) {
        context.text(.exceptionAdded, String(exception.id ?? 0), doctor, exception.day)
            + (cancelled.isEmpty ? "" : "\n" + context.text(.staffHoursSet, doctor, String(cancelled.count)))
    }
}

/// An exception removed (`staff exceptions remove`, `admin exception remove`).
func emitExceptionRemoved(_ context: Context, _ id: Int64, cancelled: [Appointment]) throws {
    struct JSON: Encodable { let removed: Int64; let cancelled: Int }
    try context.emit(JSON(removed: id, cancelled: cancelled.count)) { context.text(.exceptionRemoved, String(id)) }
}
