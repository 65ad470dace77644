import ClinicKit
import ClinicStorePostgres
import Foundation
import Logging
import PostgresNIO

/// The test process's own PostgreSQL 15: started by scripts/postgres.sh the first time a test
/// asks for it, once per process, and stopped (its folder removed) when the process exits.
/// If it cannot be started, every test that needs it fails with the reason: never skipped.
public enum TestPostgres {
    public struct Server: Sendable {
        public let folder: String
        public let password: String
        /// postgresql://clinic_test@/clinic_test?host=<folder>/socket
        public let url: PostgresURL
        /// What a store or a `clinic` run needs: the password, and a HOME without a .pgpass.
        public var environment: [String: String] { ["PGPASSWORD": password, "HOME": folder + "/home"] }

        /// The TCP port (TLS only) and the CA of the server's certificate (made for "localhost").
        public var port: Int { url.port }
        public var caFile: String { folder + "/tls/ca.pem" }

        /// The URL of another database on this server.
        public func url(database: String) -> PostgresURL {
            var url = self.url
            url.database = database
            return url
        }
    }

    public static let projectRoot: URL = {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { root = root.deletingLastPathComponent() }
        return root
    }()

    /// The one server of this process (started on first use).
    public static func server() throws -> Server {
        switch started {
        case .success(let server): return server
        case .failure(let error): throw error
        }
    }

    public struct StartFailed: Error, CustomStringConvertible {
        public let description: String
    }

    private static let started: Result<Server, StartFailed> = {
        // Short: a Unix socket's path is at most 107 bytes.
        let folder = "/tmp/clinic-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let script = projectRoot.appendingPathComponent("scripts/postgres.sh").path
        let (status, output) = run(["/bin/bash", script, "start", folder])
        guard status == 0 else {
            _ = run(["/bin/bash", script, "stop", folder])
            return .failure(StartFailed(description: "PostgreSQL for the tests could not be started (scripts/postgres.sh start, exit \(status); is postgresql-15 installed? scripts/env.sh installs it): \(output)"))
        }
        stopFolder.set(folder)
        atexit { TestPostgres.stop() }
        guard let password = try? String(contentsOfFile: folder + "/password", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines),
              let url = try? PostgresURL(parsing: output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            return .failure(StartFailed(description: "scripts/postgres.sh printed no usable URL: \(output)"))
        }
        try? FileManager.default.createDirectory(atPath: folder + "/home", withIntermediateDirectories: true)
        return .success(Server(folder: folder, password: password, url: url))
    }()

    private static let stopFolder = Box()

    public static func stop() {
        guard let folder = stopFolder.get() else { return }
        _ = run(["/bin/bash", projectRoot.appendingPathComponent("scripts/postgres.sh").path, "stop", folder])
    }

    /// Runs a command, returning its exit status and its output (stdout and stderr together,
    /// through a file: the server the script starts must not hold a pipe of ours open). Plain
    /// posix_spawn and waitpid, so that it needs no run loop.
    public static func run(_ arguments: [String], environment: [String: String]? = nil, separateErrors: Bool = false)
        -> (Int32, String) {
        let result = runSplit(arguments, environment: environment, separateErrors: separateErrors)
        return (result.status, result.output)
    }

    /// `run`, with stderr apart when `separateErrors`.
    public static func runSplit(_ arguments: [String], environment: [String: String]? = nil, separateErrors: Bool = false)
        -> (status: Int32, output: String, errors: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-pg-out-\(UUID().uuidString)").path
        let errors = output + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: errors)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if separateErrors {
            posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var envp: [UnsafeMutablePointer<CChar>?] = (environment ?? ProcessInfo.processInfo.environment)
            .map { strdup($0.key + "=" + $0.value) } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, &envp)
        guard spawned == 0 else { return (-1, "", "cannot run \(arguments[0]): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let errorText = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        // WIFEXITED/WEXITSTATUS by hand (macros do not reach Swift).
        let exited = status & 0x7f == 0
        return (exited ? (status >> 8) & 0xff : -1, text, errorText)
    }

    /// A new, empty database of its own for one test (named from a UUID: no quoting needed).
    public static func freshDatabase() async throws -> (server: Server, url: PostgresURL) {
        let server = try server()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try await PostgresStore.open(server.url, environment: server.environment, logger: logger)
        do {
            try await admin.withConnection { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
            }
        } catch {
            admin.stop()
            throw error
        }
        admin.stop()
        return (server, server.url(database: name))
    }

    /// A store on a fresh database; `body` gets it and the server; the store is shut down after.
    public static func withStore<T>(maximumConnections: Int = 8, _ body: (PostgresStore, Server) async throws -> T) async throws -> T {
        let (server, url) = try await freshDatabase()
        let store = try await PostgresStore.open(url, environment: server.environment, logger: logger,
                                                 maximumConnections: maximumConnections)
        do {
            let result = try await body(store, server)
            await store.shutdown()
            return result
        } catch {
            await store.shutdown()
            throw error
        }
    }

    /// A store on a new database at the latest schema, with key files of its own, for a
    /// synchronous caller (the ClinicKit suite's PostgreSQL run: `CLINIC_TEST_STORE=postgres`).
    /// The database is a copy of a template migrated once per process, so a test pays for a
    /// `CREATE DATABASE … TEMPLATE`, not for the migrations. Never shut down: the pool closes
    /// its idle connections itself, and the server goes with the process.
    public static func makeStore(maximumConnections: Int = 2) throws -> PostgresStore {
        let (server, url) = try makeDatabase()
        let name = url.database ?? ""
        let keys = PostgresStoreKeys(personal: server.folder + "/keys/" + name + ".key",
                                     audit: server.folder + "/keys/" + name + ".audit-key")
        let migrations = try migrations()
        return try waitFor {
            try await PostgresStore.open(url, environment: server.environment, logger: logger,
                                         maximumConnections: maximumConnections, keys: keys, migrations: migrations)
        }
    }

    /// Runs async work to its end from a synchronous test body: on the store's own executor
    /// (`StoreTaskExecutor`), never on Swift's cooperative pool, whose threads synchronous test
    /// bodies may all hold while they wait.
    public static func waitFor<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: StoreTaskExecutor.shared) {
            do { outcome.set(.success(try await work())) } catch { outcome.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        guard let result = outcome.get() else { throw ClinicError(.internalError, .internalError, "no result") }
        return try result.get()
    }

    /// Whether this run of the tests is on PostgreSQL (`CLINIC_TEST_STORE=postgres`; scripts/test.sh
    /// runs the ClinicKit and CLI suites once each way). The one place that reads the variable.
    public static let isSelected = ProcessInfo.processInfo.environment["CLINIC_TEST_STORE"] == "postgres"

    /// A new database at the latest schema (a copy of the migrated template), for a synchronous
    /// caller; nothing else is made (no store, no key files).
    public static func makeDatabase() throws -> (server: Server, url: PostgresURL) {
        let server = try server()
        let template = try template.get()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try onConnection(to: server.url) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(template)"), logger: logger)
        }
        return (server, server.url(database: name))
    }

