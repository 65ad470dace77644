import ClinicKit
import Foundation

// A patient's waitlist changes awaited (issue 56: `WaitlistChangesStore`), on SQLite: each one
// write of the next batch, gathered and written with the seam's statements around ClinicKit's
// decision. SQLite's write transactions are serialised, so the gather's facts hold until COMMIT.

extension SQLiteStore {
    public func changeWaitlistEntry<T: Sendable>(id: Int64, decide: @escaping @Sendable (WaitlistEntryState?) throws -> WaitlistDecision<T>)
        async throws -> T {
        try await change({ tx in try WaitlistEntryState.read(tx, id: id) }, decide)
    }

    public func answerWaitlistOffer<T: Sendable>(_ choice: OfferChoice, decide: @escaping @Sendable (WaitlistOfferState?) throws -> WaitlistDecision<T>)
        async throws -> T {
        try await change({ tx in try WaitlistOfferState.read(tx, choice) }, decide)
    }

    public func acceptWaitlistOffer(_ choice: OfferChoice, plan: @escaping @Sendable (OfferAcceptanceFacts?) throws -> BookingFactsRequest,
                                    decide: @escaping @Sendable (OfferAcceptanceFacts, BookingFacts) throws -> OfferAcceptance) async throws
        -> Appointment {
        try await commit { try self.writing { tx in try OfferAcceptance.run(tx, choice, plan: plan, decide: decide) } }
    }

    public func staffWaitlist<T: Sendable>(clinicId: Int64, departmentId: Int64?,
                                           decide: @escaping @Sendable (StaffWaitlistFacts) throws -> WaitlistDecision<T>) async throws -> T {
        try await change({ tx in try StaffWaitlistFacts.read(tx, store: self, clinicId: clinicId, departmentId: departmentId) }, decide)
    }

    // The worker (`WaitlistWorkStore`): the read on the reader queue, each transaction one
    // write of the next batch, with the seam's statements.

    public func waitlistHasWork(at now: Date) async throws -> Bool {
        try await readAwaited { tx in try tx.hasWaitlistWork(at: now) }
    }

    public func closeLapsedOffers(at now: Date, limit: Int,
                                  decide: @escaping @Sendable ([WaitlistOfferState]) throws -> WaitlistDecision<Int>) async throws -> Int {
        try await change({ tx in try WaitlistController.lapsed(tx, at: now, limit: limit) }, decide)
    }

    public func offerFreedTime(_ rules: FreedTimeRules) async throws -> Bool {
        try await commit { try self.writing { tx in try rules.run(tx).taken } }
    }

    /// One write of the next batch: the facts gathered, `decide`, the decision applied.
    private func change<State, T: Sendable>(_ gather: @escaping @Sendable (any StoreWriting) throws -> State,
                                            _ decide: @escaping @Sendable (State) throws -> WaitlistDecision<T>) async throws -> T {
        try await commit {
            try self.writing { tx in
                let decision = try decide(try gather(tx))
                try decision.apply(tx)
                return decision.result
            }
        }
    }

    public func joinWaitlist(_ ask: WaitlistJoinAsk, decide: @escaping @Sendable (WaitlistJoinFacts) throws -> WaitlistJoin) async throws
        -> WaitlistEntry {
        try await commit { try self.writing { tx in try decide(try WaitlistJoinFacts.read(tx, ask)).apply(tx) } }
    }
}
