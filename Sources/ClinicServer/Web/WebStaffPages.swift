import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The receptionist's day page: a staff session in a cookie of its own, the same
/// `StaffController` calls, roles and audit trail as the staff API. Status changes and
/// bookings go through the group committer.
struct WebStaffPages {
    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    /// `group` is the pages' group (`WebPageMiddleware`); the day and its actions resolve the
    /// staff cookie's member (`WebStaffSession`) and answer for themselves when there is none.
    func addRoutes(to group: RouterGroup<APIContext>) {
        let staff = group.group().add(middleware: WebStaffSession(dependencies: dependencies))
        staff.get("/staff") { request, context in
            let web = try context.webRequest()
            guard let member = context.staffMember else { return dependencies.page("staff-login", web) }
            return try await staffDay(member, request, context, web)
        }
        group.post("/staff/login") { [system] request, context in
            let idle = dependencies.settings.staffWebIdleMinutes * 60
            // The cookie lasts while the browser is open; the session ends after `idle` unused.
            return try await dependencies.signIn(request, context, try context.webRequest(), form: "staff-login",
                                                 cookie: ServerDependencies.staffCookie, home: "/staff", resumable: true) { login, password, _ in
                (try await system.staff.logIn(login: login, password: password, idleSeconds: idle,
                                              passwords: dependencies.passwordRunner).token, nil)
            }
        }
        group.post("/staff/logout") { [system] request, context in
            try await dependencies.signOut(request, context, try context.webRequest(), cookie: ServerDependencies.staffCookie,
                                           home: "/staff") { token in
                _ = try await system.staff.logOut(token: token)
            }
        }
        staff.post("/staff/appointments/:id/:action", use: act)
        staff.post("/staff/book", use: book)
        staff.get("/staff/threads", use: inbox)
        staff.get("/staff/appointments/:id", use: folder)
        staff.get("/staff/appointments/:id/attachments/:aid", use: file)
        staff.get("/staff/appointments/:id/attachments/:aid/thumbnail", use: thumbnail)
        staff.post("/staff/threads/:id/answer", use: answer)
        staff.post("/staff/threads/:id/close", use: close)
        staff.get("/staff/appointments/:id/move", use: movePage)
        staff.post("/staff/move/:id", use: move)
    }

    /// `/staff/appointments/{id}/move?day=…`: the free times of a day to move the appointment
    /// to, with the reason the patient is told.
    @Sendable func movePage(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        let day = try request.query("day").flatMap { $0.isEmpty ? nil : try TimeInput.parseDay($0) }
        let choices = try await dependencies.awaited(web.language) { [system, runner = dependencies.poolRunner] in
            try await system.staff.moveChoices(member, appointmentId: id, day: day, computing: runner)
        }
        let zone = choices.clinic.zone, appointment = choices.appointment
        let today = LocalDateTime.of(Date(), in: zone)
        return dependencies.page("staff-move", web, [
            "staffLogin": member.login, "frontDesk": member.runsTheFrontDesk, "id": id,
            "when": DateText.dateTime(appointment.startsAt, timeZone: zone, language: web.language), "doctor": appointment.doctorName,
            "timeZone": zone.identifier, "date": choices.day.dayText,
            "days": (0..<14).map { offset -> [String: Any] in
                let date = today.adding(days: offset)
                return ["value": date.dayText, "selected": date.dayText == choices.day.dayText]
            },
            "times": choices.times.enumerated().map { index, slot -> [String: Any] in
                ["value": "\(DateText.iso8601(slot.start))|\(slot.doctorId)", "index": index, "first": index == 0,
                 "time": DateText.time(slot.start, timeZone: zone, language: web.language), "doctor": slot.doctorName]
            },
            "none": choices.times.isEmpty,
        ])
    }

