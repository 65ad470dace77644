import CCurl
import ClinicKit
import Foundation

// The e-mail transport (issue 56: ClinicKit keeps the port, `Mailer`, and the settings; the
// transports live here, so the domain does not link libcurl).

/// libcurl's SMTP client.
public struct SMTPMailer: Mailer {
    let settings: SMTPSettings
    public init(settings: SMTPSettings) { self.settings = settings }

    private static let initialized: Bool = { clinic_curl_global_init(); return true }()

    public func send(from: String, to: String, message: Data) throws -> String {
        _ = Self.initialized
        var response = 0
        var error = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE))
        let code = message.withUnsafeBytes { bytes in
            clinic_smtp_send(settings.url, settings.user, settings.password, settings.requireTLS ? 1 : 0, settings.caFile ?? "",
                             "<\(from)>", "<\(to)>", bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count,
                             30, &response, &error)
        }
        guard code == 0 else {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ClinicError(.storage, .mailFailed, response > 0 ? "\(response) \(reason)" : reason)
        }
        return String(response)
    }
}
