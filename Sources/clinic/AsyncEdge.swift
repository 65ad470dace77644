import ArgumentParser
import ClinicKit
import Dispatch
import Foundation

/// The command line's one bridge between its synchronous entry and the awaited store (issue 56):
/// an `AsyncParsableCommand` runs as a task while the main thread, which nothing else runs on,
/// waits for it. The task awaits the store (on PostgreSQL no thread waits for a statement);
/// what it still does synchronously (a SQLite file's transactions, Argon2) runs on the
/// cooperative pool as any awaited caller's would.
enum AsyncEdge {
    /// Runs `command` to its end, then records the session's use (awaited), and returns or
    /// throws as the command did.
    static func run(_ command: any AsyncParsableCommand) throws {
        let parsed = Unchecked(command)
        try wait {
            var command = parsed.value
            try await command.run()
            await SessionUse.shared.finish()
        }
    }

    /// Runs async work to its end from the main thread, which may block (never from a task:
    /// a blocked cooperative thread is one fewer for the work waited for).
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { outcome.set(.success(try await work())) } catch { outcome.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        return try outcome.get()
    }

    /// `wait` for work that uses the calling thread's own state (the session's prompt and
    /// terminal): that thread is blocked until the work has ended, so the state is never used
    /// by two threads at once.
    static func waitHere<T: Sendable>(_ work: @escaping () async throws -> T) throws -> T {
        let handed = Unchecked(work)
        return try wait { try await handed.value() }
    }
}

/// A parsed command handed to the task that runs it (it is not `Sendable`; only that task uses it).
private struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// What the task answered, handed to the waiting thread.
private final class Outcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?
    func set(_ result: Result<T, any Error>) { lock.withLock { self.result = result } }
    func get() throws -> T {
        guard let result = lock.withLock({ result }) else {
            throw ClinicError(.internalError, .internalError, "no result") // unreachable: the task sets one first
        }
        return try result.get()
    }
}
