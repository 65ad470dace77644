import ClinicKit
import Foundation

/// Group commit: the writes waiting at a moment run in **one** IMMEDIATE transaction, each in a
/// savepoint of its own, and are committed together, with one fsync for the batch.
///
/// - A caller gets its answer only after the COMMIT that holds its write returned. If the
///   COMMIT (or an error that spoils the whole transaction: storage, busy, a failed key) fails,
///   every member of the batch gets that error and nothing of the batch is kept.
/// - A write that fails its own checks (a `ClinicError` such as `slot_taken`) rolls back only
///   its savepoint; its neighbours commit.
/// - No waiting when idle: a batch is whatever queued while the previous one was being
///   committed, so a lone write starts at once. A batch holds at most `maximumBatch` writes, so
///   other processes waiting for the writers' lock get their turn between batches.
///
/// Each write is one controller call: its `database.write` joins the batch's transaction
/// (`SQLiteStore.writeJoined`) on the committer's own thread.
///
/// It is this store's own device (issue 56): SQLite has one writer and an fsync per commit, so a
/// batch saves commits. The server hands every change to `ClinicStore.commit`; the store runs it
/// here. (PostgreSQL writes side by side and needs none: `PostgresWriters`.)
final class GroupCommitter: @unchecked Sendable {
    typealias BatchReport = WriteBatchReport

    private final class Job {
        let work: () throws -> Any
        let finish: (Result<Any, Error>) -> Void
        var result: Result<Any, Error>?
        init(work: @escaping () throws -> Any, finish: @escaping (Result<Any, Error>) -> Void) {
            self.work = work
            self.finish = finish
        }
    }

    /// The most writes one transaction holds.
    let maximumBatch: Int
    /// The store the batches are written to (not kept alive by its writers).
    private weak var store: SQLiteStore?
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopped = false
    private var running = 1
    private let report: @Sendable (BatchReport) -> Void

    init(store: SQLiteStore, maximumBatch: Int = 64, report: @escaping @Sendable (BatchReport) -> Void = { _ in }) {
        self.store = store
        self.maximumBatch = max(1, maximumBatch)
        self.report = report
        let thread = Thread { [weak self] in self?.loop() }
        thread.name = "clinic.group-commit"
        thread.start()
    }

    deinit { stop() }

    /// Writes waiting for a batch.
    var queued: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    /// Runs `work` in the next batch and returns its result once that batch committed.
    func perform<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            enqueue(work) { result in
                switch result {
                case .success(let value):
                    if let value = value as? T { continuation.resume(returning: value) }
                    else { continuation.resume(throwing: ClinicError(.internalError, .internalError, "group commit result")) }
                case .failure(let error):
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// The blocking form, for threads that may wait.
    func performBlocking<T>(_ work: @escaping () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        var outcome: Result<Any, Error>?
        enqueue(work) { result in
            outcome = result
            done.signal()
        }
        done.wait()
        switch outcome {
        case .success(let value)?:
            guard let value = value as? T else { throw ClinicError(.internalError, .internalError, "group commit result") }
            return value
        case .failure(let error)?: throw error
        case nil: throw ClinicError(.internalError, .internalError, "group commit result")
        }
    }

    private func enqueue(_ work: @escaping () throws -> Any, finish: @escaping (Result<Any, Error>) -> Void) {
        condition.lock()
        if stopped {
            condition.unlock()
            finish(.failure(ClinicError(.busy, .databaseBusy)))
            return
        }
        queue.append(Job(work: work, finish: finish))
        condition.signal()
        condition.unlock()
    }

    /// Finishes the writes already queued, then stops; later writes get `busy`.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the queue is empty and the committer has stopped.
    func drain() {
        stop()
        condition.lock()
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
            let batch = Array(queue.prefix(maximumBatch))
            queue.removeFirst(batch.count)
            condition.unlock()
            commit(batch)
        }
    }

    private func commit(_ batch: [Job]) {
        let started = DispatchTime.now().uptimeNanoseconds
        var failure: Error?
        do {
            guard let store else { throw ClinicError(.busy, .databaseBusy) }
            try store.writingJoined { _ in
                for job in batch {
                    do {
                        job.result = .success(try job.work())
                    } catch let error as ClinicError where !error.spoilsTheTransaction {
                        job.result = .failure(error) // its savepoint was rolled back; the others go on
                    }
                }
            }
        } catch {
            failure = error // nothing of the batch was kept: every member fails with it
        }
        let results: [Result<Any, Error>] = batch.map { job in
            if let failure { return .failure(failure) }
            return job.result ?? .failure(ClinicError(.internalError, .internalError, "no result"))
        }
        // Reported before anyone is answered, so that what a caller sees next includes its batch.
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let failed = results.filter { if case .failure = $0 { return true } else { return false } }.count
        report(BatchReport(size: batch.count, failed: failed, committed: failure == nil, seconds: seconds))
        for (job, result) in zip(batch, results) { job.finish(result) }
    }
}
