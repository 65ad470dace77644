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
    /// segment);
    /// nil for a path no route has.
    func allowed(_ path: String) -> [String]? {
        let parts = path.split(separator: "/")
        let methods = lock.withLock {
            templates.filter { template in
                template.segments.count == parts.count
                    && zip(template.segments, parts).allSatisfy { $0.hasPrefix("{") || $0.hasPrefix(":") || $0 == $1 }
            }.flatMap(\.methods)
        }
        guard !methods.isEmpty else { return nil }
        let names = methods.map(\.rawValue) + (methods.contains(.get) ? ["HEAD"] : [])
        return names.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }
}
