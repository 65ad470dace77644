import ArgumentParser
import ClinicKit
import Foundation

extension StaffRole: ExpressibleByArgument {}
extension StaffAction: ExpressibleByArgument {}

/// The staff session file: `CLINIC_STAFF_SESSION`, else the patient's session file's path with
/// `-staff` after it, so that one person can be signed in as a patient and as staff.
extension Context {
    var staffSessionFile: SessionFile {
        if let explicit = environment["CLINIC_STAFF_SESSION"], !explicit.isEmpty { return SessionFile(path: explicit) }
        return SessionFile(path: sessionFile.path + "-staff")
    }

    /// Runs `body` for the signed-in staff member (`not_logged_in` without a staff session);
    /// the session is kept alive once it succeeded.
    func asStaff(_ body: (ClinicSystem, StaffMember) throws -> Void) throws {
        let system = try self.system()
        let token = try staffSessionFile.read()
        let member = try system.staff.current(token: token)
        try body(system, member)
        if let token { try? system.staff.touch(token: token) }
    }

    /// `asStaff` for an awaited command: the store opened and the staff session looked up awaited.
    func awaitedAsStaff(_ body: (ClinicSystem, StaffMember) async throws -> Void) async throws {
        let system = try await awaitedSystem()
        guard let token = try staffSessionFile.read() else { throw ClinicError(.notLoggedIn, .staffNotLoggedIn) }
        let member = try await system.staff.signedIn(token: token)
        try await body(system, member)
        try? await system.staff.touch(token: token)
    }
}

/// Options shared by the commands that create an account.
struct StaffAccountOptions: ParsableArguments {
    @Option(help: "The account's login.") var login: String
    @Option(help: "Given name.") var name: String
    @Option(help: "Family name.") var surname: String
    @Option(help: "clinic-admin, receptionist or doctor.") var role: StaffRole
    @Option(help: "For a doctor's account: the doctor (of the clinic) it is.") var doctor: Int64?
    @Flag(help: "Read the password from the first line of standard input.") var passwordStdin = false
}

extension Admin {
    struct StaffAdmin: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "staff", abstract: "Staff accounts, as the operator: add one to any clinic.",
            subcommands: [Add.self])

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Add a staff account to a clinic (recorded in the audit trail).")

            @OptionGroup var global: GlobalOptions
            @OptionGroup var account: StaffAccountOptions
            @Option(help: "The clinic: its id, its external id (the directory's), or its name.") var clinic: String

            func run() async throws {
                let context = Context(global)
                let system = try await context.awaitedSystem()
                // Found before the password is asked: a wrong clinic is said at once.
                let clinicId = try await system.clinics.clinic(reference: clinic).id ?? 0
                let password = try context.password(fromStdin: account.passwordStdin, confirm: true)
                let member = try await system.staff.addStaff(StaffInput(
                    login: account.login, name: account.name, surname: account.surname, role: account.role, clinicId: clinicId,
                    doctorId: account.doctor, password: password), by: nil, passwords: InlinePasswordRunner())
                try context.emit(StaffJSON(member)) {
                    context.text(.staffAdded, member.login, member.role.rawValue, String(member.clinicId))
                }
            }
        }
    }
}

