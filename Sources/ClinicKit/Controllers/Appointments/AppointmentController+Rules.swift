import Foundation

// The booking rules an operator sets (`BookingPolicy`).

extension AppointmentController {
    /// The booking rules in force.
    public func bookingPolicy() throws -> BookingPolicy {
        try database.reading { tx in try BookingPolicy.load(tx) }
    }

    /// Changes one booking rule (`BookingPolicy.keys`), checked; returns the rules then in force.
    @discardableResult
    public func setBookingRule(_ key: String, to value: String) throws -> BookingPolicy {
        try database.writing { tx in
            try BookingPolicy.set(tx, key: key, value: value)
            return try BookingPolicy.load(tx)
        }
    }
}
