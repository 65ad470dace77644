import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

// IHE ITI Scheduling on the domain: $find (ITI-115) → `findPotentialAppointments`, $hold
// (ITI-116) → `hold`, $book (ITI-117) → `book(hold:)` / `book` /
// `reschedule` / `cancel`, Find Existing Appointments (ITI-118) → the
// patient's appointments (or a staff member's clinic day, audited).

extension FHIRController {
    // MARK: Bodies

    /// A request body as FHIR JSON of `type` (`Parameters`, `Appointment`): application/fhir+json
    /// or application/json (`unsupported_media_type` otherwise), and the bytes.
    func body(_ request: Request, _ context: APIContext, type: String, mediaTypes: [String] = ["application/fhir+json", "application/json"])
        async throws -> (FHIRJSON, Data) {
        let declared = request.headers[.contentType]?.lowercased() ?? ""
        guard mediaTypes.contains(where: { declared.hasPrefix($0) }) else {
            throw ServerError(.unsupportedMediaType, .fhirMediaType)
        }
        var request = request
        let data = Data(buffer: try await request.collectBody(upTo: context.maxUploadSize))
        guard let json = FHIRJSON.parse(data) else { throw ServerError.invalid(.bodyNotJSON) }
        if let type = Optional(type), !type.isEmpty, json["resourceType"]?.stringValue != type {
            throw ServerError.invalid(.fhirParameters, type)
        }
        return (json, data)
    }

    /// A `Parameters` resource as name/value pairs (a CodeableConcept gives one `system|code`
    /// per coding; a Reference its `reference`), and its resources by name.
    static func pairs(_ parameters: FHIRJSON) throws -> (FHIRParameters, [String: FHIRJSON]) {
        var pairs: [(name: String, value: String)] = [], resources: [String: FHIRJSON] = [:]
        guard let list = parameters["parameter"]?.arrayValue ?? (parameters["parameter"] == nil ? [] : nil) else {
            throw ServerError.invalid(.fhirParameters, "Parameters")
        }
        for item in list {
            guard let name = item["name"]?.stringValue else { throw ServerError.invalid(.fhirParameterMissing, "parameter.name") }
            if let resource = item["resource"], resource.isObject { resources[name] = resource; continue }
            guard let key = item.keys.first(where: { $0.hasPrefix("value") }), let value = item[key] else {
                throw ServerError.invalid(.fhirParameterMissing, "\(name).value[x]")
            }
            switch value {
            case .string(let text): pairs.append((name, text))
            case .int(let number): pairs.append((name, String(number)))
            case .bool(let flag): pairs.append((name, String(flag)))
            case .number(let number): pairs.append((name, String(number)))
            case .object:
                if let reference = value["reference"]?.stringValue { pairs.append((name, reference)); continue }
                if let codings = value["coding"]?.arrayValue {
                    for coding in codings {
                        guard let code = coding["code"]?.stringValue else { continue }
                        pairs.append((name, (coding["system"]?.stringValue.map { $0 + "|" } ?? "") + code))
                    }
                    continue
                }
                if let code = value["code"]?.stringValue { pairs.append((name, code)); continue }
                throw ServerError.invalid(.fhirParameters, "Parameters")
            default: throw ServerError.invalid(.fhirParameters, "Parameters")
            }
        }
        return (FHIRParameters(pairs: pairs), resources)
    }

    // MARK: $find

    static let findParameters: Set<String> = ["start", "end", "specialty", "visit-type", "practitioner", "organization",
                                              "location", "location-reference", "patient", "patient-reference", "near",
                                              "service"]

