import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

// The web app's pages: server-rendered HTML over the same ClinicKit calls as the API and the
// CLI. Every page works without JavaScript except the map; forms post back with a CSRF token.

extension API {
    /// A page handler: refusals become the page of the error in the user's language (with the
    /// API's status), a form without its CSRF token 403.
    func webPage(_ request: Request, _ context: APIContext,
                 _ body: @escaping @Sendable (WebRequest) async throws -> Response) async -> Response {
        let web = await webRequest(request)
        do {
            return try await body(web)
        } catch WebRedirect.login {
            return redirect("/login", web)
        } catch WebRefusal.csrf {
            return page("error", web, ["message": WebText.labels(web.language)["csrf"] ?? "The form has expired: reload the page and try again."],
                        status: .forbidden)
        } catch let failure as APIFailure {
            return errorPage(failure.error, web)
        } catch let error as ClinicError {
            return errorPage(error, web)
        } catch let error as HTTPError {
            // The body's limit, a malformed request: its own status, said in words.
            return page("error", web, ["message": error.body ?? error.status.reasonPhrase], status: error.status)
        } catch {
            return errorPage(ClinicError(.internalError, .internalError, "-"), web)
        }
    }

    func errorPage(_ error: ClinicError, _ web: WebRequest) -> Response {
        let status = HTTPMapping.status(error.code)
        let message = status == .internalServerError ? Strings.text(.internalError, web.language, ["-"]) : error.message(in: web.language)
        return page("error", web, ["message": message], status: status)
    }

    /// The signed-in patient, else a redirect to the log-in page.
    func requirePatient(_ web: WebRequest) throws -> Client {
        guard let patient = web.patient else { throw WebRedirect.login }
        return patient
    }

    func work<T: Sendable>(_ web: WebRequest, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await work(web.language, body)
    }

