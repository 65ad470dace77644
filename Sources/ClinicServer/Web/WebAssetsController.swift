import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The web app's static files and the map's clinics (`/clinics/map.json`): no session, no page.
struct WebAssetsController {
    let dependencies: ServerDependencies

    func addRoutes(to group: RouterGroup<APIContext>) {
        group.get("/static/**") { request, _ in staticFile(request) }
        group.get("/clinics/map.json") { _, context in try await mapData(context.language) }
    }

    /// A static file: the whole file from memory; the base map gzip-encoded when the client
    /// takes gzip (every browser does).
    func staticFile(_ request: Request) -> Response {
        guard let file = dependencies.assets?.files[request.uri.path] else {
            return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: "Not found")))
        }
        var fields: HTTPFields = [.contentType: file.type]
        if file.gzip { fields[.contentEncoding] = "gzip"; fields[.vary] = "Accept-Encoding" }
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: file.body))
    }

    /// `/clinics/map.json`, encoded once per version of the directory and its departments
    /// (550 KB for the default directory, asked by every map page).
    func mapData(_ language: Language) async throws -> Response {
        let body = try await dependencies.mapCache.body(language)
        return Response(status: .ok, headers: [.contentType: HTTPMapping.jsonType], body: .init(byteBuffer: body))
    }
}

/// The clinics of the map, compact: specialization keys once, then per clinic
/// `[id, name, lat, lon, flags, [specialization indexes]]` (flags: 1 pediatric, 2 hospital).
struct MapJSON: Encodable {
    let specializations: [String]
    let names: [String]
    let clinics: [[MapValue]]

    enum MapValue: Encodable {
        case int(Int64), double(Double), text(String), list([Int])
        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .int(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .text(let value): try container.encode(value)
            case .list(let value): try container.encode(value)
            }
        }
    }

    init(_ clinics: [MapClinic]) {
        let keys = Array(Set(clinics.flatMap(\.specializations))).sorted()
        let index = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        specializations = keys
        names = keys.map { Specialization.displayName($0, .en) }
        self.clinics = clinics.map { clinic in
            [.int(clinic.id), .text(clinic.name), .double(clinic.lat), .double(clinic.lon),
             .int((clinic.isPediatric ? 1 : 0) + (clinic.isHospital ? 2 : 0)), .list(clinic.specializations.compactMap { index[$0] })]
        }
    }
}
