import ClinicKit
import NIOCore
import NIOSSL
import PostgresNIO

/// PostgreSQL's refusals as the domain's errors, decided by SQLSTATE and constraint name only:
/// a server's message text is in the server's language and version, and may quote the row.
public enum PostgresErrorMapping {
    /// What a failed statement means for the caller.
    public enum Outcome: Equatable, Sendable {
        /// A refusal or failure to report as it is.
        case error(ClinicError)
        /// A serialization failure or deadlock (40001, 40P01): the whole transaction may be run
        /// again; after a few tries it is `busy`.
        case retry
    }

    /// The constraints whose violation is a domain refusal (Migrations/postgres).
    public enum Constraint {
        public static let doctorOverlap = "appointments_doctor_no_overlap"
        public static let clientOverlap = "appointments_client_no_overlap"
        public static let clientLogin = "clients_login_key_key"
        public static let staffLogin = "staff_accounts_login_key_key"
    }

    /// The mapping itself, on the two fields that decide it (tested without a server).
    public static func outcome(sqlState: String, constraint: String?) -> Outcome {
        switch (sqlState, constraint) {
        case ("23P01", Constraint.doctorOverlap?): return .error(ClinicError(.slotTaken, .slotTaken))
        case ("23P01", Constraint.clientOverlap?): return .error(ClinicError(.overlappingAppointment, .overlappingUnknown))
        case ("23505", Constraint.clientLogin?), ("23505", Constraint.staffLogin?):
            return .error(ClinicError(.loginTaken, .loginTaken))
        case ("40001", _), ("40P01", _): return .retry
        // A text PostgreSQL cannot hold (a NUL, 22021; a code the encoding lacks, 22P05): the
        // input's fault, not the store's. SQLite keeps such a text; the library refuses it
        // earlier where it can (`Client.couldExist(login:)`), this is the net under the rest.
        case ("22021", _), ("22P05", _): return .error(ClinicError(.invalidInput, .textNotStorable))
        // The server going away (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot
        // connect now) and every connection exception (class 08).
        case ("57P01", _), ("57P02", _), ("57P03", _), ("53300", _):
            return .error(ClinicError(.busy, .storeConnectionLost))
        // A wait the store bounds (`PostgresStore.sessionSettings`): a lock held too long (55P03),
        // a statement too long (57014), a transaction left idle too long (25P03).
        case ("55P03", _), ("57014", _), ("25P03", _):
            return .error(ClinicError(.busy, .databaseBusy))
        default:
            if sqlState.hasPrefix("08") { return .error(ClinicError(.busy, .storeConnectionLost)) }
            if sqlState == "28P01" || sqlState == "28000" { return .error(ClinicError(.storeAuthFailed, .storeAuthFailed, "?", "?")) }
            // Only the SQLSTATE: the server's text may quote personal data.
            return .error(ClinicError(.storage, .storageFailure, "SQLSTATE " + sqlState))
        }
    }

    /// Any error a query raised. A ClinicError passes through; a lost connection is `busy`.
    public static func outcome(_ error: any Error) -> Outcome {
        if let error = error as? ClinicError { return .error(error) }
        if let error = error as? PSQLError {
            if error.code == .server, let state = error.serverInfo?[.sqlState] {
                return outcome(sqlState: state, constraint: error.serverInfo?[.constraintName])
            }
            switch error.code {
            case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .poolClosed:
                return .error(ClinicError(.busy, .storeConnectionLost))
            case .queryCancelled:
                return .error(ClinicError(.busy, .databaseBusy))
            default:
                return .error(ClinicError(.storage, .storageFailure, error.code.description))
            }
        }
        if error is CancellationError { return .error(ClinicError(.busy, .databaseBusy)) }
        if error is ChannelError || error is IOError { return .error(ClinicError(.busy, .storeConnectionLost)) }
        return .error(ClinicError(.storage, .storageFailure, String(describing: type(of: error))))
    }

    /// The error to throw for a failure (a retry that is not taken is `busy`).
    public static func clinicError(_ error: any Error) -> ClinicError {
        switch outcome(error) {
        case .error(let error): return error
        case .retry: return ClinicError(.busy, .databaseBusy)
        }
    }

    /// A failure to open a connection, for `url` as `user`: unreachable, refused, no such
    /// database. Nothing of the password is in it (postgres-nio never puts it in an error).
    static func connectError(_ error: any Error, url: PostgresURL, user: String, database: String) -> ClinicError {
        let server = url.serverDescription
        if let error = error as? ClinicError { return error }
        if let error = error as? PSQLError {
            if error.code == .server, let state = error.serverInfo?[.sqlState] {
                switch state {
                case "28P01", "28000": return ClinicError(.storeAuthFailed, .storeAuthFailed, server, user)
                case "3D000": return ClinicError(.storeDatabaseMissing, .storeDatabaseMissing, server, database)
                case "57P03", "53300": return ClinicError(.busy, .storeConnectionLost)
                default: return ClinicError(.storeUnreachable, .storeUnreachable, server, "SQLSTATE " + state)
                }
            }
            switch error.code {
            case .authMechanismRequiresPassword:
                // The server asks for a password and there is none (PGPASSWORD, ~/.pgpass).
                return ClinicError(.storeAuthFailed, .storeAuthFailed, server, user)
            case .unsupportedAuthMechanism, .saslError:
                return ClinicError(.storeAuthFailed, .storeAuthFailed, server, user)
            case .sslUnsupported:
                return ClinicError(.storeUnreachable, .storeUnreachable, server, "the server does not offer TLS (sslmode=\(url.sslMode.rawValue))")
            default:
                return ClinicError(.storeUnreachable, .storeUnreachable, server, reason(error.underlying) ?? error.code.description)
            }
        }
        return ClinicError(.storeUnreachable, .storeUnreachable, server, reason(error) ?? "connection failed")
    }

    /// A short, safe reason: the kind of network or TLS failure, never a server's text.
    static func reason(_ error: (any Error)?) -> String? {
        guard let error else { return nil }
        if let error = error as? IOError { return "errno \(error.errnoCode) (\(String(cString: strerror(error.errnoCode))))" }
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return reason(first.error) }
            if let dns = error.dnsAAAAError ?? error.dnsAError { return "host name not resolved (\(type(of: dns)))" }
            return "connection failed"
        }
        if error is ChannelError {
            if case ChannelError.connectTimeout = error { return "timed out" }
            return "connection failed"
        }
        if let error = error as? NIOSSLError { return "TLS: \(error)" }
        if let error = error as? BoringSSLError { return "TLS: \(error)" }
        if error is PostgresStore.Timeout { return "timed out" }
        return String(describing: type(of: error))
    }
}
