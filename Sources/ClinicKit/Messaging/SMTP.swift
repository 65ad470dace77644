import Foundation

/// Where e-mail goes: `CLINIC_SMTP_URL=smtp[s]://user:pass@host:port` and `CLINIC_MAIL_FROM`.
/// `smtps://` is TLS from the start; `smtp://` uses STARTTLS when the server offers it, and
/// demands it when a user name is given (a password never crosses the network in clear).
public struct SMTPSettings: Sendable, Equatable {
    public let url: String
    public let user: String
    public let password: String
    public let requireTLS: Bool
    public let from: String
    /// A PEM file of the CA that signed the mail server's certificate (`CLINIC_SMTP_CA_FILE`),
    /// nil for the system's CAs.
    public let caFile: String?

    /// Reads the environment: nil when `CLINIC_SMTP_URL` is not set; an error that names the
    /// variable when a value is malformed.
    public static func from(environment: [String: String]) throws -> SMTPSettings? {
        guard let text = environment["CLINIC_SMTP_URL"], !text.isEmpty else { return nil }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "smtp" || scheme == "smtps", let host = components.host, !host.isEmpty,
              components.path.isEmpty || components.path == "/", components.query == nil else {
            throw ClinicError.invalid(.mailSettingInvalid, "CLINIC_SMTP_URL", "smtp[s]://user:password@host:port")
        }
        guard let from = environment["CLINIC_MAIL_FROM"], Mail.isAddress(from) else {
            throw ClinicError.invalid(.mailSettingInvalid, "CLINIC_MAIL_FROM", "an e-mail address (clinic@example.org)")
        }
        let user = components.user?.removingPercentEncoding ?? ""
        let caFile = environment["CLINIC_SMTP_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ClinicError.invalid(.mailSettingInvalid, "CLINIC_SMTP_CA_FILE", "a readable PEM file")
        }
        let port = components.port.map { ":\($0)" } ?? ""
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return SMTPSettings(url: "\(scheme)://\(shownHost)\(port)", user: user,
                            password: components.password?.removingPercentEncoding ?? "",
                            requireTLS: scheme == "smtps" || !user.isEmpty, from: from, caFile: caFile)
    }
}

/// Sends one e-mail; returns the server's reply once it has accepted the message.
public protocol Mailer: Sendable {
    func send(from: String, to: String, message: Data) throws -> String
}
