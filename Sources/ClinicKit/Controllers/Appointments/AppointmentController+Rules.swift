import Foundation

// The booking rules an operator sets (`BookingPolicy`).

extension AppointmentController {
    /// The booking rules in force (issue 56: `OperatorStore.settings`, awaited).
    public func bookingPolicy() async throws -> BookingPolicy {
        BookingPolicy(settings: try await database.settings(prefix: BookingPolicy.prefix))
    }

    /// Changes one booking rule (`BookingPolicy.keys`): the value checked, then the store's one
    /// transaction (`OperatorStore.changeSetting`); the rules then in force.
    @discardableResult
    public func setBookingRule(_ key: String, to value: String) async throws -> BookingPolicy {
        let stored = try BookingPolicy.checked(key: key, value: value)
        return BookingPolicy(settings: try await database.changeSetting(key, to: stored, prefix: BookingPolicy.prefix))
    }
}
