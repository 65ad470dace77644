import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The patient's appointments: booking (the booking page's form), the list, one appointment
/// (its history, its calendar file, the reschedule and cancel forms), moving and cancelling.
/// Every change goes through the group committer.
struct WebAppointmentPages {
    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    /// `group` is the pages' group (`WebPageMiddleware`). One appointment's page says an id
    /// that cannot exist before it asks for a patient, so it checks for itself.
    func addRoutes(to group: RouterGroup<APIContext>) {
        let patient = group.group().add(middleware: WebPatientRequired())
        patient.post("/appointments", use: book)
        patient.get("/appointments", use: list)
        group.get("/appointments/:id", use: show)
        patient.get("/appointments/:id/move", use: moveSummary)
        patient.post("/appointments/:id/reschedule", use: reschedule)
        patient.post("/appointments/:id/cancel", use: cancel)
        patient.post("/appointments/:id/attachments", use: attach)
        patient.get("/appointments/:id/attachments/:aid", use: file)
        patient.get("/appointments/:id/attachments/:aid/thumbnail", use: thumbnail)
        patient.post("/appointments/:id/attachments/:aid/remove", use: removeFile)
        patient.post("/appointments/:id/messages", use: write)
    }

    /// A file from the appointment page's upload form (`multipart/form-data`, its CSRF token
    /// checked first); photos are decoded two at a time (`ServerDependencies.images`).
    @Sendable func attach(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        _ = try await dependencies.admittingUpload(request, account: "patient:\(patient.id ?? 0)", web.language) {
            let upload = try await dependencies.uploadForm(request, web)
            return try await dependencies.images.run { [system] in
                try await dependencies.awaited(web.language) {
                    try await system.attachments.attach(clientId: patient.id ?? 0, appointmentId: id, upload, images: dependencies.poolRunner)
                }
            }
        }
        return dependencies.redirect("/appointments/\(id)#files", web)
    }

    @Sendable func file(_ request: Request, context: APIContext) async throws -> Response {
        try await content(context, .file)
    }

    @Sendable func thumbnail(_ request: Request, context: APIContext) async throws -> Response {
        try await content(context, .thumbnail)
    }

