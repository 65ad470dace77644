import ClinicKit
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// The PostgreSQL store: one `PostgresClient` (postgres-nio's pool) and the task that runs it.
///
/// `open` first makes one plain `PostgresConnection` and closes it again: the pool retries a
/// failing connection forever and a query waits for it (postgres-nio issues 489, 565, 602), so a
/// wrong password, a missing database or a server that is not there would hang instead of
/// being said. Only once that probe succeeded does the pool start.
///
/// TLS follows libpq's `sslmode` (docs/ARCHITECTURE.md, "PostgreSQL store"): `disable` plain;
/// `allow` and `prefer` TLS when the server offers it, unverified (`allow` is not plain first as
/// in libpq: postgres-nio always asks for TLS first); `require` TLS or nothing, unverified unless
/// `sslrootcert` is given, then verified like `verify-ca` (libpq's rule); `verify-ca` the chain
/// against `sslrootcert` (default `~/.postgresql/root.crt`; `system` for the system's roots);
/// `verify-full` the chain and the host name. A Unix socket has no TLS and ignores `sslmode`.
public final class PostgresStore: Sendable {
    public let url: PostgresURL
    public let user: String
    public let database: String
    public let client: PostgresClient
    /// The key personal data is sealed with, and the audit trail's key: files every server of
    /// this database shares (`PostgresStoreKeys`).
    public let personalDataKey: PersonalDataKey
    public let auditKeys: AuditKeyRing
    /// The schema this program knows (`schemaStatus`).
    public let migrations: [Migration]
    /// How `open` connected once, alone: run again to learn why the pool has no connection.
    let probe: PostgresConnection.Configuration
    let logger: Logger
    /// Every statement this store sent through a blocking connection or an awaited use case
    /// (`BEGIN` and `COMMIT` included; not those of `transaction`'s own bodies): the round trips the tests hold a request's budget to (issue 44).
    package let statementsSent = LockedBox<Int>(0)
    /// Each department's schedule as last read, with its version (`slotFacts`).
    let keptSchedules = KeptSchedules()
    /// The signed-in sessions and nearest searches kept while the store listens for their changes (`keepLookups`).
    let keptLookups = KeptLookups()
    /// The task that listens, once `keepLookups` started it.
    let listener = LockedBox<Task<Void, Never>?>(nil)
    private let runner: Task<Void, Never>

    /// A connection or start-up that took longer than the connect timeout.
    struct Timeout: Error {}
    /// A serialization failure or deadlock: the transaction runs again.
    struct RetryNeeded: Error {}

    /// What no session of the store waits longer for, set at each connection's start-up: a
    /// lock (another server's transaction on the same patient, the audit head), one statement,
    /// a transaction left idle by a stalled process (its locks are then released). Each ends
    /// the transaction as `busy` (503, retry), never a thread and a connection held forever.
    ///
    /// And one setting for speed: a prepared statement is planned once per connection
    /// (`plan_cache_mode`). PostgreSQL otherwise plans the hot statements' gathers again at
    /// every execution (it judges their generic plan dearer than a custom one): under the
    /// booking load that planning was 45 % of PostgreSQL's CPU (`perf`, docs/BENCHMARKS.md).
    /// Every statement of this store looks rows up by key or by range on its indexes, which a
    /// generic plan uses as well as a custom one.
    static let sessionSettings = [("lock_timeout", "30s"), ("statement_timeout", "120s"),
                                ("idle_in_transaction_session_timeout", "120s"), ("plan_cache_mode", "force_generic_plan")]

    /// Seconds to wait for a connection (and its start-up) when the URL names no `connect_timeout`.
    public static let defaultConnectTimeout = 10

    private init(url: PostgresURL, user: String, database: String, client: PostgresClient, keys: PostgresStoreKeys,
                 migrations: [Migration], logger: Logger, maximumConnections: Int, probe: PostgresConnection.Configuration) {
        self.url = url
        self.probe = probe
        self.user = user
        self.database = database
        self.client = client
        personalDataKey = PersonalDataKey(path: keys.personal)
        auditKeys = AuditKeyRing(path: keys.audit)
        self.migrations = migrations
        self.logger = logger
        runner = Task(executorPreference: StoreTaskExecutor.shared) { await client.run() }
    }

