import ArgumentParser
import ClinicKit
import Foundation

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the database and fill it with the default directory.",
        discussion: "Any other command does this on first use; init lets you choose an empty directory or no demo data.")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Create an empty directory (import your own with: clinic admin import-clinics).") var empty = false
    @Flag(help: "Load the default clinics without demo departments, doctors and hours.") var noDemo = false

    func run() throws {
        let context = Context(global)
        let system = try context.system(initialize: false)
        let already = try system.initialization() != nil
        if !already {
            let kind: ClinicSystem.Initialization = empty ? .empty : (noDemo ? .clinicsOnly : .defaultDirectory)
            try context.withProgress { progress in try system.initialize(kind, progress: progress) }
        }
        let count = try system.clinics.count()
        struct Result: Encodable { let path: String; let clinics: Int; let created: Bool }
        try context.emit(Result(path: context.databasePath, clinics: count, created: !already)) {
            context.text(already ? .initAlready : .initDone, context.databasePath, String(count))
        }
    }
}

struct Admin: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Operator and clinic-staff commands: migrations, the directory, statuses, hours, booking rules, backups.",
        subcommands: [Migrate.self, ImportClinics.self, AppointmentAdmin.self, Exceptions.self, Settings.self,
                      Backup.self, Restore.self, Copy.self, Check.self, RotateKey.self, Audit.self, StaffAdmin.self, Deliver.self,
                      AttachmentsAdmin.self])

    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move the schema up or down to a version (default: the latest).")

        @OptionGroup var global: GlobalOptions
        @Option(help: "Target version (0 removes every table but the migration record).") var to: Int?

        func run() throws {
            let context = Context(global)
            struct Result: Encodable { let version: Int; let ran: [Int] }
            let ran: [Int], version: Int
            if case .postgres(let url) = try context.storeLocation() {
                (ran, version) = try PostgresAdmin.run(context, url) { [to] store, migrations in
                    let ran = try await store.migrate(migrations, to: to)
                    return (ran, try await store.schemaStatus(migrations).current)
                }
            } else {
                let system = try context.system(migrate: false, initialize: false)
                ran = try system.migrate(to: to)
                version = try system.schemaVersion()
            }
            try context.emit(Result(version: version, ran: ran)) {
                ran.isEmpty ? context.text(.migrateNothing, String(version))
                    : context.text(.migrated, String(version), ran.map(String.init).joined(separator: ", "))
            }
        }
    }

    struct ImportClinics: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import-clinics",
            abstract: "Import a clinic directory file (CSV, see docs/DATA.md): all or nothing, by external id.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The CSV file.") var file: String
        @Option(help: "The file's format: project (docs/DATA.md) or hifld (HIFLD Hospitals as published; CLOSED rows are skipped).")
        var format: ClinicDirectory.Format = .project
        @Flag(help: "Import the valid rows and report the others.") var skipInvalid = false
        @Flag(help: "Give every clinic that has no departments (imported now or before) the demo departments, doctors and hours.")
        var demo = false

        func run() throws {
            let context = Context(global)
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ClinicError.invalid(.fileUnreadable, file)
            }
            let system = try context.system(initialize: false)
            let report = try context.withProgress { progress in
                try system.importDirectory(data, format: format, skipInvalid: skipInvalid, demo: demo, progress: progress)
            }
            struct Result: Encodable {
                struct Skipped: Encodable { let line: Int; let reason: String }
                let inserted: Int; let updated: Int; let skipped: [Skipped]; let closed: Int
            }
            let skipped = report.skipped.map {
                Result.Skipped(line: $0.line, reason: Strings.text($0.key, context.language, $0.arguments))
            }
            try context.emit(Result(inserted: report.inserted, updated: report.updated, skipped: skipped, closed: report.closed)) {
                var lines = [context.text(.importDone, String(report.inserted), String(report.updated), String(skipped.count))]
                if !skipped.isEmpty {
                    lines.append(context.text(.importSkipped))
                    lines += skipped.map { "  " + context.text(.importProblem, String($0.line), $0.reason) }
                }
                return lines.joined(separator: "\n")
            }
        }
    }
}

extension ClinicDirectory.Format: ExpressibleByArgument {}

extension Admin {
    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The audit trail: who on the clinic side read or changed what (see docs/SECURITY.md).",
            subcommands: [Export.self])

        struct Export: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print the audit events from a date on, oldest first, with their chain hashes: one JSON object a line (--json: one array).")

            @OptionGroup var global: GlobalOptions
            @Option(help: ArgumentHelp("From this UTC day (YYYY-MM-DD) or instant (ISO 8601); default: the beginning.",
                                       valueName: "time")) var since: String?

            func run() async throws {
                let context = Context(global)
                var start = Date(timeIntervalSince1970: 0)
                let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
                if let since {
                    if since.count == 10, let day = try? TimeInput.parseDay(since), let midnight = day.firstInstant(in: utc) {
                        start = midnight
                    } else {
                        start = try TimeInput.resolve(TimeInput.parse(since), in: utc)
                    }
                }
                let system = try await context.awaitedSystem()
                let read = try await system.auditExport(since: start)
                let events = read.entries.map(AuditEventJSON.init)
                // A row edited in the file (text where a number belongs) is named on stderr and
                // left out; the others are still exported, and the command then fails.
                if !context.json {
                    for row in read.unreadable { context.terminal.note(row.error.message(in: context.language)) }
                }
                if context.json {
                    try Output.printJSON(events)
                } else {
                    let encoder = Shapes.encoder(pretty: false)
                    for event in events {
                        print(String(decoding: try encoder.encode(event), as: UTF8.self))
                    }
                    if events.isEmpty && read.unreadable.isEmpty {
                        context.terminal.note(context.text(.auditExportNone, DateText.iso8601(start)))
                    }
                }
                if !read.unreadable.isEmpty {
                    throw ClinicError(.storage, .auditRowsUnreadable, String(read.unreadable.count),
                                      read.unreadable.map { $0.id.map(String.init) ?? "?" }.joined(separator: ", "))
                }
            }
        }
    }
}