    /// Find Potential Appointments: `GET` with search parameters or `POST` with `Parameters`.
    @Sendable func find(_ request: Request, context: APIContext) async throws -> Response {
        let parameters: FHIRParameters
        if request.method == .post {
            let (json, _) = try await body(request, context, type: "Parameters")
            parameters = try Self.pairs(json).0
            // `_count` may come in the query as well.
            try request.fhirParameters.check(allowed: [], lenient: request.fhirLenient)
        } else {
            parameters = request.fhirParameters
        }
        try parameters.check(allowed: Self.findParameters, lenient: request.fhirLenient)
        let count = try request.fhirParameters.first("_count") != nil ? request.fhirParameters.count() : parameters.count()
        var query = PotentialQuery(limit: count)
        query.start = try parameters.first("start").map { try FHIRParameters.instant($0, parameter: "start") }
        query.end = try parameters.first("end").map { try FHIRParameters.instant($0, parameter: "end") }
        query.specialization = try parameters.first("specialty").map(FHIRParameters.specialization)
        query.visitTypeId = try parameters.first("visit-type").map { text in
            let (system, code) = FHIRParameters.token(text)
            guard system == nil || system == FHIRResources.visitTypeSystem, let id = Int64(code), id > 0 else {
                throw ServerError.invalid(.fhirCode, text)
            }
            return id
        }
        query.doctorId = try parameters.first("practitioner").map { try FHIRParameters.id($0, type: "Practitioner", parameter: "practitioner") }
        query.departmentId = try parameters.first("service").map { try FHIRParameters.id($0, type: "HealthcareService", parameter: "service") }
        if let text = parameters.first("location-reference") ?? parameters.first("location") {
            query.clinicId = try FHIRParameters.id(text, type: "Location", parameter: "location")
        } else if let text = parameters.first("organization") {
            query.clinicId = try FHIRParameters.id(text, type: "Organization", parameter: "organization")
        }
        if let text = parameters.first("near") { query.near = try FHIRNear(text).point }
        var patientId: Int64?
        if let text = parameters.first("patient-reference") ?? parameters.first("patient") {
            let id = try FHIRParameters.id(text, type: "Patient", parameter: "patient")
            let patient = try context.signedInPatient()
            guard patient.id == id else { throw ServerError(.forbidden, .fhirNotYours) }
            patientId = id
        } else {
            patientId = context.patient?.id
        }
        let language = context.language
        let asked = query
        let asking = patientId
        let found = try await dependencies.searchAwaited(language) { [system = dependencies.system, runner = dependencies.poolRunner] in
            try await system.findPotentialAppointments(asked, patientId: asking, computing: runner)
        }
        var entries = found.appointments.map { item in
            entry(request, FHIRResources.proposed(item, patient: patientId, language), type: "Appointment", distance: item.distance)
        }
        let total = entries.count
        if found.nearRegisteredAddress {
            // Where the search looked, since the client did not say: an outcome entry (FHIR's
            // search mode "outcome"), not counted in the total.
            entries.append(FHIRResources.Entry(resource: FHIRResources.information(Strings.text(.potentialNearHome, language)),
                                               fullUrl: "urn:uuid:" + UUID().uuidString.lowercased(), mode: "outcome"))
        }
        return searchset(request, parameters, entries, total: total, profile: true)
    }

    // MARK: $hold

    /// Hold Appointment: `appointment-reference` to a proposed appointment of `$find`; the
    /// answer is a Bundle with the `pending` appointment, `hold-N`, until its expiry extension.
    @Sendable func hold(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let (json, raw) = try await body(request, context, type: "Parameters")
        let (parameters, _) = try Self.pairs(json)
        try parameters.check(allowed: ["appointment-reference"], lenient: request.fhirLenient)
        guard let reference = parameters.first("appointment-reference") else {
            throw ServerError.invalid(.fhirParameterMissing, "appointment-reference")
        }
        guard let proposed = FHIRResources.proposed(Self.appointmentId(reference)) else {
            throw ClinicError(.notFound, .resourceNotFound, "Appointment", reference)
        }
        let language = patient.language, clientId = patient.id
        let system = dependencies.system
        let selfLink = base(request) + "/Appointment/$hold"
        guard let key = request.headers[.idempotencyKey] else {
            let hold = try await dependencies.awaited(language) {
                try await system.appointments.hold(clientId: clientId, departmentId: proposed.departmentId, doctorId: proposed.doctorId,
                                                   at: proposed.start, visitTypeId: proposed.visitTypeId)
            }
            return try await answer(hold, request: request, language: language, selfLink: selfLink, replayed: false)
        }
        // As a change's: the hold kept, shown with its place read after it.
        let kept = try await dependencies.kept(request, patient, body: raw, key: key,
                                               answer: { (.ok, try JSONEncoder().encode($0)) },
                                               refusal: { FHIROutcome.data($0, $1) }) { keeping in
            try await system.appointments.hold(clientId: clientId, departmentId: proposed.departmentId, doctorId: proposed.doctorId,
                                               at: proposed.start, visitTypeId: proposed.visitTypeId, keeping: keeping)
        }
        guard (200..<300).contains(kept.status), let hold = try? JSONDecoder().decode(SlotHold.self, from: kept.body) else {
            return Self.fhir(ServerDependencies.answer(kept))
        }
        return try await answer(hold, request: request, language: language, selfLink: selfLink, replayed: kept.replayed)
    }

