import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

// The staff API under /v1/staff: the same `StaffController` calls as `clinic staff …`.

struct StaffLogInBody: Decodable, Sendable { let login: String; let password: String }
struct StaffAccountBody: Decodable, Sendable {
    let login: String, name: String, surname: String, role: StaffRole, password: String
    let doctorId: Int64?
}
struct StaffCancelBody: Decodable, Sendable { let reason: String? }
struct StaffBookingBody: Decodable, Sendable {
    let patientLogin: String; let departmentId: Int64; let start: String; let doctorId: Int64?; let visitTypeId: Int64?
}
struct VisitTypeBody: Decodable, Sendable {
    let departmentId: Int64?; let nameEn: String; let nameRu: String; let durationMinutes: Int; let priceCents: Int?
}

extension StaffRole: Decodable {}

struct StaffDoctorBody: Decodable, Sendable { let departmentId: Int64; let name: String }
/// Hours of a weekday or a date: `off`, or `start`–`end` ("HH:MM") with `slotMinutes` (default 20).
struct StaffHoursBody: Decodable, Sendable {
    let weekday: Int?, date: String?
    let off: Bool?, start: String?, end: String?, slotMinutes: Int?
    let force: Bool?, reason: String?

    func interval() throws -> DoctorSchedule.Interval? {
        switch (off ?? false, start, end) {
        case (true, nil, nil): return nil
        case (false, let start?, let end?):
            guard let from = Shapes.minutes(start), let to = Shapes.minutes(end) else { throw ClinicError.invalid(.exceptionInvalid) }
            return DoctorSchedule.Interval(startMinute: from, endMinute: to, slotMinutes: slotMinutes ?? 20)
        default: throw ClinicError.invalid(.exceptionInvalid)
        }
    }
}
struct CancelledJSON: Encodable { let cancelled: [AppointmentJSON] }
struct StaffCancelOptions: Decodable, Sendable { let force: Bool?; let reason: String? }
struct ExceptionAddedJSON: Encodable { let exception: ExceptionJSON; let cancelled: [AppointmentJSON] }
struct ExceptionRemovedJSON: Encodable { let removed: Int64; let cancelled: [AppointmentJSON] }

struct StaffSessionCreated: Encodable { let token: String; let expiresAt: String; let staff: StaffJSON }
struct StaffDayJSON: Encodable { let date: String; let timeZone: String; let items: [DayEntryJSON] }

extension API {
    /// The staff member of the bearer token: `not_logged_in` (401) without a live staff
    /// session, a patient's token included.
    func staffMember(_ request: Request) async throws -> (member: StaffMember, token: String, language: Language) {
        let asked = language(of: request)
        guard let token = request.bearerToken else { throw APIFailure(ClinicError(.notLoggedIn, .staffNotLoggedIn), language: asked) }
        let member = try await work(asked) { [system] in try system.staff.current(token: token) }
        return (member, token, asked)
    }

    /// A handler for a signed-in staff member; the session is kept alive once it succeeded
    /// (at most a write a minute, as for patients).
    func staffSignedIn(_ request: Request, _ body: (StaffMember, Language) async throws -> Response) async throws -> Response {
        let (member, token, language) = try await staffMember(request)
        let response = try await body(member, language)
        await touch(token: token) { [system] in try system.staff.touch(token: token) }
        return response
    }

