import ClinicKit
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// A connection in a transaction, for the storage seam's synchronous bodies (docs/ARCHITECTURE.md,
/// "The storage seam"): each statement is sent on the connection's event loop and waited for on
/// the calling thread. That thread is the caller's own — the server's work pool, the CLI's main
/// thread, a test's thread — never an event loop (refused) nor a cooperative thread: nothing it
/// waits for needs either of those to be free except the lease, which is handed over once per
/// transaction.
public struct BlockingConnection {
    let connection: PostgresConnection
    let logger: Logger
    /// The store's count of statements sent (`PostgresStore.statementsSent`).
    let sent: LockedBox<Int>

    /// Runs one statement and returns its rows.
    ///
    /// The statement is handed to the connection on its event loop, and only while the
    /// connection is open: postgres-nio drops a statement written to a connection that has
    /// already closed (the server went away between two statements of a transaction) without
    /// ever completing its future, and this thread would wait for it forever. On the event loop
    /// the check and the write cannot be separated by the close; once written, a close fails
    /// the statement (`busy`, `PostgresErrorMapping`).
    @discardableResult
    public func query(_ query: PostgresQuery) throws -> PostgresQueryResult {
        let connection = self.connection, logger = self.logger
        sent.withLock { $0 += 1 }
        return try connection.eventLoop.flatSubmit { () -> EventLoopFuture<PostgresQueryResult> in
            guard !connection.isClosed else { return connection.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
            return connection.query(query, logger: logger)
        }.wait()
    }
}

extension BlockingConnection {
    /// Runs one of the hot paths' statements (`HotStatement`), prepared by postgres-nio the
    /// first time this connection runs it, and returns its rows.
    ///
    /// The statement is run by a task on the store's executor (postgres-nio prepares only from
    /// async code) while this thread waits. Its write is not tied to a check that the
    /// connection is open, as `query`'s is, so the wait looks every second whether the
    /// connection has closed without answering (`busy`: the connection is gone).
    ///
    /// postgres-nio remembers a statement whose preparation failed as failed for the life of
    /// the connection. A failure that may have been the preparation's (anything but a refusal
    /// of the data, a conflict or a timeout) therefore closes the connection: the pool opens
    /// another, which prepares afresh.
    func prepared<Statement: HotStatement>(_ statement: Statement) throws -> [PostgresRow] {
        let connection = self.connection, logger = self.logger
        sent.withLock { $0 += 1 }
        let result = ResultBox<[PostgresRow]>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: StoreTaskExecutor.shared) {
            do {
                var rows: [PostgresRow] = []
                for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
                result.set(.success(rows))
            } catch {
                result.set(.failure(error))
            }
            done.signal()
        }
        while done.wait(timeout: .now() + .seconds(1)) == .timedOut {
            if connection.isClosed, result.get() == nil { throw ClinicError(.busy, .storeConnectionLost) }
        }
        guard let outcome = result.get() else { throw ClinicError(.busy, .storeConnectionLost) }
        do {
            return try outcome.get()
        } catch {
            // Closed before the lease goes back (this thread may wait: it is never an event
            // loop), so that the pool, which hears of the close first, never lends it again.
            if Self.mayHaveFailedToPrepare(error) { try? (connection.close() as EventLoopFuture<Void>).wait() }
            throw error
        }
    }

    /// Whether a statement's failure may have been its preparation's: not a refusal of the
    /// values (class 22), a constraint (23), a serialization failure or deadlock (40), a lock
    /// not granted in time (55) or a statement cancelled (57).
    static func mayHaveFailedToPrepare(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server, let state = error.serverInfo?[.sqlState] else { return true }
        return !["22", "23", "40", "55", "57"].contains(String(state.prefix(2)))
    }
}

extension PostgresStore {
    /// Runs `body` in one transaction (BEGIN … COMMIT; ROLLBACK on any error) on a connection
    /// of the pool, blocking the calling thread while statements are out. A serialization
    /// failure or deadlock runs the body again from the start, at most `attempts` times (then
    /// `busy`): a body must therefore depend only on what it reads. Errors are the domain's
    /// (`PostgresErrorMapping`): a constraint violation is `slot_taken`, `login_taken`, …
    public func blockingTransaction<T>(attempts: Int = 3, begin: String = "BEGIN", _ body: (BlockingConnection) throws -> T) throws -> T {
        guard MultiThreadedEventLoopGroup.currentEventLoop == nil else {
            throw ClinicError(.internalError, .internalError, "a blocking transaction on an event loop")
        }
        var attempt = 1
        while true {
            do {
                return try withLeasedConnection { connection in
                    try connection.query(PostgresQuery(unsafeSQL: begin))
                    do {
                        let result = try body(connection)
                        try connection.query("COMMIT")
                        return result
                    } catch {
                        _ = try? connection.query("ROLLBACK")
                        throw error
                    }
                }
            } catch {
                if case .retry = PostgresErrorMapping.outcome(error), attempt < attempts {
                    attempt += 1
                    continue
                }
                throw PostgresErrorMapping.clinicError(error)
            }
        }
    }