    func content(_ context: APIContext, _ part: AttachmentPart) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id"), aid = try context.parameters.id("aid")
        let content = try await dependencies.awaited(web.language) { [system] in
            try await system.attachments.open(clientId: patient.id ?? 0, appointmentId: id, attachmentId: aid, part: part)
        }
        return dependencies.attachmentResponse(content)
    }

    @Sendable func removeFile(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id"), aid = try context.parameters.id("aid")
        _ = try await dependencies.form(request, context, web)
        try await dependencies.awaited(web.language) { [system] in
            try await system.attachments.remove(clientId: patient.id ?? 0, appointmentId: id, attachmentId: aid)
        }
        return dependencies.redirect("/appointments/\(id)#files", web)
    }

    /// The patient writes to the clinic about the appointment.
    @Sendable func write(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        let form = try await dependencies.form(request, context, web)
        let text = form["text"] ?? ""
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.attachments.write(clientId: patient.id ?? 0, appointmentId: id, text: text)
        }
        return dependencies.redirect("/appointments/\(id)#thread", web)
    }

    @Sendable func book(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let form = try await dependencies.form(request, context, web)
        guard let department = form["department"].flatMap(Int64.init), let start = form["start"] else {
            throw ServerError.invalid(.fieldRequired, "start")
        }
        let time = try TimeInput.parse(start)
        let visitType = form["visitType"].flatMap(Int64.init), doctor = form["doctor"].flatMap(Int64.init)
        let reason = form["reason"] ?? ""
        let booked = try await dependencies.awaited(web.language) { [system] in
            try await system.appointments.book(clientId: patient.id ?? 0, departmentId: department, at: time, doctorId: doctor,
                                               notes: reason, visitTypeId: visitType)
        }
        return dependencies.redirect("/appointments/\(booked.id ?? 0)?booked=1", web)
    }

    @Sendable func reschedule(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        let form = try await dependencies.form(request, context, web)
        let time = try TimeInput.parse(form["start"] ?? "")
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.appointments.reschedule(id, clientId: patient.id ?? 0, to: time)
        }
        return dependencies.redirect("/appointments/\(id)?moved=1", web)
    }

    @Sendable func cancel(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        let form = try await dependencies.form(request, context, web)
        // The question lands where it is asked: the page's cancel section, not its top.
        guard form["confirm"] == "yes" else { return dependencies.redirect("/appointments/\(id)?cancel=1#cancel", web) }
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.appointments.cancel(id, clientId: patient.id ?? 0)
        }
        return dependencies.redirect("/appointments/\(id)?cancelled=1", web)
    }

    /// `/appointments`: upcoming, then past and cancelled.
    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        let patient = try context.webPatient()
        let list = try await dependencies.awaited(web.language) { [system] in
            try await system.appointments(ofPatient: patient.id ?? 0, scope: .all)
        }
        let now = Date()
        func row(_ item: AppointmentAtClinic) -> [String: Any] {
            let appointment = item.appointment
            return ["id": appointment.id ?? 0, "clinic": item.clinic.name, "doctor": appointment.doctorName,
                    "department": Specialization.displayName(item.department.specialization, web.language),
                    "when": WebFormat.clinicTime(appointment.startsAt, item.clinic, web.language),
                    "status": appointment.status.text(web.language)]
        }
        let upcoming = list.filter { AppointmentScope.upcoming.contains($0.appointment, now: now) }.map(row)
        let past = list.filter { !AppointmentScope.upcoming.contains($0.appointment, now: now) }.reversed().map(row)
        return dependencies.page("appointments", web, ["upcoming": upcoming, "past": past, "hasUpcoming": !upcoming.isEmpty, "hasPast": !past.isEmpty])
    }

    /// `/appointments/{id}`: the appointment, its history, and the actions that fit its status.
    /// An upcoming one: its calendar file, directions, and moving it as booking does (a day
    /// strip with the days without a free time marked, the first free day's times as a grid,
    /// each a link to `move`, the summary) and cancelling (asked once more); the day's form and
    /// the question land at their sections (`#reschedule`, `#cancel`), and a done change is
    /// a banner at the top. A cancelled one offers booking again instead.
    @Sendable func show(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        // `/appointments/{id}.ics`: the calendar file, for the signed-in patient of the cookie.
        if let text = context.parameters.get("id"), text.hasSuffix(".ics") {
            let patient = try context.webPatient()
            guard let id = Int64(text.dropLast(4)), id > 0 else { throw ServerError(.notFound, .routeNotFound, text) }
            let ics = try await dependencies.awaited(web.language) { [system] in try await system.calendarFile(id, of: patient) }
            return ServerDependencies.calendar(ics, filename: "appointment-\(id).ics")
        }
        let id = try context.parameters.id("id")
        let patient = try context.webPatient()
        let day = try request.query("day").flatMap { $0.isEmpty ? nil : try TimeInput.parseDay($0) }
        let cursor = request.query("cursor")  // the conversation's earlier messages (`WebFolder`)
        // Awaited (issue 56); the free times to move to are computed on the pool.
        let details = try await dependencies.awaited(web.language) { [system, runner = dependencies.poolRunner] in
            try await system.appointmentDetails(id, ofPatient: patient.id ?? 0, rescheduleDay: day, threadCursor: cursor,
                                                computing: runner)
        }
        let appointment = details.appointment, history = details.history, clinic = details.clinic, slots = details.rescheduleTimes
        let now = Date()
        let today = LocalDateTime.of(now, in: clinic.zone)
        let upcoming = appointment.status.isActive && appointment.startsAt > now
        let active = details.patientMayChange
        var values: [String: Any] = [
            "id": id, "clinic": clinic.name, "clinicId": clinic.id ?? 0, "departmentId": appointment.departmentId,
            "doctor": appointment.doctorName,
            "when": WebFormat.clinicTime(appointment.startsAt, clinic, web.language), "status": appointment.status.text(web.language),
            "active": active, "upcoming": upcoming,
            "askCancel": request.query("cancel") == "1", "justBooked": request.query("booked") == "1",
            "justMoved": request.query("moved") == "1" && upcoming,
            "justCancelled": request.query("cancelled") == "1" && appointment.status == .cancelled,
            "departmentName": details.department.map { Specialization.displayName($0.specialization, web.language) } ?? "",
            "visitTypeName": WebFormat.section(details.visitType.map { WebClinicPages.visitTypeLabel($0, web.language) }),
            "clinicAddress": "\(clinic.address), \(clinic.city), \(clinic.state) \(clinic.zip)",
            "reason": WebFormat.section(appointment.notes),
            // Directions: the phone's maps app, by the clinic's point (RFC 5870) and its name.
            "directions": "geo:\(clinic.lat),\(clinic.lon)?q=\(clinic.lat),\(clinic.lon)("
                + URLEncodedForm.encode(clinic.name) + ")",
            "history": zip(history, AppointmentEvent.previousStarts(history)).map { event, before in
                // Every key set, false when empty: a missing one would be looked up in the page
                // (the visit's reason shown as the move's, issue 55).
                var item: [String: Any] = ["event": event.text(web.language),
                                           "at": DateText.dateTime(event.at, timeZone: clinic.zone, language: web.language),
                                           "reason": false, "moved": false]
                if let reason = event.reason, !reason.isEmpty { item["reason"] = reason }
                if event.event == "rescheduled", let before, let after = event.startsAt {
                    item["moved"] = DateText.dateTime(before, timeZone: clinic.zone, language: web.language) + " → "
                        + DateText.dateTime(after, timeZone: clinic.zone, language: web.language)
                }
                return item
            },
            "days": (0..<BookingChoices.days).map { offset -> [String: Any] in
                let date = today.adding(days: offset)
                return ["value": date.dayText, "selected": date.dayText == details.rescheduleDay?.dayText,
                        "free": details.rescheduleFreeDays.contains(date.dayText), "label": Self.dayLabel(date, clinic, web.language)]
            },
        ]
        if appointment.status == .cancelled {
            values["bookAgain"] = "/clinics/\(clinic.id ?? 0)/book?department=\(appointment.departmentId)"
        }
        values.merge(WebFolder.values(details.folder, web.language, base: "/appointments/\(id)", paged: cursor != nil)) { $1 }
        // Writing to the clinic fits an appointment that is not cancelled; after a cancellation,
        // only a conversation already begun goes on (`AttachmentController.write` has the limits).
        let begun = !(details.folder.conversation?.messages.isEmpty ?? true)
        values["mayWrite"] = details.folder.conversation != nil && (appointment.status != .cancelled || begun)
        if let shown = details.rescheduleDay, active {
            // Each time once; the doctor is named where it would not be the appointment's own.
            values["slots"] = slots.map { slot -> [String: Any] in
                let time = DateText.time(slot.start, timeZone: clinic.zone, language: web.language)
                let other = slot.doctorId != appointment.doctorId ? slot.doctorName : nil
                return ["start": DateText.iso8601(slot.start), "time": time,
                        "label": [time, other].compactMap { $0 }.joined(separator: " · ")]
            }
            values["dayChosen"] = true
            values["dayLabel"] = Self.dayLabel(shown, clinic, web.language)
            values["zoneName"] = WebFormat.section(slots.first.map { DateText.zoneName($0.start, timeZone: clinic.zone, language: web.language) })
        }
        return dependencies.page("appointment", web, values)
    }

    /// "Mon, Nov 30, 2026": a local date of the clinic as the booking page names it.
    static func dayLabel(_ date: LocalDateTime, _ clinic: Clinic, _ language: Language) -> String {
        date.at(minuteOfDay: 720).firstInstant(in: clinic.zone).map { DateText.day($0, timeZone: clinic.zone, language: language) }
            ?? date.dayText
    }

    /// `/appointments/{id}/move?start=…`: the move's summary, as a booking's — from when to
    /// when (in the clinic's zone), the doctor the new time would have — with Confirm posting
    /// `reschedule`. A time taken meanwhile says so, with the way back to the day's times.
    @Sendable func moveSummary(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        let start = try TimeInput.resolve(TimeInput.parse(request.query("start") ?? ""), in: .gmt)
        let choice = try await dependencies.awaited(web.language) { [system, runner = dependencies.poolRunner] in
            try await system.moveChoice(id, ofPatient: patient.id ?? 0, to: start, computing: runner)
        }
        let clinic = choice.clinic, zone = clinic.zone
        let back = "/appointments/\(id)?day=\(choice.day.dayText)#reschedule"
        guard let slot = choice.slot else {
            return dependencies.page("error", web, ["message": WebText.labels(web.language)["slotGone"] ?? "", "backHref": back],
                                     status: .conflict)
        }
        let appointment = choice.appointment
        return dependencies.page("move-summary", web, [
            "id": id, "clinic": clinic.name,
            "from": DateText.dateTime(appointment.startsAt, timeZone: zone, language: web.language),
            "to": DateText.dateTime(start, timeZone: zone, language: web.language),
            "zoneName": DateText.zoneName(start, timeZone: zone, language: web.language), "timeZone": clinic.timeZone,
            "departmentName": Specialization.displayName(choice.department.specialization, web.language),
            "doctor": slot.doctorName, "otherDoctor": slot.doctorId != appointment.doctorId,
            "start": DateText.iso8601(start), "backHref": back,
        ])
    }
}
