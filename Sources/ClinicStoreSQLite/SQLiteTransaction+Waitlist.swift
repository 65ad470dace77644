import ClinicKit
import Foundation
import GRDB

// The waitlist area of the seam on SQLite (Migrations/0021_waitlist.sql). Writers are one at a
// time here, so the queue needs no skipping of locked rows and a patient's joins no lock: the
// unique indexes are the arbiters all the same, as on PostgreSQL.

extension SQLiteTransaction {
    func waitlistEntry(id: Int64) throws -> WaitlistEntry? {
        guard try db.tableExists("waitlist_entries") else { return nil }
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM waitlist_entries WHERE id = ?"), arguments: [id])
            .map { try WaitlistEntry(row: SQLiteRow($0)) }
    }

    func activeWaitlistEntries(ofClient clientId: Int64) throws -> [WaitlistEntry] {
        guard try db.tableExists("waitlist_entries") else { return [] }
        return try Row.fetchAll(db.cachedStatement(sql: """
            SELECT * FROM waitlist_entries WHERE client_id = ? AND status IN ('waiting', 'offered') ORDER BY id
            """), arguments: [clientId]).map { try WaitlistEntry(row: SQLiteRow($0)) }
    }

    func waitlistOffer(id: Int64) throws -> WaitlistOffer? {
        guard try db.tableExists("waitlist_offers") else { return nil }
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM waitlist_offers WHERE id = ?"), arguments: [id])
            .map { try WaitlistOffer(row: SQLiteRow($0)) }
    }

    func openWaitlistOffers(ofClient clientId: Int64) throws -> [WaitlistOffer] {
        guard try db.tableExists("waitlist_offers") else { return [] }
        return try Row.fetchAll(db.cachedStatement(sql: """
            SELECT * FROM waitlist_offers WHERE client_id = ? AND status = 'open' ORDER BY id
            """), arguments: [clientId]).map { try WaitlistOffer(row: SQLiteRow($0)) }
    }

    func waitlistEntries(ofClinic clinicId: Int64, departmentId: Int64?) throws -> [WaitlistEntry] {
        guard try db.tableExists("waitlist_entries") else { return [] }
        return try Row.fetchAll(db.cachedStatement(sql: """
            SELECT * FROM waitlist_entries WHERE clinic_id = ? AND (? IS NULL OR department_id = ?)
                                             AND status IN ('waiting', 'offered')
            ORDER BY department_id, priority DESC, created_at, id
            """), arguments: [clinicId, departmentId, departmentId]).map { try WaitlistEntry(row: SQLiteRow($0)) }
    }

