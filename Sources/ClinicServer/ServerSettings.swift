import ClinicKit
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How `clinic serve` runs: where it listens, TLS, and every limit (docs/API.md, "Limits").
public struct ServerSettings: Sendable {
    public enum LogFormat: String, Sendable, CaseIterable { case text, json }

    public var host: String
    public var port: Int
    /// PEM files: the certificate (a chain allowed, leaf first) and its private key.
    public var tls: (certificate: String, key: String)?
    /// Plain HTTP on a non-loopback address, on purpose.
    public var insecureHTTP: Bool
    public var logFormat: LogFormat

    /// Request bodies larger than this are refused with 413 on every route.
    public static let maximumBody = 64 * 1024
    /// A connection with no request (HTTP/1.1) or no stream (HTTP/2) for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// A TLS connection whose handshake has not completed this long after it opened is closed
    /// (`CLINIC_HANDSHAKE_TIMEOUT`, seconds): a real client finishes in a few round trips.
    public var handshakeTimeout: Duration = .seconds(10)
    /// Open connections from one client address (`CLINIC_MAX_CONNECTIONS_PER_ADDRESS`): a browser
    /// opens 6 over HTTP/1.1 and 1 over HTTP/2, so 64 leaves room for a clinic's staff behind
    /// one NAT while one address alone cannot take the server's descriptors.
    public var maximumConnectionsPerAddress = 64
    /// Open connections in all (`CLINIC_MAX_CONNECTIONS`), lowered at start to fit the
    /// process's descriptor limit (`connectionCap`). Both caps close a connection over them as
    /// soon as it is accepted (docs/API.md, "Limits").
    public var maximumConnections = 4096
    /// Threads for blocking work (SQLite, Argon2, the writer lock): the Argon2 workers and two
    /// more. More threads only switched more: 16 booked 10 % fewer per second than 4 on 2 cores
    /// (Benchmarks/http-load.sh, docs/BENCHMARKS.md).
    public var blockingThreads = max(1, ProcessInfo.processInfo.activeProcessorCount) + 2
    /// Argon2 runs at once (log-ins, registrations, password changes, deletions); more wait,
    /// so a flood of log-ins holds at most this many of the blocking threads.
    public var passwordWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// Searches for a free slot run at once (each within `SearchBudget.standard`); more wait.
    /// Half the cores: a crowd of searches leaves the other half to everything else.
    public var searchWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
    /// Upload bodies in flight over the whole server, in bytes (`ByteBudget`,
    /// `CLINIC_UPLOAD_MIB_IN_FLIGHT`, 11–4096 MiB: at least one upload of the largest size): 48 MiB, four
    /// uploads of the largest size, or a dozen phone photos, at once; each is held about three
    /// times while it is parsed and checked, so this keeps the server well under 400 MB.
    public var uploadBytesInFlight = 48 * 1024 * 1024
    /// PostgreSQL connections of this server (`CLINIC_STORE_CONNECTIONS`, 2–1000): by default two
    /// for each blocking thread — one for the thread's own transactions, one for the appointment
    /// changes (the committer runs half the pool at once). Every server of a database counts
    /// against PostgreSQL's `max_connections`.
    public var storeConnections: Int?
    /// The PostgreSQL pool this server opens: `storeConnections`, or its default.
    public var storePoolSize: Int { storeConnections ?? 2 * max(blockingThreads, passwordWorkers + 2) }
    /// Appointment changes committed together at most (group commit); CLI processes waiting for
    /// the writers' lock get their turn between batches.
    public var maximumBatch = 64
    /// Log-ins and registrations per client address: a burst, then this many a minute.
    public var authBurst = 10
    public var authPerMinute = 30.0
    /// Uploads per account (`CLINIC_UPLOAD_RATE` = "BURST/PER_HOUR"): 30 at once, then 30 an
    /// hour. Deleting a file gives none back.
    public var uploadBurst = 30
    public var uploadsPerHour = 30.0
    /// E-mail (`CLINIC_SMTP_URL`, `CLINIC_MAIL_FROM`); nil: messages stay in the inboxes.
    public var smtp: SMTPSettings?
    /// Texts through Kannel (`CLINIC_SMS_URL` and the other `CLINIC_SMS_*`, `SMSSettings`); nil:
    /// nothing is texted, and the gateway's callbacks answer 404.
    public var sms: SMSSettings?
    /// What sends the texts instead of Kannel's `sendsms` (a composition root's own, a test's
    /// recorder); nil: `KannelGateway` when `sms` is set.
    public var textSender: (any TextSender)?
    /// How often the outbox worker writes due reminders and sends due e-mail (`CLINIC_DELIVERY_INTERVAL`, seconds).
    public var deliveryInterval: Duration = .seconds(30)
    /// How often the waitlist worker offers freed times and closes lapsed offers
    /// (`CLINIC_WAITLIST_INTERVAL`, milliseconds, 100–60000): a freed time is offered within about this.
    public var waitlistInterval: Duration = .seconds(1)
    /// How long a web session may sit unused (issue 55): a shared screen at a front desk or in
    /// a library must not stay signed in. A patient's (`CLINIC_WEB_IDLE_MINUTES`, 1–1440): 30
    /// minutes; with "Keep me signed in on this device" ticked (`CLINIC_WEB_KEEP_DAYS`, 1–30): 30
    /// days; a staff member's (`CLINIC_STAFF_WEB_IDLE_MINUTES`, 1–720): 15 minutes. The API's
    /// and the apps' tokens keep their own rules (`SessionManager.idleLimit`, `StaffController.idleLimit`).
    public var webIdleMinutes = 30
    public var webKeepDays = 30
    public var staffWebIdleMinutes = 15
    /// A patient's web session's idle limit, in seconds.
    public func webSessionSeconds(keptSignedIn: Bool) -> Int { keptSignedIn ? webKeepDays * 86_400 : webIdleMinutes * 60 }
    /// The address calendar apps reach this server at (`CLINIC_PUBLIC_URL`), else the request's Host.
    public var publicURL: String?
    /// A street map under the web app's own base layer (`CLINIC_TILE_URL`, an `https://` URL
    /// template with `{z}`, `{x}` and `{y}`, and `CLINIC_TILE_ATTRIBUTION`, the words its
    /// licence asks for). Off by default: the map is then wholly ours and asks nothing of a third
    /// party. When set, the browsers of patients who open a map fetch tiles from that host.
    public var tiles: (url: String, attribution: String)?

