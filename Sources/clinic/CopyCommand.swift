import ArgumentParser
import ClinicKit
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
                let database = try DatabaseManager.open(path: path, migrations: migrations, migrate: false)
                counts = try PostgresAdmin.run(context, url) { store, postgresMigrations in
                    try await StoreCopy.sqliteToPostgres(source: database, target: store, migrations: postgresMigrations)
                }
            case (.postgres(let url), .sqlite(let path)):
                (fromName, toName) = (url.redacted, path)
                let migrations = try Migration.load(from: resources.migrations)
                counts = try PostgresAdmin.run(context, url) { store, postgresMigrations in
                    try await StoreCopy.postgresToSQLite(source: store, postgresMigrations: postgresMigrations, targetPath: path,
                                                         sqliteMigrations: migrations)
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
    }
}
