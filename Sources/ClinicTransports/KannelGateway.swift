import CCurl
import ClinicKit
import Foundation

// The text transport (issue 56: ClinicKit keeps the port, `TextSender`, and the settings).

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
