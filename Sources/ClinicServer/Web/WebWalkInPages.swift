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
            let patient = try await dependencies.work(web) { [system] in try system.staff.registerWalkIn(member, walkIn, requestId: requestId) }
            return dependencies.redirect("/staff/patients/\(patient.id)?registered=1", web)
        } catch let failure as APIFailure {
            values["error"] = failure.message(in: web.language)
            return dependencies.page("staff-patient-new", web, values, status: failure.status)
        }
    }

    /// `/staff/patients/{id}`: the patient as the front desk sees them, with the claim-code button.
    @Sendable func patientPage(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let patient = try await dependencies.work(web) { [system] in try system.staff.patient(member, id: id, requestId: requestId) }
        return dependencies.page("staff-patient", web, patientValues(member, patient).merging([
            "registered": request.query("registered") == "1",
        ]) { $1 })
    }

    func patientValues(_ member: StaffMember, _ patient: PatientMatch) -> [String: Any] {
        staffValues(member).merging([
            "id": patient.id, "name": "\(patient.name) \(patient.surname)", "birthDate": patient.birthDate ?? "",
            "phone": patient.phone ?? "", "email": patient.email ?? "", "walkIn": patient.login == nil,
        ]) { $1 }
    }

    @Sendable func claimCode(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        _ = try await dependencies.form(request, context, web)
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let code = try await dependencies.work(web) { [system] in
            try system.staff.claimCode(member, patientId: id, requestId: requestId)
        }
        // The expiry in the zone of the clinic that gave the code, named.
        let until = DateText.dateTimeWithZone(code.expiresAt, timeZone: code.zone, language: web.language)
        var hint = web.language == .ru
            ? "Пациент вводит его на странице /claim вместе с выбранными логином и паролем; код действует до \(until)."
            : "The patient types it at /claim with a login and a password of their choice; it works until \(until)."
        if code.emailed { hint += web.language == .ru ? " Код отправлен и на его почту." : " It was sent to their e-mail address too." }
        return dependencies.page("staff-patient", web, staffValues(member).merging([
            "id": id, "code": code.code, "claimHint": hint,
        ]) { $1 })
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
            _ = try await dependencies.passwordWork(web.language) { [system] in
                try system.clients.claim(code: code, login: login, password: password, confirmPassword: again)
            }
            let device = Device.webBrowser(userAgent: request.headers[.userAgent])
            let (_, token) = try await dependencies.passwordWork(web.language) { [system] in
                try system.clients.logIn(login: login, password: password, device: device)
            }
            return dependencies.redirect("/appointments", web, extraCookies: [
                dependencies.cookie(ServerDependencies.sessionCookie, token, maxAge: 30 * 86_400)])
        } catch let failure as APIFailure {
            return dependencies.page("claim", web, values.merging(["error": failure.message(in: web.language)]) { $1 },
                                     status: failure.status)
        }
    }
}
