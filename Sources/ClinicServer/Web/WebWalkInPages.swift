import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// Walk-in patients (issue 29): the front desk's "New patient" form and the code to claim the
/// account (`/staff/patients…`), and the patient's own page to claim it (`/claim`). The same
/// `StaffController.registerWalkIn`, `claimCode` and `ClientController.claim` as the API.
struct WebWalkInPages {
    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        let staff = group.group().add(middleware: WebStaffSession(dependencies: dependencies))
        staff.get("/staff/patients/new") { _, context in
            let web = try context.webRequest()
            guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
            return dependencies.page("staff-patient-new", web, staffValues(member).merging([web.language.rawValue: true]) { $1 })
        }
        staff.post("/staff/patients", use: register)
        staff.get("/staff/patients/:id", use: patientPage)
        staff.post("/staff/patients/:id/claim-code", use: claimCode)
        group.get("/claim") { _, context in dependencies.page("claim", try context.webRequest()) }
        group.post("/claim", use: claim)
    }

    func staffValues(_ member: StaffMember) -> [String: Any] {
        ["staffLogin": member.login, "frontDesk": member.runsTheFrontDesk]
    }

    @Sendable func register(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let form = try await dependencies.form(request, context, web)
        var values = staffValues(member)
        for key in ["name", "surname", "birthDate", "phone", "email"] { values[key] = form[key] ?? "" }
        let language = form["language"].flatMap(Language.init(rawValue:)) ?? web.language
        values[language.rawValue] = true
        let walkIn = WalkInRequest(name: form["name"] ?? "", surname: form["surname"] ?? "", birthDate: form["birthDate"] ?? "",
                                   phone: form["phone"] ?? "", email: form["email"], language: language)
        let requestId = context.requestId
        do {
            let patient = try await dependencies.awaited(web.language) { [system] in
                try await system.staff.registerWalkIn(member, walkIn, requestId: requestId)
            }
            return dependencies.redirect("/staff/patients/\(patient.id)?registered=1", web)
        } catch let failure as APIFailure {
            values["error"] = failure.message(in: web.language)
            return dependencies.page("staff-patient-new", web, values, status: failure.status)
        }
    }

    /// `/staff/patients/{id}`: the patient as the front desk sees them (named, their date of birth
    /// and phone where known), their visits at this clinic with each one's history, and the
    /// claim-code button for a walk-in.
    @Sendable func patientPage(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        var values = try await patientValues(member, id, context, web)
        values["registered"] = request.query("registered") == "1"
        return dependencies.page("staff-patient", web, values)
    }

    func patientValues(_ member: StaffMember, _ id: Int64, _ context: APIContext, _ web: WebRequest) async throws -> [String: Any] {
        let requestId = context.requestId
        let page = try await dependencies.awaited(web.language) { [system] in
            try await system.staff.patientPage(member, id: id, requestId: requestId)
        }
        let patient = page.patient, visits = page.visits
        let zone = page.clinic.zone, now = Date()
        func visit(_ item: (appointment: Appointment, history: [AppointmentEvent])) -> [String: Any] {
            let appointment = item.appointment
            return ["id": appointment.id ?? 0, "doctor": appointment.doctorName, "status": appointment.status.text(web.language),
                    "when": DateText.dateTime(appointment.startsAt, timeZone: zone, language: web.language),
                    "history": item.history.map { event in
                        var text = DateText.dateTime(event.at, timeZone: zone, language: web.language) + " — " + event.text(web.language)
                        if let reason = event.reason, !reason.isEmpty { text += " (\(reason))" }
                        return text
                    }]
        }
        let upcoming = visits.filter { $0.appointment.status.isActive && $0.appointment.startsAt > now }.reversed().map(visit)
        let past = visits.filter { !($0.appointment.status.isActive && $0.appointment.startsAt > now) }.map(visit)
        return staffValues(member).merging([
            "id": patient.id, "name": "\(patient.name) \(patient.surname)",
            "title": "\(patient.name) \(patient.surname)",
            "number": Self.patientNumber(patient.id, web.language),
            "birthDate": WebFormat.section(patient.birthDate), "phone": WebFormat.section(patient.phone),
            "email": WebFormat.section(patient.email), "walkIn": patient.login == nil, "login": WebFormat.section(patient.login),
            "upcoming": upcoming, "past": past, "hasUpcoming": !upcoming.isEmpty, "hasPast": !past.isEmpty,
            "noVisits": visits.isEmpty,
        ]) { $1 }
    }

    /// "Patient 3" in English, "Пациент № 3" in Russian (issue 46: "№" read as English).
    static func patientNumber(_ id: Int64, _ language: Language) -> String {
        language == .ru ? "Пациент № \(id)" : "Patient \(id)"
    }

    /// A claim code, given at the desk: large, with the patient's name, where to claim it (the
    /// site's own address), until when (in the clinic's zone), and Print.
    @Sendable func claimCode(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        _ = try await dependencies.form(request, context, web)
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let code = try await dependencies.awaited(web.language) { [system] in
            try await system.staff.claimCode(member, patientId: id, requestId: requestId)
        }
        var values = try await patientValues(member, id, context, web)
        // The expiry in the zone of the clinic that gave the code, named.
        let until = DateText.dateTimeWithZone(code.expiresAt, timeZone: code.zone, language: web.language)
        values["code"] = code.code
        values["claimAddress"] = web.publicBase + "/claim"
        values["claimUntil"] = until
        values["emailed"] = code.emailed
        return dependencies.page("staff-patient", web, values)
    }

    /// The walk-in's claim: the account gets the login and password, and the browser is signed
    /// in to it.
    @Sendable func claim(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        let form = try await dependencies.form(request, context, web)
        try dependencies.checkAuthRate(context, web.language)
        let code = form["code"] ?? "", login = form["login"] ?? "", password = form["password"] ?? ""
        let values: [String: Any] = ["code": code, "login": login]
        do {
            let again = form["passwordAgain"] ?? ""
            // Awaited (issue 56: `ClaimStore`); only the Argon2 runs behind the gate, on the pool.
            _ = try await dependencies.awaited(web.language) { [system, dependencies] in
                try await system.clients.claim(code: code, login: login, password: password, confirmPassword: again,
                                               passwords: dependencies.passwordRunner)
            }
            let device = Device.webBrowser(userAgent: request.headers[.userAgent])
            let idle = dependencies.settings.webSessionSeconds(keptSignedIn: false)
            let (_, token) = try await dependencies.awaited(web.language) { [system, dependencies] in
                try await system.clients.logIn(login: login, password: password, device: device, idleSeconds: idle,
                                               passwords: dependencies.passwordRunner)
            }
            return dependencies.redirect("/appointments", web, extraCookies: [
                dependencies.cookie(ServerDependencies.sessionCookie, token)])
        } catch let failure as APIFailure {
            return dependencies.page("claim", web, values.merging(["error": failure.message(in: web.language)]) { $1 },
                                     status: failure.status)
        }
    }
}