struct StaffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "staff",
        abstract: "Clinic staff: log in, the clinic's day, check-in (and undo), start, complete, no-show, cancel; accounts (clinic admins).",
        subcommands: [Login.self, Logout.self, Whoami.self, Schedule.self, AppointmentAction.self, Book.self, Doctors.self, Hours.self,
                      StaffExceptions.self, StaffVisitTypes.self, Accounts.self, Message.self, StaffAttachments.self,
                      Threads.self, Thread.self, Answer.self, CloseThread.self, Reschedule.self, Actions.self, Calendar.self, Patients.self,
                      RegisterPatient.self, ClaimCodeCommand.self, StaffWaitlist.self, Report.self])

    struct Book: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Book for a patient of your clinic (receptionists and clinic admins); the patient's booking rules hold.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "The patient's login.") var patient: String?
        @Option(name: .customLong("patient-id"), help: "Or the patient's id (a patient with an appointment at your clinic).")
        var patientId: Int64?
        @Option(help: "Department id (of your clinic).") var department: Int64
        @Option(help: ArgumentHelp("A slot start (see TIME in docs/CLI.md).", valueName: "time")) var at: String
        @Option(help: "A doctor of the department.") var doctor: Int64?
        @Option(name: .customLong("visit-type"), help: "A visit type of the department.") var visitType: Int64?

        func run() async throws {
            let context = Context(global)
            let time = try TimeInput.parse(at)
            try await context.awaitedAsStaff { system, member in
                let booked = try await system.staff.book(member, patientLogin: patient, patientId: patientId, departmentId: department, at: time,
                                                   doctorId: doctor, visitTypeId: visitType)
                try context.emit(AppointmentJSON(booked)) {
                    let zone = (try? system.clinics.getClinicById(booked.clinicId).zone) ?? .current
                    return context.text(.staffBooked, String(booked.id ?? 0), patient ?? "#\(booked.clientId ?? 0)",
                                        DateText.dateTime(booked.startsAt, timeZone: zone, language: context.language), booked.doctorName)
                }
            }
        }
    }

    struct Reschedule: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move an appointment of your clinic to another time (receptionists and clinic admins); the patient is told.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "Appointment id.") var appointmentId: Int64
        @Option(help: ArgumentHelp("The new start (see TIME in docs/CLI.md).", valueName: "time")) var to: String
        @Option(help: "Move it to this doctor of the department (default: its own doctor, else any free one).") var doctor: Int64?
        @Option(help: "Why the clinic moves it (the patient reads it in their inbox).") var reason: String?

        func run() async throws {
            let context = Context(global)
            let time = try TimeInput.parse(to)
            try await context.awaitedAsStaff { system, member in
                let moved = try await system.staff.reschedule(member, appointmentId: appointmentId, to: time, doctorId: doctor, reason: reason)
                try await context.emit(AppointmentJSON(moved)) {
                    // The move is committed: a failed read of its clinic must not report it as refused.
                    let zone = (try? await system.departmentWithClinic(moved.departmentId).clinic.zone) ?? .current
                    return context.text(.staffRescheduled, String(moved.id ?? 0),
                                        DateText.dateTime(moved.startsAt, timeZone: zone, language: context.language), moved.doctorName)
                }
            }
        }
    }

    struct Actions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What you may do to an appointment of your clinic now (the rule the pages offer buttons by).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "Appointment id.") var appointmentId: Int64

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let actions = try await system.staff.actions(member, appointmentId: appointmentId)
                struct Offered: Encodable { let appointmentId: Int64; let actions: [String] }
                try context.emit(Offered(appointmentId: appointmentId, actions: actions)) {
                    actions.isEmpty ? context.text(.staffActionsNone, String(appointmentId))
                        : context.text(.staffActionsLine, String(appointmentId), actions.joined(separator: ", "))
                }
            }
        }
    }

    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Log in as staff; the session is kept in the staff session file.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "Your staff login.") var login: String
        @Flag(help: "Read the password from the first line of standard input.") var passwordStdin = false

        func run() async throws {
            let context = Context(global)
            let password = try context.password(fromStdin: passwordStdin)
            let system = try await context.awaitedSystem()
            let (member, token) = try await system.staff.logIn(login: login, password: password, passwords: InlinePasswordRunner())
            do {
                try context.staffSessionFile.write(token)
            } catch {
                _ = try? await system.staff.logOut(token: token)
                throw error
            }
            try context.emit(StaffJSON(member)) {
                context.text(.staffLoggedIn, member.name, member.surname, member.role.rawValue, String(member.clinicId))
            }
        }
    }

    struct Logout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End the staff session, here and in the database.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = Context(global)
            if let token = try context.staffSessionFile.read() {
                let system = try await context.awaitedSystem()
                try await system.staff.logOut(token: token)
            }
            context.staffSessionFile.delete()
            try context.emit(ChangedJSON(changed: true)) { context.text(.staffLoggedOut) }
        }
    }

    struct Whoami: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The signed-in staff account.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                try context.emit(StaffJSON(member)) {
                    context.text(.staffWhoami, member.name, member.surname, member.login, member.role.rawValue, String(member.clinicId))
                }
            }
        }
    }

    struct Schedule: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The clinic's appointments of a day (the clinic's local day; default today), with patients' names.",
            discussion: "Each patient shown is recorded in the audit trail; the patient sees it in clinic profile access-log.")

        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("The clinic's local date, YYYY-MM-DD.", valueName: "day")) var date: String?
        @Option(help: "Only this department.") var department: Int64?
        @Option(help: "Only this doctor.") var doctor: Int64?

        func run() async throws {
            let context = Context(global)
            let day = try date.map(TimeInput.parseDay)
            try await context.awaitedAsStaff { system, member in
                let (shown, zone, entries) = try await system.staff.schedule(member, day: day, departmentId: department, doctorId: doctor)
                try context.emit(entries.map(DayEntryJSON.init)) {
                    var lines = [context.text(.staffDayHeader, shown.dayText, String(member.clinicId), zone.identifier)]
                    if entries.isEmpty { lines.append(context.text(.staffDayEmpty)) }
                    for entry in entries {
                        let time = DateText.time(entry.appointment.startsAt, timeZone: zone, language: context.language)
                        lines.append(context.text(.staffDayLine, time, String(entry.appointment.id ?? 0), entry.appointment.status.text(context.language),
                                                  entry.appointment.doctorName, entry.patientName ?? "—"))
                    }
                    return lines.joined(separator: "\n")
                }
            }
        }
    }

    struct Calendar: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The clinic's doctors side by side for 1 to 7 days: each doctor's free slots and appointments.",
            discussion: "Each patient shown is recorded in the audit trail; the patient sees it in clinic profile access-log.")

        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("The first local date, YYYY-MM-DD (default: today at the clinic).", valueName: "day")) var from: String?
        @Option(help: "How many days, 1 to 7.") var days: Int = 1
        @Option(help: "Only this department.") var department: Int64?
        @Option(help: "Only this doctor.") var doctor: Int64?

        func run() async throws {
            let context = Context(global)
            let day = try from.map(TimeInput.parseDay)
            try await context.awaitedAsStaff { system, member in
                let calendar = try await system.frontDeskCalendar(member, from: day, days: days, departmentId: department, doctorId: doctor,
                                                                  computing: InlinePasswordRunner())
                try context.emit(CalendarJSON(calendar)) {
                    let zone = calendar.zone
                    var lines = [context.text(.staffDayHeader, calendar.from.dayText, String(member.clinicId), zone.identifier)]
                    for column in calendar.columns {
                        lines.append(context.text(.staffCalendarDoctor, column.doctor.name, String(column.doctor.id ?? 0),
                                                  Specialization.displayName(column.department.specialization, context.language)))
                        let free = column.slots.filter(\.isAvailable).map {
                            DateText.dateTime($0.start, timeZone: zone, language: context.language)
                        }
                        lines.append(context.text(.staffCalendarFree, String(free.count), free.prefix(6).joined(separator: ", ")))
                        for entry in column.entries {
                            let time = DateText.dateTime(entry.appointment.startsAt, timeZone: zone, language: context.language)
                            lines.append(context.text(.staffDayLine, time, String(entry.appointment.id ?? 0),
                                                      entry.appointment.status.text(context.language), entry.appointment.doctorName, entry.patientName ?? "—"))
                        }
                    }
                    return lines.joined(separator: "\n")
                }
            }
        }
    }

    struct Patients: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find your clinic's patients by the start of a name, surname, e-mail address or login.",
            discussion: "Each word must start one of the patient's words (\"smi\" finds Smith). Only patients with an appointment at your clinic are found. Each patient shown is recorded in the audit trail; the patient sees it in clinic profile access-log.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "1 to 4 words of at least 2 letters or digits.") var query: [String]

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let found = try await system.staff.findPatients(member, query: query.joined(separator: " "))
                try context.emit(PatientMatchesJSON(found)) {
                    guard !found.isEmpty else { return context.text(.staffPatientsNone) }
                    return found.map {
                        context.text(.staffPatientLine, String($0.id), $0.surname, $0.name, $0.login ?? "—", $0.email ?? "—")
                    }.joined(separator: "\n")
                }
            }
        }
    }

    struct RegisterPatient: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "register-patient",
            abstract: "Register a walk-in or phone patient who has no online account (receptionists, clinic admins).",
            discussion: "The patient is your clinic's from then on: found with staff patients, booked with staff book --patient-id. Give them a code with staff claim-code to set up their online account.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "First name.") var name: String
        @Option(help: "Surname.") var surname: String
        @Option(help: ArgumentHelp("Date of birth, YYYY-MM-DD.", valueName: "date")) var birthDate: String
        @Option(help: "Phone number: 7 to 15 digits.") var phone: String
        @Option(help: "E-mail address, if they have one.") var email: String?

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let patient = try await system.staff.registerWalkIn(member, WalkInRequest(
                    name: name, surname: surname, birthDate: birthDate, phone: phone, email: email, language: context.language))
                try context.emit(PatientMatchesJSON.Item(patient)) {
                    context.text(.staffWalkInRegistered, patient.name, patient.surname, String(patient.id))
                }
            }
        }
    }

    struct ClaimCodeCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "claim-code",
            abstract: "A one-time code with which a walk-in patient of your clinic sets up their online account (7 days).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The patient's id.") var patientId: Int64

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let code = try await system.staff.claimCode(member, patientId: patientId)
                try context.emit(ClaimCodeJSON(code)) {
                    context.text(.staffClaimCode, String(code.patientId), code.code,
                                 DateText.dateTimeWithZone(code.expiresAt, timeZone: code.zone, language: context.language))
                }
            }
        }
    }

    struct AppointmentAction: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "appointment",
            abstract: "check-in (on the visit's day), undo-check-in, start, complete, no-show or cancel (with --reason) an appointment of your clinic.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "check-in, undo-check-in, start, complete, no-show or cancel.") var action: StaffAction
        @Argument(help: "Appointment id.") var appointmentId: Int64
        @Option(help: "Why the clinic cancels (required with cancel; the patient is told).") var reason: String?

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let appointment = try await system.staff.act(member, action, appointmentId: appointmentId, reason: reason)
                try context.emit(AppointmentJSON(appointment)) {
                    // The status as the screens name it ("checked in"), in the language; --json has the code.
                    context.text(.staffActed, String(appointment.id ?? 0), appointment.status.text(context.language))
                }
            }
        }
    }

    struct Accounts: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Your clinic's staff accounts (clinic admins): list, add, disable.",
            subcommands: [List.self, Add.self, Disable.self], defaultSubcommand: List.self)

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Your clinic's staff accounts.")
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let accounts = try await system.staff.accounts(clinicId: member.clinicId, by: member)
                    try context.emit(accounts.map(StaffJSON.init)) {
                        accounts.map { account in
                            context.text(.staffAccountLine, String(account.id), account.login, account.name, account.surname,
                                         account.role.rawValue + (account.doctorId.map { " (doctor \($0))" } ?? ""),
                                         account.isActive ? "" : "  (disabled)")
                        }.joined(separator: "\n")
                    }
                }
            }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Add an account to your clinic.")
            @OptionGroup var global: GlobalOptions
            @OptionGroup var account: StaffAccountOptions

            func run() async throws {
                let context = Context(global)
                let password = try context.password(fromStdin: account.passwordStdin, confirm: true)
                try await context.awaitedAsStaff { system, member in
                    let added = try await system.staff.addStaff(StaffInput(
                        login: account.login, name: account.name, surname: account.surname, role: account.role,
                        clinicId: member.clinicId, doctorId: account.doctor, password: password), by: member,
                        passwords: InlinePasswordRunner())
                    try context.emit(StaffJSON(added)) {
                        context.text(.staffAdded, added.login, added.role.rawValue, String(added.clinicId))
                    }
                }
            }
        }

        struct Disable: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Disable an account of your clinic and end its sessions.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The account's id.") var id: Int64

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let disabled = try await system.staff.disable(id, by: member)
                    try context.emit(StaffJSON(disabled)) { context.text(.staffDisabled, disabled.login) }
                }
            }
        }
    }
}

