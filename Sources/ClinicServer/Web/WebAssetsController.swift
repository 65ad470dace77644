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
        group.get("/clinics/map.json") { request, context in try await mapData(request, context.language) }
    }

    /// A static file from memory. A fingerprinted path (the one pages link to) is cached for a
    /// year as immutable: a new version is a new name. The plain path is revalidated (`ETag`,
    /// `304`). Compressible files go gzip-encoded to clients that take gzip, identity to others.
    func staticFile(_ request: Request) -> Response {
        guard let file = dependencies.assets?.files[request.uri.path] else {
            return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: "Not found")))
        }
        let cacheControl = file.fingerprinted ? "public, max-age=31536000, immutable" : "no-cache"
        return Self.cacheable(request, type: file.type, body: file.body, gzipped: file.gzipped, etag: file.etag,
                              cacheControl: cacheControl)
    }

    /// `/clinics/map.json`, encoded (and compressed) once per version of the directory and its
    /// departments (550 KB for the default directory, asked by every map page); its `ETag` is
    /// the version's, so a browser that has it is answered `304`.
    func mapData(_ request: Request, _ language: Language) async throws -> Response {
        let map = try await dependencies.mapCache.map(language)
        return Self.cacheable(request, type: HTTPMapping.jsonType, body: map.body, gzipped: map.gzipped, etag: map.etag,
                              cacheControl: "no-cache")
    }

    /// A response a browser may keep: `304` when `If-None-Match` names its `ETag`, else the
    /// body, gzip-encoded when the client takes it and that saves bytes.
    static func cacheable(_ request: Request, type: String, body: ByteBuffer, gzipped: ByteBuffer?, etag: String,
                          cacheControl: String) -> Response {
        var fields: HTTPFields = [.eTag: etag, .cacheControl: cacheControl]
        if gzipped != nil { fields[.vary] = "Accept-Encoding" }
        if let match = request.headers[.ifNoneMatch],
           match.split(separator: ",").contains(where: { tag in
               let tag = tag.trimmingCharacters(in: .whitespaces)
               return tag == "*" || tag == etag || tag == "W/" + etag
           }) {
            return Response(status: .notModified, headers: fields)
        }
        fields[.contentType] = type
        if let gzipped, Gzip.isAccepted(by: request.headers[.acceptEncoding]) {
            fields[.contentEncoding] = "gzip"
            return Response(status: .ok, headers: fields, body: .init(byteBuffer: gzipped))
        }
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: body))
    }
}

/// The clinics of the map, compact: specialization keys once, then per clinic
/// `[id, name, lat, lon, flags, [specialization indexes]]` (flags: 1 pediatric, 2 hospital).
struct MapJSON: Encodable {
    let specializations: [String]
    /// English names of the specializations, and every language's (the map's filter is in the page's).
    let names: [String]
    let namesByLanguage: [String: [String]]
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
        namesByLanguage = Dictionary(uniqueKeysWithValues: Language.allCases.map { language in
            (language.rawValue, keys.map { Specialization.displayName($0, language) })
        })
        self.clinics = clinics.map { clinic in
            [.int(clinic.id), .text(clinic.name), .double(clinic.lat), .double(clinic.lon),
             .int((clinic.isPediatric ? 1 : 0) + (clinic.isHospital ? 2 : 0)), .list(clinic.specializations.compactMap { index[$0] })]
        }
    }
}