    func addWebRoutes(to routes: RouteTable) {
        routes.get("/static/**") { request, _ in staticFile(request) }
        routes.get("/") { request, context in
            await webPage(request, context) { web in
                guard web.patient != nil else { return page("start", web) }
                return page("menu", web)
            }
        }
        routes.get("/privacy") { request, context in
            await webPage(request, context) { web in
                page("privacy", web, ["policy": PrivacyPolicy.text(web.language)])
            }
        }
        routes.get("/login") { request, context in
            await webPage(request, context) { web in page("login", web) }
        }
        routes.post("/login") { request, context in
            await webPage(request, context) { web in
                try await signIn(request, context, web, form: "login", cookie: Self.sessionCookie, maxAge: 30 * 86_400, home: "/") {
                    [system] login, password in
                    try system.clients.logIn(login: login, password: password, device: Self.webDevice).token
                }
            }
        }
        routes.post("/logout") { request, context in
            await webPage(request, context) { web in
                try await signOut(request, context, web, cookie: Self.sessionCookie, home: "/") { [system] token in
                    _ = try system.clients.logOut(token: token)
                }
            }
        }
        routes.get("/register") { request, context in
            await webPage(request, context) { web in page("register", web) }
        }
        routes.post("/register") { request, context in
            await webPage(request, context) { web in try await register(request, context, web) }
        }
        routes.get("/clinics/map.json") { request, _ in try await mapData(language(of: request)) }
        routes.get("/clinics/nearest") { request, context in
            await webPage(request, context) { web in try await nearestPage(request, web) }
        }
        routes.get("/clinics/:id") { request, context in
            await webPage(request, context) { web in try await clinicPage(try context.parameters.id("id"), web) }
        }
        routes.get("/clinics/:id/book") { request, context in
            await webPage(request, context) { web in try await bookingPage(try context.parameters.id("id"), request, web) }
        }
        routes.post("/appointments") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let form = try await form(request, context, web)
                guard let department = form["department"].flatMap(Int64.init), let start = form["start"] else {
                    throw ClinicError.invalid(.apiFieldRequired, "start")
                }
                let time = try TimeInput.parse(start)
                let visitType = form["visitType"].flatMap(Int64.init)
                let booked = try await commit(web.language) { [system] in
                    try system.appointments.createAppointment(clientId: patient.id ?? 0, departmentId: department, at: time,
                                                              visitTypeId: visitType)
                }
                return redirect("/appointments/\(booked.id ?? 0)", web)
            }
        }
        routes.get("/appointments") { request, context in
            await webPage(request, context) { web in try await appointmentsPage(web) }
        }
        routes.get("/appointments/:id") { request, context in
            await webPage(request, context) { web in
                // `/appointments/{id}.ics`: the calendar file, for the signed-in patient of the cookie.
                if let text = context.parameters.get("id"), text.hasSuffix(".ics") {
                    let patient = try requirePatient(web)
                    guard let id = Int64(text.dropLast(4)), id > 0 else { throw ClinicError(.notFound, .apiRouteNotFound, text) }
                    let ics = try await work(web) { [system] in try system.appointments.calendarFile(id, clientId: patient.id ?? 0) }
                    return Self.calendar(ics, filename: "appointment-\(id).ics")
                }
                return try await appointmentPage(try context.parameters.id("id"), request, web)
            }
        }
        routes.post("/appointments/:id/reschedule") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let id = try context.parameters.id("id")
                let form = try await form(request, context, web)
                let time = try TimeInput.parse(form["start"] ?? "")
                _ = try await commit(web.language) { [system] in
                    try system.appointments.rescheduleAppointment(id, clientId: patient.id ?? 0, to: time)
                }
                return redirect("/appointments/\(id)", web)
            }
        }
        routes.post("/appointments/:id/cancel") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let id = try context.parameters.id("id")
                let form = try await form(request, context, web)
                guard form["confirm"] == "yes" else { return redirect("/appointments/\(id)?cancel=1", web) }
                _ = try await commit(web.language) { [system] in
                    try system.appointments.cancelAppointment(id, clientId: patient.id ?? 0)
                }
                return redirect("/appointments/\(id)", web)
            }
        }
        routes.get("/messages") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let messages = try await work(web) { [system] in try system.clients.messages(clientId: patient.id ?? 0) }
                return page("messages", web, ["messages": messages.map { message in
                    ["id": message.id, "subject": message.subject, "body": message.body, "unread": message.readAt == nil,
                     "when": DateText.dateTime(message.createdAt, timeZone: .gmt, language: web.language) + " UTC"] as [String: Any]
                }])
            }
        }
        routes.post("/messages/:id/read") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let id = try context.parameters.id("id")
                _ = try await form(request, context, web)
                _ = try await work(web) { [system] in try system.clients.markRead(clientId: patient.id ?? 0, messageId: id) }
                return redirect("/messages", web)
            }
        }
        addStaffWebRoutes(to: routes)
        addProfileWebRoutes(to: routes)
    }

    /// `/clinics/map.json`, encoded once per version of the directory and its departments
    /// (550 KB for the default directory, asked by every map page).
    func mapData(_ language: Language) async throws -> Response {
        let version = try await work(language) { [system] in try system.clinics.mapVersion() }
        var body = mapCache.withLockedValue { cached in cached.flatMap { $0.version == version ? $0.body : nil } }
        if body == nil {
            body = try await work(language) { [system, mapCache] in
                let (version, clinics) = try system.clinics.mapClinics()
                let encoded = ByteBuffer(bytes: try Shapes.encoder(pretty: false).encode(MapJSON(clinics)))
                mapCache.withLockedValue { $0 = (version, encoded) }
                return encoded
            }
        }
        return Response(status: .ok, headers: [.contentType: HTTPMapping.jsonType], body: .init(byteBuffer: body ?? ByteBuffer()))
    }

    // MARK: Registration

    func register(_ request: Request, _ context: APIContext, _ web: WebRequest) async throws -> Response {
        let form = try await form(request, context, web)
        try checkAuthRate(context, web.language)
        var values: [String: Any] = [:]
        for key in ["login", "name", "surname", "street", "house", "city"] { values[key] = form[key] ?? "" }
        let city = form["cityChoice"] ?? form["city"] ?? ""
        // A city several places share: the patient chooses (the password is typed again).
        if form["cityChoice"] == nil, !city.isEmpty,
           let place = try? await work(web, { [system] in try system.geocoding.resolve(city) }), place.isAmbiguous {
            values["choices"] = place.choices.enumerated().map { index, choice in
                ["name": choice.name, "typed": choice.typed, "first": index == 0] as [String: Any]
            }
            values["cityQuestion"] = Strings.text(.whichPlace, web.language, [city])
            values["hasChoices"] = true
            return page("register", web, values)
        }
        let registration = RegistrationRequest(
            login: form["login"] ?? "", password: form["password"] ?? "", confirmPassword: form["passwordAgain"] ?? "",
            name: form["name"] ?? "", surname: form["surname"] ?? "", street: form["street"] ?? "", house: form["house"] ?? "",
            city: city, language: web.language, acceptedPrivacy: form["acceptPrivacy"] == "yes")
        do {
            _ = try await passwordWork(web.language) { [system] in try system.clients.registerUser(registration) }
            let login = registration.login, password = registration.password
            let (_, token) = try await passwordWork(web.language) { [system] in
                try system.clients.logIn(login: login, password: password, device: Self.webDevice)
            }
            return redirect("/", web, extraCookies: [cookie(Self.sessionCookie, token, maxAge: 30 * 86_400)])
        } catch let failure as APIFailure {
            values["error"] = failure.error.message(in: web.language)
            return page("register", web, values, status: HTTPMapping.status(failure.error.code))
        }
    }
}

enum WebRedirect: Error { case login }

extension API {
    /// The device a web session is opened on, as the patient's list of devices shows it.
    static let webDevice = Device(name: "Web browser", platform: "web", appVersion: "1")
}

/// The clinics of the map, compact: specialization keys once, then per clinic
/// `[id, name, lat, lon, flags, [specialization indexes]]` (flags: 1 pediatric, 2 hospital).
struct MapJSON: Encodable {
    let specializations: [String]
    let names: [String]
    let clinics: [[MapValue]]

    enum MapValue: Encodable {
        case int(Int64), double(Double), text(String), list([Int])
        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .int(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .text(let value): try container.encode(value)
            case .list(let value): try container.encode(value)
            }
        }
    }

    init(_ clinics: [MapClinic]) {
        let keys = Array(Set(clinics.flatMap(\.specializations))).sorted()
        let index = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        specializations = keys
        names = keys.map { Specialization.displayName($0, .en) }
        self.clinics = clinics.map { clinic in
            [.int(clinic.id), .text(clinic.name), .double(clinic.lat), .double(clinic.lon),
             .int((clinic.isPediatric ? 1 : 0) + (clinic.isHospital ? 2 : 0)), .list(clinic.specializations.compactMap { index[$0] })]
        }
    }
}
