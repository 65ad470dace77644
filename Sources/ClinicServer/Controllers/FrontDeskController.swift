import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The front desk under `/v1/staff`: the clinic's day, booking for a patient, the status
/// changes (check in, no-show, start, complete, cancel) and messages to patients. Every
/// appointment change goes through the group committer.
struct FrontDeskController {
    struct BookingBody: Decodable, Sendable {
        let patientLogin: String?; let patientId: Int64?; let departmentId: Int64; let start: String; let doctorId: Int64?
        let visitTypeId: Int64?
    }
    struct CancelBody: Decodable, Sendable { let reason: String? }
    struct WalkInBody: Decodable, Sendable {
        let name: String; let surname: String; let birthDate: String; let phone: String; let email: String?
        let language: Language?
    }
    struct RescheduleBody: Decodable, Sendable { let start: String; let reason: String?; let doctorId: Int64? }
    struct ActionsJSON: Encodable { let appointmentId: Int64; let actions: [String] }
    struct MessageBody: Decodable, Sendable {
        let patientLogin: String?; let date: String?; let departmentId: Int64?; let text: String
    }
    struct DayJSON: Encodable { let date: String; let timeZone: String; let items: [DayEntryJSON] }
    struct RecipientsJSON: Encodable { let recipients: Int }

    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        let staff = group.group().add(middleware: StaffAuthenticator(dependencies: dependencies))
        staff.get("schedule", use: schedule)
        staff.post("appointments", use: book)
        staff.post("appointments/:id/reschedule", use: reschedule)
        staff.post("appointments/:id/:action", use: act)
        staff.get("actions", use: actions)
        staff.get("calendar", use: calendar)
        staff.get("patients", use: patients)
        staff.post("patients", use: registerWalkIn)
        staff.post("patients/:id/claim-code", use: claimCode)
        staff.post("messages", use: message)
    }

    /// Moves an appointment to another time (and doctor): the store's awaited use case.
    @Sendable func reschedule(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let body = try await RequestBody.decode(RescheduleBody.self, from: request, context: context)
        let time = try dependencies.parsedTime(body.start, context.language)
        let requestId = context.requestId
        let moved = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.reschedule(member, appointmentId: id, to: time, doctorId: body.doctorId, reason: body.reason,
                                              requestId: requestId)
        }
        return try HTTPMapping.json(AppointmentJSON(moved))
    }

    /// `GET /v1/staff/calendar?from=YYYY-MM-DD&days=1..7[&department=ID][&doctor=ID]`.
    @Sendable func calendar(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let from = try request.query("from").map(TimeInput.parseDay)
        let days = try request.queryInt("days") ?? 1
        let department = try request.queryInt("department").map(Int64.init)
        let doctor = try request.queryInt("doctor").map(Int64.init)
        let requestId = context.requestId
        let calendar = try await dependencies.awaited(context.language) { [system, runner = dependencies.poolRunner] in
            try await system.frontDeskCalendar(member, from: from, days: days, departmentId: department, doctorId: doctor,
                                               requestId: requestId, computing: runner)
        }
        return try HTTPMapping.json(CalendarJSON(calendar))
    }

    /// `GET /v1/staff/patients?q=TEXT`: the clinic's patients whose name, surname, e-mail or
    /// login starts with each word (the blind index's search).
    @Sendable func patients(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let query = request.query("q") ?? ""
        let requestId = context.requestId
        let found = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.findPatients(member, query: query, requestId: requestId)
        }
        return try HTTPMapping.json(PatientMatchesJSON(found))
    }

    /// `POST /v1/staff/patients {name, surname, birthDate, phone, email?}`: a walk-in without an
    /// online account.
    @Sendable func registerWalkIn(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let body = try await RequestBody.decode(WalkInBody.self, from: request, context: context)
        let walkIn = WalkInRequest(name: body.name, surname: body.surname, birthDate: body.birthDate, phone: body.phone,
                                   email: body.email, language: body.language ?? context.language)
        let requestId = context.requestId
        let patient = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.registerWalkIn(member, walkIn, requestId: requestId)
        }
        return try HTTPMapping.json(PatientMatchesJSON.Item(patient), status: .created)
    }

    /// `POST /v1/staff/patients/{id}/claim-code`: a one-time code for a walk-in to set a password.
    @Sendable func claimCode(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let code = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.claimCode(member, patientId: id, requestId: requestId)
        }
        return try HTTPMapping.json(ClaimCodeJSON(code), status: .created)
    }

    /// `GET /v1/staff/actions?appointment=ID`: what this member may do to it now.
    @Sendable func actions(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        guard let id = try request.queryInt("appointment").map(Int64.init), id > 0 else {
            throw APIFailure(ServerError.invalid(.fieldRequired, "appointment"), language: context.language)
        }
        let list = try await dependencies.awaited(context.language) { [system] in try await system.staff.actions(member, appointmentId: id) }
        return try HTTPMapping.json(ActionsJSON(appointmentId: id, actions: list))
    }

    @Sendable func schedule(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let day = try request.query("date").map(TimeInput.parseDay)
        let department = try request.queryInt("departmentId").map(Int64.init)
        let doctor = try request.queryInt("doctorId").map(Int64.init)
        let requestId = context.requestId
        let (shown, zone, entries) = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.schedule(member, day: day, departmentId: department, doctorId: doctor, requestId: requestId)
        }
        return try HTTPMapping.json(DayJSON(date: shown.dayText, timeZone: zone.identifier, items: entries.map(DayEntryJSON.init)))
    }

    @Sendable func book(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let body = try await RequestBody.decode(BookingBody.self, from: request, context: context)
        let time = try dependencies.parsedTime(body.start, context.language)
        let requestId = context.requestId
        let booked = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.book(member, patientLogin: body.patientLogin, patientId: body.patientId, departmentId: body.departmentId, at: time,
                                  doctorId: body.doctorId, visitTypeId: body.visitTypeId, requestId: requestId)
        }
        return try HTTPMapping.json(AppointmentJSON(booked), status: .created)
    }

    /// A status change: the store's awaited use case (`StaffController.act`).
    @Sendable func act(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        guard let action = context.parameters.get("action").flatMap(StaffAction.init(rawValue:)) else {
            throw ServerError(.notFound, .routeNotFound, request.uri.path)
        }
        var reason: String?
        if action == .cancel {
            reason = try await RequestBody.decode(CancelBody.self, from: request, context: context).reason
        }
        let requestId = context.requestId
        let changed = try await dependencies.awaited(context.language) { [system, reason] in
            try await system.staff.act(member, action, appointmentId: id, reason: reason, requestId: requestId)
        }
        return try HTTPMapping.json(AppointmentJSON(changed))
    }

    @Sendable func message(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let body = try await RequestBody.decode(MessageBody.self, from: request, context: context)
        let day = try body.date.map(TimeInput.parseDay)
        let requestId = context.requestId
        let count = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.message(member, patientLogin: body.patientLogin, day: day, departmentId: body.departmentId,
                                     text: body.text, requestId: requestId)
        }
        return try HTTPMapping.json(RecipientsJSON(recipients: count), status: .created)
    }
}
