import ClinicKit
import Foundation

// The writes a process awaits (`ClinicStore.commit`) that are not yet use cases of their own
// (issue 56: the booking is, `PostgresStore+UseCases.swift`): their synchronous work runs on
// writer threads of this store, each write alone in its own transaction, `concurrentWriters`
// at once. A batch would only serialise them on one connection and make the batches of several
// servers wait on each other's row locks (a deadlock between two batches refuses both whole).

final class PostgresWriters: @unchecked Sendable {
    private final class Job {
        let work: () throws -> Any
        let finish: (Result<Any, Error>) -> Void
        init(work: @escaping () throws -> Any, finish: @escaping (Result<Any, Error>) -> Void) { self.work = work; self.finish = finish }
    }

    let count: Int
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopped = false
    private var running: Int
    private let report: @Sendable (WriteBatchReport) -> Void

    init(count: Int, report: @escaping @Sendable (WriteBatchReport) -> Void = { _ in }) {
        self.count = max(1, count)
        self.report = report
        running = self.count
        for index in 0..<self.count {
            let thread = Thread { [weak self] in self?.loop() }
            thread.name = "clinic.postgres.writer.\(index)"
            thread.start()
        }
    }

    var queued: Int { condition.withLock { queue.count } }

    func perform<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            let job = Job(work: work) { result in
                switch result {
                case .success(let value as T): continuation.resume(returning: value)
                case .success: continuation.resume(throwing: ClinicError(.internalError, .internalError, "writer result"))
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
            let refused = condition.withLock { () -> Bool in
                if stopped { return true }
                queue.append(job)
                condition.signal()
                return false
            }
            if refused { job.finish(.failure(ClinicError(.busy, .databaseBusy))) }
        }
    }

    /// Finishes the writes queued, then stops; later writes get `busy`. Blocks until done.
    func drain() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopped { condition.wait() }
            if queue.isEmpty && stopped {
                running -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = queue.removeFirst()
            condition.unlock()
            let started = DispatchTime.now().uptimeNanoseconds
            let result: Result<Any, Error>
            do { result = .success(try job.work()) } catch { result = .failure(error) }
            let failed: Bool = if case .failure = result { true } else { false }
            var committed = true
            if case .failure(let error as ClinicError) = result, error.spoilsTheTransaction { committed = false }
            if case .failure(let error) = result, !(error is ClinicError) { committed = false }
            report(WriteBatchReport(size: 1, failed: failed ? 1 : 0, committed: committed,
                                    seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9))
            job.finish(result)
        }
    }
}

extension PostgresStore {
    public func startWriters(maximumBatch: Int, report: @escaping @Sendable (WriteBatchReport) -> Void) {
        writers.withLock { current in
            if current == nil { current = PostgresWriters(count: concurrentWriters, report: report) }
        }
    }

    private var runningWriters: PostgresWriters {
        writers.withLock { current in
            if let running = current { return running }
            let started = PostgresWriters(count: concurrentWriters)
            current = started
            return started
        }
    }

    public func commit<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await runningWriters.perform(work)
    }

    public var queuedWrites: Int { writers.current?.queued ?? 0 }

    public func drainWriters() {
        let running = writers.withLock { current in
            defer { current = nil }
            return current
        }
        running?.drain()
    }
}