    /// One statement's work on a connection of the pool, outside any transaction (a single
    /// statement is a consistent snapshot by itself): one round trip where a read transaction
    /// costs three. Errors are the domain's, as `blockingTransaction`'s.
    func blockingStatement<T>(_ body: (BlockingConnection) throws -> T) throws -> T {
        guard MultiThreadedEventLoopGroup.currentEventLoop == nil else {
            throw ClinicError(.internalError, .internalError, "a blocking statement on an event loop")
        }
        do {
            return try withLeasedConnection(body)
        } catch {
            throw PostgresErrorMapping.clinicError(error)
        }
    }

    /// A connection leased from the pool for the length of `body`: a task leases it (within
    /// the connect timeout, as `withConnection` does) and holds it until `body` returns on this
    /// thread.
    func withLeasedConnection<T>(_ body: (BlockingConnection) throws -> T) throws -> T {
        let lease = Lease()
        let logger = self.logger, sent = statementsSent
        let holder = Task(executorPreference: StoreTaskExecutor.shared) { [self] in
            do {
                try await withConnection { connection in
                    await lease.hold(BlockingConnection(connection: connection, logger: logger, sent: sent))
                }
            } catch {
                lease.fail(error)
            }
        }
        let connection = try lease.connection()
        defer {
            lease.giveBack()
            _ = holder
        }
        return try body(connection)
    }
}

/// The hand-over of a leased connection between the task holding the lease and the thread
/// using it.
private final class Lease: @unchecked Sendable {
    private let lock = NSLock()
    private let handed = DispatchSemaphore(value: 0)
    private var leased: Result<BlockingConnection, any Error>?
    private var returned: CheckedContinuation<Void, Never>?
    private var isReturned = false

    /// In the task: gives the connection to the waiting thread and waits until it is given back.
    func hold(_ connection: BlockingConnection) async {
        lock.withLock { leased = .success(connection) }
        handed.signal()
        await withCheckedContinuation { continuation in
            let done = lock.withLock { () -> Bool in
                if isReturned { return true }
                returned = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// In the task: no connection could be leased.
    func fail(_ error: any Error) {
        lock.withLock { if leased == nil { leased = .failure(error) } }
        handed.signal()
    }

    /// On the thread: waits for the connection (or the failure to lease one).
    func connection() throws -> BlockingConnection {
        handed.wait()
        guard let leased = lock.withLock({ leased }) else {
            throw ClinicError(.internalError, .internalError, "no connection was handed over")
        }
        return try leased.get()
    }

    /// On the thread: the body is done with the connection.
    func giveBack() {
        let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            isReturned = true
            defer { returned = nil }
            return returned
        }
        continuation?.resume()
    }
}

/// Where the store's own tasks run: the pool's `run()`, each lease held for a blocked thread,
/// and the work the tests' synchronous bodies wait for (`TestPostgres.waitFor`). Not Swift's cooperative pool, nor
/// a dispatch queue (whose jobs share libdispatch's worker threads, as many as the cores): a
/// thread that blocks in a synchronous transaction may itself be one of those (a test's body,
/// a caller that should not but does), and if every one of them waited so, a lease handed over
/// there could never be handed. So one thread of its own runs these tasks' jobs; they only
/// await (nothing they run blocks), so one is enough.
package final class StoreTaskExecutor: TaskExecutor, @unchecked Sendable {
    package static let shared = StoreTaskExecutor()
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var thread: Thread?

    private init() {
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "clinic.postgres.tasks"
        self.thread = thread
        thread.start()
    }

    /// This executor where the caller runs on it, else nil: the preference for a task started
    /// from here, which would otherwise run on Swift's global executor (an unstructured task
    /// does not inherit its creator's preference), whose threads a blocked caller may hold.
    static var here: StoreTaskExecutor? {
        Thread.current === shared.thread ? shared : nil
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

/// A result handed from a task to a waiting thread (here, and the tests' `TestPostgres.waitFor`).
package final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<T, any Error>?
    package init() {}
    package func set(_ result: Result<T, any Error>) { lock.withLock { value = result } }
    package func get() -> Result<T, any Error>? { lock.withLock { value } }
}
