import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The signed-in patient's own pages: the profile (details, password, export, deleting the
/// account, the devices signed in) and the inbox.
struct WebProfilePages {
    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    /// `group` is the pages' group (`WebPageMiddleware`); every page here needs the patient.
    func addRoutes(to group: RouterGroup<APIContext>) {
        let patient = group.group().add(middleware: WebPatientRequired())
        patient.get("/messages", use: messages)
        patient.post("/messages/:id/read", use: markRead)
        patient.post("/messages/read-all", use: markAllRead)
        patient.get("/profile") { request, context in
            let web = try context.webRequest()
            return try await profilePage(web, notice: request.query("saved") == "1" ? WebText.labels(web.language)["saved"] : nil)
        }
        patient.post("/profile", use: updateProfile)
        patient.post("/profile/password", use: changePassword)
        patient.get("/profile/export.json", use: export)
        patient.get("/profile/delete", use: deleteQuestion)
        patient.post("/profile/calendar", use: calendarAddress)
        patient.post("/profile/delete", use: deleteAccount)
        patient.post("/sessions/:id/end", use: endSession)
        patient.post("/sessions/others/end", use: endOtherSessions)
        patient.post("/profile/email", use: setEmail)
        patient.post("/profile/email/confirm", use: confirmEmail)
        patient.post("/profile/email/remove", use: removeEmail)
        patient.post("/profile/phone", use: setPhone)
        patient.post("/profile/phone/confirm", use: confirmPhone)
        patient.post("/profile/phone/texts", use: textChoices)
        patient.post("/profile/phone/remove", use: removePhone)
        patient.get("/profile/access-log", use: accessLog)
    }

    /// `/profile/access-log`: who at a clinic read or changed the patient's data, the latest first.
    @Sendable func accessLog(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let entries = try await dependencies.awaited(web.language) { [system] in try await system.clients.accessLog(clientId: patient.id ?? 0) }
        // The zone of the patient's home: GEOS's work (the boundaries loaded once), on the pool.
        let zone = try await dependencies.work(web) { [system] in system.clients.timeZone(of: patient) }
        let labels = WebText.labels(web.language)
        return dependencies.page("access-log", web, [
            "empty": entries.isEmpty,
            "entries": entries.map { entry -> [String: Any] in
                var item: [String: Any] = [
                    "at": DateText.dateTimeWithZone(entry.at, timeZone: zone, language: web.language), "action": entry.action,
                    "who": labels["role." + entry.role] ?? labels["role." + entry.actor] ?? entry.role,
                    "what": AuditAction.text(of: entry.action, in: web.language),
                ]
                if let appointment = entry.appointmentId { item["appointmentId"] = appointment }
                return item
            },
        ])
    }

    /// `/messages`: the inbox, newest first. A message about an appointment links to it (a
    /// clinic's answer to its conversation, with the answer's first lines); each unread one has
    /// its "Mark as read", and the page "Mark all as read".
    @Sendable func messages(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let entries = try await dependencies.awaited(web.language) { [system] in try await system.inbox(clientId: patient.id ?? 0) }
        // The zone of the patient's home: GEOS's work (the boundaries loaded once), on the pool.
        let zone = try await dependencies.work(web) { [system] in system.clients.timeZone(of: patient) }
        let unread = entries.filter { $0.message.readAt == nil }.count
        return dependencies.page("messages", web, [
            "hasUnread": unread > 0,
            "messages": entries.map { entry in
                let message = entry.message
                var item: [String: Any] = [
                    "id": message.id, "subject": message.subject, "body": message.body, "unread": message.readAt == nil,
                    "when": DateText.dateTimeWithZone(message.createdAt, timeZone: zone, language: web.language),
                    "quote": WebFormat.section(entry.quote),
                ]
                if let appointment = message.appointmentId {
                    item["link"] = "/appointments/\(appointment)" + (message.kind == .clinic ? "#thread" : "")
                    item["linkText"] = WebText.labels(web.language)[message.kind == .clinic ? "openConversation" : "openAppointment"] ?? ""
                }
                return item
            },
        ])
    }

    @Sendable func markAllRead(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        _ = try await dependencies.form(request, context, web)
        _ = try await dependencies.awaited(web.language) { [system] in try await system.clients.markAllRead(clientId: patient.id ?? 0) }
        return dependencies.redirect("/messages", web)
    }

