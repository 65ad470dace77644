import ArgumentParser
import ClinicKit
import ClinicStoreCopy
import ClinicStoreSQLite
import ClinicStorePostgres
import Foundation

extension Admin {
    /// `admin copy`: a whole SQLite database into an empty PostgreSQL one, or back into a new
    /// file (StoreCopy; docs/CLI.md).
    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the whole database into an empty PostgreSQL database (--to postgresql://…), or one back into a new SQLite file (--from postgresql://… --to FILE).",
            discussion: """
                All or nothing: the source is read as one consistent snapshot (a live SQLite database may keep \
                being written), the target written in one transaction, every table's count compared before it \
                commits; a failure leaves the target as it was (no file behind). Ids, sealed personal data and \
                the audit chain are copied as they are: give the target the same key files (<database>.key, \
                <database>.audit-key).
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("The source (default: --db / CLINIC_DB).", valueName: "url-or-file")) var from: String?
        @Option(help: ArgumentHelp("The target: an empty PostgreSQL database migrated to the latest schema, or a new SQLite file.",
                                   valueName: "url-or-file")) var to: String

        func run() throws {
            let context = Context(global)
            let sourceText = from ?? context.databasePath
            let source = try StoreLocation.parse(sourceText)
            let target = try StoreLocation.parse(to)
            let resources = try Resources.locate(environment: context.environment)
            let counts: [StoreCopy.TableCount]
            let fromName: String, toName: String
            switch (source, target) {
            case (.sqlite(let path), .postgres(let url)):
                (fromName, toName) = (path, url.redacted)
                guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber,
                      size.intValue > 0 else {
                    throw ClinicError(.notFound, .copySourceMissing, path)
                }
                let migrations = try Migration.load(from: resources.migrations)
                // Not migrated here: a copy reads its source and never changes it.
                let database = try SQLiteStore.open(path: path, migrations: migrations, migrate: false)
                let sourceKeys = [database.personalDataKey.filePath, database.auditKeys.filePath]
                counts = try PostgresAdmin.run(context, url) { store, postgresMigrations in
                    let pairs = Self.pairs(sourceKeys, [store.personalDataKey.filePath, store.auditKeys.filePath])
                    try checkKeys(pairs)
                    let copied = try await StoreCopy.sqliteToPostgres(source: database, target: store, migrations: postgresMigrations)
                    try carryKeys(context, pairs)
                    return copied
                }
            case (.postgres(let url), .sqlite(let path)):
                (fromName, toName) = (url.redacted, path)
                let migrations = try Migration.load(from: resources.migrations)
                counts = try PostgresAdmin.run(context, url) { store, postgresMigrations in
                    let pairs = Self.pairs([store.personalDataKey.filePath, store.auditKeys.filePath],
                                           [KeyFile(databasePath: path).path, AuditKey.path(databasePath: path)])
                    try checkKeys(pairs)
                    let copied = try await StoreCopy.postgresToSQLite(source: store, postgresMigrations: postgresMigrations,
                                                                      targetPath: path, sqliteMigrations: migrations)
                    try carryKeys(context, pairs)
                    return copied
                }
            case (.sqlite(let a), .sqlite(let b)):
                let same = URL(fileURLWithPath: a).resolvingSymlinksInPath().standardizedFileURL
                    == URL(fileURLWithPath: b).resolvingSymlinksInPath().standardizedFileURL
                if same { throw ClinicError.invalid(.copySameStore, a) }
                throw ClinicError(.storeUnsupported, .copyUnsupported, "SQLite → SQLite (a backup makes that copy)")
            case (.postgres(let a), .postgres(let b)):
                if a == b { throw ClinicError.invalid(.copySameStore, a.redacted) }
                throw ClinicError(.storeUnsupported, .copyUnsupported, "PostgreSQL → PostgreSQL (pg_dump)")
            }
            struct JSON: Encodable { let from: String; let to: String; let rows: Int; let tables: [StoreCopy.TableCount] }
            let total = counts.reduce(0) { $0 + $1.rows }
            try context.emit(JSON(from: fromName, to: toName, rows: total, tables: counts)) {
                ([context.text(.copyDone, String(total), String(counts.count), fromName, toName)]
                    + counts.map { context.text(.copyTableLine, $0.table, String($0.rows)) }).joined(separator: "\n")
            }
        }

        /// The (source, target) key files, personal data's then the audit trail's, where both have one.
        static func pairs(_ sources: [String?], _ targets: [String?]) -> [(String, String)] {
            zip(sources, targets).compactMap { source, target in source.flatMap { s in target.map { (s, $0) } } }
        }

        /// Before a copy: a target key file that holds another key refuses the copy.
        func checkKeys(_ pairs: [(String, String)]) throws {
            for (from, to) in pairs { try KeyFile.checkCarry(from: from, to: to) }
        }

        /// After a copy: the source's key files go to where the target's store looks for them.
        /// A key that cannot be written there fails the command (the copy is there, its key is
        /// not: the message says where it must go).
        func carryKeys(_ context: Context, _ pairs: [(String, String)]) throws {
            for (from, to) in pairs {
                switch try KeyFile.carry(from: from, to: to) {
                case .copied: context.terminal.note(context.text(.copyKeyCarried, from, to))
                case .differs: throw ClinicError(.keyError, .copyKeyConflict, from, to) // made meanwhile
                case .same, .noSource: break
                }
            }
        }
    }
}
