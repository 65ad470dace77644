import Crypto
import Foundation

/// How many confirmation codes go out (issue 55): a code costs the clinic a text, and a
/// stranger who may ask for codes without limit runs texts up to numbers that pay them
/// (SMS pumping) or floods a victim's phone or mailbox. Each code is counted, in the
/// transaction that queues it and so across servers, per account per day, per client address
/// per hour, per destination (the number or address it goes to) per day, and against a daily
/// budget of the whole deployment for each channel (`CLINIC_SMS_DAILY_CODES`,
/// `CLINIC_MAIL_DAILY_CODES`). Reminders and other messages are not counted: they go only to
/// a number or address already confirmed.
public struct CodeLimits: Sendable, Equatable {
    /// The countries texts go to (`CLINIC_SMS_COUNTRIES`).
    public var textCountries: TextCountries = .standard
    public var perAccountPerDay = 5
    public var perAddressPerHour = 10
    public var perDestinationPerDay = 5
    /// Codes texted a day by every server together.
    public var textCodesPerDay = 500
    /// Codes e-mailed a day by every server together.
    public var mailCodesPerDay = 2000

    public init() {}

    public static let standard = CodeLimits()

    /// The limits a deployment set in its environment: `CLINIC_SMS_COUNTRIES`,
    /// `CLINIC_SMS_DAILY_CODES` and `CLINIC_MAIL_DAILY_CODES` (1–1,000,000); unset: the defaults.
    public static func from(environment: [String: String]) throws -> CodeLimits {
        var limits = CodeLimits()
        if let countries = environment["CLINIC_SMS_COUNTRIES"], !countries.isEmpty {
            limits.textCountries = try TextCountries(setting: countries)
        }
        for (name, path) in [("CLINIC_SMS_DAILY_CODES", \CodeLimits.textCodesPerDay), ("CLINIC_MAIL_DAILY_CODES", \.mailCodesPerDay)] {
            guard let text = environment[name], !text.isEmpty else { continue }
            guard let value = Int(text), (1...1_000_000).contains(value) else {
                throw ClinicError(.invalidInput, .smsSettingInvalid, name, "a whole number from 1 to 1000000")
            }
            limits[keyPath: path] = value
        }
        return limits
    }

    public enum Channel: String, Sendable { case text, mail }

    /// The counts one code adds to, in order: the deployment's budget first (it protects the
    /// bill, and tells the operator), then the account's, the destination's and the address's.
    /// `destination` is a keyed hash of the number or address, never the value; `address` the
    /// client's IP address (nil from the command line). Counted in the transaction that queues
    /// the code, before it is queued (`ClientWrite.countSend`).
    func counts(channel: Channel, clientId: Int64, destination: String, from address: String?) -> [SendCount] {
        let day: Int64 = 86_400, hour: Int64 = 3600
        let prefix = "code:\(channel.rawValue):"
        var counts = [
            SendCount(key: prefix + "all", window: day, limit: channel == .text ? textCodesPerDay : mailCodesPerDay,
                      refusal: ClinicError(.rateLimited, channel == .text ? .textCodeBudgetSpent : .mailCodeBudgetSpent)),
            SendCount(key: prefix + "account:\(clientId)", window: day, limit: perAccountPerDay,
                      refusal: ClinicError(.rateLimited, .codesPerDaySpent, String(perAccountPerDay))),
            SendCount(key: prefix + "to:" + destination, window: day, limit: perDestinationPerDay,
                      refusal: ClinicError(.rateLimited, .codesPerDaySpent, String(perDestinationPerDay))),
        ]
        if let address {
            counts.append(SendCount(key: prefix + "from:" + Self.addressKey(address), window: hour, limit: perAddressPerHour,
                                    refusal: ClinicError(.rateLimited, .codesPerHourSpent)))
        }
        return counts
    }

    /// A client address as it is counted: an IPv6 address by its /64 (one subscriber's whole
    /// network), an IPv4 address whole — also as a dual-stack socket gives it, IPv4-mapped
    /// (`::ffff:192.0.2.7`), which would otherwise count every IPv4 client in one /64 —
    /// and hashed, so the table holds no address.
    static func addressKey(_ address: String) -> String {
        var text = address.lowercased()
        if let last = text.split(separator: ":").last, last.contains(".") {
            text = String(last)
        } else if text.contains(":") {
            var groups = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            if let gap = groups.firstIndex(of: ""), text.contains("::") {
                let present = groups.filter { !$0.isEmpty }
                groups = Array(groups[..<gap].filter { !$0.isEmpty }) + Array(repeating: "0", count: max(0, 8 - present.count))
                    + Array(groups[(gap + 1)...].filter { !$0.isEmpty })
            }
            text = groups.prefix(4).map { String(Int($0, radix: 16) ?? 0, radix: 16) }.joined(separator: ":") + "::/64"
        }
        return Array(SHA256.hash(data: Data("code-address:\(text)".utf8))).hexString
    }

    /// An e-mail address as it is counted (lower case, hashed).
    static func mailKey(_ address: String) -> String {
        Array(SHA256.hash(data: Data("code-mail:\(address.lowercased())".utf8))).hexString
    }
}

/// One send counted against a limit, in the transaction that queues it (`send_counts`, one
/// statement: requests at once on several servers are counted one after the other): past
/// `limit` sends within `window` seconds the request is refused with `refusal`, and the
/// transaction rolls back with it (nothing is queued, nothing counted).
public struct SendCount: Sendable, Equatable {
    public let key: String
    public let window: Int64
    public let limit: Int
    public let refusal: ClinicError

    /// Counts it in the caller's transaction (the seam's path, and SQLite's).
    func count(_ tx: any SecurityWriting, at now: Date) throws {
        if try tx.countSend(key: key, window: window, at: now) > limit { throw refusal }
    }
}