    /// The hold as a Bundle with its pending appointment; `Idempotent-Replayed` when replayed.
    func answer(_ hold: SlotHold, request: Request, language: Language, selfLink: String, replayed: Bool) async throws -> Response {
        let resource = try await heldResource(hold, language)
        var response = Self.fhir(HTTPMapping.raw(FHIRResources.bundle([entry(request, resource, type: "Appointment")], total: 1,
                                                                      selfLink: selfLink, profile: true).data, status: .ok))
        if replayed { response.headers[.idempotentReplayed] = "true" }
        return response
    }

    /// The hold as a pending appointment, with its doctor's place and visit type read awaited.
    func heldResource(_ hold: SlotHold, _ language: Language) async throws -> FHIRJSON {
        let system = dependencies.system
        return try await dependencies.awaited(language) {
            let place = try await system.doctorPlace(hold.doctorId)
            var visit: VisitType?
            if let id = hold.visitTypeId {
                visit = try await system.departments.visitTypes(departmentId: hold.departmentId).first { $0.id == id }
            }
            return FHIRResources.held(hold, place: place, visit: visit, language)
        }
    }

    /// The id in `Appointment/ID`, `ID` or a full URL.
    static func appointmentId(_ reference: String) -> String {
        reference.split(separator: "/").last.map(String.init) ?? reference
    }

    static func fhir(_ response: Response) -> Response {
        var response = response
        response.headers[.contentType] = FHIROutcome.contentType
        return response
    }

    // MARK: $book

    /// Book Appointment: a hold (`hold-N`) or a proposed appointment by `appointment-reference`
    /// or as a `pending` `appointment-resource`; a `booked` resource with another start moves
    /// the appointment; a `cancelled` one cancels it. `comment` becomes the notes. A retry is
    /// safe with `Idempotency-Key`, or with `If-None-Exist` (an Appointment search of the
    /// patient's: one match is answered as it is, several are 412).
    @Sendable func book(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let (json, raw) = try await body(request, context, type: "Parameters")
        let (parameters, resources) = try Self.pairs(json)
        try parameters.check(allowed: ["appointment-reference", "comment", "patient-reference"], lenient: request.fhirLenient)
        let comment = parameters.first("comment") ?? ""
        let change: AppointmentChange
        if let resource = resources["appointment-resource"] {
            change = try Self.change(of: resource, comment: comment)
        } else if let reference = parameters.first("appointment-reference") {
            change = try Self.change(id: Self.appointmentId(reference), status: "pending", start: nil, comment: comment)
        } else {
            throw ServerError.invalid(.fhirParameterMissing, "appointment-reference")
        }
        if let condition = request.headers[.ifNoneExist] {
            // Booked appointments only: a waiting entry or an offer is not what the condition means.
            let matches = try await appointmentSearch(FHIRParameters(query: condition), patient: patient, request: request,
                                                      waitlist: false)
            if matches.count > 1 { throw ServerError(.preconditionFailed, .fhirPreconditionFailed, String(matches.count)) }
            if let match = matches.first {
                return respond(FHIRResources.bundle([entry(request, match, type: "Appointment")], total: 1,
                                                    selfLink: base(request) + "/Appointment/$book", profile: true))
            }
        }
        return try await apply(change, request: request, patient: patient, raw: raw, selfLink: base(request) + "/Appointment/$book")
    }

    enum AppointmentChange: Sendable {
        case bookHold(Int64, notes: String)
        case bookProposed(FHIRResources.Proposed, notes: String)
        /// A time offered from the waitlist (`Appointment/offer-N`).
        case acceptOffer(Int64)
        case reschedule(Int64, to: Date)
        case cancel(Int64)
    }

    static func change(of resource: FHIRJSON, comment: String) throws -> AppointmentChange {
        guard resource["resourceType"]?.stringValue == "Appointment" else { throw ServerError.invalid(.fhirParameters, "Appointment") }
        guard let id = resource["id"]?.stringValue else { throw ServerError.invalid(.fhirParameterMissing, "Appointment.id") }
        guard let status = resource["status"]?.stringValue else { throw ServerError.invalid(.fhirParameterMissing, "Appointment.status") }
        let start = try resource["start"]?.stringValue.map { try FHIRParameters.instant($0, parameter: "Appointment.start") }
        return try change(id: id, status: status, start: start, comment: comment.isEmpty ? resource["comment"]?.stringValue ?? "" : comment)
    }

