import Foundation

// The waitlist (issue 45): entries, offers and the queue of freed times. Which time fits whom,
// who is next and what accepting does are `WaitlistController`'s rules; these only store and
// find. What must hold across servers is the database's (Migrations/0021_waitlist.sql,
// Migrations/postgres/0012_waitlist.sql): one waiting entry per patient and department, one
// open offer per entry, one offer of a time per entry, a queued time taken by one server.

/// Reading the waitlist.
public protocol WaitlistReading {
    func waitlistEntry(id: Int64) throws -> WaitlistEntry?
    /// The patient's entries that are waiting or offered a time, by id.
    func activeWaitlistEntries(ofClient clientId: Int64) throws -> [WaitlistEntry]
    func waitlistOffer(id: Int64) throws -> WaitlistOffer?
    /// The patient's open offers (live or past their time, not yet closed), by id.
    func openWaitlistOffers(ofClient clientId: Int64) throws -> [WaitlistOffer]
    /// The entries waiting or offered a time at a clinic (optionally one department), in the
    /// order they are offered times: department, priority (higher first), joining, id.
    func waitlistEntries(ofClinic clinicId: Int64, departmentId: Int64?) throws -> [WaitlistEntry]
    /// Whether the worker has anything to do at `now`: a freed time queued, or an open offer
    /// past its time. One cheap read, so that an idle worker writes nothing.
    func hasWaitlistWork(at now: Date) throws -> Bool
}

/// Changing the waitlist.
public protocol WaitlistWriting {
    /// Orders the patient's joins (the number of entries is counted under it): a store shared
    /// by several servers takes the patient's lock until COMMIT; a store with one writer need not.
    func lockWaitlist(ofClient clientId: Int64) throws
    /// Stores an entry and returns it with its id; nil when the patient already has an entry
    /// waiting (or offered a time) at that department.
    func insertWaitlistEntry(_ entry: WaitlistEntry) throws -> WaitlistEntry?
    func setWaitlistEntryStatus(id: Int64, to status: WaitlistEntryStatus, at now: Date) throws
    func setWaitlistEntryPriority(id: Int64, to priority: Int, at now: Date) throws
    /// An offer of the entry ran out unanswered: one more lapse, and the entry goes to the back
    /// of its line (`queued_at = now`).
    func recordWaitlistLapse(entryId: Int64, at now: Date) throws
    /// The patient acted on a paused entry: no lapses, at the back of the line.
    func resumeWaitlistEntry(id: Int64, at now: Date) throws
    /// The entries waiting at the department for that doctor or any doctor, that were never
    /// offered the time starting at `startsAt` with that doctor, in their order: priority
    /// (higher first), when they joined, id. At most `limit`. A shared store locks them.
    func waitingEntries(departmentId: Int64, doctorId: Int64, notOfferedAt startsAt: Date, limit: Int) throws -> [WaitlistEntry]
    // (Issue 55: in the line's order, priority first, then `coalesce(queued_at, created_at)`;
    // paused entries, `lapses >= WaitlistEntry.lapsesToPause`, are not in it.)
    /// Takes one queued freed time out of the queue (the oldest not taken by another
    /// transaction at once); nil when there is none. Taken in the caller's transaction: if it
    /// rolls back, the time is queued again.
    func takeFreedTime() throws -> FreedTime?
    /// Queues a time that became free again (an offer declined, lapsed or withdrawn).
    func queueFreedTime(departmentId: Int64, doctorId: Int64, span: Range<Date>, at now: Date) throws
    /// Stores a hold of an offer (`slot_holds.for_offer`): a hold the patient's own holds
    /// neither count nor release. Refused as `insertSlotHold` is when the time is held.
    func insertOfferHold(_ hold: SlotHold) throws -> SlotHold
    /// Stores an offer and returns it with its id; nil when the entry has an open offer already
    /// or was offered that time before.
    func insertWaitlistOffer(_ offer: WaitlistOffer) throws -> WaitlistOffer?
    /// The offer, its row locked until the transaction ends (PostgreSQL: `FOR UPDATE`; SQLite's
    /// write transactions are serialised already), so that an answer decides on the status no
    /// other server's answer can change before this one commits; nil for none.
    func lockWaitlistOffer(id: Int64) throws -> WaitlistOffer?
    /// Closes an open offer (`status` is not `.open`), with the appointment it became; false
    /// when it was not open (closed meanwhile by another transaction: it is then left as it is).
    func closeWaitlistOffer(id: Int64, as status: WaitlistOfferStatus, appointmentId: Int64?, at now: Date) throws -> Bool
    /// Open offers past their time at `now`, at most `limit`, oldest first; a shared store
    /// locks them and skips those another transaction has locked.
    func lapsedWaitlistOffers(at now: Date, limit: Int) throws -> [WaitlistOffer]
}
