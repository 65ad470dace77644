import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The front desk's waitlist under `/v1/staff/waitlist` (issue 45): who waits at the clinic,
/// putting a patient on (with a priority), moving an entry up or down, taking one off. The rules
/// are `StaffController`'s and `WaitlistController`'s.
struct StaffWaitlistRoutes {
    struct AddBody: Decodable, Sendable {
        let patientId: Int64?; let patientLogin: String?; let departmentId: Int64; let doctorId: Int64?; let visitTypeId: Int64?
        let from: String?; let to: String?; let hoursFrom: String?; let hoursTo: String?; let weekdays: [Int]?
        let appointmentId: Int64?; let priority: Int?; let note: String?
    }
    struct ChangeBody: Decodable, Sendable { let priority: Int?; let note: String? }
    struct ItemsJSON: Encodable, Sendable { let items: [StaffWaitlistEntryJSON] }

    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        let staff = group.group("waitlist").add(middleware: StaffAuthenticator(dependencies: dependencies))
        staff.get(use: list)
        staff.post(use: add)
        staff.patch(":id", use: prioritize)
        staff.delete(":id", use: remove)
    }

    /// `GET /v1/staff/waitlist[?departmentId=ID]`.
    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let department = try request.queryInt("departmentId").map(Int64.init)
        let requestId = context.requestId
        let entries = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.waitlist(member, departmentId: department, requestId: requestId)
        }
        return try HTTPMapping.json(ItemsJSON(items: entries.map(StaffWaitlistEntryJSON.init)))
    }

    @Sendable func add(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let body = try await RequestBody.decode(AddBody.self, from: request, context: context)
        let requestId = context.requestId
        let entry = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.addToWaitlist(member, patientLogin: body.patientLogin, patientId: body.patientId, .init(
                departmentId: body.departmentId, doctorId: body.doctorId, visitTypeId: body.visitTypeId, from: body.from, to: body.to,
                hoursFrom: body.hoursFrom, hoursTo: body.hoursTo, weekdays: body.weekdays, appointmentId: body.appointmentId,
                priority: body.priority ?? 0), note: body.note, requestId: requestId)
        }
        return try HTTPMapping.json(WaitlistEntryJSON(entry), status: .created)
    }

    /// `PATCH /v1/staff/waitlist/{id} {priority?, note?}`: a higher priority is offered first;
    /// an empty note removes it.
    @Sendable func prioritize(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let body = try await RequestBody.decode(ChangeBody.self, from: request, context: context)
        guard body.priority != nil || body.note != nil else { throw ServerError.invalid(.fieldRequired, "priority") }
        let requestId = context.requestId
        let entry = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.changeWaitlistEntry(member, entryId: id, priority: body.priority, note: body.note, requestId: requestId)
        }
        return try HTTPMapping.json(WaitlistEntryJSON(entry))
    }

    @Sendable func remove(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        try await dependencies.awaited(context.language) { [system] in
            try await system.staff.removeFromWaitlist(member, entryId: id, requestId: requestId)
        }
        return Response(status: .noContent)
    }
}
