import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

// The earliest-free-slot search and the patient's profile pages.

extension API {
    func addProfileWebRoutes(to routes: RouteTable) {
        routes.get("/find") { request, context in
            await webPage(request, context) { web in try await findPage(request, web) }
        }
        routes.get("/profile") { request, context in
            await webPage(request, context) { web in try await profilePage(web) }
        }
        routes.post("/profile") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let form = try await form(request, context, web)
                func given(_ key: String) -> String? { form[key].flatMap { $0 == fieldValue(patient, key) ? nil : $0 } }
                let changes = ProfileChanges(name: given("name"), surname: given("surname"), street: given("street"),
                                             house: given("house"), city: given("city"),
                                             language: form["language"].flatMap(Language.init(rawValue:)))
                do {
                    _ = try await work(web) { [system] in try system.clients.updateProfile(clientId: patient.id ?? 0, changes) }
                } catch let failure as APIFailure {
                    return try await profilePage(web, error: failure.error.message(in: web.language))
                }
                let chosen = changes.language.map { cookie(Self.languageCookie, $0.rawValue, maxAge: 31_536_000) }
                return redirect("/profile", web, extraCookies: chosen.map { [$0] } ?? [])
            }
        }
        routes.post("/profile/password") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let form = try await form(request, context, web)
                try checkAuthRate(context, web.language)
                let old = form["oldPassword"] ?? "", new = form["newPassword"] ?? "", token = web.sessionToken
                do {
                    try await passwordWork(web.language) { [system] in
                        try system.clients.changePassword(clientId: patient.id ?? 0, old: old, new: new, keeping: token)
                    }
                } catch let failure as APIFailure {
                    return try await profilePage(web, error: failure.error.message(in: web.language))
                }
                return try await profilePage(web, notice: Strings.text(.passwordChanged, web.language))
            }
        }
        routes.get("/profile/export.json") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let data = try await work(web) { [system] in try system.clients.export(clientId: patient.id ?? 0) }
                let body = try Shapes.encoder(pretty: true).encode(ExportJSON(data))
                return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8",
                                                       .contentDisposition: "attachment; filename=\"my-clinic-data.json\""],
                                body: .init(byteBuffer: ByteBuffer(bytes: body)))
            }
        }
        routes.post("/profile/delete") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let form = try await form(request, context, web)
                try checkAuthRate(context, web.language)
                let password = form["password"] ?? ""
                do {
                    try await passwordWork(web.language) { [system] in
                        try system.clients.deleteAccount(clientId: patient.id ?? 0, password: password)
                    }
                } catch let failure as APIFailure {
                    return try await profilePage(web, error: failure.error.message(in: web.language))
                }
                var web = web
                web.patient = nil
                return page("error", web, ["message": Strings.text(.accountDeleted, web.language, [patient.login])],
                            extraCookies: [cookie(Self.sessionCookie, "", maxAge: 0)])
            }
        }
        routes.post("/sessions/:id/end") { request, context in
            await webPage(request, context) { web in
                let patient = try requirePatient(web)
                let id = try context.parameters.id("id")
                _ = try await form(request, context, web)
                try await work(web) { [system] in try system.clients.endSession(id, clientId: patient.id ?? 0) }
                return redirect("/profile", web)
            }
        }
    }

    func fieldValue(_ client: Client, _ key: String) -> String {
        switch key {
        case "name": client.name
        case "surname": client.surname
        case "street": client.street
        case "house": client.house
        case "city": client.city
        default: ""
        }
    }

    func profilePage(_ web: WebRequest, error: String? = nil, notice: String? = nil) async throws -> Response {
        let patient = try requirePatient(web)
        let token = web.sessionToken
        let (client, sessions) = try await work(web) { [system] in
            (try system.clients.getUserById(patient.id ?? 0),
             try system.clients.signedInSessions(clientId: patient.id ?? 0, current: token))
        }
        var values: [String: Any] = [
            "login": client.login, "name": client.name, "surname": client.surname, "street": client.street,
            "house": client.house, "city": client.city, "email": client.email ?? "",
            "languages": [["value": "en", "label": "English", "selected": client.language == .en],
                          ["value": "ru", "label": "Русский", "selected": client.language == .ru]],
            "sessions": sessions.map { session in
                ["id": session.id, "device": session.device.map { "\($0.name) (\($0.platform))" } ?? "—",
                 "lastUsed": DateText.dateTime(session.lastUsedAt, timeZone: .gmt, language: web.language) + " UTC",
                 "current": session.isCurrent] as [String: Any]
            },
        ]
        if let error { values["error"] = error }
        if let notice { values["notice"] = notice }
        return page("profile", web, values, status: error == nil ? .ok : .badRequest)
    }

    /// `/find`: the nearest clinics with a free slot for a specialization, from the patient's
    /// address or a typed one; each result books in one click.
    func findPage(_ request: Request, _ web: WebRequest) async throws -> Response {
        let wanted = request.query("specialization") ?? ""
        let address = request.query("address")?.trimmingCharacters(in: .whitespaces) ?? ""
        var values: [String: Any] = [
            "address": address,
            "specializations": Specialization.all.map { item in
                ["key": item.key, "name": web.language == .ru ? item.russian : item.english, "selected": item.key == wanted] as [String: Any]
            },
        ]
        guard !wanted.isEmpty else { return page("find", web, values) }
        let patient = web.patient
        let choice: PlaceChoice = address.isEmpty ? .home : try PlaceChoice.choose(latitude: nil, longitude: nil, address: address, home: false)
        if choice == .home && patient == nil { throw WebRedirect.login }
        let search = try await searches.run {
            try await work(web) { [system] in
                let (point, _) = try choice.resolve(system.geocoding) {
                    guard let patient else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
                    return patient
                }
                return try system.appointments.searchFreeSlots(specialization: wanted, near: point, limit: 5, clinics: system.clinics)
            }
        }
        let found = search.slots
        if !search.complete {
            values["incomplete"] = Strings.text(.findIncomplete, web.language, [String(search.clinicsExamined)])
        }
        values["searched"] = true
        values["results"] = found.map { item in
            ["clinic": item.clinic.clinic.name, "clinicId": item.clinic.clinic.id ?? 0,
             "distance": distanceText(item.clinic.distance, web.language),
             "when": clinicTime(item.slot.start, item.clinic.clinic, web.language), "doctor": item.slot.doctorName,
             "department": item.departmentId, "start": DateText.iso8601(item.slot.start)] as [String: Any]
        }
        return page("find", web, values)
    }
}
