import ArgumentParser
import ClinicKit
import ClinicStoreSQLite
import Foundation

extension Admin {
    struct Backup: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a consistent copy of the database to FILE (other processes may keep writing).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The new backup file (must not exist).") var file: String

        func run() throws {
            let context = Context(global)
            let system = try context.system(initialize: false)
            let version = try system.backup(to: file)
            struct JSON: Encodable { let path: String; let version: Int }
            try context.emit(JSON(path: file, version: version)) { context.text(.backupDone, file, String(version)) }
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the database with a backup, after checking it; the replaced one is kept aside.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The backup file.") var file: String

        func run() throws {
            let context = Context(global)
            // Not migrated first (nor backed up automatically): the database being replaced may
            // have a changed or unknown migration. The restored one is migrated.
            let system = try context.system(migrate: false, initialize: false)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyyMMdd-HHmmss-SSS"
            var aside = context.databasePath + ".replaced-" + formatter.string(from: Date())
            if FileManager.default.fileExists(atPath: aside) { aside += "-" + UUID().uuidString.prefix(8) }
            let version = try system.restore(from: file, keepingAside: aside)
            struct JSON: Encodable { let restored: String; let replacedKeptAt: String; let version: Int }
            try context.emit(JSON(restored: file, replacedKeptAt: aside, version: version)) {
                context.text(.restoreDone, file, aside)
            }
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check integrity, foreign keys, the schema against its migrations, and the key file; always reports.")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let context = Context(global)
            if case .postgres(let url) = try context.storeLocation() { return try PostgresAdmin.check(context, url) }
            // Not through `context.system()`: a database too damaged to open still gets its report.
            let resources = try Resources.locate(environment: context.environment)
            let report = SQLiteStore.check(path: context.databasePath, migrations: try Migration.load(from: resources.migrations))
            let key = report.keyProblem.map { $0.message(in: context.language) }
            let auditKey = report.auditKeyProblem.map { $0.message(in: context.language) }
            struct JSON: Encodable {
                let integrity: [String]; let foreignKeyViolations: Int; let schema: [String]; let version: Int?
                let key: String; let ok: Bool; let zoneChanges: [ZoneChangeJSON]; let audit: [String]; let auditKey: String
                let auditNote: String?
            }
            try context.emit(JSON(integrity: report.integrity, foreignKeyViolations: report.foreignKeyViolations,
                                  schema: report.schema, version: report.version, key: key ?? "ok", ok: report.isSound,
                                  zoneChanges: report.zoneChanges.map(ZoneChangeJSON.init), audit: report.audit,
                                  auditKey: auditKey ?? "ok", auditNote: report.auditNote?.message(in: context.language))) {
                var lines: [String]
                if report.isSound {
                    lines = [context.text(.checkOk)]
                } else if report.isUnverifiedOnly, let auditKey {
                    // Neither sound nor broken: said as such, not as "problems".
                    lines = [context.text(.checkAuditUnverified, auditKey)]
                } else {
                    lines = [context.text(.checkFailed, report.summary)]
                    if report.integrity != ["ok"] { lines += report.integrity.map { "  integrity: " + $0 } }
                    if report.foreignKeyViolations > 0 { lines.append("  foreign keys: \(report.foreignKeyViolations) violations") }
                    lines += report.schema.map { "  schema: " + $0 }
                    if let key { lines.append("  key: " + key) }
                    lines += report.audit.map { "  audit: " + $0 }
                    if let auditKey { lines.append("  audit key: " + auditKey) }
                }
                if let note = report.auditNote { lines.append(note.message(in: context.language)) }
                if !report.zoneChanges.isEmpty { lines += zoneChangeLines(report.zoneChanges, context) }
                return lines.joined(separator: "\n")
            }
            if !report.isSound { throw ExitCode(ClinicError.Code.storage.exitStatus) }
        }
    }
}

extension Admin {
    struct RotateKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Re-encrypt all patients' personal data under a new key (one transaction), replacing the key file.")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let context = Context(global)
            let system = try context.system(initialize: false)
            let count = try system.rotateKey()
            let keyPath = KeyFile(databasePath: context.databasePath).path
            struct JSON: Encodable { let reencrypted: Int; let keyFile: String }
            try context.emit(JSON(reencrypted: count, keyFile: keyPath)) {
                context.text(.keyRotated, Noun.patient.count(count, context.language), keyPath)
            }
        }
    }
}

/// The note on zone changes and one line per appointment: the local time the patient was
/// shown (old zone) and the local time it is (new zone), for staff to tell the patient.
func zoneChangeLines(_ changes: [ZoneChangedAppointment], _ context: Context) -> [String] {
    [context.text(.zoneChangesHeading, Noun.appointment.count(changes.count, context.language))] + changes.map { change in
        let old = TimeZone(identifier: change.oldZone) ?? .gmt, new = TimeZone(identifier: change.newZone) ?? .gmt
        return "  " + context.text(.zoneChangeLine, String(change.appointmentId), change.clinicName, String(change.clinicId),
                                   DateText.dateTime(change.start, timeZone: old, language: context.language), change.oldZone,
                                   DateText.dateTime(change.start, timeZone: new, language: context.language), change.newZone)
    }
}
