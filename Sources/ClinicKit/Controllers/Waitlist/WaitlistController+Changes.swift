import Foundation

// A patient's changes of their waitlist (issue 56): leaving, resuming an entry, declining an
// offer. Each is decided by a pure function of the facts the store gathered under its locks
// (`WaitlistEntryState`, `WaitlistOfferState`), which says what to write (`WaitlistWrite`); the
// seam's path (the CLI's) and the awaited one (`WaitlistChangesStore`) run the same decision.

extension WaitlistController {
    /// What closing an open offer as `status` writes: the offer closed, its hold deleted; a
    /// lapse counted (to the back of the line, paused after `lapsesToPause`, issue 55, so that
    /// silent accounts do not hold each freed time in turn); the entry waiting again unless the
    /// offer was withdrawn; the time queued for the next in line unless it has begun.
    /// `entryStatus`: the entry's status before (nil: gone).
    public static func closing(_ offer: WaitlistOffer, as status: WaitlistOfferStatus, entryStatus: WaitlistEntryStatus?,
                               now: Date) -> [WaitlistWrite] {
        guard let id = offer.id else { return [] }
        var writes: [WaitlistWrite] = [.closeOffer(id: id, status: status, appointmentId: nil)]
        if let hold = offer.holdId { writes.append(.deleteHold(id: hold)) }
        if status == .lapsed { writes.append(.recordLapse(entryId: offer.entryId)) }
        if status != .withdrawn, entryStatus == .offered { writes.append(.setEntryStatus(id: offer.entryId, status: .waiting)) }
        if offer.startsAt > now {
            writes.append(.queueFreedTime(departmentId: offer.departmentId, doctorId: offer.doctorId, span: offer.startsAt..<offer.endsAt))
        }
        return writes
    }

    /// The patient's entry that is still waiting (or offered a time); `waitlist_entry_not_found`
    /// for one that is not, or not theirs.
    static func ownEntry(_ state: WaitlistEntryState?, id: Int64, clientId: Int64) throws -> WaitlistEntryState {
        guard let state, state.entry.clientId == clientId, state.entry.status == .waiting || state.entry.status == .offered else {
            throw ClinicError(.notFound, .waitlistEntryNotFound, String(id))
        }
        return state
    }

    /// Leaving: the entry's open offers withdrawn (their times go to the next in line), the entry left.
    public static func leaving(_ state: WaitlistEntryState?, id: Int64, clientId: Int64, now: Date) throws -> WaitlistDecision<Void> {
        let state = try ownEntry(state, id: id, clientId: clientId)
        let withdrawn = state.openOffers.flatMap { closing($0, as: .withdrawn, entryStatus: state.entry.status, now: now) }
        return WaitlistDecision(writes: withdrawn + [.setEntryStatus(id: id, status: .left)], now: now, result: ())
    }

    /// Resuming (issue 55): the entry back in line, at its back, its lapses forgotten; answered
    /// as it is then.
    public static func resuming(_ state: WaitlistEntryState?, id: Int64, clientId: Int64, now: Date) throws -> WaitlistDecision<WaitlistEntry> {
        var entry = try ownEntry(state, id: id, clientId: clientId).entry
        entry.lapses = 0
        entry.updatedAt = now
        return WaitlistDecision(writes: [.resumeEntry(id: id)], now: now, result: entry)
    }

    /// Declining the patient's open offer: closed, its time to the next in line, the entry
    /// waiting again (that time is not offered to it again). `waitlist_offer_not_found` for an
    /// offer not theirs; `invalid_transition` for one no longer open.
    public static func declining(_ state: WaitlistOfferState?, id: Int64, clientId: Int64, now: Date) throws -> WaitlistDecision<Void> {
        let offer = try owned(state?.offer, id, clientId)
        guard offer.status == .open else { throw ClinicError(.invalidTransition, .waitlistOfferClosed, offer.status.rawValue) }
        return WaitlistDecision(writes: closing(offer, as: .declined, entryStatus: state?.entryStatus, now: now), now: now, result: ())
    }

    /// `leave` awaited: one transaction of the store (`changeWaitlistEntry`).
    public func leave(_ id: Int64, clientId: Int64) async throws {
        let now = self.now()
        try await database.changeWaitlistEntry(id: id) { try Self.leaving($0, id: id, clientId: clientId, now: now) }
    }

    /// `resume` awaited.
    public func resume(_ id: Int64, clientId: Int64) async throws -> WaitlistEntry {
        let now = self.now()
        return try await database.changeWaitlistEntry(id: id) { try Self.resuming($0, id: id, clientId: clientId, now: now) }
    }

    /// `decline` awaited: one transaction of the store (`answerWaitlistOffer`).
    public func decline(_ id: Int64, clientId: Int64) async throws {
        let now = self.now()
        try await database.answerWaitlistOffer(id: id) { try Self.declining($0, id: id, clientId: clientId, now: now) }
    }
}
