import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// What a request carries through the middleware and its handler: the client's address (rate
/// limits), the request id, the language, and who is asking — each resolved once, by the
/// middleware of the group the route is in (`PatientAuthenticator`, `StaffAuthenticator`,
/// `WebSessionMiddleware`), never by a handler.
struct APIContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let clientAddress: String
    /// The request's id (`X-Request-Id`, set by `RequestLogMiddleware`), for the audit trail.
    var requestId: String?
    /// The language of the answer: `Accept-Language` (set for every request by
    /// `LanguageMiddleware`), refined by the patient's saved language in the patient groups.
    var language: Language = .en
    /// The signed-in patient of a bearer token (the patient groups).
    var patient: Patient?
    /// The signed-in staff member of a bearer token (the staff groups).
    var staff: StaffIdentity?
    /// A web page's request: cookies, CSRF token, the patient of the session cookie.
    var web: WebRequest?
    /// The staff member of the staff pages' cookie (the staff pages; nil when signed out).
    var staffMember: StaffMember?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        let remote = source.channel.remoteAddress ?? source.channel.parent?.remoteAddress
        clientAddress = remote?.ipAddress ?? "unknown"
    }

    /// The body limit is enforced by `LimitsMiddleware` for every route.
    var maxUploadSize: Int { ServerSettings.maximumBody }

    /// The patient the group's authenticator resolved; a route outside a patient group that
    /// asks is refused as unauthenticated (never a crash).
    func signedInPatient() throws -> Patient {
        guard let patient else { throw APIFailure(ServerError(.notLoggedIn, .notLoggedIn), language: language) }
        return patient
    }

    /// The staff member the group's authenticator resolved.
    func signedInStaff() throws -> StaffIdentity {
        guard let staff else { throw APIFailure(ClinicError(.notLoggedIn, .staffNotLoggedIn), language: language) }
        return staff
    }

    /// The web request the web group's middleware resolved.
    func webRequest() throws -> WebRequest {
        guard let web else { throw APIFailure(ClinicError(.internalError, .internalError, "-"), language: language) }
        return web
    }
}

/// The signed-in patient of a request.
struct Patient: Sendable {
    let client: Client
    let token: String
    let language: Language
    var id: Int64 { client.id ?? 0 }
}

/// The signed-in staff member of a request and the token it came with.
struct StaffIdentity: Sendable {
    let member: StaffMember
    let token: String
}

/// The language of messages: the best of `Accept-Language` that we speak, else `fallback`
/// (the patient's saved language), else English.
func language(of request: Request, fallback: Language? = nil) -> Language {
    guard let header = request.headers[.acceptLanguage], !header.isEmpty else { return fallback ?? .en }
    var best: (Language, Double)?
    for part in header.split(separator: ",") {
        let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let tag = pieces.first else { continue }
        var quality = 1.0
        for piece in pieces.dropFirst() where piece.hasPrefix("q=") { quality = Double(piece.dropFirst(2)) ?? 0 }
        let primary = tag.split(separator: "-").first.map(String.init) ?? tag
        guard quality > 0, let language = Language(rawValue: primary) else { continue }
        if let current = best, quality <= current.1 { continue }
        best = (language, quality)
    }
    return best?.0 ?? fallback ?? .en
}
