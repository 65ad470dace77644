import Foundation

/// Where the store is, from the database setting (`--db`, `CLINIC_DB`): a SQLite file, or a
/// PostgreSQL server named by libpq's URL form. A value that looks like a URL but is not one of
/// ours is refused, never taken for a file name (a folder called `postgresql:` once appeared).
public enum StoreLocation: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(PostgresURL)

    /// `postgresql://…` or `postgres://…` is PostgreSQL; any other `scheme://` is refused
    /// (`store_url_invalid`); anything else is a SQLite file path, as it always was.
    public static func parse(_ value: String) throws -> StoreLocation {
        guard let scheme = urlScheme(value) else { return .sqlite(path: value) }
        switch scheme.lowercased() {
        case "postgresql", "postgres": return .postgres(try PostgresURL(parsing: value))
        default: throw ClinicError(.storeURLInvalid, .storeSchemeUnsupported, scheme)
        }
    }

    /// The scheme of `scheme://…` (RFC 3986's letters), or nil for a path.
    static func urlScheme(_ value: String) -> String? {
        guard let range = value.range(of: "://") else { return nil }
        let scheme = value[..<range.lowerBound]
        guard let first = scheme.unicodeScalars.first, first.isASCII, CharacterSet.letters.contains(first),
              scheme.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0)) })
        else { return nil }
        return String(scheme)
    }
}

