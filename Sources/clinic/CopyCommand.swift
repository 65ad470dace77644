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
                let (copied, keys) = try PostgresAdmin.run(context, url) { store, postgresMigrations in
                    (try await StoreCopy.sqliteToPostgres(source: database, target: store, migrations: postgresMigrations),
                     PostgresStoreKeys.locate(environment: context.environment, database: store.database))
                }
                counts = copied
                carryKeys(context, [(path + ".key", keys.personal), (path + ".audit-key", keys.audit)])
            case (.postgres(let url), .sqlite(let path)):
                (fromName, toName) = (url.redacted, path)
                let migrations = try Migration.load(from: resources.migrations)
                let (copied, keys) = try PostgresAdmin.run(context, url) { store, postgresMigrations in
                    (try await StoreCopy.postgresToSQLite(source: store, postgresMigrations: postgresMigrations, targetPath: path,
                                                          sqliteMigrations: migrations),
                     PostgresStoreKeys.locate(environment: context.environment, database: store.database))
                }
                counts = copied
                carryKeys(context, [(keys.personal, path + ".key"), (keys.audit, path + ".audit-key")])
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

        /// After a copy: the source's key files go to where the target's store looks for them
        /// (never over a key the target has: a different one is warned about).
        func carryKeys(_ context: Context, _ pairs: [(from: String, to: String)]) {
            for pair in pairs {
                do {
                    switch try KeyFile.carry(from: pair.from, to: pair.to) {
                    case .copied: context.terminal.note(context.text(.copyKeyCarried, pair.from, pair.to))
                    case .differs: context.terminal.note(context.text(.copyKeyDiffers, pair.from, pair.to))
                    case .same, .noSource: break
                    }
                } catch let error as ClinicError {
                    context.terminal.note(error.message(in: context.language))
                } catch {
                    context.terminal.note(String(describing: error))
                }
            }
        }
    }
}
