import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// The routes as they are added, so that a known path asked with another method (any
/// method: QUERY, PROPFIND…) is answered 405 `method_not_allowed` with `Allow`, not 404.
final class RouteTable: @unchecked Sendable {
    typealias Handler = @Sendable (Request, APIContext) async throws -> Response
    private let lock = NSLock()
    private var templates: [(segments: [Substring], methods: [HTTPRequest.Method])] = []
    private var router: Router<APIContext>?

    func attach(_ router: Router<APIContext>) { self.router = router }

    func get(_ path: String, _ handler: @escaping Handler) { on(.get, path, handler) }
    func post(_ path: String, _ handler: @escaping Handler) { on(.post, path, handler) }
    func patch(_ path: String, _ handler: @escaping Handler) { on(.patch, path, handler) }
    func delete(_ path: String, _ handler: @escaping Handler) { on(.delete, path, handler) }
    func put(_ path: String, _ handler: @escaping Handler) { on(.put, path, handler) }

    private func on(_ method: HTTPRequest.Method, _ path: String, _ handler: @escaping Handler) {
        router?.on(RouterPath(path), method: method, use: handler)
        let segments = path.split(separator: "/")
        lock.withLock {
            if let index = templates.firstIndex(where: { $0.segments == segments }) {
                templates[index].methods.append(method)
            } else {
                templates.append((segments, [method]))
            }
        }
    }

    /// The methods of the routes whose template matches `path` (":id" matches one segment);
    /// nil for a path no route has.
    func allowed(_ path: String) -> [String]? {
        let parts = path.split(separator: "/")
        let methods = lock.withLock {
            templates.filter { template in
                template.segments.count == parts.count
                    && zip(template.segments, parts).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
            }.flatMap(\.methods)
        }
        guard !methods.isEmpty else { return nil }
        let names = methods.map(\.rawValue) + (methods.contains(.get) ? ["HEAD"] : [])
        return names.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }
}

// The request bodies (openapi.yaml has them with their limits).

struct RegistrationBody: Decodable, Sendable {
    let login: String, password: String, name: String, surname: String, street: String, house: String, city: String
    let clinicId: Int64?
    let language: Language?
    let acceptPrivacy: Bool
}

struct LogInBody: Decodable, Sendable {
    struct DeviceBody: Decodable, Sendable { let name: String; let platform: String; let appVersion: String }
    let login: String, password: String
    let device: DeviceBody?
    let acceptPrivacy: Bool?
}

struct ProfileBody: Decodable, Sendable {
    let name: String?, surname: String?, street: String?, house: String?, city: String?
    let clinicId: Int64?
    let language: Language?
}

struct PasswordBody: Decodable, Sendable { let oldPassword: String; let newPassword: String }
struct DeleteBody: Decodable, Sendable { let password: String }
struct BookingBody: Decodable, Sendable {
    let departmentId: Int64; let start: String; let doctorId: Int64?; let notes: String?; let visitTypeId: Int64?
}
struct RescheduleBody: Decodable, Sendable { let start: String }

// The response bodies that are the API's own (the others are ClinicKit's shapes).

struct PatientEnvelope: Encodable { let patient: ClientJSON }
struct SessionCreated: Encodable { let token: String; let expiresAt: String; let patient: ClientJSON }
struct SessionJSON: Encodable {
    struct DeviceJSON: Encodable { let name: String; let platform: String; let appVersion: String }
    let id: Int64; let device: DeviceJSON?; let createdAt: String; let lastUsedAt: String; let current: Bool

    init(_ info: SessionInfo) {
        id = info.id; createdAt = DateText.iso8601(info.createdAt); lastUsedAt = DateText.iso8601(info.lastUsedAt)
        current = info.isCurrent
        device = info.device.map { DeviceJSON(name: $0.name, platform: $0.platform, appVersion: $0.appVersion) }
    }
}
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
struct HealthJSON: Encodable { let status: String }
struct ReadyJSON: Encodable { let status: String; let schemaVersion: Int?; let latestVersion: Int? }

