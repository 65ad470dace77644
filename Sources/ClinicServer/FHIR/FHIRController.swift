import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// FHIR R4 at /fhir/r4 (docs/FHIR.md): the directory as Location, Organization,
/// HealthcareService, Practitioner, PractitionerRole, Schedule and Slot; a patient's own
/// Appointments and Patient record; and IHE ITI Scheduling's `$find`, `$hold` and `$book`.
/// Every handler reads its parameters, calls one ClinicKit use case, and maps what it returns
/// (`FHIRResources`); failures become OperationOutcomes in the error middleware.
struct FHIRController {
    let dependencies: ServerDependencies
    static let base = "fhir/r4"

    func addRoutes(to group: RouterGroup<APIContext>) {
        let fhir = group.group(RouterPath(stringLiteral: Self.base)).add(middleware: FHIRIdentityMiddleware(dependencies: dependencies))
        fhir.get("metadata", use: metadata)
        fhir.get("Location", use: searchLocations)
        fhir.get("Location/:id", use: readLocation)
        fhir.get("Organization", use: searchOrganizations)
        fhir.get("Organization/:id", use: readOrganization)
        fhir.get("HealthcareService", use: searchServices)
        fhir.get("HealthcareService/:id", use: readService)
        fhir.get("Practitioner", use: searchPractitioners)
        fhir.get("Practitioner/:id", use: readPractitioner)
        fhir.get("PractitionerRole", use: searchRoles)
        fhir.get("PractitionerRole/:id", use: readRole)
        fhir.get("Schedule", use: searchSchedules)
        fhir.get("Schedule/:id", use: readSchedule)
        fhir.get("Slot", use: searchSlots)
        fhir.get("Slot/:id", use: readSlot)
        fhir.get("Appointment/$find", use: find)
        fhir.post("Appointment/$find", use: find)
        fhir.post("Appointment/$hold", use: hold)
        fhir.post("Appointment/$book", use: book)
        fhir.get("Appointment", use: searchAppointments)
        fhir.get("Appointment/:id", use: readAppointment)
        fhir.put("Appointment/:id", use: updateAppointment)
        fhir.patch("Appointment/:id", use: patchAppointment)
        fhir.get("Patient", use: searchPatients)
        fhir.get("Patient/:id", use: readPatient)
    }

    // MARK: Plumbing

    func base(_ request: Request) -> String { dependencies.publicBase(request) + "/" + Self.base }

