import Foundation

/// The one error type that leaves ClinicKit. `code` is stable and machine-readable (it is what
/// scripts match on); `key` and `arguments` render a human message in the user's language at
/// the CLI edge, so controllers never format text for people.
public struct ClinicError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable, Codable {
        case invalidInput = "invalid_input"
        case notLoggedIn = "not_logged_in"
        case invalidCredentials = "invalid_credentials"
        case loginTaken = "login_taken"
        case weakPassword = "weak_password"
        case privacyNotAccepted = "privacy_not_accepted"
        case notFound = "not_found"
        case forbidden = "forbidden"
        case slotTaken = "slot_taken"
        case slotUnavailable = "slot_unavailable"
        case overlappingAppointment = "overlapping_appointment"
        case invalidTransition = "invalid_transition"
        case tooLate = "too_late"
        case limitReached = "limit_reached"
        /// Staff booking for a patient whose other bookings stand in the way (which, and where, is not said).
        case patientUnavailable = "patient_unavailable"
        case migrationMismatch = "migration_mismatch"
        case databaseTooNew = "database_too_new"
        case busy = "busy"
        case storage = "storage_error"
        case insecureSessionFile = "insecure_session_file"
        case geocodeFailed = "geocode_failed"
        case accountLocked = "account_locked"
        case keyError = "key_error"
        case internalError = "internal_error"
        case rateLimited = "rate_limited"
        case idempotencyKeyReused = "idempotency_key_reused"
        case hoursConflict = "hours_conflict"
        /// The database setting looks like a URL but is not a usable one (scheme, parameter, a
        /// password in it).
        case storeURLInvalid = "store_url_invalid"
        /// The PostgreSQL server cannot be reached (refused, no socket, timeout, TLS).
        case storeUnreachable = "store_unreachable"
        /// The PostgreSQL server refused the role (SQLSTATE 28P01, 28000).
        case storeAuthFailed = "store_auth_failed"
        /// The PostgreSQL server has no such database (SQLSTATE 3D000).
        case storeDatabaseMissing = "store_database_missing"
        /// This build cannot do that on this kind of store yet.
        case storeUnsupported = "store_unsupported"
        /// The target of `admin copy` already holds data (a PostgreSQL table with rows, a
        /// non-empty file).
        case storeNotEmpty = "store_not_empty"
        /// A file over the size an attachment may have.
        case fileTooLarge = "file_too_large"
        /// A file that is not one of the kinds taken, or whose name or declared type says
        /// another kind than its bytes.
        case unsupportedType = "unsupported_type"
        /// The patient is on that department's waitlist already.
        case alreadyWaiting = "already_waiting"
        /// No server of the deployment has an SMS gateway: a code would never be sent (issue 55).
        case textsUnavailable = "texts_unavailable"
        /// The patient has another active visit in the department fewer than
        /// `booking.department_days_between` days away.
        case tooClose = "too_close"
    }

    public let code: Code
    public let key: MessageKey
    public let arguments: [String]
    /// Row-by-row reasons, for an import that was refused.
    public let problems: [ImportProblem]

    public init(_ code: Code, _ key: MessageKey, _ arguments: String...) {
        self.init(code, key, arguments: arguments)
    }

    public init(_ code: Code, _ key: MessageKey, arguments: [String], problems: [ImportProblem] = []) {
        self.code = code
        self.key = key
        self.arguments = arguments
        self.problems = problems
    }

    public func message(in language: Language) -> String {
        Strings.text(key, language, arguments)
    }

    public var description: String { "\(code.rawValue): \(message(in: .en))" }

    public static func invalid(_ key: MessageKey, _ arguments: String...) -> ClinicError {
        ClinicError(.invalidInput, key, arguments: arguments)
    }
}
