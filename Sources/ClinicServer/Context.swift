import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// What a request carries through the middleware and its handler: the client's address (rate
/// limits) and the body, read once within the size limit.
struct APIContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let clientAddress: String
    /// The request's id (`X-Request-Id`, set by `RequestLogMiddleware`), for the audit trail.
    var requestId: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        let remote = source.channel.remoteAddress ?? source.channel.parent?.remoteAddress
        clientAddress = remote?.ipAddress ?? "unknown"
    }

    /// The body limit is enforced by `LimitsMiddleware` for every route.
    var maxUploadSize: Int { ServerSettings.maximumBody }
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
