import ClinicKit
import Foundation
import GRDB

extension SQLiteStore {
    // Over the `Database` of a migration hook (this store's own).
    func recomputeZones(_ db: Database, now: Date) throws {
        try ZoneChanges.recomputeZones(transaction(db), zones: zones, now: now)
    }

    /// The upcoming active appointments booked (or last moved) before their clinic's latest
    /// zone change, soonest first.
    public func appointmentsAfterZoneChanges(now: Date = Date()) throws -> [ZoneChangedAppointment] {
        try reading { tx in try tx.appointmentsAfterZoneChanges(from: now) }
    }

    // Over the `Database` of a migration hook (this store's own).
    static func appointmentsAfterZoneChanges(_ db: Database, now: Date) throws -> [ZoneChangedAppointment] {
        try SQLiteTransaction(db: db, manager: nil).appointmentsAfterZoneChanges(from: now)
    }
}
