import ArgumentParser
import ClinicKit
import ClinicStorePostgres
import Dispatch
import Foundation
import Logging

/// Opening the PostgreSQL store for the command line: for one operation of the store's own
/// (`admin migrate`, `admin check`, `admin copy`: `run`), or for the domain's commands and the
/// server (`open`, through `Context.system`).
enum PostgresAdmin {
    /// Opens the store, runs `body` with the PostgreSQL migrations, and shuts the pool down.
    /// The command line's main thread waits for it (it is not a thread of the cooperative pool
    /// or an event loop, so blocking it takes nothing from them).
    static func run<T: Sendable>(_ context: Context, _ url: PostgresURL,
                                 _ body: @escaping @Sendable (PostgresStore, [Migration]) async throws -> T) throws -> T {
        let resources = try Resources.locate(environment: context.environment)
        let store = try open(context, url, resources: resources, connections: 2, migrate: false)
        return try wait {
            do {
                let value = try await body(store, store.migrations)
                await store.shutdown()
                return value
            } catch {
                await store.shutdown()
                throw error
            }
        }.get()
    }

    /// The store for the domain's commands and the server: opened for the whole process (its
    /// pool lives until the process ends), the schema migrated first when `migrate`.
    static func open(_ context: Context, _ url: PostgresURL, resources: Resources, connections: Int,
                     migrate: Bool) throws -> PostgresStore {
        try wait { try await opened(context, url, resources: resources, connections: connections, migrate: migrate) }.get()
    }

    /// `open` awaited: what an awaited command opens its store with.
    static func opened(_ context: Context, _ url: PostgresURL, resources: Resources, connections: Int,
                       migrate: Bool) async throws -> PostgresStore {
        let migrations = try Migration.load(from: PostgresStore.migrationsFolder(resources))
        let warnings = Warnings()
        // Said whether the opening succeeded or not (a setting's warning may be why it did not).
        defer { for warning in warnings.all { context.terminal.note(warning.message(in: context.language)) } }
        var logger = Logger(label: "clinic.postgres")
        logger.logLevel = .critical
        let store = try await PostgresStore.open(url, environment: context.environment, logger: logger, maximumConnections: connections,
                                                 migrations: migrations, warn: warnings.add)
        do {
            if migrate { _ = try await store.migrate(migrations) }
            return store
        } catch {
            await store.shutdown()
            throw error
        }
    }

    /// `admin check` on PostgreSQL: the migrations and the schema objects they make, then the
    /// audit trail against its key file (the store's key files, `PostgresStoreKeys`).
    static func check(_ context: Context, _ url: PostgresURL) throws {
        let resources = try Resources.locate(environment: context.environment)
        let store = try open(context, url, resources: resources, connections: 2, migrate: false)
        defer { _ = wait { await store.shutdown() } }
        let report = try wait { try await store.check(store.migrations) }.get()
        var audit: [String] = []
        let auditKey = store.auditKeys.location
        if report.problems.isEmpty {
            // Blocking transactions: on this thread, never inside the async work above.
            let result = try ClinicSystem(store: store, resources: resources).auditCheck()
            if let problem = result.problem { audit.append(problem.message(in: context.language)) }
            audit += result.broken
            if let note = result.note { context.terminal.note(note.message(in: context.language)) }
        }
        struct JSON: Encodable {
            let store: String; let version: Int; let latest: Int; let schema: [String]; let audit: [String]; let ok: Bool
        }
        let ok = report.problems.isEmpty && audit.isEmpty
        try context.emit(JSON(store: url.redacted, version: report.version, latest: report.latest, schema: report.problems,
                              audit: audit, ok: ok)) {
            if ok {
                return context.text(.checkPostgresOk, String(report.version)) + "\n" + context.text(.checkPostgresAuditOk, auditKey)
            }
            return ([context.text(.checkFailed, report.problems.isEmpty ? "audit" : "schema")]
                + report.problems.map { "  schema: " + $0 } + audit.map { "  audit: " + $0 }).joined(separator: "\n")
        }
        if !ok { throw ExitCode(ClinicError.Code.storage.exitStatus) }
    }

    /// Runs async work to its end from a synchronous caller that may block (`AsyncEdge.wait`).
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        Result { try AsyncEdge.wait(work) }
    }
}

private final class Warnings: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [ClinicError] = []
    func add(_ warning: ClinicError) { lock.withLock { list.append(warning) } }
    var all: [ClinicError] { lock.withLock { list } }
}
