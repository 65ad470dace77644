import ClinicKit
import Foundation
import GRDB

// The hot reads a server awaits (issue 56): run on GRDB's reader queue with its async `read`,
// which suspends the caller's task instead of blocking its thread.

extension SQLiteStore {
    /// One read transaction (a snapshot), awaited.
    func readAwaited<T: Sendable>(_ body: @escaping @Sendable (any StoreReading) throws -> T) async throws -> T {
        do {
            return try await writer.read { db in try body(SQLiteTransaction(db: db, manager: self)) }
        } catch {
            throw Self.mapped(error)
        }
    }

    public func lookUpPatientSession(tokenHash: String) async throws -> SignedInPatientFacts? {
        try await readAwaited { tx in try SignedInPatientFacts.read(tx, tokenHash: tokenHash) }
    }

    public func lookUpStaffSession(tokenHash: String) async throws -> StaffSessionLookup? {
        try await readAwaited { tx in try tx.activeStaffSession(tokenHash: tokenHash) }
    }

    public func accountFacts(clientId: Int64) async throws -> AccountFacts {
        try await readAwaited { tx in try AccountFacts.read(tx, clientId: clientId) }
    }

    public func gatherSlotFacts(departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>, takenSpan: Range<Date>,
                                at now: Date) async throws -> SlotFacts? {
        try await readAwaited { tx in
            try SlotFacts.read(tx, departmentId: departmentId, visitTypeId: visitTypeId, days: days, takenSpan: takenSpan, at: now)
        }
    }
}