    public init(host: String = "127.0.0.1", port: Int = 8080, tls: (certificate: String, key: String)? = nil,
                insecureHTTP: Bool = false, logFormat: LogFormat = .text) {
        self.host = host
        self.port = port
        self.tls = tls
        self.insecureHTTP = insecureHTTP
        self.logFormat = logFormat
    }

    /// True for an address only this machine can reach (127.0.0.0/8, ::1, localhost).
    public var isLoopback: Bool { Self.isLoopback(host) }

    /// The address parsed, not its text compared: "127.0.0.1.attacker.example" is a name that
    /// resolves wherever its owner likes. Only a literal IPv4 address in 127.0.0.0/8, the IPv6
    /// address ::1 (bracketed or not), and the name `localhost` are loopback.
    public static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        let literal = host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            // s_addr is in network order: its first byte in memory is the address's first.
            return withUnsafeBytes(of: &v4) { $0.first == 127 }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes.last == 1 }
        }
        return false
    }

    /// The total cap as it applies: `maximumConnections`, or fewer when the descriptor limit
    /// (`ulimit -n`) is lower, keeping 128 for the database, the log and the listening socket,
    /// so that the cap refuses a connection before `accept` fails for everyone.
    public var connectionCap: Int {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        // Unlimited (RLIM_INFINITY) is past Int.max: the setting stands.
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < rlim_t(Int.max) else { return maximumConnections }
        return max(1, min(maximumConnections, Int(limit.rlim_cur) - 128))
    }

    /// Plain HTTP only on loopback unless `insecureHTTP`: personal data must not cross a network
    /// unencrypted by accident.
    public func validate() throws {
        guard (0...65535).contains(port) else { throw ServerSettingError(.badSetting, "--port", "0…65535") }
        if tls == nil && !isLoopback && !insecureHTTP { throw ServerSettingError(.needsTLS, host) }
    }

    /// `CLINIC_AUTH_RATE` = "BURST/PER_MINUTE" (for example "10/30") overrides the log-in and
    /// registration limit per address.
    public mutating func apply(environment: [String: String]) throws {
        smtp = try SMTPSettings.from(environment: environment)
        sms = try SMSSettings.from(environment: environment)
        if let text = environment["CLINIC_DELIVERY_INTERVAL"], !text.isEmpty {
            guard let seconds = Int(text), (1...3600).contains(seconds) else {
                throw ServerSettingError(.badSetting, "CLINIC_DELIVERY_INTERVAL", "1…3600 (seconds)")
            }
            deliveryInterval = .seconds(seconds)
        }
        if let milliseconds = try Self.integer(environment, "CLINIC_WAITLIST_INTERVAL", 100...60_000, unit: " (milliseconds)") {
            waitlistInterval = .milliseconds(milliseconds)
        }
        if let text = environment["CLINIC_PUBLIC_URL"], !text.isEmpty {
            guard let url = URLComponents(string: text), url.scheme == "https" || url.scheme == "http", url.host?.isEmpty == false,
                  url.query == nil else {
                throw ServerSettingError(.badSetting, "CLINIC_PUBLIC_URL", "https://host[:port]")
            }
            publicURL = text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        if let text = environment["CLINIC_TILE_URL"], !text.isEmpty {
            let attribution = environment["CLINIC_TILE_ATTRIBUTION"] ?? ""
            guard let url = URLComponents(string: text.replacingOccurrences(of: "{", with: "%7B").replacingOccurrences(of: "}", with: "%7D")),
                  url.scheme == "https", url.host?.isEmpty == false, url.user == nil,
                  ["{z}", "{x}", "{y}"].allSatisfy(text.contains),
                  !text.contains(where: { $0 == "\"" || $0 == "'" || $0 == " " || $0 == "<" || $0 == ">" }) else {
                throw ServerSettingError(.badSetting, "CLINIC_TILE_URL", "https://host/{z}/{x}/{y}.png")
            }
            guard !attribution.trimmingCharacters(in: .whitespaces).isEmpty, attribution.count <= 300,
                  !attribution.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw ServerSettingError(.badSetting, "CLINIC_TILE_ATTRIBUTION", "the tiles' licence words (1–300 characters)")
            }
            tiles = (text, attribution)
        }
        if let seconds = try Self.integer(environment, "CLINIC_HANDSHAKE_TIMEOUT", 1...300, unit: " (seconds)") {
            handshakeTimeout = .seconds(seconds)
        }
        if let total = try Self.integer(environment, "CLINIC_MAX_CONNECTIONS", 1...1_000_000) { maximumConnections = total }
        if let minutes = try Self.integer(environment, "CLINIC_WEB_IDLE_MINUTES", 1...1440, unit: " (minutes)") { webIdleMinutes = minutes }
        if let days = try Self.integer(environment, "CLINIC_WEB_KEEP_DAYS", 1...30, unit: " (days)") { webKeepDays = days }
        if let minutes = try Self.integer(environment, "CLINIC_STAFF_WEB_IDLE_MINUTES", 1...720, unit: " (minutes)") {
            staffWebIdleMinutes = minutes
        }
        if let pool = try Self.integer(environment, "CLINIC_STORE_CONNECTIONS", 2...1000) { storeConnections = pool }
        if let mebibytes = try Self.integer(environment, "CLINIC_UPLOAD_MIB_IN_FLIGHT", 11...4096) {
            uploadBytesInFlight = mebibytes * 1024 * 1024
        }
        if let perAddress = try Self.integer(environment, "CLINIC_MAX_CONNECTIONS_PER_ADDRESS", 1...1_000_000) {
            maximumConnectionsPerAddress = perAddress
        }
        if let (burst, perHour) = try Self.rate(environment, "CLINIC_UPLOAD_RATE", example: "BURST/PER_HOUR (30/30)") {
            uploadBurst = burst
            uploadsPerHour = perHour
        }
        if let (burst, perMinute) = try Self.rate(environment, "CLINIC_AUTH_RATE", example: "BURST/PER_MINUTE (10/30)") {
            authBurst = burst
            authPerMinute = perMinute
        }
    }

    /// "BURST/RATE" from the environment; nil when unset or empty.
    static func rate(_ environment: [String: String], _ name: String, example: String) throws -> (Int, Double)? {
        guard let text = environment[name], !text.isEmpty else { return nil }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let burst = Int(parts[0]), let rate = Double(parts[1]), burst >= 1, burst <= 1_000_000,
              rate > 0, rate <= 1_000_000 else {
            throw ServerSettingError(.badSetting, name, example)
        }
        return (burst, rate)
    }

    /// A whole number in `range` from the environment; nil when unset or empty.
    static func integer(_ environment: [String: String], _ name: String, _ range: ClosedRange<Int>, unit: String = "") throws -> Int? {
        guard let text = environment[name], !text.isEmpty else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw ServerSettingError(.badSetting, name, "\(range.lowerBound)…\(range.upperBound)\(unit)")
        }
        return value
    }
}

extension ServerSettings {
    /// The origin (`https://host[:port]`) the tiles come from, for the pages' CSP `img-src`.
    var tileOrigin: String? {
        guard let tiles, let url = URLComponents(string: tiles.url.replacingOccurrences(of: "{", with: "%7B")
                                                    .replacingOccurrences(of: "}", with: "%7D")),
              let scheme = url.scheme, let host = url.host else { return nil }
        return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
    }
}
