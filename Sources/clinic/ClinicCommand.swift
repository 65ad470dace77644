import ArgumentParser
import ClinicKit

struct ClinicCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clinic",
        abstract: "Find the nearest clinic and book, reschedule or cancel appointments.",
        discussion: """
            With no command on a terminal, clinic starts the interactive session (clinic shell). \
            The database is created and filled with the default directory (7,146 U.S. hospitals \
            with demo departments) on first use. See docs/CLI.md.
            """,
        version: "0.1.0",
        subcommands: [
            Init.self, Register.self, Claim.self, Login.self, Logout.self, Whoami.self, Profile.self,
            Clinics.self, Departments.self, Doctors.self, VisitTypesCommand.self, Geocode.self,
            Slots.self, Book.self, AppointmentsCommand.self, Reschedule.self, Cancel.self, Find.self, WaitlistCommand.self,
            Messages.self, Privacy.self, Shell.self, Admin.self, StaffCommand.self, Serve.self,
        ])
}

extension Language: ExpressibleByArgument {}
