import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The signed-in patient's appointments: list, book, show (or its `.ics`), reschedule,
/// cancel. Every change goes through `idempotent`, so through the group committer.
struct AppointmentsController {
    struct BookingBody: Decodable, Sendable {
        let departmentId: Int64; let start: String; let doctorId: Int64?; let notes: String?; let visitTypeId: Int64?
    }
    struct RescheduleBody: Decodable, Sendable { let start: String }

    let dependencies: ServerDependencies

    func addRoutes(to group: RouterGroup<APIContext>) {
        let patient = group.group("appointments").add(middleware: PatientAuthenticator(dependencies: dependencies))
        patient.get(use: list)
        patient.post(use: book)
        patient.get(":id", use: show)
        patient.post(":id/reschedule", use: reschedule)
        patient.post(":id/cancel", use: cancel)
    }

    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let scopeText = request.query("scope") ?? AppointmentScope.upcoming.rawValue
        guard let scope = AppointmentScope(rawValue: scopeText) else {
            throw ServerError.invalid(.fieldChoice, "scope", "upcoming, past, all")
        }
        let limit = try request.queryInt("limit") ?? 20, cursor = request.query("cursor")
        let page = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
            try await system.appointments.appointmentsPage(patient.id, scope: scope, limit: limit, cursor: cursor)
        }
        return try HTTPMapping.json(PageJSON(items: page.items.map(AppointmentJSON.init), nextCursor: page.nextCursor))
    }

    @Sendable func book(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let (body, raw) = try await dependencies.decodeKeeping(BookingBody.self, request, context)
        let time = try dependencies.parsedTime(body.start, patient.language)
        // The store's own use case, awaited (issue 56); with a key, its answer is kept in the
        // booking's transaction.
        guard let key = request.headers[.idempotencyKey] else {
            let booked = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
                try await system.appointments.book(clientId: patient.id, departmentId: body.departmentId, at: time,
                                                   doctorId: body.doctorId, notes: body.notes ?? "", visitTypeId: body.visitTypeId)
            }
            return try HTTPMapping.json(AppointmentJSON(booked), status: .created)
        }
        return try await dependencies.kept(request, patient, body: raw, key: key, answer: { (.created, AppointmentJSON($0)) }) {
            [system = dependencies.system] keeping in
            try await system.appointments.book(clientId: patient.id, departmentId: body.departmentId, at: time, doctorId: body.doctorId,
                                               notes: body.notes ?? "", visitTypeId: body.visitTypeId, keeping: keeping)
        }
    }

    /// `/v1/appointments/{id}`, or `/v1/appointments/{id}.ics`: one appointment as an iCalendar file.
    @Sendable func show(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        if let text = context.parameters.get("id"), text.hasSuffix(".ics") {
            guard let id = Int64(text.dropLast(4)), id > 0 else {
                throw ServerError(.notFound, .routeNotFound, text)
            }
            let ics = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
                try await system.calendarFile(id, of: patient.client)
            }
            return ServerDependencies.calendar(ics, filename: "appointment-\(id).ics")
        }
        let id = try context.parameters.id("id")
        let (appointment, history) = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
            try await system.appointments.appointmentWithHistory(id, clientId: patient.id)
        }
        return try HTTPMapping.json(AppointmentHistoryJSON(appointment, history))
    }

    @Sendable func reschedule(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        let (body, raw) = try await dependencies.decodeKeeping(RescheduleBody.self, request, context)
        let time = try dependencies.parsedTime(body.start, patient.language)
        guard let key = request.headers[.idempotencyKey] else {
            let moved = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
                try await system.appointments.reschedule(id, clientId: patient.id, to: time)
            }
            return try HTTPMapping.json(AppointmentJSON(moved))
        }
        return try await dependencies.kept(request, patient, body: raw, key: key, answer: { (.ok, AppointmentJSON($0)) }) {
            [system = dependencies.system] keeping in
            try await system.appointments.reschedule(id, clientId: patient.id, to: time, keeping: keeping)
        }
    }

    @Sendable func cancel(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        var request = request
        let raw = Data(buffer: try await request.collectBody(upTo: context.maxUploadSize))
        guard let key = request.headers[.idempotencyKey] else {
            let cancelled = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
                try await system.appointments.cancel(id, clientId: patient.id)
            }
            return try HTTPMapping.json(AppointmentJSON(cancelled))
        }
        return try await dependencies.kept(request, patient, body: raw, key: key, answer: { (.ok, AppointmentJSON($0)) }) {
            [system = dependencies.system] keeping in
            try await system.appointments.cancel(id, clientId: patient.id, keeping: keeping)
        }
    }
}
