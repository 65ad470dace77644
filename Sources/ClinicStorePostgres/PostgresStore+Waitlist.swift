import ClinicKit
import Foundation
import PostgresNIO

// A patient's waitlist changes awaited (issue 56: `WaitlistChangesStore`): one transaction on a
// leased connection, each statement awaited. The gather locks what the decision stands on (the
// entry and its open offers, or the offer), so that the worker or another server answering at
// once waits, then finds what this change wrote; ClinicKit decides; each `WaitlistWrite` is one
// statement, the seam's own (PostgresTransaction+Waitlist.swift).

extension PostgresStore {
    /// BEGIN, the entry locked, its open offers locked, the writes; COMMIT.
    public func changeWaitlistEntry<T: Sendable>(id: Int64, decide: @escaping @Sendable (WaitlistEntryState?) throws -> WaitlistDecision<T>)
        async throws -> T {
        let sent = statementsSent
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            var state: WaitlistEntryState?
            if let found = try await tx.rows("SELECT * FROM waitlist_entries WHERE id = $1 FOR UPDATE", [id]).first {
                let offers = try await tx.rows("SELECT * FROM waitlist_offers WHERE entry_id = $1 AND status = 'open' ORDER BY id FOR UPDATE",
                                               [id])
                state = WaitlistEntryState(entry: try WaitlistEntry(row: try PostgresTransaction.row(found)),
                                           openOffers: try offers.map { try WaitlistOffer(row: try PostgresTransaction.row($0)) })
            }
            let decision = try decide(state)
            try await Self.write(decision.writes, at: decision.now, tx)
            return decision.result
        }
    }

    /// BEGIN, the offer locked with its entry's status, the writes; COMMIT.
    public func answerWaitlistOffer<T: Sendable>(id: Int64, decide: @escaping @Sendable (WaitlistOfferState?) throws -> WaitlistDecision<T>)
        async throws -> T {
        let sent = statementsSent
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let state = try await tx.rows("""
                SELECT o.*, e.status AS entry_status FROM waitlist_offers o LEFT JOIN waitlist_entries e ON e.id = o.entry_id
                WHERE o.id = $1 FOR UPDATE OF o
                """, [id]).first.map { found in
                let row = try PostgresTransaction.row(found)
                let status: String? = try row.value("entry_status", in: "waitlist_entries")
                return WaitlistOfferState(offer: try WaitlistOffer(row: row), entryStatus: status.flatMap(WaitlistEntryStatus.init(rawValue:)))
            }
            let decision = try decide(state)
            try await Self.write(decision.writes, at: decision.now, tx)
            return decision.result
        }
    }

    /// Each write one statement, in order; an offer no longer open refuses the change.
    static func write(_ writes: [WaitlistWrite], at now: Date, _ tx: AwaitedConnection) async throws {
        for write in writes {
            switch write {
            case let .closeOffer(id, status, appointmentId):
                guard try await !tx.rows(PostgresTransaction.closeOfferSQL, [id, status.rawValue, appointmentId, now]).isEmpty else {
                    throw ClinicError(.invalidTransition, .waitlistOfferClosed, status.rawValue)
                }
            case let .deleteHold(id): _ = try await tx.rows(PostgresTransaction.deleteHoldSQL, [id])
            case let .recordLapse(entryId): _ = try await tx.rows(PostgresTransaction.recordLapseSQL, [now, entryId])
            case let .setEntryStatus(id, status): _ = try await tx.rows(PostgresTransaction.setEntryStatusSQL, [id, status.rawValue, now])
            case let .resumeEntry(id): _ = try await tx.rows(PostgresTransaction.resumeEntrySQL, [now, id])
            case let .queueFreedTime(departmentId, doctorId, span):
                _ = try await tx.rows(PostgresTransaction.queueFreedSQL, [departmentId, doctorId, span.lowerBound, span.upperBound, now])
            }
        }
    }
}