    /// `body` on a connection to the database at `url` (a pool of one, shut down after), for a
    /// synchronous caller.
    public static func onConnection<T: Sendable>(to url: PostgresURL,
                                                 _ body: @escaping @Sendable (PostgresConnection) async throws -> T) throws -> T {
        let server = try server()
        return try waitFor {
            let store = try await PostgresStore.open(url, environment: server.environment, logger: logger, maximumConnections: 1)
            do {
                let result = try await store.withConnection(body)
                store.stop()
                return result
            } catch {
                store.stop()
                throw error
            }
        }
    }

    /// Every row of every table of the database at `url` but `excluding`, as text (each row as
    /// JSON, rows sorted): equal dumps mean those tables did not change.
    public static func dump(_ url: PostgresURL, excluding: Set<String> = []) throws -> String {
        try onConnection(to: url) { connection in
            var tables: [String] = []
            let names = try await connection.query("""
                SELECT table_name::text FROM information_schema.tables
                WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1
                """, logger: logger)
            for try await name in names.decode(String.self) where !excluding.contains(name) { tables.append(name) }
            var parts: [String] = []
            for table in tables {
                var rows: [String] = []
                let query = PostgresQuery(unsafeSQL: "SELECT row_to_json(t)::text FROM \"\(table)\" t ORDER BY 1")
                for try await row in try await connection.query(query, logger: logger).decode(String.self) { rows.append(row) }
                parts.append(table + ":" + rows.joined(separator: "\n"))
            }
            return parts.joined(separator: "\n")
        }
    }

    /// The integers of a one-column query (`count(*)` and the like) on the database at `url`.
    public static func integers(_ url: PostgresURL, _ sql: String) throws -> [Int] {
        try onConnection(to: url) { connection in
            var values: [Int] = []
            for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Int.self) {
                values.append(value)
            }
            return values
        }
    }

    /// Runs `sql` (`$1`… bound to `arguments`, as text) on the database at `url`.
    public static func execute(_ url: PostgresURL, _ sql: String, _ arguments: [String] = []) throws {
        try onConnection(to: url) { connection in
            var bindings = PostgresBindings()
            for argument in arguments { bindings.append(argument) }
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        }
    }

    /// The migrated template database's name (made on first use).
    private static let template: Result<String, StartFailed> = {
        do {
            let (server, url) = try waitFor { try await freshDatabase() }
            let migrations = try migrations()
            try waitFor {
                let store = try await PostgresStore.open(url, environment: server.environment, logger: logger, maximumConnections: 1)
                do {
                    _ = try await store.migrate(migrations)
                    store.stop()
                } catch {
                    store.stop()
                    throw error
                }
            }
            // The migrating pool's connection closes in the background (`stop`), and PostgreSQL
            // copies no template that has a connection open: wait until it has none.
            let name = url.database ?? ""
            for _ in 0..<600 {
                let open = try onConnection(to: server.url) { connection in
                    var count = 0
                    for try await _ in try await connection.query(
                        "SELECT 1 FROM pg_stat_activity WHERE datname = \(name)", logger: logger) { count += 1 }
                    return count
                }
                if open == 0 { break }
                usleep(50_000)
            }
            return .success(name)
        } catch {
            return .failure(StartFailed(description: "the template database could not be made: \(error)"))
        }
    }()

    public static let logger: Logger = {
        var logger = Logger(label: "clinic.postgres.tests")
        logger.logLevel = .critical
        return logger
    }()

    /// The PostgreSQL migrations as the program ships them.
    public static func migrations() throws -> [Migration] {
        try Migration.load(from: projectRoot.appendingPathComponent("Migrations/postgres"))
    }

    final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var value: String?
        func set(_ new: String) { lock.withLock { value = new } }
        func get() -> String? { lock.withLock { value } }
    }
}

/// Runs `body` on a new thread (not an event loop, not a cooperative thread: where the store's
/// blocking transactions run in a server or the CLI) and waits for it. Return what to check
/// and check it in the test: an `#expect` on that thread is not attributed to the test.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}
