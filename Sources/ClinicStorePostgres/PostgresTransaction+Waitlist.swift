import ClinicKit
import Foundation
import PostgresNIO

// The waitlist area of the seam on PostgreSQL (Migrations/postgres/0012_waitlist.sql). Several
// servers work the same queue: a freed time is taken by one transaction (`FOR UPDATE SKIP
// LOCKED`, deleted in the transaction that offers it, so a server that dies mid-offer leaves it
// queued), the entries it may go to are locked in their order, and a lapsed offer is closed by
// one server (`SKIP LOCKED`, then an update that checks it is still open).

extension PostgresTransaction {
    func waitlistEntry(id: Int64) throws -> WaitlistEntry? {
        try row("SELECT * FROM waitlist_entries WHERE id = $1", [id]).map(WaitlistEntry.init(row:))
    }

    func activeWaitlistEntries(ofClient clientId: Int64) throws -> [WaitlistEntry] {
        try rows("SELECT * FROM waitlist_entries WHERE client_id = $1 AND status IN ('waiting', 'offered') ORDER BY id", [clientId])
            .map(WaitlistEntry.init(row:))
    }

    func waitlistOffer(id: Int64) throws -> WaitlistOffer? {
        try row("SELECT * FROM waitlist_offers WHERE id = $1", [id]).map(WaitlistOffer.init(row:))
    }

    func openWaitlistOffers(ofClient clientId: Int64) throws -> [WaitlistOffer] {
        try rows(Self.openOffersOfClientSQL, [clientId]).map(WaitlistOffer.init(row:))
    }

    /// Patient `$1`'s open offers, by id.
    static let openOffersOfClientSQL = "SELECT * FROM waitlist_offers WHERE client_id = $1 AND status = 'open' ORDER BY id"

    func waitlistEntries(ofClinic clinicId: Int64, departmentId: Int64?) throws -> [WaitlistEntry] {
        try rows(Self.clinicWaitlistSQL, [clinicId, departmentId]).map(WaitlistEntry.init(row:))
    }

    /// A clinic's (`$1`) entries waiting or offered a time, of one department (`$2`) or all, in
    /// the order they are offered times.
    static let clinicWaitlistSQL = """
        SELECT * FROM waitlist_entries WHERE clinic_id = $1 AND ($2::bigint IS NULL OR department_id = $2::bigint)
                                         AND status IN ('waiting', 'offered')
        ORDER BY department_id, priority DESC, created_at, id
        """

    func hasWaitlistWork(at now: Date) throws -> Bool {
        try value(Bool.self, Self.hasWorkSQL, [now]) ?? false
    }

    /// Whether the worker has anything to do at `$1`, as `work`.
    static let hasWorkSQL = """
        SELECT EXISTS (SELECT 1 FROM waitlist_freed)
            OR EXISTS (SELECT 1 FROM waitlist_offers WHERE status = 'open' AND expires_at <= $1)
            OR EXISTS (SELECT 1 FROM slot_holds h WHERE h.expires_at <= $1 AND NOT h.for_offer
                       AND EXISTS (SELECT 1 FROM waitlist_entries e WHERE e.department_id = h.department_id AND e.status = 'waiting'))
            AS work
        """

    func lockWaitlist(ofClient clientId: Int64) throws {
        // The patient's lock, as a booking takes it: two servers joining for one patient at once
        // count the entries one after the other.
        try execute("SELECT pg_advisory_xact_lock(hashtextextended($1 || $2::text, 0))", [Self.clientAdvisoryLockNamespace, clientId])
    }

    func insertWaitlistEntry(_ entry: WaitlistEntry) throws -> WaitlistEntry? {
        guard let id = try value(Int64.self, Self.insertEntrySQL, Self.insertEntryBinds(entry)) else { return nil }
        var entry = entry
        entry.id = id
        return entry
    }