    static func change(id: String, status: String, start: Date?, comment: String) throws -> AppointmentChange {
        switch status {
        case "pending", "proposed":
            if let hold = FHIRResources.hold(id) { return .bookHold(hold, notes: comment) }
            if let offer = FHIRResources.offer(id) { return .acceptOffer(offer) }
            if let proposed = FHIRResources.proposed(id) { return .bookProposed(proposed, notes: comment) }
            throw ClinicError(.notFound, .resourceNotFound, "Appointment", id)
        case "booked":
            guard let number = Int64(id), number > 0 else { throw ClinicError(.notFound, .resourceNotFound, "Appointment", id) }
            guard let start else { throw ServerError.invalid(.fhirParameterMissing, "Appointment.start") }
            return .reschedule(number, to: start)
        case "cancelled":
            guard let number = Int64(id), number > 0 else { throw ClinicError(.notFound, .resourceNotFound, "Appointment", id) }
            return .cancel(number)
        default:
            throw ServerError.invalid(.fhirStatus, status)
        }
    }

    /// One change as the store's own awaited use case (issue 56), answered as a Bundle with the
    /// appointment (or the appointment alone). With an `Idempotency-Key`, the appointment is kept
    /// in the change's own transaction (a refusal as its OperationOutcome), and shown, first
    /// time and replayed alike, with its clinic, department and visit type read after it.
    func apply(_ change: AppointmentChange, request: Request, patient: Patient, raw: Data, selfLink: String,
               bundle: Bool = true) async throws -> Response {
        let language = patient.language, clientId = patient.id
        let system = dependencies.system
        guard let key = request.headers[.idempotencyKey] else {
            let appointment = try await dependencies.awaited(language) { try await Self.run(change, system, clientId: clientId) }
            return try await answer(appointment, request: request, language: language, selfLink: selfLink, bundle: bundle,
                                    replayed: false)
        }
        let kept = try await dependencies.kept(request, patient, body: raw, key: key,
                                               answer: { (.ok, try JSONEncoder().encode($0)) },
                                               refusal: { FHIROutcome.data($0, $1) }) { keeping in
            try await Self.run(change, system, clientId: clientId, keeping: keeping)
        }
        // A refusal kept as its OperationOutcome, or an answer an older version kept whole.
        guard (200..<300).contains(kept.status), let appointment = try? JSONDecoder().decode(Appointment.self, from: kept.body) else {
            return Self.fhir(ServerDependencies.answer(kept))
        }
        return try await answer(appointment, request: request, language: language, selfLink: selfLink, bundle: bundle,
                                replayed: kept.replayed)
    }

    /// The change run by its use case with its answer kept.
    static func run(_ change: AppointmentChange, _ system: ClinicSystem, clientId: Int64,
                    keeping: AnswerKeeping<Appointment>) async throws -> IdempotencyStore.Response {
        let appointments = system.appointments
        return switch change {
        case .bookHold(let id, let notes): try await appointments.book(hold: id, clientId: clientId, notes: notes, keeping: keeping)
        case .bookProposed(let proposed, let notes):
            try await appointments.book(clientId: clientId, departmentId: proposed.departmentId, at: .instant(proposed.start),
                                        doctorId: proposed.doctorId, notes: notes, visitTypeId: proposed.visitTypeId, keeping: keeping)
        case .reschedule(let id, let start): try await appointments.reschedule(id, clientId: clientId, to: .instant(start), keeping: keeping)
        case .cancel(let id): try await appointments.cancel(id, clientId: clientId, keeping: keeping)
        case .acceptOffer(let id): try await system.waitlist.accept(id, clientId: clientId, keeping: keeping)
        }
    }

    /// The change run by its use case.
    static func run(_ change: AppointmentChange, _ system: ClinicSystem, clientId: Int64) async throws -> Appointment {
        let appointments = system.appointments
        return switch change {
        case .bookHold(let id, let notes): try await appointments.book(hold: id, clientId: clientId, notes: notes)
        case .bookProposed(let proposed, let notes):
            try await appointments.book(clientId: clientId, departmentId: proposed.departmentId, at: .instant(proposed.start),
                                        doctorId: proposed.doctorId, notes: notes, visitTypeId: proposed.visitTypeId)
        case .reschedule(let id, let start): try await appointments.reschedule(id, clientId: clientId, to: .instant(start))
        case .cancel(let id): try await appointments.cancel(id, clientId: clientId)
        case .acceptOffer(let id): try await system.waitlist.accept(id, clientId: clientId)
        }
    }

    /// The appointment changed, as a Bundle or alone; `Idempotent-Replayed` when it was replayed.
    func answer(_ appointment: Appointment, request: Request, language: Language, selfLink: String, bundle: Bool,
                replayed: Bool) async throws -> Response {
        let system = dependencies.system
        let resource = try await dependencies.awaited(language) { try await Self.resource(appointment, system, language) }
        let data = bundle ? FHIRResources.bundle([entry(request, resource, type: "Appointment")], total: 1, selfLink: selfLink,
                                                 profile: true).data : resource.data
        var response = Self.fhir(HTTPMapping.raw(data, status: .ok))
        if replayed { response.headers[.idempotentReplayed] = "true" }
        return response
    }