    func hasWaitlistWork(at now: Date) throws -> Bool {
        guard try db.tableExists("waitlist_freed") else { return false }
        return try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM waitlist_freed)
                OR EXISTS (SELECT 1 FROM waitlist_offers WHERE status = 'open' AND expires_at <= ?)
                OR EXISTS (SELECT 1 FROM slot_holds h WHERE h.expires_at <= ? AND h.for_offer = 0
                           AND EXISTS (SELECT 1 FROM waitlist_entries e WHERE e.department_id = h.department_id AND e.status = 'waiting'))
            """), arguments: [now.seconds, now.seconds]) ?? false
    }

    func lockWaitlist(ofClient clientId: Int64) throws {}

    func insertWaitlistEntry(_ entry: WaitlistEntry) throws -> WaitlistEntry? {
        try db.execute(sql: """
            INSERT INTO waitlist_entries (client_id, clinic_id, department_id, doctor_id, visit_type_id, first_day, last_day,
                                          from_minute, to_minute, weekdays, before_appointment_id, priority, staff_id, status,
                                          created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """, arguments: [entry.clientId, entry.clinicId, entry.departmentId, entry.doctorId, entry.visitTypeId, entry.firstDay,
                             entry.lastDay, entry.fromMinute, entry.toMinute, entry.weekdays, entry.beforeAppointmentId,
                             entry.priority, entry.staffId, entry.status.rawValue, entry.createdAt.seconds, entry.updatedAt.seconds])
        guard db.changesCount == 1 else { return nil }
        var entry = entry
        entry.id = db.lastInsertedRowID
        return entry
    }

    func setWaitlistEntryStatus(id: Int64, to status: WaitlistEntryStatus, at now: Date) throws {
        try db.execute(sql: "UPDATE waitlist_entries SET status = ?, updated_at = ? WHERE id = ?",
                       arguments: [status.rawValue, now.seconds, id])
    }

    func setWaitlistEntryPriority(id: Int64, to priority: Int, at now: Date) throws {
        try db.execute(sql: "UPDATE waitlist_entries SET priority = ?, updated_at = ? WHERE id = ?",
                       arguments: [priority, now.seconds, id])
    }

    func waitingEntries(departmentId: Int64, doctorId: Int64, notOfferedAt startsAt: Date, limit: Int) throws -> [WaitlistEntry] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT * FROM waitlist_entries e
            WHERE e.department_id = ? AND e.status = 'waiting' AND e.lapses < \(WaitlistEntry.lapsesToPause)
                  AND (e.doctor_id IS NULL OR e.doctor_id = ?)
                  AND NOT EXISTS (SELECT 1 FROM waitlist_offers o WHERE o.entry_id = e.id AND o.doctor_id = ? AND o.starts_at = ?)
            ORDER BY e.priority DESC, coalesce(e.queued_at, e.created_at), e.id LIMIT ?
            """), arguments: [departmentId, doctorId, doctorId, startsAt.seconds, limit]).map { try WaitlistEntry(row: SQLiteRow($0)) }
    }

    func recordWaitlistLapse(entryId: Int64, at now: Date) throws {
        try db.execute(sql: "UPDATE waitlist_entries SET lapses = lapses + 1, queued_at = ?, updated_at = ? WHERE id = ?",
                       arguments: [now.seconds, now.seconds, entryId])
    }

    func resumeWaitlistEntry(id: Int64, at now: Date) throws {
        try db.execute(sql: "UPDATE waitlist_entries SET lapses = 0, queued_at = ?, updated_at = ? WHERE id = ?",
                       arguments: [now.seconds, now.seconds, id])
    }

    func takeFreedTime() throws -> FreedTime? {
        try Row.fetchOne(db.cachedStatement(sql: """
            DELETE FROM waitlist_freed WHERE id = (SELECT min(id) FROM waitlist_freed) RETURNING *
            """)).map { try FreedTime(row: SQLiteRow($0)) }
    }

    func queueFreedTime(departmentId: Int64, doctorId: Int64, span: Range<Date>, at now: Date) throws {
        try db.execute(sql: """
            INSERT INTO waitlist_freed (department_id, doctor_id, starts_at, ends_at, freed_at) VALUES (?, ?, ?, ?, ?)
            """, arguments: [departmentId, doctorId, span.lowerBound.seconds, span.upperBound.seconds, now.seconds])
    }

    func insertOfferHold(_ hold: SlotHold) throws -> SlotHold {
        try db.execute(sql: """
            INSERT INTO slot_holds (client_id, clinic_id, department_id, doctor_id, visit_type_id, starts_at, ends_at, expires_at,
                                    created_at, for_offer)
            SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, 1
            WHERE NOT EXISTS (SELECT 1 FROM slot_holds WHERE doctor_id = ? AND starts_at < ? AND ends_at > ? AND expires_at > ?)
            """, arguments: [hold.clientId, hold.clinicId, hold.departmentId, hold.doctorId, hold.visitTypeId, hold.startsAt.seconds,
                             hold.endsAt.seconds, hold.expiresAt.seconds, hold.createdAt.seconds,
                             hold.doctorId, hold.endsAt.seconds, hold.startsAt.seconds, hold.createdAt.seconds])
        guard db.changesCount == 1 else { throw ClinicError(.slotTaken, .slotTaken) }
        var hold = hold
        hold.id = db.lastInsertedRowID
        return hold
    }

    func insertWaitlistOffer(_ offer: WaitlistOffer) throws -> WaitlistOffer? {
        try db.execute(sql: """
            INSERT INTO waitlist_offers (entry_id, client_id, hold_id, clinic_id, department_id, doctor_id, starts_at, ends_at,
                                         expires_at, status, appointment_id, created_at, closed_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """, arguments: [offer.entryId, offer.clientId, offer.holdId, offer.clinicId, offer.departmentId, offer.doctorId,
                             offer.startsAt.seconds, offer.endsAt.seconds, offer.expiresAt.seconds, offer.status.rawValue,
                             offer.appointmentId, offer.createdAt.seconds, offer.closedAt?.seconds])
        guard db.changesCount == 1 else { return nil }
        var offer = offer
        offer.id = db.lastInsertedRowID
        return offer
    }

    func lockWaitlistOffer(id: Int64) throws -> WaitlistOffer? { try waitlistOffer(id: id) }

    func closeWaitlistOffer(id: Int64, as status: WaitlistOfferStatus, appointmentId: Int64?, at now: Date) throws -> Bool {
        try db.execute(sql: """
            UPDATE waitlist_offers SET status = ?, appointment_id = ?, closed_at = ? WHERE id = ? AND status = 'open'
            """, arguments: [status.rawValue, appointmentId, now.seconds, id])
        return db.changesCount == 1
    }

    func lapsedWaitlistOffers(at now: Date, limit: Int) throws -> [WaitlistOffer] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT * FROM waitlist_offers WHERE status = 'open' AND expires_at <= ? ORDER BY expires_at, id LIMIT ?
            """), arguments: [now.seconds, limit]).map { try WaitlistOffer(row: SQLiteRow($0)) }
    }
}