    /// Connects (see the type), then starts the pool. `warn` hears what is skipped on the way
    /// (an unsafe password file). Throws `store_unreachable`, `store_auth_failed`,
    /// `store_database_missing` or `store_url_invalid` (TLS settings). `keys`: where the key
    /// files are (default: from the environment, `PostgresStoreKeys.locate`); `migrations`: the
    /// schema this program knows, for `schemaStatus()`.
    public static func open(_ url: PostgresURL, environment: [String: String] = ProcessInfo.processInfo.environment,
                            logger: Logger = Logger(label: "clinic.postgres"), maximumConnections: Int = 8,
                            keys: PostgresStoreKeys? = nil, migrations: [Migration] = [],
                            warn: (ClinicError) -> Void = { _ in }) async throws -> PostgresStore {
        let user = url.user ?? environment["PGUSER"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.systemUserName()
        let database = url.database ?? user
        let password = PasswordLookup.password(for: url, user: user, database: database, environment: environment, warn: warn)
        let timeout = url.connectTimeout ?? defaultConnectTimeout
        let tls = try TLSSettings(url: url, environment: environment)

        var probe: PostgresConnection.Configuration
        var configuration: PostgresClient.Configuration
        if let host = url.host {
            probe = .init(host: host, port: url.port, username: user, password: password, database: database,
                          tls: try tls.connectionTLS())
            configuration = .init(host: host, port: url.port, username: user, password: password, database: database,
                                  tls: tls.clientTLS)
            // No tlsServerName: postgres-nio then sends the host name as SNI and NIOSSL checks
            // the certificate against it (verify-full), or against the address for an IP
            // literal (an IP in SNI would be refused).
        } else {
            probe = .init(unixSocketPath: url.socketPath, username: user, password: password, database: database)
            configuration = .init(unixSocketPath: url.socketPath, username: user, password: password, database: database)
        }
        let startup = [("application_name", url.applicationName ?? "clinic")] + sessionSettings
        probe.options.connectTimeout = .seconds(Int64(timeout))
        probe.options.additionalStartupParameters = startup
        configuration.options.connectTimeout = .seconds(Int64(timeout))
        configuration.options.additionalStartupParameters = startup
        configuration.options.maximumConnections = max(1, maximumConnections)
        configuration.options.minimumConnections = 0

        let probeConfiguration = probe
        do {
            let connection = try await connect(probeConfiguration, id: 0, seconds: timeout, logger: logger)
            try? await connection.close()
        } catch {
            throw PostgresErrorMapping.connectError(error, url: url, user: user, database: database)
        }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return PostgresStore(url: url, user: user, database: database, client: client,
                             keys: keys ?? PostgresStoreKeys.locate(environment: environment, database: database),
                             migrations: migrations, logger: logger, maximumConnections: configuration.options.maximumConnections,
                             probe: probeConfiguration)
    }

    /// Stops the pool: its connections are closed and the run task ends. Call once, at the end.
    public func shutdown() async {
        if let listening = listener.withLock({ task in defer { task = nil }; return task }) {
            listening.cancel()
            await listening.value
        }
        runner.cancel()
        await runner.value
    }

    /// Stops the pool without waiting for it to end: its connections close in the background.
    /// For a caller that holds one of Swift's cooperative threads while it waits (a synchronous
    /// test's body, through `TestPostgres.waitFor`): the pool's run ends only once its timers' tasks have
    /// woken, and they wake on Swift's global executor, whose threads such callers may all hold
    /// (two synchronous tests at once on two cores waited there forever).
    public func stop() {
        listener.withLock { task in
            task?.cancel()
            task = nil
        }
        runner.cancel()
    }

    /// A connection from the pool for `body`. The lease waits at most the connect timeout: the
    /// pool would otherwise wait forever for a server that went away (`busy` then, as for any
    /// lease the pool refuses: after a minute of failed connections its circuit breaker fails
    /// leases at once with an error of its own). The server is unreachable for now, and a running
    /// program says so as it says a connection lost mid-transaction: retry in a moment (503 with
    /// Retry-After from `clinic serve`). `open`'s probe says `store_unreachable` with the reason.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let seconds = url.connectTimeout ?? Self.defaultConnectTimeout
        let started = Flag()
        let client = self.client
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        started.set()
                        return try await body(connection)
                    }
                }
                group.addTask {
                    try await Self.sleep(seconds: seconds)
                    if started.isSet { return nil }
                    throw Timeout()
                }
                defer { group.cancelAll() }
                while let next = try await group.next() {
                    if let result = next { return result }
                }
                throw Timeout()
            }
        } catch let error as ClinicError {
            throw error
        } catch let error as RetryNeeded {
            throw error
        } catch is Timeout {
            throw await whyNoConnection()
        } catch {
            if !started.isSet { throw await whyNoConnection() }
            throw PostgresErrorMapping.clinicError(error)
        }
    }

    /// The pool found no connection in time (it retries without saying why): one connection
    /// alone, as `open` made, tells. `busy` (retry) unless waiting cannot help — the password or
    /// the database is wrong now (changed or dropped while the process ran), which a server
    /// must log rather than answer 503 to for ever.
    func whyNoConnection() async -> ClinicError {
        let probe = self.probe, logger = self.logger
        do {
            let connection = try await Self.connect(probe, id: 0, seconds: url.connectTimeout ?? Self.defaultConnectTimeout,
                                                    logger: logger)
            try? await connection.close()
        } catch {
            let refused = PostgresErrorMapping.connectError(error, url: url, user: user, database: database)
            if refused.code == .storeAuthFailed || refused.code == .storeDatabaseMissing { return refused }
        }
        return ClinicError(.busy, .storeConnectionLost)
    }

    /// Runs `body` in one transaction (BEGIN … COMMIT, ROLLBACK on any error), again from the
    /// start after a serialization failure or deadlock, at most `attempts` times (`busy` then).
    public func transaction<T: Sendable>(attempts: Int = 3,
                                         _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T) async throws -> T {
        let logger = self.logger, sent = statementsSent
        var attempt = 1
        while true {
            do {
                return try await withConnection { connection in
                    do {
                        return try await Self.inTransaction(connection, logger: logger, sent: sent, body)
                    } catch {
                        // Decided here, before `withConnection` maps the error to the domain's.
                        if case .retry = PostgresErrorMapping.outcome(error) { throw RetryNeeded() }
                        throw error
                    }
                }
            } catch is RetryNeeded {
                guard attempt < attempts else { throw ClinicError(.busy, .databaseBusy) }
                attempt += 1
            }
        }
    }

    /// Errors keep their PSQLError (the caller maps them, once).
    /// `sent`: where its BEGIN and COMMIT are counted (`statementsSent`).
    static func inTransaction<T: Sendable>(_ connection: PostgresConnection, logger: Logger, sent: LockedBox<Int>? = nil,
                                           begin: String = "BEGIN",
                                           _ body: @Sendable (PostgresConnection, Logger) async throws -> T) async throws -> T {
        // Each awaited beside the connection's close (`ClosedConnectionGuard`).
        func send(_ command: String) async throws {
            _ = try await ClosedConnectionGuard.run(connection) {
                try await connection.query(PostgresQuery(unsafeSQL: command), logger: logger).collect().count
            }
        }
        sent?.withLock { $0 += 1 }
        try await send(begin)
        do {
            let result = try await body(connection, logger)
            sent?.withLock { $0 += 1 }
            try await send("COMMIT")
            return result
        } catch {
            _ = try? await send("ROLLBACK")
            throw error
        }
    }

    /// The operating system's name for this process's user (libpq's default role).
    static func systemUserName() -> String {
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.userName
    }

    /// Waits `seconds` on an event loop's timer, or until cancelled. Not `Task.sleep`: a
    /// sleeping task wakes (also when cancelled, as a timeout is once its race is won) on
    /// Swift's global executor, whose threads may all be blocked in synchronous transactions
    /// (`StoreTaskExecutor`); a task group then waits for that wake-up forever.
    static func sleep(seconds: Int) async throws {
        try await sleep(.seconds(Int64(seconds)))
    }

    /// `sleep(seconds:)` for any length.
    static func sleep(_ length: TimeAmount) async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let promise = loop.makePromise(of: Void.self)
        let timer = loop.scheduleTask(in: length) { promise.succeed(()) }
        try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            timer.cancel()
            promise.fail(CancellationError())
        }
    }

    /// One connection of its own, or `Timeout` after `seconds`. A connection that arrives after
    /// the deadline is closed here: postgres-nio traps on a connection dropped unclosed.
    static func connect(_ configuration: PostgresConnection.Configuration, id: Int, seconds: Int,
                        logger: Logger) async throws -> PostgresConnection {
        try await withThrowingTaskGroup(of: PostgresConnection?.self) { group in
            group.addTask { try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger) }
            group.addTask {
                try await Self.sleep(seconds: seconds)
                return nil
            }
            var outcome: Result<PostgresConnection, Error> = .failure(Timeout())
            do {
                if let connection = try await group.next() ?? nil { outcome = .success(connection) }
            } catch {
                outcome = .failure(error)
            }
            group.cancelAll()
            // Whatever else finishes (a connection late, the sleep cancelled) is closed or dropped.
            while let late = try? await group.next() {
                if let late { try? await late.close() }
            }
            return try outcome.get()
        }
    }

    /// `body`, or `Timeout` after `seconds` (the body is cancelled).
    static func withDeadline<T: Sendable>(seconds: Int, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Self.sleep(seconds: seconds)
                throw Timeout()
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw Timeout() }
            return first
        }
    }
}

