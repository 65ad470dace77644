import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

// The web app's pages: server-rendered HTML over the same ClinicKit calls as the API and the
// CLI. Every page works without JavaScript except the map; forms post back with a CSRF token.

/// The start page, the privacy policy, log-in, log-out and registration.
struct WebAccountPages {
    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    /// `group` is the pages' group (`WebPageMiddleware`).
    func addRoutes(to group: RouterGroup<APIContext>) {
        group.get("/") { _, context in
            let web = try context.webRequest()
            guard web.patient != nil else { return dependencies.page("start", web) }
            // The next free times near home in one tap (issue 55: 3 taps from here to "Booked").
            return dependencies.page("menu", web, ["specializations": WebFormat.specializations(web.language, selected: "therapy")])
        }
        group.get("/privacy") { _, context in
            let web = try context.webRequest()
            return dependencies.page("privacy", web, ["policy": PrivacyPolicy.text(web.language)])
        }
        group.get("/login") { request, context in
            // Only a path of ours is carried (mustache takes even "" as a value: no key at all).
            dependencies.page("login", try context.webRequest(), URLEncodedForm.localPath(request.query("next")).map { ["next": $0] } ?? [:])
        }
        group.post("/login") { [system] request, context in
            let device = Device.webBrowser(userAgent: request.headers[.userAgent])
            let settings = dependencies.settings
            // Unticked, the cookie lasts while the browser is open and the session 30 minutes unused.
            return try await dependencies.signIn(request, context, try context.webRequest(), form: "login",
                                                 cookie: ServerDependencies.sessionCookie, home: "/") { login, password, keep in
                let idle = settings.webSessionSeconds(keptSignedIn: keep)
                // Awaited (`LogInStore`); only the Argon2 runs behind the gate, on the pool.
                return (try await system.clients.logIn(login: login, password: password, device: device, idleSeconds: idle,
                                                       passwords: dependencies.passwordRunner).token,
                        keep ? idle : nil)
            }
        }
        group.post("/logout") { [system] request, context in
            try await dependencies.signOut(request, context, try context.webRequest(), cookie: ServerDependencies.sessionCookie,
                                           home: "/") { token in
                _ = try await system.clients.logOut(token: token)
            }
        }
        group.get("/register") { _, context in dependencies.page("register", try context.webRequest()) }
        group.post("/register", use: register)
    }

    /// Registration in one round: every problem of the form at once, each beside its field,
    /// and a city several places share asked about in the same answer ("none of these" types it
    /// again); nothing typed is lost. The passwords are sent back only when they pass (the page
    /// is `no-store`), so a question about the city does not make them typed again.
    @Sendable func register(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        let form = try await dependencies.form(request, context, web)
        try dependencies.checkAuthRate(context, web.language)
        var values: [String: Any] = [:]
        for key in ["login", "name", "surname", "street", "house", "city", "state", "zip", "birthDate", "phone"] {
            values[key] = form[key] ?? ""
        }
        values["acceptPrivacy"] = form["acceptPrivacy"] == "yes"
        // "None of these" is an empty choice: the city is typed again, more exactly. A U.S.
        // address's state and ZIP code go with the city to the geocoder ("Portland, OR 97204").
        let chosen = form["cityChoice"].flatMap { $0.isEmpty ? nil : $0 }
        let region = [form["state"], form["zip"]].compactMap { $0?.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
        let typedCity = (form["city"] ?? "").trimmingCharacters(in: .whitespaces)
        let city = chosen ?? (region.isEmpty || typedCity.isEmpty ? typedCity : typedCity + ", " + region)
        var typed = RegistrationRequest(
            login: form["login"] ?? "", password: form["password"] ?? "", confirmPassword: form["passwordAgain"] ?? "",
            name: form["name"] ?? "", surname: form["surname"] ?? "", street: form["street"] ?? "", house: form["house"] ?? "",
            city: city, language: web.language, acceptedPrivacy: form["acceptPrivacy"] == "yes",
            birthDate: form["birthDate"], phone: form["phone"])
        // The web's form asks the date of birth (the desk, the family rules and FHIR need it).
        typed.birthDateRequired = true
        let registration = typed
        let problems = try await dependencies.awaited(web.language) { [system] in try await system.clients.registrationProblems(registration) }
        // A city several places share: the patient chooses, none is chosen for them.
        let question = form["cityChoice"] == nil && !problems.contains { $0.field == "city" }
            ? await dependencies.cityQuestion(city, web) : nil
        let retyping = form["cityChoice"] == ""
        values["cityRetyped"] = retyping
        if problems.isEmpty && question == nil && !retyping {
            do {
                _ = try await dependencies.awaited(web.language) { [system, dependencies] in
                    try await system.clients.registerUser(registration, passwords: dependencies.passwordRunner)
                }
                let login = registration.login, password = registration.password
                let device = Device.webBrowser(userAgent: request.headers[.userAgent])
                let idle = dependencies.settings.webSessionSeconds(keptSignedIn: false)
                let (_, token) = try await dependencies.awaited(web.language) { [system, dependencies] in
                    try await system.clients.logIn(login: login, password: password, device: device, idleSeconds: idle,
                                                   passwords: dependencies.passwordRunner)
                }
                return dependencies.redirect("/", web, extraCookies: [dependencies.cookie(ServerDependencies.sessionCookie, token)])
            } catch let failure as APIFailure {
                // Refused at the write (a login taken meanwhile): said as the one problem.
                values["error"] = failure.message(in: web.language)
                return dependencies.page("register", web, values, status: failure.status)
            }
        }
        values.merge(WebForms.problems(problems, web.language)) { $1 }
        if !problems.contains(where: { $0.field == "password" || $0.field == "passwordAgain" }) {
            values["passwordValue"] = registration.password
        } else {
            values["passwordsCleared"] = true
        }
        if let question { values.merge(question) { $1 } }
        return dependencies.page("register", web, values, status: problems.isEmpty ? .ok : .unprocessableContent)
    }
}

/// A form's problems as the templates show them: `{{field}}Error` beside each field (the first
/// of a field's problems), and a list at the top whose items link to their fields.
enum WebForms {
    static func problems(_ problems: [FieldProblem], _ language: Language) -> [String: Any] {
        guard !problems.isEmpty else { return [:] }
        var values: [String: Any] = [:], listed: [[String: Any]] = []
        for problem in problems where values[problem.field + "Error"] == nil {
            let message = Strings.text(problem.error.key, language, problem.error.arguments)
            values[problem.field + "Error"] = message
            listed.append(["field": problem.field, "message": message])
        }
        values["problems"] = listed
        values["hasProblems"] = true
        return values
    }
}

extension ServerDependencies {
    /// A city several places share ("Springfield"): the values a form asks "Which …?" with, as
    /// radio buttons of which none is chosen; nil when the city is one place (or none: the
    /// library says so when the form is sent). Registration and the profile ask alike.
    func cityQuestion(_ city: String, _ web: WebRequest) async -> [String: Any]? {
        guard !city.trimmingCharacters(in: .whitespaces).isEmpty,
              let place = try? await awaited(web.language, { [system] in try await system.geocoding.resolve(city) }), place.isAmbiguous
        else { return nil }
        return ["choices": place.choices.enumerated().map { index, choice in
                    ["name": choice.name, "typed": choice.typed, "index": index] as [String: Any]
                },
                "cityQuestion": Strings.text(.whichPlace, web.language, [city]), "hasChoices": true]
    }
}
