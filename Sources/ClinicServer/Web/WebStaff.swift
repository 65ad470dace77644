import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

// The receptionist's day page: a staff session in a cookie of its own, the same
// `StaffController` calls, roles and audit trail as the staff API.

extension API {
    static let staffCookie = "clinic_staff"

    /// The staff member of the staff cookie; the page is a use of the session (12 hours idle).
    func staffMember(_ web: WebRequest) async -> StaffMember? {
        guard let token = web.cookies[Self.staffCookie], token.count == 64,
              let member = try? await pool.run({ [system] in try system.staff.current(token: token) }) else { return nil }
        await touch(token: token) { [system] in try system.staff.touch(token: token) }
        return member
    }

    func addStaffWebRoutes(to routes: RouteTable) {
        routes.get("/staff") { request, context in
            await webPage(request, context) { web in
                guard let member = await staffMember(web) else { return page("staff-login", web) }
                return try await staffDay(member, request, context, web)
            }
        }
        routes.post("/staff/login") { request, context in
            await webPage(request, context) { web in
                try await signIn(request, context, web, form: "staff-login", cookie: Self.staffCookie, maxAge: 12 * 3600,
                                 home: "/staff") { [system] login, password in
                    try system.staff.logIn(login: login, password: password).token
                }
            }
        }
        routes.post("/staff/logout") { request, context in
            await webPage(request, context) { web in
                try await signOut(request, context, web, cookie: Self.staffCookie, home: "/staff") { [system] token in
                    _ = try system.staff.logOut(token: token)
                }
            }
        }
        routes.post("/staff/appointments/:id/:action") { request, context in
            await webPage(request, context) { web in
                guard let member = await staffMember(web) else { return redirect("/staff", web) }
                let id = try context.parameters.id("id")
                guard let action = context.parameters.get("action").flatMap(StaffAction.init(rawValue:)) else {
                    throw ClinicError(.notFound, .apiRouteNotFound, context.parameters.get("action") ?? "")
                }
                let form = try await form(request, context, web)
                let reason = form["reason"].flatMap { $0.isEmpty ? nil : $0 }
                let requestId = context.requestId
                _ = try await work(web) { [system] in
                    try system.staff.act(member, action, appointmentId: id, reason: reason, requestId: requestId)
                }
                return redirect("/staff?date=" + Self.dayParameter(form["date"]), web)
            }
        }
        routes.post("/staff/book") { request, context in
            await webPage(request, context) { web in
                guard let member = await staffMember(web) else { return redirect("/staff", web) }
                let form = try await form(request, context, web)
                guard let department = form["department"].flatMap(Int64.init) else { throw ClinicError.invalid(.apiFieldRequired, "department") }
                let time = try TimeInput.parse(form["start"] ?? "")
                let login = form["patient"] ?? ""
                let requestId = context.requestId
                _ = try await commit(web.language) { [system] in
                    try system.staff.book(member, patientLogin: login, departmentId: department, at: time, requestId: requestId)
                }
                return redirect("/staff?date=" + Self.dayParameter(form["date"]), web)
            }
        }
    }

    /// A day from a form for the page to return to: only a valid YYYY-MM-DD goes into a URL.
    static func dayParameter(_ text: String?) -> String {
        text.flatMap { try? TimeInput.parseDay($0) }?.dayText ?? ""
    }

    func staffDay(_ member: StaffMember, _ request: Request, _ context: APIContext, _ web: WebRequest) async throws -> Response {
        let day = try request.query("date").flatMap { $0.isEmpty ? nil : try TimeInput.parseDay($0) }
        let departmentId = request.query("department").flatMap(Int64.init)
        let doctorId = request.query("doctor").flatMap(Int64.init)
        let requestId = context.requestId
        let (schedule, clinic, departments, doctors) = try await work(web) { [system] in
            let schedule = try system.staff.schedule(member, day: day, departmentId: departmentId, doctorId: doctorId,
                                                     requestId: requestId)
            let clinic = try system.clinics.getClinicById(member.clinicId)
            return (schedule, clinic, try system.departments.getDepartmentsByClinicId(member.clinicId), try system.staff.doctors(member))
        }
        return page("staff-day", web, [
            "staffLogin": member.login,
            "clinic": clinic.name, "date": schedule.day.dayText, "timeZone": clinic.timeZone, "member": member.login,
            "previous": schedule.day.adding(days: -1).dayText, "next": schedule.day.adding(days: 1).dayText,
            "canBook": member.runsTheFrontDesk,
            "departments": departments.map { ["id": $0.id ?? 0, "name": Specialization.displayName($0.specialization, web.language),
                                              "selected": $0.id == departmentId] as [String: Any] },
            "doctors": doctors.map { ["id": $0.doctor.id ?? 0, "name": $0.doctor.name, "selected": $0.doctor.id == doctorId] as [String: Any] },
            "entries": schedule.entries.map { entry in
                let appointment = entry.appointment
                let status = appointment.status
                return ["id": appointment.id ?? 0,
                        "time": DateText.time(appointment.startsAt, timeZone: schedule.zone, language: web.language),
                        "patient": entry.patientName ?? "—", "login": entry.patientLogin ?? "", "doctor": appointment.doctorName,
                        "status": status.text(web.language),
                        // Only what the library's rule allows this member now (`StaffAction.refusal`).
                        "canCheckIn": entry.actions.contains(.checkIn),
                        "canNoShow": entry.actions.contains(.noShow),
                        "canComplete": entry.actions.contains(.complete),
                        "canCancel": entry.actions.contains(.cancel)] as [String: Any]
            },
            "empty": schedule.entries.isEmpty,
        ])
    }
}
