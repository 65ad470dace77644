import ClinicKit
import Foundation

// The outbox awaited on SQLite (`OutboxStore`): each operation one read or one write through
// the group committer, as the seam's reads and writes compose it (`DeliveryClaim.claim`,
// `ReminderAsk.write`).

extension SQLiteStore {
    public func anyDeliveryDue(at now: Date, channels: Set<DeliveryChannel>) async throws -> Bool {
        try await readAwaited { tx in try tx.hasDueDeliveries(at: now, channels: channels) }
    }

    public func claimDelivery(_ ask: DeliveryClaimAsk, compose: @escaping @Sendable (DeliveryFacts) throws -> OutgoingDelivery?)
        async throws -> DeliveryClaim {
        try await commit { try self.writing { tx in try DeliveryClaim.claim(tx, ask, store: self, compose: compose) } }
    }

    public func markDeliverySent(_ id: Int64, at: Date, reply: String) async throws {
        try await commit { try self.writing { tx in try tx.completeDelivery(id, sentAt: at, reply: reply) } }
    }

    public func markDeliveryFailed(_ id: Int64, error: String, givingUp: Bool) async throws {
        try await commit { try self.writing { tx in try tx.failDelivery(id, error: error, givingUp: givingUp) } }
    }

    /// A read first; the write (which decides again, on what it reads) only when one is due.
    public func writeReminders(_ ask: ReminderAsk) async throws -> Int {
        guard try await !readAwaited({ tx in try ask.due(tx) }).isEmpty else { return 0 }
        return try await commit { try self.writing { tx in try ask.write(tx) } }
    }
}