    /// The appointment's resource with its clinic, department and visit type, read awaited.
    static func resource(_ appointment: Appointment, _ system: ClinicSystem, _ language: Language) async throws -> FHIRJSON {
        guard let place = try await system.withPlaces([appointment]).first else {
            throw ClinicError(.notFound, .departmentNotFound, String(appointment.departmentId))
        }
        var visit: VisitType?
        if let id = appointment.visitTypeId {
            visit = try await system.departments.visitTypes(departmentId: appointment.departmentId).first { $0.id == id }
        }
        return FHIRResources.appointment(appointment, clinic: place.clinic, department: place.department, visit: visit, language)
    }

    // MARK: Update: PUT and PATCH

    /// `PUT Appointment/N` with the appointment, its `status` cancelled or its `start` changed.
    @Sendable func updateAppointment(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try id(context, type: "Appointment")
        let (json, raw) = try await body(request, context, type: "Appointment")
        guard json["id"]?.stringValue == String(id) else { throw ServerError.invalid(.fhirParameterMissing, "Appointment.id") }
        let change = try Self.change(of: json, comment: "")
        return try await apply(change, request: request, patient: patient, raw: raw, selfLink: "", bundle: false)
    }

    /// `PATCH Appointment/N` (JSON Patch): replace `/status` with `cancelled`, or `/start`.
    @Sendable func patchAppointment(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try id(context, type: "Appointment")
        let (json, raw) = try await body(request, context, type: "", mediaTypes: ["application/json-patch+json"])
        guard let operations = json.arrayValue, operations.count == 1, let operation = operations.first,
              operation["op"]?.stringValue == "replace", let path = operation["path"]?.stringValue,
              let value = operation["value"]?.stringValue else { throw ServerError.invalid(.fhirPatch) }
        let change: AppointmentChange
        switch path {
        case "/status":
            guard value == "cancelled" else { throw ServerError.invalid(.fhirPatch) }
            change = .cancel(id)
        case "/start": change = .reschedule(id, to: try FHIRParameters.instant(value, parameter: "start"))
        default: throw ServerError.invalid(.fhirPatch)
        }
        return try await apply(change, request: request, patient: patient, raw: raw, selfLink: "", bundle: false)
    }

}

/// Who is asking a FHIR request: nobody (the directory and `$find` are public), a patient, or
/// a staff member, from the same bearer sessions as /v1. A token that is neither is 401.
struct FHIRIdentityMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let dependencies: ServerDependencies

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard request.headers[.authorization] != nil else { return try await next(request, context) }
        var context = context
        // A patient's token, else a staff member's; a failure other than "no such session"
        // (the store unreachable) is answered as it is, not as a 401.
        do {
            let patient = try await dependencies.patient(request)
            context.patient = patient
            context.language = patient.language
        } catch let failure as APIFailure where failure.code == ServerError.Code.notLoggedIn.rawValue {
            do {
                context.staff = try await dependencies.staffMember(request)
            } catch let failure as APIFailure where failure.code == ServerError.Code.notLoggedIn.rawValue {
                throw APIFailure(ServerError(.notLoggedIn, .notLoggedIn), language: context.language)
            }
        }
        let response = try await inLanguage(context.language) { try await next(request, context) }
        if let patient = context.patient { await dependencies.touch(patient) }
        if let staff = context.staff { await dependencies.touch(staff) }
        return response
    }
}

/// `near=latitude|longitude|distance|unit` (FHIR's Location search; the distance and unit are
/// optional, km by default): km, m, mi and [mi_i] (international mile).
struct FHIRNear: Sendable {
    let point: Coordinate
    let kilometres: Double?

    init(_ text: String) throws {
        let parts = text.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard (2...4).contains(parts.count), let latitude = Double(parts[0]), let longitude = Double(parts[1]),
              let point = Coordinate(latitude: latitude, longitude: longitude) else { throw ServerError.invalid(.fhirNear, text) }
        self.point = point
        guard parts.count > 2, !parts[2].isEmpty else { kilometres = nil; return }
        guard let distance = Double(parts[2]), distance.isFinite, distance >= 0 else { throw ServerError.invalid(.fhirNear, text) }
        let unit = parts.count > 3 && !parts[3].isEmpty ? parts[3] : "km"
        switch unit {
        case "km": kilometres = distance
        case "m": kilometres = distance / 1000
        case "mi", "[mi_i]": kilometres = distance * 1.609344
        default: throw ServerError.invalid(.fhirNear, text)
        }
    }
}
