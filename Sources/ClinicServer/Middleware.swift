import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Turns every failure into `{"error":{"code","message"}}` with its fixed status: the
/// library's errors, the router's (404, 405), a body over the limit (413) or cut short (400),
/// and anything unexpected (500 with no detail, logged without the request's data).
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let routes: RouteTable
    /// The web app's page for a path nothing answers, when a browser asked for a page (nil:
    /// the API's JSON, as for every other failure).
    var notFoundPage: (@Sendable (Request) async -> Response?)? = nil

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            // The router's own 404 on a path a route has: the method is what is wrong.
            if let error = error as? HTTPError, error.status == .notFound, let allowed = routes.allowed(request.uri.path) {
                return Self.response(for: HTTPError(.methodNotAllowed, headers: [.allow: allowed.joined(separator: ", ")]),
                                     request: request, context: context)
            }
            if let error = error as? HTTPError, error.status == .notFound, let page = await notFoundPage?(request) { return page }
            return Self.response(for: error, request: request, context: context)
        }
    }

    static func response(for error: any Error, request: Request, context: APIContext) -> Response {
        let (response, failure) = answer(for: error, request: request, context: context)
        // Under /fhir/ the same failure is said as FHIR says it (an OperationOutcome).
        guard request.uri.path.hasPrefix(FHIROutcome.prefix) else { return response }
        return FHIROutcome.rewrite(response, failure, failure.language ?? context.language)
    }

    private static func answer(for error: any Error, request: Request, context: APIContext) -> (Response, APIFailure) {
        func respond(_ failure: APIFailure, language: Language) -> (Response, APIFailure) {
            (HTTPMapping.response(failure, language: language), failure)
        }
        // `Accept-Language` (`LanguageMiddleware`): this middleware is outside the groups, so it
        // never sees a patient's saved language; a failure that should say it carries it.
        let language = context.language
        let error = clientFault(error)
        switch error {
        case let failure as APIFailure:
            if failure.status == .internalServerError, let error = failure.libraryError { logFailure(error, context) }
            return respond(failure, language: language)
        case let error as ClinicError:
            if HTTPMapping.status(error.code) == .internalServerError { logFailure(error, context) }
            return respond(APIFailure(error), language: language)
        case let error as ServerError:
            return respond(APIFailure(error), language: language)
        case let error as HTTPError:
            switch error.status {
            case .contentTooLarge:
                // The connection closes after the answer (ConnectionCloseHandler; on HTTP/2 only
                // the stream ends): the rest of a refused body is dropped, and nothing pipelined
                // behind it is answered.
                return respond(APIFailure(ServerError(.tooLarge, .tooLarge, String(context.maxUploadSize)),
                                                       headers: [.connection: "close"]), language: language)
            case .methodNotAllowed:
                return respond(APIFailure(ServerError(.methodNotAllowed, .methodNotAllowed, request.method.rawValue),
                                                       headers: error.headers), language: language)
            case .notFound:
                return respond(APIFailure(ServerError(.notFound, .routeNotFound, request.uri.path)), language: language)
            default:
                guard error.status.code < 500 else {
                    context.logger.error("HTTP error \(error.status.code)")
                    return respond(APIFailure(ClinicError(.internalError, .internalError, "-")), language: language)
                }
                // 400-class from the HTTP layer
                return respond(APIFailure(ServerError.invalid(.bodyInvalid, error.status.reasonPhrase)), language: language)
            }
        default:
            context.logger.error("unexpected error", metadata: ["type": .string(String(describing: type(of: error)))])
            return respond(APIFailure(ClinicError(.internalError, .internalError, "-")), language: language)
        }
    }

    /// A failure of reading the request's body said as the client's fault it is (the API's
    /// answers and the web pages' alike), anything else as it was.
    static func clientFault(_ error: any Error) -> any Error {
        switch error {
        case is NIOTooManyBytesError:
            // A body without a declared length (chunked, or an HTTP/2 stream) that passes the
            // limit while it is read: the same refusal as a declared length over it.
            return HTTPError(.contentTooLarge)
        case let error as HTTPParserError:
            // A body cut short (the connection closed before its Content-Length) or bytes that
            // are not HTTP. As a 500 it was logged as an error and counted as a server failure,
            // so that anyone could raise the operator's 5xx alerts at will.
            if case .invalidEOFState = error {
                return ServerError.invalid(.bodyInvalid, "the connection closed before the whole body arrived")
            }
            return ServerError.invalid(.bodyInvalid, "it is not well-formed HTTP")
        case is CancellationError:
            // The client ended the request before it was answered: an HTTP/2 stream reset in
            // the middle of its body (RST_STREAM) cancels the handler's task. Its fault, not the
            // server's; nobody reads the answer.
            return ServerError.invalid(.bodyInvalid, "the client ended the request before it was answered")
        default:
            return error
        }
    }

    /// A server-side failure, for the operator: its code and English message (which names no
    /// patient data: storage and key errors name files and SQLite's words).
    static func logFailure(_ error: ClinicError, _ context: APIContext) {
        context.logger.error("request failed", metadata: ["code": .string(error.code.rawValue), "reason": .string(error.message(in: .en))])
    }
}