    /// An entry stored, its id returned; none when the patient waits at the department already.
    static let insertEntrySQL = """
        INSERT INTO waitlist_entries (client_id, clinic_id, department_id, doctor_id, visit_type_id, first_day, last_day,
                                      from_minute, to_minute, weekdays, before_appointment_id, priority, staff_id, status,
                                      created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
        ON CONFLICT DO NOTHING RETURNING id
        """

    static func insertEntryBinds(_ entry: WaitlistEntry) -> [any PostgresBindable] {
        [entry.clientId, entry.clinicId, entry.departmentId, entry.doctorId, entry.visitTypeId, entry.firstDay, entry.lastDay,
         entry.fromMinute, entry.toMinute, entry.weekdays, entry.beforeAppointmentId, entry.priority, entry.staffId,
         entry.status.rawValue, entry.createdAt, entry.updatedAt]
    }

    func setWaitlistEntryStatus(id: Int64, to status: WaitlistEntryStatus, at now: Date) throws {
        try execute(Self.setEntryStatusSQL, [id, status.rawValue, now])
    }

    /// Entry `$1`'s status set to `$2` at `$3`.
    static let setEntryStatusSQL = "UPDATE waitlist_entries SET status = $2, updated_at = $3 WHERE id = $1"

    func setWaitlistEntryPriority(id: Int64, to priority: Int, at now: Date) throws {
        try execute(Self.setEntryPrioritySQL, [id, priority, now])
    }

    static let setEntryPrioritySQL = "UPDATE waitlist_entries SET priority = $2, updated_at = $3 WHERE id = $1"


    func waitingEntries(departmentId: Int64, doctorId: Int64, notOfferedAt startsAt: Date, limit: Int) throws -> [WaitlistEntry] {
        try rows(Self.waitingEntriesSQL, [departmentId, doctorId, startsAt, limit]).map(WaitlistEntry.init(row:))
    }

    /// The entries a freed time of department `$1`, doctor `$2`, at `$3` may go to, the first
    /// `$4` in their order, locked in it (no SKIP: the next in line is the next, whoever else looks).
    static let waitingEntriesSQL = """
        SELECT * FROM waitlist_entries e
        WHERE e.department_id = $1 AND e.status = 'waiting' AND e.lapses < \(WaitlistEntry.lapsesToPause)
              AND (e.doctor_id IS NULL OR e.doctor_id = $2)
              AND NOT EXISTS (SELECT 1 FROM waitlist_offers o WHERE o.entry_id = e.id AND o.doctor_id = $2 AND o.starts_at = $3)
        ORDER BY e.priority DESC, coalesce(e.queued_at, e.created_at), e.id LIMIT $4
        FOR UPDATE
        """

    func recordWaitlistLapse(entryId: Int64, at now: Date) throws {
        try execute(Self.recordLapseSQL, [now, entryId])
    }

    /// Entry `$2` lapsed once more at `$1`, to the back of its line.
    static let recordLapseSQL = "UPDATE waitlist_entries SET lapses = lapses + 1, queued_at = $1, updated_at = $1 WHERE id = $2"

    func resumeWaitlistEntry(id: Int64, at now: Date) throws {
        try execute(Self.resumeEntrySQL, [now, id])
    }

    /// Entry `$2` resumed at `$1`: no lapses, at the back of its line.
    static let resumeEntrySQL = "UPDATE waitlist_entries SET lapses = 0, queued_at = $1, updated_at = $1 WHERE id = $2"

    func takeFreedTime() throws -> FreedTime? {
        try row(Self.takeFreedSQL, []).map(FreedTime.init(row:))
    }

    /// The first freed time taken off the queue (one another transaction took is skipped).
    static let takeFreedSQL = """
        DELETE FROM waitlist_freed
        WHERE id = (SELECT id FROM waitlist_freed ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *
        """