extension API {
    func addRoutes(to routes: RouteTable) {
        routes.get("/healthz") { _, _ in try HTTPMapping.json(HealthJSON(status: "ok")) }
        routes.get("/readyz") { _, _ in await ready() }
        routes.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: metrics.text())))
        }

        addStaffRoutes(to: routes)
        addMessageRoutes(to: routes)
        addWebRoutes(to: routes)
        routes.post("/v1/patients") { request, context in try await register(request, context) }
        routes.post("/v1/sessions") { request, context in try await logIn(request, context) }
        routes.get("/v1/sessions") { request, _ in
            try await signedIn(request) { patient in
                let sessions = try await work(patient.language) { [system] in
                    try system.clients.signedInSessions(clientId: patient.id, current: patient.token)
                }
                return try HTTPMapping.json(sessions.map(SessionJSON.init))
            }
        }
        routes.delete("/v1/sessions/:id") { request, context in
            let patient = try await patient(request)
            switch context.parameters.get("id") {
            case "current":
                _ = try await work(patient.language) { [system] in try system.clients.logOut(token: patient.token) }
            case "others": // "sign out everywhere else", which renews the calendar address too
                try await work(patient.language) { [system] in
                    try system.clients.endOtherSessions(clientId: patient.id, keeping: patient.token)
                }
                await touch(patient)
            default:
                let id = try context.parameters.id("id")
                try await work(patient.language) { [system] in try system.clients.endSession(id, clientId: patient.id) }
                await touch(patient)
            }
            return Response(status: .noContent)
        }

        routes.get("/v1/me") { request, _ in
            try await signedIn(request) { patient in
                let unread = try await work(patient.language) { [system] in try system.clients.unreadCount(clientId: patient.id) }
                return try HTTPMapping.json(ClientJSON(patient.client, unreadMessages: unread))
            }
        }
        routes.patch("/v1/me") { request, context in
            try await signedIn(request) { patient in
                let body = try await RequestBody.decode(ProfileBody.self, from: request, context: context)
                let changes = ProfileChanges(name: body.name, surname: body.surname, street: body.street, house: body.house,
                                             city: body.city, clinicId: body.clinicId, language: body.language)
                let client = try await work(patient.language) { [system] in
                    try system.clients.updateProfile(clientId: patient.id, changes)
                }
                return try HTTPMapping.json(ClientJSON(client))
            }
        }
        routes.post("/v1/me/password") { request, context in
            try await signedIn(request) { patient in
                try checkAuthRate(context, patient.language) // a password guess, as a log-in is
                let body = try await RequestBody.decode(PasswordBody.self, from: request, context: context)
                try await passwordWork(patient.language) { [system] in
                    try system.clients.changePassword(clientId: patient.id, old: body.oldPassword, new: body.newPassword,
                                                      keeping: patient.token)
                }
                return try HTTPMapping.json(ChangedJSON(changed: true))
            }
        }
        routes.get("/v1/me/access-log") { request, _ in
            try await signedIn(request) { patient in
                let entries = try await work(patient.language) { [system] in try system.clients.accessLog(clientId: patient.id) }
                return try HTTPMapping.json(entries.map(AccessLogEntryJSON.init))
            }
        }
        routes.get("/v1/me/export") { request, _ in
            try await signedIn(request) { patient in
                let data = try await work(patient.language) { [system] in try system.clients.export(clientId: patient.id) }
                return try HTTPMapping.json(ExportJSON(data))
            }
        }
        routes.delete("/v1/me") { request, context in
            let patient = try await patient(request)
            try checkAuthRate(context, patient.language) // a password guess, as a log-in is
            let body = try await RequestBody.decode(DeleteBody.self, from: request, context: context)
            try await passwordWork(patient.language) { [system] in
                try system.clients.deleteAccount(clientId: patient.id, password: body.password)
            }
            return try HTTPMapping.json(DeletedJSON(deleted: patient.client.login))
        }
        routes.get("/v1/privacy-policy") { request, _ in
            try HTTPMapping.json(PolicyJSON(language(of: request)))
        }

        routes.get("/v1/clinics") { request, _ in
            let language = language(of: request)
            let city = request.query("city"), limit = try request.queryInt("limit") ?? 20, cursor = request.query("cursor")
            let page = try await work(language) { [system] in try system.clinics.clinicsPage(city: city, limit: limit, cursor: cursor) }
            return try HTTPMapping.json(PageJSON(items: page.items.map(ClinicJSON.init), nextCursor: page.nextCursor))
        }
        routes.get("/v1/clinics/nearest") { request, _ in try await nearest(request) }
        routes.get("/v1/clinics/:id") { request, context in
            let language = language(of: request)
            let id = try context.parameters.id("id")
            let (clinic, departments) = try await work(language) { [system] in
                (try system.clinics.getClinicById(id), try system.departments.getDepartmentsByClinicId(id))
            }
            return try HTTPMapping.json(ClinicDetailJSON(clinic, departments: departments, language: language))
        }
        routes.get("/v1/clinics/:id/departments") { request, context in
            let language = language(of: request)
            let id = try context.parameters.id("id")
            let departments = try await work(language) { [system] in
                _ = try system.clinics.getClinicById(id)
                return try system.departments.getDepartmentsByClinicId(id)
            }
            return try HTTPMapping.json(departments.map { DepartmentJSON($0, language: language) })
        }
        routes.get("/v1/departments/:id/doctors") { request, context in
            let language = language(of: request)
            let id = try context.parameters.id("id")
            let doctors = try await work(language) { [system] in
                _ = try system.departments.getDepartmentById(id)
                return try system.departments.getDoctorsByDepartmentId(id).map {
                    DoctorJSON($0, hours: try system.departments.getWorkingHours(doctorId: $0.id ?? 0))
                }
            }
            return try HTTPMapping.json(doctors)
        }
        routes.get("/v1/departments/:id/slots") { request, context in
            let language = language(of: request)
            let id = try context.parameters.id("id")
            let days = try request.queryInt("days") ?? 7, doctorId = try request.queryInt("doctorId").map(Int64.init)
            let visitTypeId = try request.queryInt("visitTypeId").map(Int64.init)
            let from = request.query("from")
            let slots = try await work(language) { [system] in
                try system.appointments.slots(departmentId: id, doctorId: doctorId, from: try from.map(TimeInput.parseDay), days: days,
                                              visitTypeId: visitTypeId)
            }
            return try HTTPMapping.json(slots.map(SlotJSON.init))
        }
        routes.get("/v1/departments/:id/visit-types") { request, context in
            let language = language(of: request)
            let id = try context.parameters.id("id")
            let types = try await work(language) { [system] in try system.departments.visitTypes(departmentId: id) }
            return try HTTPMapping.json(types.map { VisitTypeJSON($0, language: language) })
        }
        routes.get("/v1/geocode") { request, _ in
            let language = language(of: request)
            guard let query = request.query("q") else {
                throw APIFailure(ClinicError.invalid(.apiFieldRequired, "q"), language: language)
            }
            let result = try await work(language) { [system] in try system.geocoding.geocode(query, zones: true) }
            return try HTTPMapping.json(GeocodeJSON(result))
        }
        routes.get("/v1/find") { request, _ in try await find(request) }

        routes.get("/v1/appointments") { request, _ in
            try await signedIn(request) { patient in
                let scopeText = request.query("scope") ?? AppointmentScope.upcoming.rawValue
                guard let scope = AppointmentScope(rawValue: scopeText) else {
                    throw APIFailure(ClinicError.invalid(.apiFieldChoice, "scope", "upcoming, past, all"), language: patient.language)
                }
                let limit = try request.queryInt("limit") ?? 20, cursor = request.query("cursor")
                let page = try await work(patient.language) { [system] in
                    try system.appointments.appointmentsPage(patient.id, scope: scope, limit: limit, cursor: cursor)
                }
                return try HTTPMapping.json(PageJSON(items: page.items.map(AppointmentJSON.init), nextCursor: page.nextCursor))
            }
        }
        routes.post("/v1/appointments") { request, context in
            try await signedIn(request) { patient in
                let (body, raw) = try await decodeKeeping(BookingBody.self, request, context)
                let time = try parsedTime(body.start, patient.language)
                return try await idempotent(request, context, patient, body: raw) { [system] in
                    let booked = try system.appointments.createAppointment(clientId: patient.id, departmentId: body.departmentId,
                                                                           at: time, doctorId: body.doctorId, notes: body.notes ?? "",
                                                                           visitTypeId: body.visitTypeId)
                    return (.created, AppointmentJSON(booked))
                }
            }
        }
        routes.get("/v1/appointments/:id") { request, context in
            if let text = context.parameters.get("id"), text.hasSuffix(".ics") { return try await appointmentCalendar(request, id: text) }
            return try await signedIn(request) { patient in
                let id = try context.parameters.id("id")
                let (appointment, history) = try await work(patient.language) { [system] in
                    try system.appointments.appointmentWithHistory(id, clientId: patient.id)
                }
                return try HTTPMapping.json(AppointmentHistoryJSON(appointment, history))
            }
        }
        routes.post("/v1/appointments/:id/reschedule") { request, context in
            try await signedIn(request) { patient in
                let id = try context.parameters.id("id")
                let (body, raw) = try await decodeKeeping(RescheduleBody.self, request, context)
                let time = try parsedTime(body.start, patient.language)
                return try await idempotent(request, context, patient, body: raw) { [system] in
                    let moved = try system.appointments.rescheduleAppointment(id, clientId: patient.id, to: time)
                    return (.ok, AppointmentJSON(moved))
                }
            }
        }
        routes.post("/v1/appointments/:id/cancel") { request, context in
            try await signedIn(request) { patient in
                let id = try context.parameters.id("id")
                var request = request
                let raw = Data(buffer: try await request.collectBody(upTo: context.maxUploadSize))
                return try await idempotent(request, context, patient, body: raw) { [system] in
                    let cancelled = try system.appointments.cancelAppointment(id, clientId: patient.id)
                    return (.ok, AppointmentJSON(cancelled))
                }
            }
        }
    }

    // MARK: Handlers too long to sit in the table above

    func ready() async -> Response {
        let status = try? await pool.run { [system] in try system.database.schemaStatus() }
        let ready = status.map { $0.current == $0.latest } ?? false
        let body = ReadyJSON(status: ready ? "ready" : "unavailable", schemaVersion: status?.current, latestVersion: status?.latest)
        return (try? HTTPMapping.json(body, status: ready ? .ok : .serviceUnavailable))
            ?? Response(status: .serviceUnavailable)
    }

    func register(_ request: Request, _ context: APIContext) async throws -> Response {
        let asked = language(of: request)
        try checkAuthRate(context, asked)
        let body = try await RequestBody.decode(RegistrationBody.self, from: request, context: context)
        let registration = RegistrationRequest(
            login: body.login, password: body.password, name: body.name, surname: body.surname, street: body.street,
            house: body.house, city: body.city, clinicId: body.clinicId, language: body.language ?? asked,
            acceptedPrivacy: body.acceptPrivacy)
        let client = try await passwordWork(asked) { [system] in try system.clients.registerUser(registration) }
        return try HTTPMapping.json(PatientEnvelope(patient: ClientJSON(client)), status: .created)
    }

    func logIn(_ request: Request, _ context: APIContext) async throws -> Response {
        let asked = language(of: request)
        do { try checkAuthRate(context, asked) } catch let failure as APIFailure {
            metrics.logInRefused(failure.error.code.rawValue)
            throw failure
        }
        let body = try await RequestBody.decode(LogInBody.self, from: request, context: context)
        let device = body.device.map { Device(name: $0.name, platform: $0.platform, appVersion: $0.appVersion) }
        let client: Client, token: String
        do {
            (client, token) = try await passwordWork(asked) { [system] in
                try system.clients.logIn(login: body.login, password: body.password, acceptPrivacy: body.acceptPrivacy ?? false,
                                         device: device)
            }
        } catch let failure as APIFailure {
            metrics.logInRefused(failure.error.code.rawValue)
            throw failure
        }
        let expires = Date().addingTimeInterval(SessionManager.idleLimit)
        return try HTTPMapping.json(SessionCreated(token: token, expiresAt: DateText.iso8601(expires), patient: ClientJSON(client)),
                                    status: .created)
    }

    /// The place of a search from `lat`/`lon`, `address` or `me=true`.
    func place(_ request: Request) throws -> PlaceChoice {
        try PlaceChoice.choose(latitude: request.query("lat"), longitude: request.query("lon"), address: request.query("address"),
                               home: try request.queryBool("me"))
    }

    /// The point of a search; `me=true` needs the signed-in patient.
    func point(_ choice: PlaceChoice, _ request: Request, _ language: Language) async throws -> (Coordinate, GeocodeResult?) {
        let patient = choice == .home ? try await patient(request).client : nil
        return try await work(language) { [system] in
            try choice.resolve(system.geocoding) {
                guard let patient else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
                return patient
            }
        }
    }

    func nearest(_ request: Request) async throws -> Response {
        let language = language(of: request)
        let query: NearestQuery
        let choice: PlaceChoice
        do {
            let radius = try request.query("withinKm").map { text -> Double in
                guard let value = Double(text) else { throw ClinicError.invalid(.radiusInvalid, text) }
                return value
            }
            query = NearestQuery(limit: try request.queryInt("limit") ?? 1, pediatricOnly: try request.queryBool("pediatric"),
                                 hospitalOnly: try request.queryBool("hospital"), specialization: request.query("specialization"),
                                 withinKilometres: radius)
            try query.validate()
            choice = try place(request)
        } catch let error as ClinicError {
            throw APIFailure(error, language: language)
        }
        let (point, geocoded) = try await point(choice, request, language)
        let found = try await work(language) { [system] in
            let found = try system.clinics.nearest(to: point, query)
            if let geocoded { try system.geocoding.remember(geocoded) }
            return found
        }
        return try HTTPMapping.json(found.map(NearbyClinicJSON.init))
    }

    func find(_ request: Request) async throws -> Response {
        let language = language(of: request)
        let specialization: String, limit: Int, before: Date?, choice: PlaceChoice, pediatric: Bool
        let minutes = try request.queryInt("minutes")
        do {
            guard let text = request.query("specialization") else { throw ClinicError.invalid(.apiFieldRequired, "specialization") }
            specialization = text
            limit = try request.queryInt("limit") ?? 1
            try NearestQuery.checkLimit(limit)
            pediatric = try request.queryBool("pediatric")
            before = try request.query("before").map { try TimeInput.resolve($0, in: TimeZone(identifier: "UTC") ?? .gmt) }
            choice = try place(request)
        } catch let error as ClinicError {
            throw APIFailure(error, language: language)
        }
        let (point, geocoded) = try await point(choice, request, language)
        let search = try await searchWork(language) { [system] in
            let search = try system.appointments.searchFreeSlots(specialization: specialization, near: point, before: before,
                                                                 limit: limit, pediatricOnly: pediatric, minutes: minutes,
                                                                 clinics: system.clinics)
            if let geocoded { try system.geocoding.remember(geocoded) }
            return search
        }
        var response = try HTTPMapping.json(search.slots.map(FreeSlotJSON.init))
        // The body stays the list it always was; a search cut short by its budget says so here.
        response.headers[.searchComplete] = search.complete ? "true" : "false"
        return response
    }

    /// A JSON body decoded, with its bytes (an idempotent request is known by them).
    func decodeKeeping<T: Decodable>(_ type: T.Type, _ request: Request, _ context: APIContext) async throws -> (T, Data) {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        let value = try await RequestBody.decode(type, from: request, context: context)
        return (value, Data(buffer: buffer))
    }

    /// A start as the CLI's TIME takes it (an instant with its offset, or a wall time read in
    /// the clinic's zone).
    func parsedTime(_ text: String, _ language: Language) throws -> TimeInput.Parsed {
        do { return try TimeInput.parse(text) } catch let error as ClinicError { throw APIFailure(error, language: language) }
    }
}

extension HTTPField.Name {
    /// `false` when a search for free slots stopped at its budget (`SearchBudget`) before it had
    /// looked at every clinic it should have.
    static let searchComplete = HTTPField.Name("Search-Complete")!
}
