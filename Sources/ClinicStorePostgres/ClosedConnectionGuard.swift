import ClinicKit
import Foundation
import PostgresNIO

/// A statement sent on a connection that closed before postgres-nio's handler took it is never
/// answered: `query` and `execute` write their task with no promise, and once the channel is
/// closed its handlers are gone, so nothing fails the task's own promise and the caller waits
/// for ever (CI, issue 56: bookings through a Patroni failover and during a PostgreSQL stop
/// got no answer within 20 s). `BlockingConnection.prepared` looks every second whether its
/// connection has closed; the awaited statements do the same here: each runs beside a watcher
/// that fails it `busy` (`storeConnectionLost`) once the connection is closed, and is cancelled
/// as soon as the statement is answered. Both run where the caller runs: on the store's own
/// executor for the blocking bridge and its callers (`StoreTaskExecutor.here`), else on Swift's
/// global executor, as a server's handlers do.
enum ClosedConnectionGuard {
    static func run<T: Sendable>(_ connection: PostgresConnection,
                                 _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        if connection.isClosed { throw ClinicError(.busy, .storeConnectionLost) }
        let executor = StoreTaskExecutor.here
        return try await withCheckedThrowingContinuation { continuation in
            let once = ResumeOnce(continuation)
            let watcher = Task(executorPreference: executor) {
                while !connection.isClosed {
                    // Cancelled: the statement was answered.
                    do { try await PostgresStore.sleep(.seconds(1)) } catch { return }
                }
                once.resume(.failure(ClinicError(.busy, .storeConnectionLost)))
            }
            Task(executorPreference: executor) {
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                watcher.cancel()
                once.resume(result)
            }
        }
    }

    /// A continuation resumed by the first of the statement and the watcher.
    final class ResumeOnce<T: Sendable>: Sendable {
        private let continuation: LockedBox<CheckedContinuation<T, any Error>?>

        init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = LockedBox(continuation) }

        func resume(_ result: Result<T, any Error>) {
            let taken = continuation.withLock { current in
                defer { current = nil }
                return current
            }
            taken?.resume(with: result)
        }
    }
}
