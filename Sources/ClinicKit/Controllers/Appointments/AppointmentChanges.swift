import Foundation

/// Every change to an appointment the controllers make, whichever front asked (the API, the
/// web app, the staff's pages, the CLI), told to one observer as (operation, outcome):
/// `book`, `reschedule`, `cancel`, or a staff action (`check-in`, `undo-check-in`, `start`,
/// `complete`, `no-show`, `staff-cancel`), with `ok` or the error code that refused it. `clinic serve` counts
/// them in `clinic_appointment_changes_total`; counting in a front missed the others.
public final class AppointmentChanges: Sendable {
    public typealias Observer = @Sendable (_ operation: String, _ outcome: String) -> Void
    private let observer = LockedBox<Observer?>(nil)

    public init() {}

    /// Who is told from now on (one observer: the process's metrics).
    public func observe(_ body: @escaping Observer) { observer.withLock { $0 = body } }

    /// Tells a change's outcome once it is known.
    func tell<T>(_ operation: String, _ outcome: Result<T, ClinicError>) {
        switch outcome {
        case .success: observer.current?(operation, "ok")
        case .failure(let error): observer.current?(operation, error.code.rawValue)
        }
    }

    /// `count` of a change awaited.
    func count<T>(_ operation: String, _ change: () async throws -> T) async throws -> T {
        let tell = observer.current
        do {
            let result = try await change()
            tell?(operation, "ok")
            return result
        } catch let error as ClinicError {
            tell?(operation, error.code.rawValue)
            throw error
        }
    }

    /// Runs a change and tells its outcome.
    func count<T>(_ operation: String, _ change: () throws -> T) throws -> T {
        let tell = observer.current
        do {
            let result = try change()
            tell?(operation, "ok")
            return result
        } catch let error as ClinicError {
            tell?(operation, error.code.rawValue)
            throw error
        }
    }
}