    /// Moves the appointment to the chosen time and doctor, with the reason.
    @Sendable func move(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        let form = try await dependencies.form(request, context, web)
        let choice = (form["slot"] ?? "").split(separator: "|", maxSplits: 1).map(String.init)
        guard choice.count == 2, let doctor = Int64(choice[1]) else { throw ServerError.invalid(.fieldRequired, "slot") }
        let time = try TimeInput.parse(choice[0])
        let reason = form["reason"].flatMap { $0.isEmpty ? nil : $0 }, requestId = context.requestId
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.staff.reschedule(member, appointmentId: id, to: time, doctorId: doctor, reason: reason, requestId: requestId)
        }
        let told = try await dependencies.awaited(web.language) { [system] in try await system.staff.patientIsTold(member, appointmentId: id) }
        // The calendar's drag asks in JSON what to say: "The patient is told" only when they are.
        if request.headers[.accept]?.contains("application/json") == true {
            return try HTTPMapping.json(MovedJSON(moved: true, patientTold: told))
        }
        // The times offered were of the page's day (its clinic's date): the day's list of it.
        return dependencies.redirect("/staff?date=" + Self.dayParameter(form["date"]) + "&moved=\(id)&told=\(told ? 1 : 0)", web)
    }

    /// `/staff/threads?state=open|closed`: the front desk's conversations, the latest first.
    @Sendable func inbox(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let closed = request.query("state") == "closed"
        let requestId = context.requestId
        let list = try await dependencies.awaited(web.language) { [system] in
            try await system.attachments.threads(member, state: closed ? .closed : .open, named: true, requestId: requestId)
        }
        let zone = list.zone
        return dependencies.page("staff-threads", web, [
            "staffLogin": member.login, "frontDesk": true, "closed": closed, "unreadTotal": list.unread > 0 ? list.unread : false,
            "threads": list.items.map { item -> [String: Any] in
                ["id": item.appointmentId, "doctor": item.doctorName, "unread": item.unread > 0 ? item.unread : false,
                 "patient": item.patientName ?? "—", "preview": WebFormat.section(item.preview),
                 "when": DateText.dateTime(item.startsAt, timeZone: zone, language: web.language),
                 "last": DateText.dateTime(item.lastAt, timeZone: zone, language: web.language)]
            },
            "empty": list.items.isEmpty,
        ])
    }

    /// `/staff/appointments/{id}`: the appointment's files and (for the front desk) its
    /// conversation with the answer and close forms; the look is an audit event the patient sees.
    @Sendable func folder(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        let requestId = context.requestId, cursor = request.query("cursor")
        let folder = try await dependencies.awaited(web.language) { [system] in
            try await system.attachments.folder(member, appointmentId: id, requestId: requestId, cursor: cursor)
        }
        let zone = folder.zone
        var values = WebFolder.values(folder, web.language, base: "/staff/appointments/\(id)", paged: cursor != nil)
        values["staffLogin"] = member.login
        values["frontDesk"] = member.runsTheFrontDesk
        values["id"] = id
        values["when"] = DateText.dateTime(folder.startsAt, timeZone: zone, language: web.language)
        values["doctor"] = folder.doctorName
        if !folder.notes.isEmpty { values["notes"] = folder.notes }
        return dependencies.page("staff-appointment", web, values)
    }

    @Sendable func file(_ request: Request, context: APIContext) async throws -> Response {
        try await content(context, .file)
    }

    @Sendable func thumbnail(_ request: Request, context: APIContext) async throws -> Response {
        try await content(context, .thumbnail)
    }

    /// A file of the appointment, opened by the staff member: an audit event the patient sees.
    func content(_ context: APIContext, _ part: AttachmentPart) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id"), aid = try context.parameters.id("aid")
        let requestId = context.requestId
        let content = try await dependencies.awaited(web.language) { [system] in
            try await system.attachments.open(member, appointmentId: id, attachmentId: aid, part: part, requestId: requestId)
        }
        return dependencies.attachmentResponse(content)
    }

    /// The front desk answers; the patient is told in their inbox.
    @Sendable func answer(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        let form = try await dependencies.form(request, context, web)
        let text = form["text"] ?? "", requestId = context.requestId
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.attachments.answer(member, appointmentId: id, text: text, requestId: requestId)
        }
        return dependencies.redirect("/staff/appointments/\(id)#thread", web)
    }

    @Sendable func close(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        _ = try await dependencies.form(request, context, web)
        let requestId = context.requestId
        try await dependencies.awaited(web.language) { [system] in
            try await system.attachments.close(member, appointmentId: id, requestId: requestId)
        }
        return dependencies.redirect("/staff/threads", web)
    }

    /// A status change: the store's awaited use case (`StaffController.act`).
    @Sendable func act(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        guard let action = context.parameters.get("action").flatMap(StaffAction.init(rawValue:)) else {
            throw ServerError(.notFound, .routeNotFound, context.parameters.get("action") ?? "")
        }
        let form = try await dependencies.form(request, context, web)
        let reason = form["reason"].flatMap { $0.isEmpty ? nil : $0 }
        let requestId = context.requestId
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.staff.act(member, action, appointmentId: id, reason: reason, requestId: requestId)
        }
        return dependencies.redirect("/staff?date=" + Self.dayParameter(form["date"]), web)
    }

    @Sendable func book(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let form = try await dependencies.form(request, context, web)
        guard let department = form["department"].flatMap(Int64.init) else { throw ServerError.invalid(.fieldRequired, "department") }
        let time = try TimeInput.parse(form["start"] ?? "")
        // A patient picked from the search (`patientId`), else the login typed.
        let typed = (form["patient"] ?? "").trimmingCharacters(in: .whitespaces)
        let patientId = typed.isEmpty ? form["patientId"].flatMap(Int64.init) : nil
        let login = patientId == nil ? typed : nil
        let doctor = form["doctor"].flatMap(Int64.init), visitType = form["visitType"].flatMap(Int64.init)
        let requestId = context.requestId
        let booked = try await dependencies.awaited(web.language) { [system] in
            try await system.staff.book(member, patientLogin: login, patientId: patientId, departmentId: department, at: time,
                                  doctorId: doctor, visitTypeId: visitType, requestId: requestId)
        }
        // Back where the booking was picked (the calendar's day, else the day's list), which
        // says what was booked.
        let home = form["back"] == "calendar" ? "/staff/calendar?from=" : "/staff?date="
        return dependencies.redirect(home + Self.dayParameter(form["date"]) + "&booked=\(booked.id ?? 0)", web)
    }

    /// The answer to the calendar's drag (`Accept: application/json`).
    struct MovedJSON: Encodable {
        let moved: Bool
        let patientTold: Bool
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
        let schedule = try await dependencies.awaited(web.language) { [system] in
            try await system.frontDeskDay(member, day: day, departmentId: departmentId, doctorId: doctorId, requestId: requestId)
        }
        let clinic = schedule.clinic, departments = schedule.departments, doctors = schedule.doctors
        let words = WebText.labels(web.language)
        // What a change just did, said at the top (issue 46): the booking, with its time, doctor
        // and patient; a move, with whether the patient is told.
        var notice: String?
        if let booked = request.query("booked").flatMap(Int64.init),
           let entry = schedule.entries.first(where: { $0.appointment.id == booked }) {
            notice = "\(words["staffBookedNotice"] ?? ""): \(DateText.time(entry.appointment.startsAt, timeZone: schedule.zone, language: web.language)), "
                + "\(entry.appointment.doctorName), \(entry.patientName ?? "—")"
        } else if request.query("moved") != nil {
            notice = words[request.query("told") == "1" ? "moved" : "movedNotTold"]
        }
        return dependencies.page("staff-day", web, [
            "notice": WebFormat.section(notice),
            "staffLogin": member.login,
            "clinic": clinic.name, "date": schedule.day.dayText, "timeZone": clinic.timeZone, "member": member.login,
            "previous": schedule.day.adding(days: -1).dayText, "next": schedule.day.adding(days: 1).dayText,
            "canBook": member.runsTheFrontDesk, "frontDesk": member.runsTheFrontDesk,
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
                        "canUndoCheckIn": entry.actions.contains(.undoCheckIn),
                        "canNoShow": entry.actions.contains(.noShow),
                        "canComplete": entry.actions.contains(.complete),
                        "canCancel": entry.actions.contains(.cancel),
                        "canMove": member.rescheduleRefusal(on: appointment) == nil] as [String: Any]
            },
            "empty": schedule.entries.isEmpty,
            // The printed day (issue 46): one page a doctor, the patients' date of birth and phone where known.
            "printDoctors": Self.byDoctor(schedule.entries).map { doctor, entries -> [String: Any] in
                ["doctor": doctor, "rows": entries.map { entry -> [String: Any] in
                    ["time": DateText.time(entry.appointment.startsAt, timeZone: schedule.zone, language: web.language),
                     "patient": entry.patientName ?? "—", "birthDate": entry.patientBirthDate ?? "", "phone": entry.patientPhone ?? "",
                     "status": entry.appointment.status.text(web.language)]
                }]
            },
        ])
    }

    /// A day's entries by doctor, each doctor once, in the order of their first appointment.
    static func byDoctor(_ entries: [DayEntry]) -> [(String, [DayEntry])] {
        var order: [String] = [], groups: [String: [DayEntry]] = [:]
        for entry in entries {
            let name = entry.appointment.doctorName
            if groups[name] == nil { order.append(name) }
            groups[name, default: []].append(entry)
        }
        return order.map { ($0, groups[$0] ?? []) }
    }
}
