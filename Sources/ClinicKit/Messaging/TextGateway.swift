import Crypto
import Foundation

/// Where texts go: Kannel's `sendsms` interface (deploy/kannel/README.md).
/// `CLINIC_SMS_URL` (http[s]://host:port/cgi-bin/sendsms), `CLINIC_SMS_USER`,
/// `CLINIC_SMS_PASSWORD`, `CLINIC_SMS_FROM` (the sender id), `CLINIC_SMS_SECRET` (what the
/// gateway shows when it brings an incoming text, and what signs each delivery report's
/// address), `CLINIC_SMS_CALLBACK_URL` (where the gateway reaches this server: the delivery
/// reports' base address), optionally `CLINIC_SMS_CA_FILE`.
public struct SMSSettings: Sendable, Equatable {
    public let url: String
    public let user: String
    public let password: String
    public let from: String
    public let secret: String
    public let callbackURL: String
    public let caFile: String?

    public init(url: String, user: String, password: String, from: String, secret: String, callbackURL: String,
                caFile: String? = nil) {
        self.url = url; self.user = user; self.password = password; self.from = from; self.secret = secret
        self.callbackURL = callbackURL; self.caFile = caFile
    }

    /// Reads the environment: nil when `CLINIC_SMS_URL` is not set; an error naming the
    /// variable when a value is missing or malformed.
    public static func from(environment: [String: String]) throws -> SMSSettings? {
        guard let url = environment["CLINIC_SMS_URL"], !url.isEmpty else { return nil }
        func http(_ text: String) -> Bool {
            guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", let host = parts.host, !host.isEmpty, parts.query == nil else { return false }
            return true
        }
        guard http(url) else {
            throw ClinicError.invalid(.smsSettingInvalid, "CLINIC_SMS_URL", "http[s]://host:port/cgi-bin/sendsms")
        }
        guard let callback = environment["CLINIC_SMS_CALLBACK_URL"], http(callback) else {
            throw ClinicError.invalid(.smsSettingInvalid, "CLINIC_SMS_CALLBACK_URL", "http[s]://host[:port], where the gateway reaches this server")
        }
        guard let secret = environment["CLINIC_SMS_SECRET"], secret.count >= 16 else {
            throw ClinicError.invalid(.smsSettingInvalid, "CLINIC_SMS_SECRET", "a random text of 16 characters or more")
        }
        // An alphanumeric sender id is at most 11 characters on the networks; a number, 15 digits and a +.
        let from = environment["CLINIC_SMS_FROM"] ?? ""
        let numeric = from.hasPrefix("+") ? from.dropFirst().allSatisfy { $0.isASCII && $0.isNumber } && (2...16).contains(from.count)
            : from.allSatisfy { $0.isASCII && $0.isNumber } && (1...15).contains(from.count)
        let alphanumeric = (1...11).contains(from.count) && from.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == " ") }
        guard numeric || alphanumeric else {
            throw ClinicError.invalid(.smsSettingInvalid, "CLINIC_SMS_FROM", "a sender id of 1 to 11 letters or digits, or a number")
        }
        let caFile = environment["CLINIC_SMS_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ClinicError.invalid(.smsSettingInvalid, "CLINIC_SMS_CA_FILE", "a readable PEM file")
        }
        return SMSSettings(url: url, user: environment["CLINIC_SMS_USER"] ?? "", password: environment["CLINIC_SMS_PASSWORD"] ?? "",
                           from: from, secret: secret, callbackURL: callback.hasSuffix("/") ? String(callback.dropLast()) : callback,
                           caFile: caFile)
    }

    /// The signature in a delivery report's address: only the gateway this server gave it to
    /// can report on a delivery.
    public func reportSignature(deliveryId: Int64) -> String {
        Array(HMAC<SHA256>.authenticationCode(for: Data("text-report:\(deliveryId)".utf8),
                                              using: SymmetricKey(data: Data(secret.utf8)))).prefix(16).hexString
    }

    /// Whether `key` is the shared secret (compared in constant time).
    public func isSecret(_ key: String) -> Bool { SessionManager.constantTimeEquals(key, secret) }

    /// Whether `signature` is the one of this delivery's report address.
    public func isReportSignature(_ signature: String, deliveryId: Int64) -> Bool {
        SessionManager.constantTimeEquals(signature, reportSignature(deliveryId: deliveryId))
    }
}

/// Sends one text; returns the gateway's answer once it has taken the text.
public protocol TextSender: Sendable {
    func send(to number: String, text: TextMessage, deliveryId: Int64) throws -> String
}