    @Sendable func markRead(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        _ = try await dependencies.form(request, context, web)
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.clients.markRead(clientId: patient.id ?? 0, messageId: id)
        }
        return dependencies.redirect("/messages", web)
    }

    @Sendable func updateProfile(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let form = try await dependencies.form(request, context, web)
        func given(_ key: String) -> String? { form[key].flatMap { $0 == fieldValue(patient, key) ? nil : $0 } }
        // What was typed, shown again if the page comes back (a question, a refusal).
        var typed: [String: Any] = [:]
        for key in ["name", "surname", "street", "house", "city"] { typed[key] = form[key] ?? fieldValue(patient, key) }
        // A new city several places share is asked about, as at registration; "none of these"
        // (an empty choice) shows the city's field again, as typed, to type it more exactly.
        if form["cityChoice"] == "" {
            return try await profilePage(web, typed: typed.merging(["cityRetyped": true]) { $1 })
        }
        let city = form["cityChoice"] ?? given("city")
        if form["cityChoice"] == nil, let city, var question = await dependencies.cityQuestion(city, web) {
            question["passwordsCleared"] = false
            return try await profilePage(web, typed: typed.merging(question) { $1 })
        }
        let changes = ProfileChanges(name: given("name"), surname: given("surname"), street: given("street"),
                                     house: given("house"), city: city,
                                     language: form["language"].flatMap(Language.init(rawValue:)))
        do {
            _ = try await dependencies.awaited(web.language) { [system] in
                try await system.clients.updateProfile(clientId: patient.id ?? 0, changes)
            }
        } catch let failure as APIFailure {
            return try await profilePage(web, error: failure.message(in: web.language), typed: typed)
        }
        let chosen = changes.language.map { dependencies.cookie(ServerDependencies.languageCookie, $0.rawValue, maxAge: 31_536_000) }
        return dependencies.redirect("/profile?saved=1", web, extraCookies: chosen.map { [$0] } ?? [])
    }

    @Sendable func changePassword(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let form = try await dependencies.form(request, context, web)
        try dependencies.checkAuthRate(context, web.language)
        let old = form["oldPassword"] ?? "", new = form["newPassword"] ?? "", again = form["newPasswordAgain"] ?? "", token = web.sessionToken
        do {
            try await dependencies.awaited(web.language) { [system, dependencies] in
                try await system.clients.changePassword(clientId: patient.id ?? 0, old: old, new: new, confirmNew: again, keeping: token,
                                                        passwords: dependencies.passwordRunner)
            }
        } catch let failure as APIFailure {
            return try await profilePage(web, error: failure.message(in: web.language))
        }
        return try await profilePage(web, notice: Strings.text(.passwordChanged, web.language))
    }

    @Sendable func export(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let data = try await dependencies.awaited(web.language) { [system] in try await system.clients.export(clientId: patient.id ?? 0) }
        let body = try Shapes.encoder(pretty: true).encode(ExportJSON(data))
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8",
                                               .contentDisposition: "attachment; filename=\"my-clinic-data.json\""],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// `/profile/delete`: what deleting the account does, before it is done — the upcoming
    /// visits it cancels (named), what goes at once, what the clinic keeps and why, the export
    /// to take first — then the password and "I understand" (asked once more).
    @Sendable func deleteQuestion(_ request: Request, context: APIContext) async throws -> Response {
        try await deletePage(try context.webRequest(), try context.webPatient())
    }

    func deletePage(_ web: WebRequest, _ patient: Client, error: String? = nil, understoodError: Bool = false,
                    status: HTTPResponse.Status = .ok) async throws -> Response {
        let upcoming = try await dependencies.awaited(web.language) { [system] in
            try await system.appointments(ofPatient: patient.id ?? 0, scope: .upcoming)
        }
        var values: [String: Any] = [
            "upcoming": upcoming.map { item in
                ["id": item.appointment.id ?? 0, "clinic": item.clinic.name,
                 "department": Specialization.displayName(item.department.specialization, web.language),
                 "when": WebFormat.clinicTime(item.appointment.startsAt, item.clinic, web.language)] as [String: Any]
            },
            "hasUpcoming": !upcoming.isEmpty, "understoodError": understoodError,
        ]
        if let error { values["error"] = error }
        return dependencies.page("delete-account", web, values, status: status)
    }

    @Sendable func deleteAccount(_ request: Request, context: APIContext) async throws -> Response {
        var web = try context.webRequest()
        let patient = try context.webPatient()
        let form = try await dependencies.form(request, context, web)
        try dependencies.checkAuthRate(context, web.language)
        guard form["understood"] == "yes" else {
            return try await deletePage(web, patient, understoodError: true, status: .unprocessableContent)
        }
        let password = form["password"] ?? ""
        do {
            try await dependencies.awaited(web.language) { [system, dependencies] in
                try await system.clients.deleteAccount(clientId: patient.id ?? 0, password: password, passwords: dependencies.passwordRunner)
            }
        } catch let failure as APIFailure {
            return try await deletePage(web, patient, error: failure.message(in: web.language), status: failure.status)
        }
        web.patient = nil
        return dependencies.page("account-deleted", web, ["message": Strings.text(.accountDeleted, web.language, [patient.login])],
                                 extraCookies: [dependencies.cookie(ServerDependencies.sessionCookie, "", maxAge: 0)])
    }

    /// The private calendar address: made (or made anew: the old one stops working), or ended.
    @Sendable func calendarAddress(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let form = try await dependencies.form(request, context, web)
        let words = WebText.labels(web.language)
        switch form["action"] {
        case "stop":
            try await dependencies.awaited(web.language) { [system] in try await system.clients.revokeCalendarToken(clientId: patient.id ?? 0) }
            return try await profilePage(web, notice: words["calendarStopped"])
        case "renew":
            _ = try await dependencies.awaited(web.language) { [system] in
                try await system.clients.calendarToken(clientId: patient.id ?? 0, rotate: true)
            }
            return try await profilePage(web, notice: words["calendarRenewed"])
        default:
            _ = try await dependencies.awaited(web.language) { [system] in try await system.clients.calendarToken(clientId: patient.id ?? 0) }
            return try await profilePage(web, notice: words["calendarMade"])
        }
    }

    @Sendable func endSession(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let id = try context.parameters.id("id")
        _ = try await dependencies.form(request, context, web)
        try await dependencies.awaited(web.language) { [system] in try await system.clients.endSession(id, clientId: patient.id ?? 0) }
        return dependencies.redirect("/profile", web)
    }

    /// An e-mail address to confirm: the API's flow (`setEmail`: a six-digit code goes to it
    /// through the outbox; the address in use stays until the new one is confirmed).
    @Sendable func setEmail(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let form = try await dependencies.form(request, context, web)
        let address = form["address"] ?? ""
        do {
            let from = context.clientAddress
            let status = try await dependencies.codeSent(web.language) { [system] in
                try await system.clients.setEmail(clientId: patient.id ?? 0, address: address, from: from)
            }
            let words = WebText.labels(web.language)
            return try await profilePage(web, notice: "\(words["codeSent"] ?? "") \(status.pending ?? address)")
        } catch let failure as APIFailure {
            return try await profilePage(web, error: failure.message(in: web.language), typed: ["typedAddress": address])
        }
    }

    @Sendable func confirmEmail(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        try dependencies.checkAuthRate(context, web.language) // a guess at a code, as a log-in is (and as the API's)
        let form = try await dependencies.form(request, context, web)
        let code = (form["code"] ?? "").trimmingCharacters(in: .whitespaces)
        do {
            _ = try await dependencies.awaited(web.language) { [system] in
                try await system.clients.confirmEmail(clientId: patient.id ?? 0, code: code)
            }
            return try await profilePage(web, notice: WebText.labels(web.language)["emailConfirmed"])
        } catch let failure as APIFailure {
            return try await profilePage(web, error: failure.message(in: web.language))
        }
    }

    @Sendable func removeEmail(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        _ = try await dependencies.form(request, context, web)
        try await dependencies.awaited(web.language) { [system] in try await system.clients.removeEmail(clientId: patient.id ?? 0) }
        return try await profilePage(web, notice: WebText.labels(web.language)["emailRemoved"])
    }

    // MARK: The mobile number (issue 45)

    @Sendable func setPhone(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let form = try await dependencies.form(request, context, web)
        let number = form["phone"] ?? ""
        do {
            let from = context.clientAddress
            let status = try await dependencies.codeSent(web.language) { [system] in
                try await system.clients.setPhone(clientId: patient.id ?? 0, number: number, from: from)
            }
            let words = WebText.labels(web.language)
            return try await profilePage(web, notice: status.confirmed ? words["saved"] : "\(words["textCodeSent"] ?? "") \(status.number ?? number)")
        } catch let failure as APIFailure {
            return try await profilePage(web, error: failure.message(in: web.language), typed: ["typedPhone": number])
        }
    }

    @Sendable func confirmPhone(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        try dependencies.checkAuthRate(context, web.language) // a code guess, as a log-in is
        let form = try await dependencies.form(request, context, web)
        let code = (form["code"] ?? "").trimmingCharacters(in: .whitespaces)
        do {
            _ = try await dependencies.awaited(web.language) { [system] in
                try await system.clients.confirmPhone(clientId: patient.id ?? 0, code: code)
            }
            return try await profilePage(web, notice: WebText.labels(web.language)["phoneConfirmed"])
        } catch let failure as APIFailure {
            return try await profilePage(web, error: failure.message(in: web.language))
        }
    }

    /// What comes by text: two checkboxes (an unchecked box is not posted).
    @Sendable func textChoices(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        let form = try await dependencies.form(request, context, web)
        let reminders = form["textReminders"] != nil, offers = form["textOffers"] != nil
        do {
            _ = try await dependencies.awaited(web.language) { [system] in
                try await system.clients.updateProfile(clientId: patient.id ?? 0, ProfileChanges(), texts: (reminders, offers))
            }
            return try await profilePage(web, notice: WebText.labels(web.language)["saved"])
        } catch let failure as APIFailure {
            return try await profilePage(web, error: failure.message(in: web.language))
        }
    }

    @Sendable func removePhone(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        _ = try await dependencies.form(request, context, web)
        try await dependencies.awaited(web.language) { [system] in try await system.clients.removePhone(clientId: patient.id ?? 0) }
        return try await profilePage(web, notice: WebText.labels(web.language)["phoneRemoved"])
    }

    /// "Sign out everywhere else": every session of the patient but this browser's ends.
    @Sendable func endOtherSessions(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest(), patient = try context.webPatient()
        _ = try await dependencies.form(request, context, web)
        let token = web.sessionToken
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.clients.endOtherSessions(clientId: patient.id ?? 0, keeping: token)
        }
        return try await profilePage(web, notice: WebText.labels(web.language)["signedOutOthers"])
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

    func profilePage(_ web: WebRequest, error: String? = nil, notice: String? = nil, typed: [String: Any] = [:]) async throws
        -> Response {
        guard let patient = web.patient else { throw WebRedirect.login }
        let token = web.sessionToken
        // Awaited (issue 56: `ProfileReadsStore` beside the account's reads); only the zone of
        // the patient's home, GEOS's work, runs on the pool.
        let (client, sessions, phone, feed, texts) = try await dependencies.awaited(web.language) { [system] in
            let id = patient.id ?? 0
            return (try await system.clients.getUserById(id), try await system.clients.signedInSessions(clientId: id, current: token),
                    try await system.clients.phone(clientId: id), try await system.clients.existingCalendarToken(clientId: id),
                    try await system.clients.textsAvailable())
        }
        let zone = try await dependencies.work(web) { [system] in system.clients.timeZone(of: client) }
        var values: [String: Any] = [
            "login": client.login, "name": client.name, "surname": client.surname, "street": client.street,
            "house": client.house, "city": client.city, "email": WebFormat.section(client.email),
            "pendingEmail": WebFormat.section(client.pendingEmail),
            "languages": [["value": "en", "label": "English", "selected": client.language == .en],
                          ["value": "ru", "label": "Русский", "selected": client.language == .ru]],
            "sessions": sessions.map { session in
                // A browser's name is its own ("Chrome · Android"); an app's is what it said, with
                // its platform; the unknown browser is said in the page's language.
                ["id": session.id, "device": session.device.map { device in
                    device.name == Device.unknownBrowser ? WebText.labels(web.language)["webBrowser"] ?? device.name
                        : device.platform == "web" ? device.name : "\(device.name) (\(device.platform))"
                } ?? "—",
                 "firstUsed": DateText.dateTimeWithZone(session.createdAt, timeZone: zone, language: web.language),
                 "lastUsed": DateText.dateTimeWithZone(session.lastUsedAt, timeZone: zone, language: web.language),
                 "current": session.isCurrent] as [String: Any]
            },
            "others": sessions.contains { !$0.isCurrent },
            "phone": WebFormat.section(phone.confirmed ? phone.number.map(PhoneNumber.display) : nil),
            "pendingPhone": WebFormat.section(phone.confirmed ? nil : phone.number.map(PhoneNumber.display)),
            "hasPhone": phone.number != nil, "textReminders": phone.textReminders, "textOffers": phone.textOffers,
            "textsStopped": phone.stopped,
            // No gateway anywhere: the page says texts are not sent, and offers no number (issue 55).
            "textsAvailable": texts,
        ]
        if let feed {
            // The same address as `GET /v1/me/calendar-token`; `webcal://` opens the calendar app's
            // "subscribe" (iOS, macOS, Outlook; Google Calendar takes the https address "from URL").
            let url = CalendarTokenJSON(token: feed, base: web.publicBase).url
            values["feedURL"] = url
            values["webcalURL"] = url.replacingOccurrences(of: #"^https?://"#, with: "webcal://", options: .regularExpression)
        }
        values.merge(typed) { $1 }
        if let error { values["error"] = error }
        if let notice { values["notice"] = notice }
        return dependencies.page("profile", web, values, status: error == nil ? .ok : .badRequest)
    }
}
