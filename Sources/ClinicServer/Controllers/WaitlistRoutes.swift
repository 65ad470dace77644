import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The signed-in patient's waitlist (issue 45's pinned paths): join, list, leave; the times
/// offered, accepted or declined. Joining and accepting go through `idempotent` (a retried
/// request books once), so through the group committer; leaving, resuming and declining are the
/// store's awaited changes (`WaitlistChangesStore`); the rules are `WaitlistController`'s.
struct WaitlistRoutes {
    struct JoinBody: Decodable, Sendable {
        let departmentId: Int64; let doctorId: Int64?; let visitTypeId: Int64?; let from: String?; let to: String?
        let hoursFrom: String?; let hoursTo: String?; let weekdays: [Int]?; let appointmentId: Int64?
    }
    struct ItemsJSON<Item: Encodable & Sendable>: Encodable, Sendable { let items: [Item] }

    let dependencies: ServerDependencies

    func addRoutes(to group: RouterGroup<APIContext>) {
        let patient = group.group("waitlist").add(middleware: PatientAuthenticator(dependencies: dependencies))
        patient.get(use: list)
        patient.post(use: join)
        patient.get("offers", use: offers)
        patient.post("offers/:id/accept", use: accept)
        patient.post("offers/:id/decline", use: decline)
        patient.delete(":id", use: leave)
        patient.post(":id/resume", use: resume)
    }

    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let entries = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
            try await system.waitlist.entries(clientId: patient.id)
        }
        return try HTTPMapping.json(ItemsJSON(items: entries.map(WaitlistEntryJSON.init)))
    }

    @Sendable func join(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let (body, raw) = try await dependencies.decodeKeeping(JoinBody.self, request, context)
        let join = WaitlistController.Request(
            departmentId: body.departmentId, doctorId: body.doctorId, visitTypeId: body.visitTypeId, from: body.from, to: body.to,
            hoursFrom: body.hoursFrom, hoursTo: body.hoursTo, weekdays: body.weekdays, appointmentId: body.appointmentId)
        let system = dependencies.system
        // One awaited transaction of the store, with the answer to an `Idempotency-Key` kept in it.
        guard let key = request.headers[.idempotencyKey] else {
            let entry = try await dependencies.awaited(patient.language) { try await system.waitlist.join(clientId: patient.id, join) }
            return try HTTPMapping.json(WaitlistEntryJSON(entry), status: .created)
        }
        return try await dependencies.kept(request, patient, body: raw, key: key, answer: { (.created, WaitlistEntryJSON($0)) }) { keeping in
            try await system.waitlist.join(clientId: patient.id, join, keeping: keeping)
        }
    }

    @Sendable func leave(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        try await dependencies.awaited(patient.language) { [system = dependencies.system] in
            try await system.waitlist.leave(id, clientId: patient.id)
        }
        return Response(status: .noContent)
    }

    /// `POST /v1/waitlist/{id}/resume`: a paused entry back in line (issue 55).
    @Sendable func resume(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        let entry = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
            try await system.waitlist.resume(id, clientId: patient.id)
        }
        return try HTTPMapping.json(WaitlistEntryJSON(entry))
    }

    @Sendable func offers(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let offers = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
            try await system.waitlist.offers(clientId: patient.id)
        }
        return try HTTPMapping.json(ItemsJSON(items: offers.map(WaitlistOfferJSON.init)))
    }

    @Sendable func accept(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        var request = request
        let raw = Data(buffer: try await request.collectBody(upTo: context.maxUploadSize))
        // One awaited transaction of the store, with the answer to an `Idempotency-Key` kept in it.
        guard let key = request.headers[.idempotencyKey] else {
            let booked = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
                try await system.waitlist.accept(id, clientId: patient.id)
            }
            return try HTTPMapping.json(AppointmentJSON(booked), status: .created)
        }
        return try await dependencies.kept(request, patient, body: raw, key: key, answer: { (.created, AppointmentJSON($0)) }) {
            [system = dependencies.system] keeping in
            try await system.waitlist.accept(id, clientId: patient.id, keeping: keeping)
        }
    }

    @Sendable func decline(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        try await dependencies.awaited(patient.language) { [system = dependencies.system] in
            try await system.waitlist.decline(id, clientId: patient.id)
        }
        return Response(status: .noContent)
    }
}
