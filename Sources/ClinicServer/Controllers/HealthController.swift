import ClinicKit
import Foundation
import Hummingbird
import NIOCore

/// `/healthz`, `/readyz` and `/metrics`: for the operator and the load balancer.
struct HealthController {
    struct HealthJSON: Encodable { let status: String }
    struct ReadyJSON: Encodable { let status: String; let schemaVersion: Int?; let latestVersion: Int? }

    let dependencies: ServerDependencies

    func addRoutes(to group: RouterGroup<APIContext>) {
        group.get("healthz") { _, _ in try HTTPMapping.json(HealthJSON(status: "ok")) }
        group.get("readyz") { _, _ in await ready() }
        group.get("metrics") { [metrics = dependencies.metrics] _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: metrics.text())))
        }
    }

    func ready() async -> Response {
        let status = try? await dependencies.system.schemaStatus()
        let ready = status.map { $0.current == $0.latest } ?? false
        let body = ReadyJSON(status: ready ? "ready" : "unavailable", schemaVersion: status?.current, latestVersion: status?.latest)
        return (try? HTTPMapping.json(body, status: ready ? .ok : .serviceUnavailable))
            ?? Response(status: .serviceUnavailable)
    }
}