/// `clinic visit-types DEPARTMENT_ID`: what a department offers to book.
struct VisitTypesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "visit-types",
        abstract: "A department's visit types (use the id with slots and book --visit-type); none: it books single slots.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Department id.") var departmentId: Int64

    func run() async throws {
        let context = Context(global)
        let system = try await context.awaitedSystem()
        let types = try await system.departments.visitTypes(departmentId: departmentId)
        try context.emit(types.map { VisitTypeJSON($0, language: context.language) }) {
            types.isEmpty ? context.text(.visitTypesNone) : visitTypeLines(types, context)
        }
    }
}

/// "id  name  N min  price" lines.
func visitTypeLines(_ types: [VisitType], _ context: Context) -> String {
    types.map { type in
        let price = type.priceCents.map { String(format: "  %d.%02d", $0 / 100, $0 % 100) } ?? ""
        return context.text(.visitTypeLine, String(type.id), type.name(context.language), String(type.durationMinutes),
                            price + (type.isActive ? "" : "  (removed)"))
    }.joined(separator: "\n")
}

/// A month's report as tables: departments, doctors, then the clinic in all.
func reportTable(_ report: MonthReport, _ context: Context) -> String {
    func percent(_ value: Double?) -> String { value.map { String(format: "%.0f%%", $0 * 100) } ?? "—" }
    let header = [context.text(.reportName), context.text(.reportBooked), context.text(.reportCompleted), context.text(.reportNoShows),
                  context.text(.reportCancelled), context.text(.reportLate), context.text(.reportByClinic),
                  context.text(.reportRefilled)]
    func lines(_ rows: [ReportRow]) -> [[String]] {
        rows.map { row in
            [row.scope == .total ? context.text(.reportTotal) : row.label(context.language),
             String(row.booked), String(row.completed), "\(row.noShows) (\(percent(row.noShowShare)))", String(row.cancelled),
             String(row.cancelledLate), String(row.cancelledByClinic), "\(row.refilled)/\(row.freed) (\(percent(row.refilledShare)))"]
        }
    }
    return [context.text(.reportTitle, report.clinicName, String(format: "%04d-%02d", report.year, report.month), report.timeZone),
            Output.table(header, lines(report.byDepartment) + lines(report.byDoctor) + lines([report.total]), flexible: [0])]
        .joined(separator: "\n")
}
