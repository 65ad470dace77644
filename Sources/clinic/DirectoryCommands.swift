import ArgumentParser
import ClinicKit
import Foundation

struct Clinics: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Browse the clinic directory.",
        subcommands: [List.self, Show.self, Nearest.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List clinics, by name.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "Only clinics in this city (case- and accent-insensitive).") var city: String?
        @Flag(help: "Only pediatric clinics.") var pediatric = false
        @Flag(help: "Only hospitals.") var hospital = false
        @Option(help: "At most this many clinics (default 50).") var limit: Int = 50

        func run() async throws {
            let context = Context(global)
            guard limit >= 1 else { throw ClinicError.invalid(.limitRange, String(limit)) }
            let system = try await context.awaitedSystem()
            let clinics = try await system.clinics.getAllClinics(
                ClinicFilter(city: city, pediatricOnly: pediatric, hospitalOnly: hospital, limit: limit))
            try context.emit(clinics.map(ClinicJSON.init)) {
                guard !clinics.isEmpty else { return context.text(.noClinics) }
                return Output.table(
                    [context.text(.headerId), context.text(.headerName), context.text(.headerCity),
                     context.text(.headerKind), context.text(.headerTimeZone)],
                    clinics.map { [String($0.id ?? 0), $0.name, $0.city, kind($0, context), $0.timeZone] })
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one clinic with its departments.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "Clinic id.") var id: Int64

        func run() async throws {
            let context = Context(global)
            let system = try await context.awaitedSystem()
            let (clinic, departments) = try await system.clinics.clinicWithDepartments(id)
            let json = ClinicDetailJSON(clinic, departments: departments, language: context.language)
            try context.emit(json) {
                var lines = [clinic.name]
                let place = [clinic.address, clinic.city, clinic.state, clinic.zip].filter { !$0.isEmpty }
                lines.append(place.joined(separator: ", "))
                if !clinic.description.isEmpty { lines.append(clinic.description) }
                lines.append(String(format: "%.5f, %.5f · %@", clinic.lat, clinic.lon, clinic.timeZone))
                if !clinic.phone.isEmpty { lines.append(clinic.phone) }
                if !clinic.website.isEmpty { lines.append(clinic.website) }
                lines.append("")
                lines.append(departmentTable(departments, context))
                return lines.joined(separator: "\n")
            }
        }
    }
}

struct Departments: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the departments of a clinic.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Clinic id.") var clinicId: Int64

    func run() async throws {
        let context = Context(global)
        let system = try await context.awaitedSystem()
        let departments = try await system.clinics.clinicWithDepartments(clinicId).departments
        try context.emit(departments.map { departmentJSON($0, context) }) { departmentTable(departments, context) }
    }
}

struct Doctors: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the doctors of a department with their working hours (clinic's local time).")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Department id.") var departmentId: Int64

    func run() async throws {
        let context = Context(global)
        let system = try await context.awaitedSystem()
        let listed = try await system.departments.doctorsWithHours(departmentId: departmentId)
        let (doctors, hours) = (listed.map(\.doctor), listed.map(\.hours))
        let json = zip(doctors, hours).map { DoctorJSON($0, hours: $1) }
        try context.emit(json) {
            guard !doctors.isEmpty else { return context.text(.noDoctors) }
            let names = context.text(.weekdays).split(separator: ",").map(String.init)
            return Output.table(
                [context.text(.headerId), context.text(.headerDoctor), context.text(.headerHours)],
                zip(doctors, hours).map { doctor, hours in
                    // "Mon–Fri 08:00–12:00 and 13:00–17:00 (20 min)": days alike said once.
                    let text = HoursText.compact(hours, weekdays: names, and: context.text(.hoursAnd),
                                                 minutes: context.text(.minutesUnit))
                    return [String(doctor.id ?? 0), doctor.name, text]
                })
        }
    }
}

func kind(_ clinic: Clinic, _ context: Context) -> String {
    var parts: [String] = []
    if clinic.isHospital { parts.append(context.text(.kindHospital)) }
    if clinic.isPediatric { parts.append(context.text(.kindPediatric)) }
    return parts.isEmpty ? context.text(.kindClinic) : parts.joined(separator: ", ")
}

func departmentJSON(_ department: Department, _ context: Context) -> DepartmentJSON {
    DepartmentJSON(department, language: context.language)
}

func departmentTable(_ departments: [Department], _ context: Context) -> String {
    guard !departments.isEmpty else { return context.text(.noDepartments) }
    var text = Output.table(
        [context.text(.headerId), context.text(.headerSpecialization)],
        departments.map { [String($0.id ?? 0), Specialization.displayName($0.specialization, context.language)] })
    if departments.contains(where: \.isDemo) { text += "\n" + context.text(.demoNote) }
    return text
}
