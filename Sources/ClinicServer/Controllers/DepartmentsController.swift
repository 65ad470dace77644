import ClinicKit
import Foundation
import Hummingbird

/// Departments, their doctors, visit types and free slots, and the search for the earliest
/// free slot near a place (`/v1/find`). Public.
struct DepartmentsController {
    let dependencies: ServerDependencies

    func addRoutes(to group: RouterGroup<APIContext>) {
        group.get("departments/:id/doctors", use: doctors)
        group.get("departments/:id/slots", use: slots)
        group.get("departments/:id/visit-types", use: visitTypes)
        group.get("find", use: find)
    }

    @Sendable func doctors(_ request: Request, context: APIContext) async throws -> Response {
        let id = try context.parameters.id("id")
        let doctors = try await dependencies.awaited(context.language) { [system = dependencies.system] in
            try await system.departments.doctorsWithHours(departmentId: id)
        }
        return try HTTPMapping.json(doctors.map { DoctorJSON($0.doctor, hours: $0.hours) })
    }

    @Sendable func slots(_ request: Request, context: APIContext) async throws -> Response {
        let id = try context.parameters.id("id")
        let days = try request.queryInt("days"), doctorId = try request.queryInt("doctorId").map(Int64.init)
        let visitTypeId = try request.queryInt("visitTypeId").map(Int64.init)
        let from = request.query("from")
        // On the pool, not awaited (`slotsAwaited`): computing a week of slots on this machine's
        // two cooperative threads cost a third of the throughput and multiplied PostgreSQL's p99
        // by five under load; so did the facts gathered awaited with only the computing on the
        // pool (a hop more, and the rows decoded on those threads). Benchmarks/http-load.sh,
        // BENCHMARKS.md, issue 56.
        let slots = try await dependencies.work(context.language) { [system = dependencies.system] in
            try system.appointments.slots(departmentId: id, doctorId: doctorId, from: try from.map(TimeInput.parseDay), days: days,
                                          visitTypeId: visitTypeId)
        }
        return try HTTPMapping.json(slots.map(SlotJSON.init))
    }

    @Sendable func visitTypes(_ request: Request, context: APIContext) async throws -> Response {
        let id = try context.parameters.id("id")
        let types = try await dependencies.awaited(context.language) { [system = dependencies.system] in
            try await system.departments.visitTypes(departmentId: id)
        }
        return try HTTPMapping.json(types.map { VisitTypeJSON($0, language: context.language) })
    }

    @Sendable func find(_ request: Request, context: APIContext) async throws -> Response {
        let language = context.language
        let minutes = try request.queryInt("minutes")
        guard let specialization = request.query("specialization") else {
            throw ServerError.invalid(.fieldRequired, "specialization")
        }
        let limit = try request.queryInt("limit") ?? 1
        let pediatric = try request.queryBool("pediatric")
        let before = try request.query("before").map { try TimeInput.resolve($0, in: TimeZone(identifier: "UTC") ?? .gmt) }
        let choice = try request.place()
        let owner = try await dependencies.placeOwner(choice, request)
        // The address awaited, the search in the searches' own gate (a slow geocoder must not
        // hold a search thread).
        let place = try await dependencies.awaited(language) { [system = dependencies.system] in
            try await system.locate(choice, patient: owner)
        }
        let search = try await dependencies.searchAwaited(language) { [system = dependencies.system, runner = dependencies.poolRunner] in
            try await system.findFreeSlots(at: place, specialization: specialization, before: before, limit: limit,
                                           pediatricOnly: pediatric, minutes: minutes, computing: runner).found
        }
        var response = try HTTPMapping.json(search.slots.map(FreeSlotJSON.init))
        // The body stays the list it always was; a search cut short by its budget says so here.
        response.headers[.searchComplete] = search.complete ? "true" : "false"
        return response
    }
}