    func queueFreedTime(departmentId: Int64, doctorId: Int64, span: Range<Date>, at now: Date) throws {
        try execute(Self.queueFreedSQL, [departmentId, doctorId, span.lowerBound, span.upperBound, now])
    }

    /// A freed time queued: department `$1`, doctor `$2`, `$3`..<`$4`, at `$5`.
    static let queueFreedSQL = "INSERT INTO waitlist_freed (department_id, doctor_id, starts_at, ends_at, freed_at) VALUES ($1, $2, $3, $4, $5)"

    func insertOfferHold(_ hold: SlotHold) throws -> SlotHold {
        guard let id = try value(Int64.self, Self.insertOfferHoldSQL, Self.insertHoldBinds(hold)) else {
            throw ClinicError(.slotTaken, .slotTaken)
        }
        var hold = hold
        hold.id = id
        return hold
    }

    /// An offer's hold (`insertHoldBinds`), its id; none when the time is held or booked: the
    /// holds' exclusion constraint is the arbiter, whichever server holds it first.
    static let insertOfferHoldSQL = """
        INSERT INTO slot_holds (client_id, clinic_id, department_id, doctor_id, visit_type_id, starts_at, ends_at, expires_at,
                                created_at, for_offer)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, true)
        ON CONFLICT DO NOTHING RETURNING id
        """

    func insertWaitlistOffer(_ offer: WaitlistOffer) throws -> WaitlistOffer? {
        guard let id = try value(Int64.self, Self.insertOfferSQL, Self.insertOfferBinds(offer)) else { return nil }
        var offer = offer
        offer.id = id
        return offer
    }

    /// An offer (`insertOfferBinds`), its id; none when the store refuses it.
    static let insertOfferSQL = """
        INSERT INTO waitlist_offers (entry_id, client_id, hold_id, clinic_id, department_id, doctor_id, starts_at, ends_at,
                                     expires_at, status, appointment_id, created_at, closed_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
        ON CONFLICT DO NOTHING RETURNING id
        """

    static func insertOfferBinds(_ offer: WaitlistOffer) -> [any PostgresBindable] {
        [offer.entryId, offer.clientId, offer.holdId, offer.clinicId, offer.departmentId, offer.doctorId, offer.startsAt,
         offer.endsAt, offer.expiresAt, offer.status.rawValue, offer.appointmentId, offer.createdAt, offer.closedAt]
    }

    func lockWaitlistOffer(id: Int64) throws -> WaitlistOffer? {
        try row("SELECT * FROM waitlist_offers WHERE id = $1 FOR UPDATE", [id]).map(WaitlistOffer.init(row:))
    }

    func closeWaitlistOffer(id: Int64, as status: WaitlistOfferStatus, appointmentId: Int64?, at now: Date) throws -> Bool {
        try value(Int64.self, Self.closeOfferSQL, [id, status.rawValue, appointmentId, now]) != nil
    }

    /// Offer `$1` closed as `$2` (appointment `$3`) at `$4` if it is open; its id when it was.
    static let closeOfferSQL = """
        UPDATE waitlist_offers SET status = $2, appointment_id = $3, closed_at = $4 WHERE id = $1 AND status = 'open' RETURNING id
        """

    func lapsedWaitlistOffers(at now: Date, limit: Int) throws -> [WaitlistOffer] {
        try rows(Self.lapsedOffersSQL, [now, limit]).map(WaitlistOffer.init(row:))
    }

    /// The open offers lapsed by `$1`, the first `$2`, each locked (one another server is
    /// closing is skipped), with their entries' statuses (`entry_status`).
    static let lapsedOffersSQL = """
        SELECT o.*, e.status AS entry_status FROM waitlist_offers o LEFT JOIN waitlist_entries e ON e.id = o.entry_id
        WHERE o.status = 'open' AND o.expires_at <= $1 ORDER BY o.expires_at, o.id LIMIT $2
        FOR UPDATE OF o SKIP LOCKED
        """
}