    func addStaffRoutes(to routes: RouteTable) {
        routes.post("/v1/staff/sessions") { request, context in
            let asked = language(of: request)
            try checkAuthRate(context, asked)
            let body = try await RequestBody.decode(StaffLogInBody.self, from: request, context: context)
            let (member, token) = try await passwordWork(asked) { [system] in
                try system.staff.logIn(login: body.login, password: body.password)
            }
            let expires = Date().addingTimeInterval(StaffController.idleLimit)
            return try HTTPMapping.json(StaffSessionCreated(token: token, expiresAt: DateText.iso8601(expires), staff: StaffJSON(member)),
                                        status: .created)
        }
        routes.delete("/v1/staff/sessions/current") { request, _ in
            let (_, token, language) = try await staffMember(request)
            _ = try await work(language) { [system] in try system.staff.logOut(token: token) }
            return Response(status: .noContent)
        }
        routes.get("/v1/staff/me") { request, _ in
            try await staffSignedIn(request) { member, _ in try HTTPMapping.json(StaffJSON(member)) }
        }
        routes.get("/v1/staff/schedule") { request, context in
            try await staffSignedIn(request) { member, language in
                let day: LocalDateTime?, department: Int64?, doctor: Int64?
                do {
                    day = try request.query("date").map(TimeInput.parseDay)
                    department = try request.queryInt("departmentId").map(Int64.init)
                    doctor = try request.queryInt("doctorId").map(Int64.init)
                } catch let error as ClinicError {
                    throw APIFailure(error, language: language)
                }
                let requestId = context.requestId
                let (shown, zone, entries) = try await work(language) { [system] in
                    try system.staff.schedule(member, day: day, departmentId: department, doctorId: doctor, requestId: requestId)
                }
                return try HTTPMapping.json(StaffDayJSON(date: shown.dayText, timeZone: zone.identifier,
                                                         items: entries.map(DayEntryJSON.init)))
            }
        }
        routes.post("/v1/staff/appointments") { request, context in
            try await staffSignedIn(request) { member, language in
                let body = try await RequestBody.decode(StaffBookingBody.self, from: request, context: context)
                let time: TimeInput.Parsed
                do { time = try TimeInput.parse(body.start) } catch let error as ClinicError { throw APIFailure(error, language: language) }
                let requestId = context.requestId
                let booked = try await commit(language) { [system] in
                    try system.staff.book(member, patientLogin: body.patientLogin, departmentId: body.departmentId, at: time,
                                          doctorId: body.doctorId, visitTypeId: body.visitTypeId, requestId: requestId)
                }
                return try HTTPMapping.json(AppointmentJSON(booked), status: .created)
            }
        }
        routes.post("/v1/staff/appointments/:id/:action") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                guard let action = context.parameters.get("action").flatMap(StaffAction.init(rawValue:)) else {
                    throw APIFailure(ClinicError(.notFound, .apiRouteNotFound, request.uri.path), language: language)
                }
                var reason: String?
                if action == .cancel {
                    reason = try await RequestBody.decode(StaffCancelBody.self, from: request, context: context).reason
                }
                let requestId = context.requestId
                let changed = try await work(language) { [system, reason] in
                    try system.staff.act(member, action, appointmentId: id, reason: reason, requestId: requestId)
                }
                return try HTTPMapping.json(AppointmentJSON(changed))
            }
        }
        routes.get("/v1/staff/doctors") { request, _ in
            try await staffSignedIn(request) { member, language in
                let doctors = try await work(language) { [system] in
                    try system.staff.doctors(member).map { DoctorJSON($0.doctor, hours: try system.staff.hours(member, doctorId: $0.doctor.id ?? 0)) }
                }
                return try HTTPMapping.json(doctors)
            }
        }
        routes.post("/v1/staff/doctors") { request, context in
            try await staffSignedIn(request) { member, language in
                let body = try await RequestBody.decode(StaffDoctorBody.self, from: request, context: context)
                let requestId = context.requestId
                let doctor = try await work(language) { [system] in
                    try system.staff.addDoctor(member, departmentId: body.departmentId, name: body.name, hours: [], requestId: requestId)
                }
                return try HTTPMapping.json(DoctorJSON(doctor, hours: []), status: .created)
            }
        }
        routes.post("/v1/staff/doctors/:id/deactivate") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let body = try await RequestBody.decode(StaffCancelOptions.self, from: request, context: context)
                let requestId = context.requestId
                let cancelled = try await commit(language) { [system] in
                    try system.staff.deactivateDoctor(member, doctorId: id, force: body.force ?? false, reason: body.reason, requestId: requestId)
                }
                return try HTTPMapping.json(CancelledJSON(cancelled: cancelled.map(AppointmentJSON.init)))
            }
        }
        routes.get("/v1/staff/doctors/:id/hours") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let hours = try await work(language) { [system] in try system.staff.hours(member, doctorId: id) }
                return try HTTPMapping.json(hours.map(DoctorJSON.Hours.init))
            }
        }
        routes.post("/v1/staff/doctors/:id/hours") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let body = try await RequestBody.decode(StaffHoursBody.self, from: request, context: context)
                let interval: DoctorSchedule.Interval?
                do { interval = try body.interval() } catch let error as ClinicError { throw APIFailure(error, language: language) }
                guard let weekday = body.weekday else { throw APIFailure(ClinicError.invalid(.apiFieldRequired, "weekday"), language: language) }
                let requestId = context.requestId
                let cancelled = try await commit(language) { [system] in
                    try system.staff.setHours(member, doctorId: id, weekday: weekday, intervals: interval.map { [$0] } ?? [],
                                              force: body.force ?? false, reason: body.reason, requestId: requestId)
                }
                return try HTTPMapping.json(CancelledJSON(cancelled: cancelled.map(AppointmentJSON.init)))
            }
        }
        routes.get("/v1/staff/doctors/:id/exceptions") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let exceptions = try await work(language) { [system] in
                    _ = try system.staff.hours(member, doctorId: id) // of the member's clinic, else not_found
                    return try system.departments.exceptions(doctorId: id)
                }
                return try HTTPMapping.json(exceptions.map(ExceptionJSON.init))
            }
        }
        routes.post("/v1/staff/doctors/:id/exceptions") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let body = try await RequestBody.decode(StaffHoursBody.self, from: request, context: context)
                let interval: DoctorSchedule.Interval?, day: LocalDateTime
                do {
                    interval = try body.interval()
                    guard let date = body.date else { throw ClinicError.invalid(.apiFieldRequired, "date") }
                    day = try TimeInput.parseDay(date)
                } catch let error as ClinicError { throw APIFailure(error, language: language) }
                let requestId = context.requestId
                let (exception, cancelled) = try await commit(language) { [system] in
                    try system.staff.addException(member, doctorId: id, day: day, hours: interval, force: body.force ?? false,
                                                  reason: body.reason, requestId: requestId)
                }
                return try HTTPMapping.json(ExceptionAddedJSON(exception: ExceptionJSON(exception), cancelled: cancelled.map(AppointmentJSON.init)),
                                            status: .created)
            }
        }
        routes.delete("/v1/staff/exceptions/:id") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let force = try request.queryBool("force"), reason = request.query("reason")
                let requestId = context.requestId
                let cancelled = try await commit(language) { [system] in
                    try system.staff.removeException(member, exceptionId: id, force: force, reason: reason, requestId: requestId)
                }
                return try HTTPMapping.json(ExceptionRemovedJSON(removed: id, cancelled: cancelled.map(AppointmentJSON.init)))
            }
        }
        routes.get("/v1/staff/departments/:id/visit-types") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let types = try await work(language) { [system] in try system.staff.visitTypes(member, departmentId: id) }
                return try HTTPMapping.json(types.map { VisitTypeJSON($0, language: language) })
            }
        }
        routes.post("/v1/staff/visit-types") { request, context in
            try await staffSignedIn(request) { member, language in
                let body = try await RequestBody.decode(VisitTypeBody.self, from: request, context: context)
                guard let department = body.departmentId else {
                    throw APIFailure(ClinicError.invalid(.apiFieldRequired, "departmentId"), language: language)
                }
                let requestId = context.requestId
                let type = try await work(language) { [system] in
                    try system.staff.addVisitType(member, departmentId: department, nameEn: body.nameEn, nameRu: body.nameRu,
                                                  durationMinutes: body.durationMinutes, priceCents: body.priceCents, requestId: requestId)
                }
                return try HTTPMapping.json(VisitTypeJSON(type, language: language), status: .created)
            }
        }
        routes.post("/v1/staff/visit-types/:id") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let body = try await RequestBody.decode(VisitTypeBody.self, from: request, context: context)
                let requestId = context.requestId
                let type = try await work(language) { [system] in
                    try system.staff.updateVisitType(member, id: id, nameEn: body.nameEn, nameRu: body.nameRu,
                                                     durationMinutes: body.durationMinutes, priceCents: body.priceCents, requestId: requestId)
                }
                return try HTTPMapping.json(VisitTypeJSON(type, language: language))
            }
        }
        routes.delete("/v1/staff/visit-types/:id") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let requestId = context.requestId
                let type = try await work(language) { [system] in try system.staff.removeVisitType(member, id: id, requestId: requestId) }
                return try HTTPMapping.json(VisitTypeJSON(type, language: language))
            }
        }
        routes.get("/v1/staff/accounts") { request, _ in
            try await staffSignedIn(request) { member, language in
                let accounts = try await work(language) { [system] in try system.staff.accounts(clinicId: member.clinicId, by: member) }
                return try HTTPMapping.json(accounts.map(StaffJSON.init))
            }
        }
        routes.post("/v1/staff/accounts") { request, context in
            try await staffSignedIn(request) { member, language in
                let body = try await RequestBody.decode(StaffAccountBody.self, from: request, context: context)
                let requestId = context.requestId
                let added = try await passwordWork(language) { [system] in
                    try system.staff.addStaff(StaffInput(login: body.login, name: body.name, surname: body.surname, role: body.role,
                                                         clinicId: member.clinicId, doctorId: body.doctorId, password: body.password),
                                              by: member, requestId: requestId)
                }
                return try HTTPMapping.json(StaffJSON(added), status: .created)
            }
        }
        routes.post("/v1/staff/accounts/:id/disable") { request, context in
            try await staffSignedIn(request) { member, language in
                let id = try context.parameters.id("id")
                let requestId = context.requestId
                let disabled = try await work(language) { [system] in try system.staff.disable(id, by: member, requestId: requestId) }
                return try HTTPMapping.json(StaffJSON(disabled))
            }
        }
    }
}
