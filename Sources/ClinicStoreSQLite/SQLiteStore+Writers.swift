import ClinicKit
import Foundation

// The writes a process awaits (issue 56), on SQLite: group commit (`GroupCommitter`) batches
// the writes waiting at a moment in one transaction on its own thread, and each use case is
// one synchronous write transaction inside a batch: gather, decide, write, as GRDB's
// `writer.write { db in … }` runs any. Synchronous inside, async at the edge.

extension SQLiteStore {
    public func startWriters(maximumBatch: Int, report: @escaping @Sendable (WriteBatchReport) -> Void) {
        committer.withLock { current in
            if current == nil { current = GroupCommitter(store: self, maximumBatch: maximumBatch, report: report) }
        }
    }

    /// The committer, started with the defaults if nobody started it.
    private var runningCommitter: GroupCommitter {
        committer.withLock { current in
            if let running = current { return running }
            let started = GroupCommitter(store: self)
            current = started
            return started
        }
    }

    public func commit<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await runningCommitter.perform(work)
    }

    public var queuedWrites: Int { committer.current?.queued ?? 0 }

    /// Finishes the queued writes and stops the committer; a later write starts another.
    public func drainWriters() {
        let running = committer.withLock { current in
            defer { current = nil }
            return current
        }
        running?.drain()
    }

    public func book(_ ask: BookingFactsRequest, decide: @escaping @Sendable (BookingFacts) throws -> BookingDecision) async throws -> Appointment {
        try await commit { try self.writing { tx in try BookingDecision.book(tx, ask, decide: decide) } }
    }

    public func changeAppointment(id: Int64, decide: @escaping @Sendable (AppointmentChangeFacts?) throws -> BookingDecision?) async throws -> Appointment {
        try await commit { try self.writing { tx in try BookingDecision.change(tx, id: id, decide: decide) } }
    }

    public func moveAppointment(id: Int64, plan: @escaping @Sendable (AppointmentChangeFacts?) throws -> BookingFactsRequest,
                                decide: @escaping @Sendable (AppointmentChangeFacts, BookingFacts) throws -> BookingDecision?) async throws -> Appointment {
        try await commit { try self.writing { tx in try BookingDecision.move(tx, id: id, plan: plan, decide: decide) } }
    }

    public func hold(_ ask: BookingFactsRequest, decide: @escaping @Sendable (HoldFacts) throws -> SlotHold) async throws -> SlotHold {
        try await commit { try self.writing { tx in try BookingDecision.hold(tx, ask, decide: decide) } }
    }

    public func hold(_ ask: BookingFactsRequest, decide: @escaping @Sendable (HoldFacts) throws -> SlotHold,
                     keeping request: IdempotentRequest, answer: @escaping IdempotentRequest.Answer<SlotHold>) async throws
        -> IdempotencyStore.Response {
        try await keeping(request, answer) { tx in try BookingDecision.hold(tx, ask, decide: decide) }
    }

    public func bookHold(id: Int64, plan: @escaping @Sendable (SlotHold?) throws -> BookingFactsRequest,
                         decide: @escaping @Sendable (SlotHold, BookingFacts) throws -> BookingDecision) async throws -> Appointment {
        try await commit { try self.writing { tx in try BookingDecision.bookHold(tx, id: id, plan: plan, decide: decide) } }
    }
}

extension SQLiteStore {
    /// The change and its kept answer in one write of the next batch: the change's writes join
    /// the transaction in a savepoint of their own, so that a refused change keeps its refusal
    /// and nothing of itself.
    public func perform(_ change: AwaitedChange, keeping request: IdempotentRequest,
                        answer: @escaping IdempotentRequest.Answer<Appointment>) async throws -> IdempotencyStore.Response {
        try await keeping(request, answer) { tx in try change.run(tx) }
    }

    public func joinWaitlist(_ ask: WaitlistJoinAsk, decide: @escaping @Sendable (WaitlistJoinFacts) throws -> WaitlistJoin,
                             keeping request: IdempotentRequest, answer: @escaping IdempotentRequest.Answer<WaitlistEntry>) async throws
        -> IdempotencyStore.Response {
        try await keeping(request, answer) { tx in try decide(try WaitlistJoinFacts.read(tx, ask)).apply(tx) }
    }

    /// `run` with its answer kept under `request`'s key, in one write of the next batch.
    private func keeping<Value: Sendable>(_ request: IdempotentRequest, _ answer: @escaping IdempotentRequest.Answer<Value>,
                                          _ run: @escaping @Sendable (any StoreWriting) throws -> Value) async throws -> IdempotencyStore.Response {
        try await commit {
            try self.writingJoined { tx in
                try request.keep(tx, store: self) {
                    let outcome: Result<Value, any Error>
                    do {
                        outcome = .success(try self.writing { inner in try run(inner) })
                    } catch {
                        outcome = .failure(error)
                    }
                    return try IdempotentRequest.answer(outcome, answer)
                }
            }
        }
    }
}
