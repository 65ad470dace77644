import CCurl
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

/// Kannel's `sendsms` over HTTP (libcurl): the text in UTF-8 with its coding (0: GSM-7, 2:
/// UCS-2; Kannel converts), every delivery report asked for (`dlr-mask=31`) at a signed address.
/// 202 (accepted, or queued by the gateway) is taken; anything else is a failure to retry.
public struct KannelGateway: TextSender {
    let settings: SMSSettings
    public init(settings: SMSSettings) { self.settings = settings }

    private static let initialized: Bool = { clinic_curl_global_init(); return true }()

    static func encoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// The `sendsms` address of one text.
    func address(to number: String, text: TextMessage, deliveryId: Int64) -> String {
        let report = "\(settings.callbackURL)/v1/texts/report?delivery=\(deliveryId)"
            + "&sig=\(settings.reportSignature(deliveryId: deliveryId))&status=%d"
        let parameters = [("username", settings.user), ("password", settings.password), ("from", settings.from), ("to", number),
                          ("text", text.body), ("charset", "UTF-8"), ("coding", String(text.coding.rawValue)),
                          ("dlr-mask", "31"), ("dlr-url", report)]
        return settings.url + "?" + parameters.map { "\($0)=\(Self.encoded($1))" }.joined(separator: "&")
    }

    public func send(to number: String, text: TextMessage, deliveryId: Int64) throws -> String {
        _ = Self.initialized
        var status = 0
        var error = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE))
        var body = [CChar](repeating: 0, count: 512)
        var length = 0
        let code = clinic_http_get(address(to: number, text: text, deliveryId: deliveryId), settings.caFile ?? "", 30, &status,
                                   &body, body.count, &length, &error)
        let answer = String(decoding: body.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard code == 0 else {
            throw ClinicError(.storage, .smsFailed, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        guard status == 202 || status == 200 else { throw ClinicError(.storage, .smsFailed, "\(status) \(answer.prefix(200))") }
        return "\(status) \(answer.prefix(200))"
    }
}
