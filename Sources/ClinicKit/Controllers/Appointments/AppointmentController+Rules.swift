import Foundation
import GRDB

// The booking rules an operator sets (`BookingPolicy`).

extension AppointmentController {
    /// The booking rules in force.
    public func bookingPolicy() throws -> BookingPolicy {
        try database.read { db in try BookingPolicy.load(db) }
    }

    /// Changes one booking rule (`BookingPolicy.keys`), checked; returns the rules then in force.
    @discardableResult
    public func setBookingRule(_ key: String, to value: String) throws -> BookingPolicy {
        try database.write { db in
            try BookingPolicy.set(db, key: key, value: value)
            return try BookingPolicy.load(db)
        }
    }
}
