import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The clinic's administration under `/v1/staff`: doctors, their hours and dated exceptions,
/// visit types. Each is a use case of the store's own, awaited (issue 56); a change that
/// cancels appointments (deactivating a doctor, new hours, an exception) is `ScheduleChange`.
struct ClinicAdminController {
    struct DoctorBody: Decodable, Sendable { let departmentId: Int64; let name: String }
    struct CancelOptions: Decodable, Sendable { let force: Bool?; let reason: String? }
    /// Hours of a weekday or a date: `off`, or `start`–`end` ("HH:MM") with `slotMinutes`
    /// (default `DoctorSchedule.Interval.defaultSlotMinutes`).
    struct HoursBody: Decodable, Sendable {
        let weekday: Int?, date: String?
        let off: Bool?, start: String?, end: String?, slotMinutes: Int?
        let force: Bool?, reason: String?

        func interval() throws -> DoctorSchedule.Interval? {
            try DoctorSchedule.Interval.parse(off: off ?? false, start: start, end: end, slotMinutes: slotMinutes)
        }
    }
    struct VisitTypeBody: Decodable, Sendable {
        let departmentId: Int64?; let nameEn: String; let nameRu: String; let durationMinutes: Int; let priceCents: Int?
    }
    struct CancelledJSON: Encodable { let cancelled: [AppointmentJSON] }
    struct ExceptionAddedJSON: Encodable { let exception: ExceptionJSON; let cancelled: [AppointmentJSON] }
    struct ExceptionRemovedJSON: Encodable { let removed: Int64; let cancelled: [AppointmentJSON] }

    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        let staff = group.group().add(middleware: StaffAuthenticator(dependencies: dependencies))
        staff.get("doctors", use: doctors)
        staff.post("doctors", use: addDoctor)
        staff.post("doctors/:id/deactivate", use: deactivate)
        staff.get("doctors/:id/hours", use: hours)
        staff.post("doctors/:id/hours", use: setHours)
        staff.get("doctors/:id/exceptions", use: exceptions)
        staff.post("doctors/:id/exceptions", use: addException)
        staff.delete("exceptions/:id", use: removeException)
        staff.get("departments/:id/visit-types", use: visitTypes)
        staff.post("visit-types", use: addVisitType)
        staff.post("visit-types/:id", use: updateVisitType)
        staff.delete("visit-types/:id", use: removeVisitType)
    }

    @Sendable func doctors(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let doctors = try await dependencies.awaited(context.language) { [system] in try await system.staff.doctorsWithHours(member) }
        return try HTTPMapping.json(doctors.map { DoctorJSON($0.doctor, hours: $0.hours) })
    }

    @Sendable func addDoctor(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let body = try await RequestBody.decode(DoctorBody.self, from: request, context: context)
        let requestId = context.requestId
        let doctor = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.addDoctor(member, departmentId: body.departmentId, name: body.name, hours: [], requestId: requestId)
        }
        return try HTTPMapping.json(DoctorJSON(doctor, hours: []), status: .created)
    }

    @Sendable func deactivate(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let body = try await RequestBody.decode(CancelOptions.self, from: request, context: context)
        let requestId = context.requestId
        let cancelled = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.deactivateDoctor(member, doctorId: id, force: body.force ?? false, reason: body.reason, requestId: requestId)
        }
        return try HTTPMapping.json(CancelledJSON(cancelled: cancelled.map(AppointmentJSON.init)))
    }

    @Sendable func hours(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let week = try await dependencies.awaited(context.language) { [system] in try await system.staff.doctorWeek(member, doctorId: id) }
        return try HTTPMapping.json(week.hours.map(DoctorJSON.Hours.init))
    }

    @Sendable func setHours(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let language = context.language
        let id = try context.parameters.id("id")
        let body = try await RequestBody.decode(HoursBody.self, from: request, context: context)
        let interval = try body.interval()
        guard let weekday = body.weekday else { throw ServerError.invalid(.fieldRequired, "weekday") }
        let requestId = context.requestId
        let cancelled = try await dependencies.awaited(language) { [system] in
            try await system.staff.setHours(member, doctorId: id, weekday: weekday, intervals: interval.map { [$0] } ?? [],
                                      force: body.force ?? false, reason: body.reason, requestId: requestId)
        }
        return try HTTPMapping.json(CancelledJSON(cancelled: cancelled.map(AppointmentJSON.init)))
    }

    @Sendable func exceptions(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let week = try await dependencies.awaited(context.language) { [system] in try await system.staff.doctorWeek(member, doctorId: id) }
        return try HTTPMapping.json(week.exceptions.map(ExceptionJSON.init))
    }

    @Sendable func addException(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let body = try await RequestBody.decode(HoursBody.self, from: request, context: context)
        let interval = try body.interval()
        guard let date = body.date else { throw ServerError.invalid(.fieldRequired, "date") }
        let day = try TimeInput.parseDay(date)
        let requestId = context.requestId
        let (exception, cancelled) = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.addException(member, doctorId: id, day: day, hours: interval, force: body.force ?? false,
                                          reason: body.reason, requestId: requestId)
        }
        return try HTTPMapping.json(ExceptionAddedJSON(exception: ExceptionJSON(exception), cancelled: cancelled.map(AppointmentJSON.init)),
                                    status: .created)
    }

    @Sendable func removeException(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let force = try request.queryBool("force"), reason = request.query("reason")
        let requestId = context.requestId
        let cancelled = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.removeException(member, exceptionId: id, force: force, reason: reason, requestId: requestId)
        }
        return try HTTPMapping.json(ExceptionRemovedJSON(removed: id, cancelled: cancelled.map(AppointmentJSON.init)))
    }

    @Sendable func visitTypes(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let types = try await dependencies.awaited(context.language) { [system] in try await system.staff.visitTypes(member, departmentId: id) }
        return try HTTPMapping.json(types.map { VisitTypeJSON($0, language: context.language) })
    }

    @Sendable func addVisitType(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let body = try await RequestBody.decode(VisitTypeBody.self, from: request, context: context)
        guard let department = body.departmentId else {
            throw ServerError.invalid(.fieldRequired, "departmentId")
        }
        let requestId = context.requestId
        let type = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.addVisitType(member, departmentId: department, nameEn: body.nameEn, nameRu: body.nameRu,
                                                      durationMinutes: body.durationMinutes, priceCents: body.priceCents, requestId: requestId)
        }
        return try HTTPMapping.json(VisitTypeJSON(type, language: context.language), status: .created)
    }

    @Sendable func updateVisitType(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let body = try await RequestBody.decode(VisitTypeBody.self, from: request, context: context)
        let requestId = context.requestId
        let type = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.updateVisitType(member, id: id, nameEn: body.nameEn, nameRu: body.nameRu,
                                                   durationMinutes: body.durationMinutes, priceCents: body.priceCents, requestId: requestId)
        }
        return try HTTPMapping.json(VisitTypeJSON(type, language: context.language))
    }

    @Sendable func removeVisitType(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let type = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.removeVisitType(member, id: id, requestId: requestId)
        }
        return try HTTPMapping.json(VisitTypeJSON(type, language: context.language))
    }
}
