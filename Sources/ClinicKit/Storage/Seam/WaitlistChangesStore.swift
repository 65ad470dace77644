import Foundation

// A patient's changes of their waitlist awaited (issue 56): leaving, resuming an entry and
// declining an offer, each one transaction the caller awaits. The store gathers the facts under
// the locks that keep them true (the entry with its open offers, or the offer with its entry's
// status), ClinicKit decides on them (`WaitlistController`'s pure `leaving`, `resuming`,
// `declining`), and the store writes the decision's `WaitlistWrite`s, in order.

/// The awaited waitlist changes a `ClinicStore` offers.
public protocol WaitlistChangesStore: Sendable {
    /// One change of an entry in one transaction: the entry (nil: no such entry) and its open
    /// offers, locked until COMMIT on a store shared by several servers, `decide`, the writes.
    func changeWaitlistEntry<T: Sendable>(id: Int64, decide: @escaping @Sendable (WaitlistEntryState?) throws -> WaitlistDecision<T>)
        async throws -> T
    /// One answer to an offer in one transaction: the offer (nil: no such offer) locked until
    /// COMMIT with its entry's status, `decide`, the writes.
    func answerWaitlistOffer<T: Sendable>(id: Int64, decide: @escaping @Sendable (WaitlistOfferState?) throws -> WaitlistDecision<T>)
        async throws -> T
}

/// An entry with its open offers, as a change of it is decided on.
public struct WaitlistEntryState: Sendable, Equatable {
    public let entry: WaitlistEntry
    /// The entry's offers still open (whatever their time), by id.
    public let openOffers: [WaitlistOffer]

    public init(entry: WaitlistEntry, openOffers: [WaitlistOffer]) {
        self.entry = entry; self.openOffers = openOffers
    }

    /// The gather with the seam's reads, in the caller's write transaction: the entry, then its
    /// open offers, each locked (`lockWaitlistOffer`) where the store locks.
    package static func read(_ tx: any StoreWriting, id: Int64) throws -> WaitlistEntryState? {
        guard let entry = try tx.waitlistEntry(id: id) else { return nil }
        let offers = try tx.openWaitlistOffers(ofClient: entry.clientId).filter { $0.entryId == id }
        return WaitlistEntryState(entry: entry, openOffers: try offers.compactMap { offer in
            try offer.id.flatMap { try tx.lockWaitlistOffer(id: $0) }.flatMap { $0.status == .open ? $0 : nil }
        })
    }
}

/// An offer with the status of its entry, as an answer to it is decided on.
public struct WaitlistOfferState: Sendable, Equatable {
    public let offer: WaitlistOffer
    /// Its entry's status (nil: the entry is gone).
    public let entryStatus: WaitlistEntryStatus?

    public init(offer: WaitlistOffer, entryStatus: WaitlistEntryStatus?) {
        self.offer = offer; self.entryStatus = entryStatus
    }

    /// The gather with the seam's reads, in the caller's write transaction: the offer locked.
    package static func read(_ tx: any StoreWriting, id: Int64) throws -> WaitlistOfferState? {
        guard let offer = try tx.lockWaitlistOffer(id: id) else { return nil }
        return WaitlistOfferState(offer: offer, entryStatus: try tx.waitlistEntry(id: offer.entryId)?.status)
    }
}

/// One write of a waitlist change, as plain data: what the store runs, in order.
public enum WaitlistWrite: Sendable, Equatable {
    /// The offer closed (`closeWaitlistOffer`): only an open one is; none closed refuses the change.
    case closeOffer(id: Int64, status: WaitlistOfferStatus, appointmentId: Int64?)
    case deleteHold(id: Int64)
    /// One more unanswered offer, and to the back of the line (`recordWaitlistLapse`).
    case recordLapse(entryId: Int64)
    case setEntryStatus(id: Int64, status: WaitlistEntryStatus)
    /// No lapses, to the back of the line (`resumeWaitlistEntry`).
    case resumeEntry(id: Int64)
    /// The time free again, for the next in line (`queueFreedTime`).
    case queueFreedTime(departmentId: Int64, doctorId: Int64, span: Range<Date>)
}

/// What a waitlist change writes, and what its caller is answered.
public struct WaitlistDecision<Result: Sendable>: Sendable {
    public let writes: [WaitlistWrite]
    /// The moment written as the rows' `updated_at`, `closed_at`, `queued_at`.
    public let now: Date
    public let result: Result

    public init(writes: [WaitlistWrite], now: Date, result: Result) {
        self.writes = writes; self.now = now; self.result = result
    }

    /// The writes with the seam's, in the caller's transaction. An offer that was no longer
    /// open refuses the change (`waitlist_offer_closed`): the caller's transaction rolls back.
    package func apply(_ tx: any StoreWriting) throws {
        for write in writes { try Self.apply(write, tx, now: now) }
    }

    package static func apply(_ write: WaitlistWrite, _ tx: any StoreWriting, now: Date) throws {
        switch write {
        case let .closeOffer(id, status, appointmentId):
            guard try tx.closeWaitlistOffer(id: id, as: status, appointmentId: appointmentId, at: now) else {
                throw ClinicError(.invalidTransition, .waitlistOfferClosed, status.rawValue)
            }
        case let .deleteHold(id): try tx.deleteSlotHold(id: id)
        case let .recordLapse(entryId): try tx.recordWaitlistLapse(entryId: entryId, at: now)
        case let .setEntryStatus(id, status): try tx.setWaitlistEntryStatus(id: id, to: status, at: now)
        case let .resumeEntry(id): try tx.resumeWaitlistEntry(id: id, at: now)
        case let .queueFreedTime(departmentId, doctorId, span):
            try tx.queueFreedTime(departmentId: departmentId, doctorId: doctorId, span: span, at: now)
        }
    }
}