/// A PostgreSQL server and database in libpq's URL form:
/// `postgresql://[user@][host][:port][/dbname][?param=value&…]`, with percent-encoding.
/// Parameters: `sslmode`, `sslrootcert`, `host` (a folder for a Unix socket, or a host name),
/// `port`, `user`, `dbname`, `connect_timeout` (seconds), `application_name`. Anything else is
/// refused, and so is a password: it belongs in `PGPASSWORD` or `~/.pgpass`, never on a command
/// line or in a setting that ends up in logs. `description` is `redacted`.
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// libpq's sslmode values. What each one means here is `PostgresStore`'s (docs/ARCHITECTURE.md).
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// The role; nil: the operating-system user's name (libpq's default).
    public var user: String?
    /// A TCP host name or address; nil with `socketDirectory` or for the default Unix socket.
    public var host: String?
    public var port: Int
    /// The folder holding the server's Unix socket (`host=/folder` or an empty host).
    public var socketDirectory: String?
    /// nil: the role's name (libpq's default).
    public var database: String?
    public var sslMode: SSLMode
    public var sslRootCert: String?
    /// Seconds; nil: the store's default.
    public var connectTimeout: Int?
    public var applicationName: String?

    /// Debian's libpq looks for the socket here when a URL names no host.
    public static let defaultSocketDirectory = "/var/run/postgresql"
    public static let defaultPort = 5432
    public static let knownParameters = ["host", "port", "user", "dbname", "sslmode", "sslrootcert", "connect_timeout",
                                         "application_name"]

    public init(user: String? = nil, host: String? = nil, port: Int = PostgresURL.defaultPort,
                socketDirectory: String? = nil, database: String? = nil, sslMode: SSLMode = .prefer,
                sslRootCert: String? = nil, connectTimeout: Int? = nil, applicationName: String? = nil) {
        self.user = user
        self.host = host
        self.port = port
        self.socketDirectory = socketDirectory
        self.database = database
        self.sslMode = sslMode
        self.sslRootCert = sslRootCert
        self.connectTimeout = connectTimeout
        self.applicationName = applicationName
    }

    /// True when the server is reached through a Unix socket (no TCP host).
    public var usesUnixSocket: Bool { host == nil }

    /// The socket file: `<folder>/.s.PGSQL.<port>`, as libpq names it.
    public var socketPath: String {
        (socketDirectory ?? Self.defaultSocketDirectory) + "/.s.PGSQL.\(port)"
    }

    /// Where the server is, for messages: `host:port` or the socket folder.
    public var serverDescription: String {
        if let host { return (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
        return socketPath
    }

    /// The URL again, safe for logs and messages: never a password (none is ever accepted),
    /// and percent-encoded so that what is shown reads back as the same URL.
    public var redacted: String {
        var text = "postgresql://"
        if let user { text += Self.encode(user) + "@" }
        if let host { text += host.contains(":") ? "[\(host)]" : Self.encode(host) }
        if port != Self.defaultPort { text += ":\(port)" }
        if let database { text += "/" + Self.encode(database) }
        var query: [String] = []
        if let socketDirectory { query.append("host=" + Self.encode(socketDirectory, keeping: "/")) }
        if sslMode != .prefer { query.append("sslmode=" + sslMode.rawValue) }
        if let sslRootCert { query.append("sslrootcert=" + Self.encode(sslRootCert, keeping: "/")) }
        if let connectTimeout { query.append("connect_timeout=\(connectTimeout)") }
        if let applicationName { query.append("application_name=" + Self.encode(applicationName)) }
        if !query.isEmpty { text += "?" + query.joined(separator: "&") }
        return text
    }

    public var description: String { redacted }

    static func encode(_ text: String, keeping extra: String = "") -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~" + extra)
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// Parses libpq's URL form (see the type). Errors are `store_url_invalid`; none repeats the
    /// URL, so a password typed into it by mistake is not echoed either.
    public init(parsing value: String) throws {
        guard let schemeEnd = value.range(of: "://") else { throw Self.invalid(.storeURLInvalid, "postgresql://") }
        var rest = value[schemeEnd.upperBound...]
        var queryText: Substring?
        if let question = rest.firstIndex(of: "?") {
            queryText = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authority: Substring, path: Substring?
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        } else {
            authority = rest
            path = nil
        }
        var hostPart = authority
        var userPart: Substring?
        if let at = authority.lastIndex(of: "@") {
            userPart = authority[..<at]
            hostPart = authority[authority.index(after: at)...]
        }
        // The password check comes before anything else can fail and say more.
        if let userPart, userPart.contains(":") { throw ClinicError(.storeURLInvalid, .storePasswordInURL) }
        var parameters: [(String, String)] = []
        if let queryText, !queryText.isEmpty {
            for pair in queryText.split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let rawName = parts[0]
                guard let name = Self.decode(rawName) else { throw Self.invalid(.storeURLInvalid, "%") }
                if name == "password" { throw ClinicError(.storeURLInvalid, .storePasswordInURL) }
                guard parts.count == 2, let parameterValue = Self.decode(parts[1]) else {
                    throw Self.invalid(.storeParameterInvalid, Self.shown(name), "")
                }
                parameters.append((name, parameterValue))
            }
        }

        self.init()
        if let userPart, !userPart.isEmpty {
            guard let user = Self.decode(userPart) else { throw Self.invalid(.storeParameterInvalid, "user", "") }
            self.user = user
        }
        var hostText = hostPart
        var portText: Substring?
        if hostText.hasPrefix("[") {
            guard let close = hostText.firstIndex(of: "]") else { throw Self.invalid(.storeParameterInvalid, "host", "[") }
            let after = hostText[hostText.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw Self.invalid(.storeParameterInvalid, "host", "")
            }
            hostText = hostText[hostText.index(after: hostText.startIndex)..<close]
        } else if let colon = hostText.lastIndex(of: ":") {
            portText = hostText[hostText.index(after: colon)...]
            hostText = hostText[..<colon]
        }
        if hostText.contains(",") { throw ClinicError(.storeURLInvalid, .storeSeveralHosts) }
        if !hostText.isEmpty {
            guard let host = Self.decode(hostText), !host.isEmpty else { throw Self.invalid(.storeParameterInvalid, "host", "") }
            try setHost(host)
        }
        if let portText { try setPort(String(portText)) }
        if let path, !path.isEmpty {
            guard let database = Self.decode(path), !database.isEmpty, !database.contains("/") else {
                throw Self.invalid(.storeParameterInvalid, "dbname", "")
            }
            self.database = database
        }
        var seen: Set<String> = []
        for (name, parameterValue) in parameters {
            guard Self.knownParameters.contains(name) else {
                throw ClinicError(.storeURLInvalid, .storeParameterUnknown, Self.shown(name),
                                  Self.knownParameters.joined(separator: ", "))
            }
            guard seen.insert(name).inserted else { throw Self.invalid(.storeParameterInvalid, Self.shown(name), parameterValue) }
            switch name {
            case "host":
                guard !parameterValue.isEmpty else { throw Self.invalid(.storeParameterInvalid, Self.shown(name), parameterValue) }
                if parameterValue.contains(",") { throw ClinicError(.storeURLInvalid, .storeSeveralHosts) }
                try setHost(parameterValue)
            case "port": try setPort(parameterValue)
            case "user":
                guard !parameterValue.isEmpty else { throw Self.invalid(.storeParameterInvalid, Self.shown(name), parameterValue) }
                user = parameterValue
            case "dbname":
                guard !parameterValue.isEmpty else { throw Self.invalid(.storeParameterInvalid, Self.shown(name), parameterValue) }
                database = parameterValue
            case "sslmode":
                guard let mode = SSLMode(rawValue: parameterValue) else {
                    throw Self.invalid(.storeParameterInvalid, Self.shown(name), parameterValue)
                }
                sslMode = mode
            case "sslrootcert":
                guard !parameterValue.isEmpty else { throw Self.invalid(.storeParameterInvalid, Self.shown(name), parameterValue) }
                sslRootCert = parameterValue
            case "connect_timeout":
                // libpq: seconds; 0 or less waits forever, which a tool that must answer does not.
                guard let seconds = Int(parameterValue), (1...3600).contains(seconds) else {
                    throw Self.invalid(.storeParameterInvalid, Self.shown(name), parameterValue)
                }
                connectTimeout = seconds
            case "application_name":
                guard parameterValue.utf8.count <= 63, !parameterValue.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else { throw Self.invalid(.storeParameterInvalid, Self.shown(name), "") }
                applicationName = parameterValue
            default:
                break
            }
        }
    }

    /// A host that starts with `/` is the folder of a Unix socket (libpq's rule).
    private mutating func setHost(_ value: String) throws {
        if value.hasPrefix("/") {
            socketDirectory = value
            host = nil
        } else {
            guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " || $0 == "/" }) else {
                throw Self.invalid(.storeParameterInvalid, "host", "")
            }
            host = value
            socketDirectory = nil
        }
    }

    /// A parameter's name as an error may repeat it: one with an '@' is what a password typed
    /// with an unencoded '?' leaves ("user:pa?ss@host"), and is not repeated.
    static func shown(_ name: String) -> String { name.contains("@") ? "…" : name }

    private mutating func setPort(_ text: String) throws {
        guard let port = Int(text), (1...65535).contains(port), text.allSatisfy(\.isASCII) else {
            // Not repeated: with a password typed into the URL unencoded ("user:pa/ss@host"),
            // what lands here is part of it.
            throw Self.invalid(.storeParameterInvalid, "port", "…")
        }
        self.port = port
    }

    /// Percent-decoding; nil for a malformed escape or bytes that are not UTF-8.
    static func decode(_ text: Substring) -> String? {
        guard text.contains("%") else { return String(text) }
        return String(text).removingPercentEncoding
    }

    static func decode(_ text: String) -> String? { decode(text[...]) }

    private static func invalid(_ key: MessageKey, _ arguments: String...) -> ClinicError {
        // Arguments are parameter names and their values (never a password: refused first).
        ClinicError(.storeURLInvalid, key, arguments: arguments.map { String($0.prefix(200)) })
    }
}

extension PostgresURL.SSLMode {
    /// Modes that refuse a plain TCP connection. (libpq ignores sslmode on a Unix socket, which
    /// has no TLS; so does the store.)
    public var requiresTLS: Bool { self == .require || self == .verifyCA || self == .verifyFull }
}
