import ClinicKit
import Foundation
import Hummingbird

/// The directory: `/v1/clinics…` and `/v1/geocode`. Public: no session needed (`me=true` in a
/// search asks for the patient's token then).
struct ClinicsController {
    let dependencies: ServerDependencies

    func addRoutes(to group: RouterGroup<APIContext>) {
        group.get("clinics", use: list)
        group.get("clinics/nearest", use: nearest)
        group.get("clinics/:id", use: show)
        group.get("clinics/:id/departments", use: departments)
        group.get("geocode", use: geocode)
    }

    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let city = request.query("city"), limit = try request.queryInt("limit") ?? 20, cursor = request.query("cursor")
        let page = try await dependencies.awaited(context.language) { [system = dependencies.system] in
            try await system.clinics.clinicsPage(city: city, limit: limit, cursor: cursor)
        }
        return try HTTPMapping.json(PageJSON(items: page.items.map(ClinicJSON.init), nextCursor: page.nextCursor))
    }

    @Sendable func show(_ request: Request, context: APIContext) async throws -> Response {
        let id = try context.parameters.id("id")
        let (clinic, departments) = try await dependencies.awaited(context.language) { [system = dependencies.system] in
            try await system.clinics.clinicWithDepartments(id)
        }
        return try HTTPMapping.json(ClinicDetailJSON(clinic, departments: departments, language: context.language))
    }

    @Sendable func departments(_ request: Request, context: APIContext) async throws -> Response {
        let id = try context.parameters.id("id")
        let departments = try await dependencies.awaited(context.language) { [system = dependencies.system] in
            try await system.clinics.clinicWithDepartments(id).departments
        }
        return try HTTPMapping.json(departments.map { DepartmentJSON($0, language: context.language) })
    }

    @Sendable func geocode(_ request: Request, context: APIContext) async throws -> Response {
        guard let query = request.query("q") else {
            throw ServerError.invalid(.fieldRequired, "q")
        }
        let result = try await dependencies.awaited(context.language) { [system = dependencies.system] in
            try await system.geocoding.geocode(query, zones: true)
        }
        return try HTTPMapping.json(GeocodeJSON(result))
    }

    @Sendable func nearest(_ request: Request, context: APIContext) async throws -> Response {
        let language = context.language
        let radius = try request.query("withinKm").map { text -> Double in
            guard let value = Double(text) else { throw ClinicError.invalid(.radiusInvalid, text) }
            return value
        }
        let query = NearestQuery(limit: try request.queryInt("limit") ?? 1, pediatricOnly: try request.queryBool("pediatric"),
                                 hospitalOnly: try request.queryBool("hospital"), specialization: request.query("specialization"),
                                 withinKilometres: radius)
        let choice = try request.place()
        let owner = try await dependencies.placeOwner(choice, request)
        let found = try await dependencies.awaited(language) { [system = dependencies.system] in
            try await system.nearestClinics(from: choice, query, patient: owner).found
        }
        return try HTTPMapping.json(found.map(NearbyClinicJSON.init))
    }
}

/// A page of a list: `{"items","nextCursor"}`.
struct PageJSON<Item: Encodable>: Encodable {
    let items: [Item]
    let nextCursor: String?

    enum Keys: String, CodingKey { case items, nextCursor }
    // `nextCursor` is null on the last page, never missing.
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

extension Request {
    /// The place of a search from `lat`/`lon`, `address` or `me=true`.
    func place() throws -> PlaceChoice {
        try PlaceChoice.choose(latitude: query("lat"), longitude: query("lon"), address: query("address"), home: try queryBool("me"))
    }
}

extension ServerDependencies {
    /// Whose home a search starts from: `me=true` needs the signed-in patient, looked up only then.
    func placeOwner(_ choice: PlaceChoice, _ request: Request) async throws -> @Sendable () throws -> Client {
        let patient = choice == .home ? try await patient(request).client : nil
        return {
            guard let patient else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            return patient
        }
    }
}