/// Set once, read from another task.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// TLS per sslmode (see `PostgresStore`).
struct TLSSettings {
    let clientTLS: PostgresClient.Configuration.TLS
    let configuration: TLSConfiguration?
    let enforced: Bool

    init(url: PostgresURL, environment: [String: String]) throws {
        guard url.host != nil, url.sslMode != .disable else {
            clientTLS = .disable
            configuration = nil
            enforced = false
            return
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        var verify: CertificateVerification = .none
        var rootCert = url.sslRootCert
        switch url.sslMode {
        case .disable, .allow, .prefer:
            verify = .none
        case .require:
            verify = rootCert == nil ? .none : .noHostnameVerification
        case .verifyCA, .verifyFull:
            verify = url.sslMode == .verifyFull ? .fullVerification : .noHostnameVerification
            if rootCert == nil {
                let home = UserFolders.home(environment)
                rootCert = home + "/.postgresql/root.crt"
            }
        }
        tls.certificateVerification = verify
        if verify != .none, let rootCert {
            if rootCert == "system" {
                tls.trustRoots = .default
            } else {
                do {
                    let certificates = try NIOSSLCertificate.fromPEMFile(rootCert)
                    guard !certificates.isEmpty else { throw ClinicError(.storeURLInvalid, .storeTLSSetup, rootCert) }
                    tls.trustRoots = .certificates(certificates)
                } catch {
                    throw ClinicError(.storeURLInvalid, .storeTLSSetup, "sslrootcert " + rootCert + " cannot be read as PEM certificates")
                }
            }
        }
        configuration = tls
        enforced = url.sslMode.requiresTLS
        clientTLS = enforced ? .require(tls) : .prefer(tls)
    }

    func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
        guard let configuration else { return .disable }
        do {
            let context = try NIOSSLContext(configuration: configuration)
            return enforced ? .require(context) : .prefer(context)
        } catch {
            throw ClinicError(.storeURLInvalid, .storeTLSSetup, String(describing: error))
        }
    }
}
