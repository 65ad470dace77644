import Foundation
import HTTPTypes
import Hummingbird

/// The router as the controllers' groups see it: every route added through a group (at any
/// depth) passes here on its way to the router, with its whole template and method, in the
/// order added. So a known path asked with another method (any method: QUERY, PROPFIND…) is
/// answered 405 `method_not_allowed` with `Allow` listing the methods in the order they were
/// added, not 404 (`ErrorMiddleware`). The router keeps its own templates for the request log
/// and the metrics (`context.endpointPath`).
final class RouteTable: RouterMethods, @unchecked Sendable {
    typealias Context = APIContext
    private let lock = NSLock()
    private var templates: [(segments: [Substring], methods: [HTTPRequest.Method])] = []
    let router: Router<APIContext>

    init(router: Router<APIContext>) { self.router = router }

    @discardableResult
    func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
    where Responder.Context == APIContext {
        router.on(path, method: method, responder: responder)
        let segments = path.description.split(separator: "/")
        lock.withLock {
            if let index = templates.firstIndex(where: { $0.segments == segments }) {
                templates[index].methods.append(method)
            } else {
                templates.append((segments, [method]))
            }
        }
        return self
    }

    /// Middleware for every route belongs on the router itself (`buildRouter`), not here.
    @discardableResult
    func add(middleware: any MiddlewareProtocol<Request, Response, APIContext>) -> Self {
        router.add(middleware: middleware)
        return self
    }

    /// The methods of the routes whose template matches `path` (a capture, `{id}`, matches one
    /// segment); nil for a path no route has. Where a constant segment and a capture both match,
    /// the constant wins, as in the router: `/v1/waitlist/offers` is `GET`'s only, though
    /// `DELETE /v1/waitlist/{id}` has the same shape.
    func allowed(_ path: String) -> [String]? {
        let parts = path.split(separator: "/")
        func isCapture(_ segment: Substring) -> Bool { segment.hasPrefix("{") || segment.hasPrefix(":") }
        let methods = lock.withLock { () -> [HTTPRequest.Method] in
            let matching = templates.filter { template in
                template.segments.count == parts.count && zip(template.segments, parts).allSatisfy { isCapture($0) || $0 == $1 }
            }
            // The most specific: at the first segment where they differ, a constant before a capture.
            let shapes = matching.map { $0.segments.map(isCapture) }
            guard let best = shapes.min(by: { $0.lexicographicallyPrecedes($1) { !$0 && $1 } }) else { return [] }
            return zip(matching, shapes).filter { $0.1 == best }.flatMap(\.0.methods)
        }
        guard !methods.isEmpty else { return nil }
        let names = methods.map(\.rawValue) + (methods.contains(.get) ? ["HEAD"] : [])
        return names.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }
}