    func respond(_ resource: FHIRJSON, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = FHIROutcome.contentType
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: resource.data)))
    }

    func parameters(_ request: Request, allowed: Set<String>) throws -> FHIRParameters {
        let parameters = request.fhirParameters
        try parameters.check(allowed: allowed, lenient: request.fhirLenient)
        return parameters
    }

    func id(_ context: APIContext, type: String) throws -> Int64 {
        let text = context.parameters.get("id") ?? ""
        guard let id = Int64(text), id > 0 else { throw ClinicError(.notFound, .resourceNotFound, type, text) }
        return id
    }

    /// The link a search was answered for, and the next page's.
    func links(_ request: Request, _ parameters: FHIRParameters, offset: Int, count: Int, more: Bool) -> (String, String?) {
        let path = dependencies.publicBase(request) + request.uri.path
        func link(_ offset: Int) -> String {
            let pairs = parameters.pairs.filter { $0.name != "_offset" } + (offset > 0 ? [("_offset", String(offset))] : [])
            let query = pairs.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
            return query.isEmpty ? path : path + "?" + query
        }
        return (link(offset), more ? link(offset + count) : nil)
    }

    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    func entry(_ request: Request, _ resource: FHIRJSON, type: String, distance: Double? = nil) -> FHIRResources.Entry {
        let id = resource["id"]?.stringValue ?? ""
        return FHIRResources.Entry(resource: resource, fullUrl: "\(base(request))/\(type)/\(id)", distance: distance)
    }

    func searchset(_ request: Request, _ parameters: FHIRParameters, _ entries: [FHIRResources.Entry], total: Int?,
                   offset: Int = 0, count: Int = 0, more: Bool = false, profile: Bool = false) -> Response {
        let (selfLink, next) = links(request, parameters, offset: offset, count: count, more: more)
        return respond(FHIRResources.bundle(entries, total: total, selfLink: selfLink, next: next, profile: profile))
    }

    // MARK: metadata

    @Sendable func metadata(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: ["mode"])
        return respond(FHIRCapability.statement(base: base(request)))
    }

    // MARK: Location and Organization

    @Sendable func readLocation(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: [])
        let id = try id(context, type: "Location")
        let (clinic, hours) = try await dependencies.awaited(context.language) { [system = dependencies.system] in
            try await system.clinicWithOpeningHours(id)
        }
        return respond(FHIRResources.location(clinic, hours: hours))
    }

    @Sendable func readOrganization(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: [])
        let id = try id(context, type: "Organization")
        let clinic = try await dependencies.awaited(context.language) { [system = dependencies.system] in
            try await system.clinics.clinicWithDepartments(id).clinic
        }
        return respond(FHIRResources.organization(clinic))
    }

    static let locationParameters: Set<String> = ["_id", "near", "type", "address-state", "address-city",
                                                  "_has:HealthcareService:location:specialty"]

    /// `Location?near=…` (exact, by great-circle distance, as `/v1/clinics/nearest`), or by
    /// `_id`, or by `address-city` (by name).
    @Sendable func searchLocations(_ request: Request, context: APIContext) async throws -> Response {
        try await searchClinics(request, context, type: "Location") { FHIRResources.location($0) }
    }

    @Sendable func searchOrganizations(_ request: Request, context: APIContext) async throws -> Response {
        try await searchClinics(request, context, type: "Organization") { FHIRResources.organization($0) }
    }

    func searchClinics(_ request: Request, _ context: APIContext, type: String,
                       _ map: @escaping @Sendable (Clinic) -> FHIRJSON) async throws -> Response {
        let parameters = try parameters(request, allowed: Self.locationParameters)
        let count = try parameters.count(), offset = try parameters.offset()
        if let ids = parameters.first("_id") {
            let list = try ids.split(separator: ",").map { try FHIRParameters.id(String($0), type: type, parameter: "_id") }
            let clinics = try await dependencies.awaited(context.language) { [system = dependencies.system] in
                var found: [Clinic] = []
                for id in list {
                    do { found.append(try await system.clinics.clinicWithDepartments(id).clinic) }
                    catch let error as ClinicError where error.code == .notFound { continue }
                }
                return found
            }
            return searchset(request, parameters, clinics.map { entry(request, map($0), type: type) }, total: clinics.count)
        }
        if let nearText = parameters.first("near") {
            let near = try FHIRNear(nearText)
            var query = NearestQuery(limit: count, withinKilometres: near.kilometres)
            for code in parameters.values("type").flatMap({ $0.split(separator: ",") }) {
                switch FHIRParameters.token(String(code)) {
                case (FHIRResources.roleCodeSystem?, "HOSP"), (nil, "HOSP"): query.hospitalOnly = true
                case (FHIRResources.roleCodeSystem?, "PEDC"), (nil, "PEDC"): query.pediatricOnly = true
                default: throw ServerError.invalid(.fhirCode, String(code))
                }
            }
            if let specialty = parameters.first("_has:HealthcareService:location:specialty") {
                query.specialization = try FHIRParameters.specialization(specialty)
            }
            let state = parameters.first("address-state"), asked = query
            let page = try await dependencies.searchAwaited(context.language) { [system = dependencies.system] in
                try await system.clinics.nearestPage(to: near.point, asked, state: state, offset: offset)
            }
            let entries = page.items.map { entry(request, map($0.clinic), type: type, distance: $0.distance) }
            return searchset(request, parameters, entries, total: nil, offset: offset, count: count, more: page.more)
        }
        guard let city = parameters.first("address-city") else {
            throw ServerError.invalid(.fhirParameterMissing, "near, address-city or _id")
        }
        guard parameters.first("type") == nil, parameters.first("address-state") == nil,
              parameters.first("_has:HealthcareService:location:specialty") == nil else {
            throw ServerError.invalid(.fhirParameterMissing, "near")
        }
        let cursor = parameters.first("_cursor")
        let page = try await dependencies.awaited(context.language) { [system = dependencies.system] in
            try await system.clinics.clinicsPage(city: city, limit: count, cursor: cursor)
        }
        let (selfLink, _) = links(request, parameters, offset: 0, count: count, more: false)
        let next = page.nextCursor.map { cursor in
            let pairs = parameters.pairs.filter { $0.name != "_cursor" } + [("_cursor", cursor)]
            return base(request) + "/\(type)?" + pairs.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
        }
        return respond(FHIRResources.bundle(page.items.map { entry(request, map($0), type: type) }, total: nil, selfLink: selfLink,
                                            next: next))
    }

    // MARK: HealthcareService

    @Sendable func readService(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: [])
        let id = try id(context, type: "HealthcareService")
        let language = context.language
        let (department, clinic, visits) = try await dependencies.awaited(language) { [system = dependencies.system] in
            let (department, clinic) = try await system.departmentWithClinic(id)
            return (department, clinic, try await system.departments.visitTypes(departmentId: id))
        }
        return respond(FHIRResources.healthcareService(department, clinic: clinic, visits: visits, language))
    }

    /// A clinic's departments: `location` (or `organization`), optionally one `specialty`.
    @Sendable func searchServices(_ request: Request, context: APIContext) async throws -> Response {
        let parameters = try parameters(request, allowed: ["location", "organization", "specialty", "_id"])
        let language = context.language
        let clinicText = parameters.first("location") ?? parameters.first("organization")
        let ids = try parameters.first("_id").map { try FHIRParameters.id($0, type: "HealthcareService", parameter: "_id") }
        guard clinicText != nil || ids != nil else { throw ServerError.invalid(.fhirParameterMissing, "location") }
        let clinicId = try clinicText.map {
            try FHIRParameters.id($0, type: parameters.first("location") != nil ? "Location" : "Organization", parameter: "location")
        }
        let specialty = try parameters.first("specialty").map(FHIRParameters.specialization)
        let found = try await dependencies.awaited(language) { [system = dependencies.system] in
            var list: [(Department, Clinic, [VisitType])] = []
            let places: [(Department, Clinic)]
            if let ids {
                places = [try await system.departmentWithClinic(ids)]
            } else {
                let (clinic, departments) = try await system.clinics.clinicWithDepartments(clinicId ?? 0)
                places = departments.map { ($0, clinic) }
            }
            for (department, clinic) in places {
                if let clinicId, department.clinicId != clinicId { continue }
                if let specialty, department.specialization != specialty { continue }
                list.append((department, clinic, try await system.departments.visitTypes(departmentId: department.id ?? 0)))
            }
            return list
        }
        let entries = found.map { entry(request, FHIRResources.healthcareService($0.0, clinic: $0.1, visits: $0.2, language), type: "HealthcareService") }
        return searchset(request, parameters, entries, total: entries.count)
    }

    // MARK: Practitioner, PractitionerRole, Schedule

    func doctor(_ context: APIContext, type: String) async throws -> DoctorPlace {
        let id = try id(context, type: type)
        return try await dependencies.awaited(context.language) { [system = dependencies.system] in try await system.doctorPlace(id) }
    }

    @Sendable func readPractitioner(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: [])
        return respond(FHIRResources.practitioner(try await doctor(context, type: "Practitioner")))
    }

    @Sendable func readRole(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: [])
        return respond(FHIRResources.practitionerRole(try await doctor(context, type: "PractitionerRole"), context.language))
    }

    @Sendable func readSchedule(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: [])
        return respond(FHIRResources.schedule(try await doctor(context, type: "Schedule"), context.language))
    }

    /// The doctors a search names: by `_id`, by `practitioner`/`actor`, or every doctor of a
    /// `service` (department) or `location` (clinic).
    func doctors(_ parameters: FHIRParameters, _ language: Language) async throws -> [DoctorPlace] {
        let system = dependencies.system
        if let text = parameters.first("_id") ?? parameters.first("practitioner") ?? parameters.first("actor") {
            let id = try FHIRParameters.id(text, type: text.contains("/") ? String(text.split(separator: "/").dropLast().last ?? "")
                                           : "Practitioner", parameter: "actor")
            if text.hasPrefix("Location/") || text.hasPrefix("HealthcareService/") {
                return try await doctors(ofPlace: text, id: id, language)
            }
            return try await dependencies.awaited(language) {
                do { return [try await system.doctorPlace(id)] } catch let error as ClinicError where error.code == .notFound { return [] }
            }
        }
        if let service = parameters.first("service") {
            return try await doctors(ofPlace: "HealthcareService/", id: try FHIRParameters.id(service, type: "HealthcareService",
                                                                                             parameter: "service"), language)
        }
        if let location = parameters.first("location") {
            return try await doctors(ofPlace: "Location/", id: try FHIRParameters.id(location, type: "Location", parameter: "location"),
                                     language)
        }
        throw ServerError.invalid(.fhirParameterMissing, "_id, actor, practitioner, service or location")
    }

    func doctors(ofPlace text: String, id: Int64, _ language: Language) async throws -> [DoctorPlace] {
        try await dependencies.awaited(language) { [system = dependencies.system] in
            if text.hasPrefix("HealthcareService/") { return try await system.doctorPlaces(departmentId: id) }
            var places: [DoctorPlace] = []
            for department in try await system.clinics.clinicWithDepartments(id).departments {
                places += try await system.doctorPlaces(departmentId: department.id ?? 0)
            }
            return places
        }
    }

    @Sendable func searchPractitioners(_ request: Request, context: APIContext) async throws -> Response {
        let parameters = try parameters(request, allowed: ["_id"])
        let places = try await doctors(parameters, context.language)
        return searchset(request, parameters, places.map { entry(request, FHIRResources.practitioner($0), type: "Practitioner") },
                         total: places.count)
    }

    @Sendable func searchRoles(_ request: Request, context: APIContext) async throws -> Response {
        let parameters = try parameters(request, allowed: ["_id", "practitioner", "service", "location", "specialty"])
        let specialty = try parameters.first("specialty").map(FHIRParameters.specialization)
        let places = try await doctors(parameters, context.language).filter { specialty == nil || $0.department.specialization == specialty }
        return searchset(request, parameters, places.map { entry(request, FHIRResources.practitionerRole($0, context.language),
                                                                 type: "PractitionerRole") }, total: places.count)
    }

    @Sendable func searchSchedules(_ request: Request, context: APIContext) async throws -> Response {
        let parameters = try parameters(request, allowed: ["_id", "actor", "service", "location"])
        let places = try await doctors(parameters, context.language)
        return searchset(request, parameters, places.map { entry(request, FHIRResources.schedule($0, context.language), type: "Schedule") },
                         total: places.count)
    }

    // MARK: Slot

    /// A doctor's slots (`schedule`, required) from `start=ge…` to `start=lt…` (default: the
    /// next 7 days, at most 31), optionally only `status=free`.
    @Sendable func searchSlots(_ request: Request, context: APIContext) async throws -> Response {
        let parameters = try parameters(request, allowed: ["schedule", "start", "status", "service-type", "specialty"])
        guard let scheduleText = parameters.first("schedule") else { throw ServerError.invalid(.fhirParameterMissing, "schedule") }
        let doctorId = try FHIRParameters.id(scheduleText, type: "Schedule", parameter: "schedule")
        var lower: Date?, upper: Date?
        for text in parameters.values("start") {
            let range = try FHIRParameters.dateRange(text, parameter: "start")
            if range.lowerBound > FHIRParameters.instants.lowerBound { lower = max(lower ?? range.lowerBound, range.lowerBound) }
            if range.upperBound < FHIRParameters.instants.upperBound { upper = min(upper ?? range.upperBound, range.upperBound) }
        }
        let from = lower ?? Date(), to = upper ?? from.addingTimeInterval(7 * 86_400)
        // Bounds that cross (start=lt2020-01-01 alone, or ge after lt) make no window.
        guard to > from, to.timeIntervalSince(from) <= TimeInterval(PotentialQuery.maximumDays) * 86_400 else {
            throw ClinicError.invalid(.potentialWindow, String(PotentialQuery.maximumDays))
        }
        let window = from..<to
        let statuses = Set(parameters.values("status").flatMap { $0.split(separator: ",").map(String.init) })
        guard statuses.isSubset(of: ["free", "busy", "busy-unavailable", "busy-tentative", "entered-in-error"]) else {
            throw ServerError.invalid(.fhirCode, statuses.sorted().joined(separator: ","))
        }
        let visitType = try parameters.first("service-type").map { text -> Int64 in
            let (system, code) = FHIRParameters.token(text)
            guard system == nil || system == FHIRResources.visitTypeSystem, let id = Int64(code) else { throw ServerError.invalid(.fhirCode, text) }
            return id
        }
        let specialty = try parameters.first("specialty").map(FHIRParameters.specialization)
        let language = context.language
        let found = window
        let (place, slots) = try await dependencies.awaited(language) { [system = dependencies.system] in
            let place = try await system.doctorPlace(doctorId)
            if let specialty, place.department.specialization != specialty { return (place, [Slot]()) }
            let zone = place.clinic.zone
            let first = LocalDateTime.of(found.lowerBound, in: zone).at(minuteOfDay: 0)
            let last = LocalDateTime.of(found.upperBound, in: zone)
            let days = Int(min(last.daysSinceEpoch - first.daysSinceEpoch + 1, Int64(PotentialQuery.maximumDays)))
            let slots = try await system.slotsAwaited(departmentId: place.department.id ?? 0, doctorId: doctorId, from: first,
                                                      days: days, visitTypeId: visitType).slots
            return (place, slots.filter { $0.start >= found.lowerBound && $0.start < found.upperBound })
        }
        let resources = slots.map { FHIRResources.slot($0, department: place.department, language) }
            .filter { statuses.isEmpty || statuses.contains($0["status"]?.stringValue ?? "") }
        return searchset(request, parameters, resources.map { entry(request, $0, type: "Slot") }, total: resources.count)
    }

    @Sendable func readSlot(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: [])
        let text = context.parameters.get("id") ?? ""
        let parts = text.split(separator: "-")
        guard parts.count == 2, let doctorId = Int64(parts[0]), doctorId > 0,
              let start = Int64(parts[1]).flatMap(FHIRParameters.instant(seconds:)) else {
            throw ClinicError(.notFound, .resourceNotFound, "Slot", text)
        }
        let language = context.language
        let (place, slot) = try await dependencies.awaited(language) { [system = dependencies.system] in
            let place = try await system.doctorPlace(doctorId)
            let day = LocalDateTime.of(start, in: place.clinic.zone).at(minuteOfDay: 0)
            let slots = try await system.slotsAwaited(departmentId: place.department.id ?? 0, doctorId: doctorId, from: day, days: 1).slots
            return (place, slots.first { $0.start == start })
        }
        guard let slot else { throw ClinicError(.notFound, .resourceNotFound, "Slot", text) }
        return respond(FHIRResources.slot(slot, department: place.department, language))
    }
}
