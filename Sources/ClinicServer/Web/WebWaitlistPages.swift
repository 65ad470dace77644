import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The patient's waitlist on the web (issue 45): "Tell me if an earlier time frees up" on an
/// appointment's page, the list of what they wait for, and the times offered, each with how long
/// it is held, to accept or decline. The rules are `WaitlistController`'s.
struct WebWaitlistPages {
    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        let patient = group.group().add(middleware: WebPatientRequired())
        patient.get("/waitlist", use: list)
        patient.post("/waitlist", use: join)
        patient.post("/waitlist/:id/leave", use: leave)
        patient.post("/waitlist/:id/resume", use: resume)
        patient.post("/waitlist/offers/:id/accept", use: accept)
        patient.post("/waitlist/offers/:id/decline", use: decline)
        // A text's one-tap link: the link is the patient's key to that one offer.
        group.get("/o/:token", use: linked)
        group.post("/o/:token/accept", use: linkAccept)
        group.post("/o/:token/decline", use: linkDecline)
    }

    /// `/o/{token}`: the offer a text's link names, with accept and decline, signed in or not.
    @Sendable func linked(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        let token = context.parameters.get("token") ?? ""
        let (offer, department, clinic) = try await dependencies.awaited(web.language) { [system] in
            try await system.waitlist.offer(link: token)
        }
        return dependencies.page("offer-link", web, [
            "open": true, "token": token, "when": WebFormat.clinicTime(offer.startsAt, clinic, web.language),
            "until": DateText.time(offer.expiresAt, timeZone: clinic.zone, language: web.language), "clinic": clinic.name,
            "department": Specialization.displayName(department.specialization, web.language)])
    }

    @Sendable func linkAccept(_ request: Request, context: APIContext) async throws -> Response {
        try await linkAnswer(request, context, accept: true)
    }

    @Sendable func linkDecline(_ request: Request, context: APIContext) async throws -> Response {
        try await linkAnswer(request, context, accept: false)
    }

    func linkAnswer(_ request: Request, _ context: APIContext, accept: Bool) async throws -> Response {
        let web = try context.webRequest()
        let token = context.parameters.get("token") ?? ""
        _ = try await dependencies.form(request, context, web)
        let answer = try await dependencies.awaited(web.language) { [system] in
            try await system.waitlist.answer(link: token, accept: accept)
        }
        // Signed in as that patient: their appointment's page, as from the waitlist.
        if let booked = answer.appointment, let id = booked.id, web.patient?.id == answer.clientId {
            return dependencies.redirect("/appointments/\(id)?booked=1", web)
        }
        let clinic = try await dependencies.awaited(web.language) { [system] in
            try await system.clinics.clinicWithDepartments(answer.clinicId).clinic
        }
        return dependencies.page("offer-link", web, [
            "booked": answer.appointment != nil, "declined": answer.appointment == nil, "clinic": clinic.name,
            "when": WebFormat.clinicTime(answer.startsAt, clinic, web.language)])
    }

    /// `/waitlist`: the times offered now (first), then the entries.
    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let clientId = patient.id ?? 0
        let overview = try await dependencies.awaited(web.language) { [system] in try await system.waitlist.overview(clientId: clientId) }
        let entries = overview.entries, offers = overview.offers
        let places = overview.places.mapValues { ($0.clinic, $0.department.specialization) }
        func place(_ departmentId: Int64) -> [String: Any] {
            guard let (clinic, specialization) = places[departmentId] else { return [:] }
            return ["clinic": clinic.name, "department": Specialization.displayName(specialization, web.language)]
        }
        let shownOffers = offers.map { offer -> [String: Any] in
            var item = place(offer.departmentId)
            if let (clinic, _) = places[offer.departmentId] {
                item["when"] = WebFormat.clinicTime(offer.startsAt, clinic, web.language)
                // With its day and zone, as the offer's text says it (issue 55).
                item["until"] = DateText.dateTimeWithZone(offer.expiresAt, timeZone: clinic.zone, language: web.language)
            }
            item["id"] = offer.id ?? 0
            return item
        }
        let shownEntries = entries.map { entry -> [String: Any] in
            var item = place(entry.departmentId)
            item["id"] = entry.id ?? 0
            item["status"] = entry.statusText(web.language)
            item["paused"] = entry.isPaused
            let first = DateText.day(key: entry.firstDay, language: web.language)
            item["days"] = entry.firstDay == entry.lastDay ? first : "\(first) – \(DateText.day(key: entry.lastDay, language: web.language))"
            if let from = entry.fromMinute, let to = entry.toMinute {
                item["hours"] = WaitlistEntryJSON.clock(from) + "–" + WaitlistEntryJSON.clock(to)
            }
            if let earlier = entry.beforeAppointmentId { item["earlierThan"] = earlier }
            return item
        }
        return dependencies.page("waitlist", web, [
            "offers": shownOffers, "entries": shownEntries, "hasOffers": !shownOffers.isEmpty,
            "joined": request.query("joined") == "1", "declined": request.query("declined") == "1"])
    }

    /// From an appointment's page ("an earlier time") or a department with no free times.
    @Sendable func join(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let form = try await dependencies.form(request, context, web)
        guard let department = form["departmentId"].flatMap({ Int64($0) }) else {
            throw ServerError.invalid(.fieldWholeNumber, "departmentId")
        }
        let appointment = try form["appointmentId"].flatMap { $0.isEmpty ? nil : $0 }.map { text -> Int64 in
            guard let id = Int64(text) else { throw ServerError.invalid(.fieldWholeNumber, "appointmentId") }
            return id
        }
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.waitlist.join(clientId: patient.id ?? 0, .init(departmentId: department, appointmentId: appointment))
        }
        return dependencies.redirect("/waitlist?joined=1", web)
    }

    /// A paused entry back in line (issue 55).
    @Sendable func resume(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        _ = try await dependencies.form(request, context, web)
        _ = try await dependencies.awaited(web.language) { [system] in try await system.waitlist.resume(id, clientId: patient.id ?? 0) }
        return dependencies.redirect("/waitlist", web)
    }

    @Sendable func leave(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        _ = try await dependencies.form(request, context, web)
        try await dependencies.awaited(web.language) { [system] in try await system.waitlist.leave(id, clientId: patient.id ?? 0) }
        return dependencies.redirect("/waitlist", web)
    }

    @Sendable func accept(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        _ = try await dependencies.form(request, context, web)
        let booked = try await dependencies.awaited(web.language) { [system] in
            try await system.waitlist.accept(id, clientId: patient.id ?? 0)
        }
        return dependencies.redirect("/appointments/\(booked.id ?? 0)?booked=1", web)
    }

    @Sendable func decline(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        _ = try await dependencies.form(request, context, web)
        try await dependencies.awaited(web.language) { [system] in try await system.waitlist.decline(id, clientId: patient.id ?? 0) }
        return dependencies.redirect("/waitlist?declined=1", web)
    }
}
