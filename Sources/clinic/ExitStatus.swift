import ClinicKit

/// The exit status is the command line's: ClinicKit and the server know only the code.
extension ClinicError.Code {
    /// The process's exit status for the code. Stable: documented in docs/CLI.md.
    var exitStatus: Int32 {
        switch self {
        case .invalidInput, .weakPassword, .privacyNotAccepted, .storeURLInvalid, .storeUnsupported, .fileTooLarge,
             .unsupportedType: return 2
        case .notLoggedIn, .invalidCredentials, .forbidden, .insecureSessionFile, .accountLocked, .rateLimited: return 3
        case .notFound, .geocodeFailed: return 4
        case .loginTaken, .slotTaken, .slotUnavailable, .overlappingAppointment, .invalidTransition, .tooLate,
             .limitReached, .patientUnavailable, .idempotencyKeyReused, .hoursConflict, .storeNotEmpty, .alreadyWaiting,
             .textsUnavailable, .tooClose: return 5
        case .migrationMismatch, .databaseTooNew, .busy, .storage, .keyError, .storeUnreachable, .storeAuthFailed,
             .storeDatabaseMissing: return 6
        case .internalError: return 70
        }
    }
}