/// The language of the answer, from `Accept-Language`, for every request (a patient group's
/// authenticator refines it with the patient's saved language).
struct LanguageMiddleware: RouterMiddleware {
    typealias Context = APIContext

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        var context = context
        context.language = language(of: request)
        return try await next(request, context)
    }
}

/// The body limit on every route: a declared length over it is refused before anything is
/// read, and a body without one is read up to the limit and refused past it.
struct LimitsMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let maximumBody: Int

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        // An upload's body is read by its route, after the session is checked, up to its own limit.
        if AttachmentsController.isUpload(request) { return try await next(request, context) }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maximumBody {
            throw HTTPError(.contentTooLarge)
        }
        var request = request
        _ = try await request.collectBody(upTo: maximumBody)
        return try await next(request, context)
    }
}

/// Headers on every response: no sniffing, no framing, no referrer; nothing cached (every
/// answer may carry personal data) unless the route said otherwise (`WebAssetsController`:
/// the static files and the map's clinics); HSTS under TLS.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let tls: Bool

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.referrerPolicy] = "no-referrer"
        // Static files and the map's clinics say their own (public, no personal data).
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        if tls { response.headers[.strictTransportSecurity] = "max-age=31536000" }
        return response
    }
}

/// One line per request for the operator: request id, method, route template (never the raw
/// path, which may hold ids or an address), status and time; no tokens, bodies or query
/// strings. The same figures go to the metrics. A client's `X-Request-Id` (up to 64 letters,
/// digits, `-`, `_`, `.`) is kept, else one is made; the response carries it.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let id = request.headers[.xRequestId].flatMap(Self.acceptable) ?? UUID().uuidString.lowercased()
        var response: Response
        var context = context
        context.requestId = id
        // One id per line: the request's (the one the response carries), in place of
        // Hummingbird's own `hb.request.id`, on this line and on every line logged while it runs.
        context.logger[metadataKey: "hb.request.id"] = nil
        context.logger[metadataKey: "request_id"] = .string(id)
        do {
            response = try await next(request, context)
        } catch {
            // The error middleware is inside this one: this is only reached for a failure it
            // did not answer, which the server answers with 500.
            log(request, context, id: id, status: 500, started)
            throw error
        }
        response.headers[.xRequestId] = id
        log(request, context, id: id, status: Int(response.status.code), started)
        return response
    }

    static func acceptable(_ id: String) -> String? {
        guard !id.isEmpty, id.utf8.count <= 64,
              id.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45 || $0 == 95 || $0 == 46 })
        else { return nil }
        return id
    }

    func log(_ request: Request, _ context: APIContext, id: String, status: Int, _ started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let route = context.endpointPath ?? "unmatched"
        // Labels stay few: a method a client made up is "OTHER".
        let known: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]
        let method = known.contains(request.method.rawValue) ? request.method.rawValue : "OTHER"
        metrics.request(route: route, method: method, status: status, duration: elapsed)
        context.logger.info("request", metadata: [
            "method": .string(method),
            "route": .string(route),
            "status": .stringConvertible(status),
            "ms": .string(String(format: "%.1f", milliseconds)),
        ])
    }
}

extension HTTPField.Name {
    static let xRequestId = Self("X-Request-Id")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}
