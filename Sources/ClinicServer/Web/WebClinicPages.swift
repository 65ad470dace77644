import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// Finding a clinic: the nearest (a list and a map), a clinic's page, the booking page (its
/// steps are GET forms), and the earliest free slot for a specialization (`/find`).
struct WebClinicPages {
    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    /// `group` is the pages' group (`WebPageMiddleware`). The booking page needs a patient, but
    /// says a clinic that does not exist first, so it checks for itself.
    func addRoutes(to group: RouterGroup<APIContext>) {
        group.get("/clinics/nearest", use: nearest)
        group.get("/clinics/:id", use: clinic)
        group.get("/clinics/:id/book", use: booking)
        group.get("/clinics/:id/book/summary", use: summary)
        group.get("/find", use: find)
    }

    /// `/clinics/nearest?address=…` (or `lat`/`lon`, or `me=1`): the ten nearest as a list
    /// and a map; the nearest is highlighted on both.
    @Sendable func nearest(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        let address = request.query("address")?.trimmingCharacters(in: .whitespaces)
        let me = request.query("me") == "1"
        var values: [String: Any] = ["address": address ?? "", "withMap": true, "pageTitle": WebText.labels(web.language)["nearest"] ?? ""]
        let pediatric = request.query("pediatric") == "1", hospital = request.query("hospital") == "1"
        values["pediatric"] = pediatric
        values["hospital"] = hospital
        let choice: PlaceChoice
        if me {
            choice = .home
        } else if request.query("lat") != nil || (address?.isEmpty == false) {
            choice = try PlaceChoice.choose(latitude: request.query("lat"), longitude: request.query("lon"), address: address, home: false)
        } else {
            return dependencies.page("nearest", web, values)
        }
        let patient = web.patient
        if me && patient == nil { throw WebRedirect.login }
        // Hospitals a patient walks in to, unless every kind is asked for (`all=1`); the page says so.
        let everyday = request.query("all") != "1"
        let query = { var query = NearestQuery(limit: 10, pediatricOnly: pediatric, hospitalOnly: hospital)
                      query.everydayOnly = everyday
                      return query }()
        let owner: @Sendable () throws -> Client = {
            guard let patient else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            return patient
        }
        let search: FromPlace<[NearbyClinic]>
        do {
            search = try await dependencies.awaited(web.language) { [system] in try await system.nearestClinics(from: choice, query, patient: owner) }
        } catch {
            guard let page = placeNotFound(error, "nearest", web, values) else { throw error }
            return page
        }
        let point = search.point, found = search.found
        // A name several places share ("Paris"): the one searched from is named, and the others
        // are links to search from them instead (issue 46; the CLI lists them too).
        // The place searched from is always named, as the CLI's "Found: …" does, and a street
        // that was not found is said (issue 55).
        if let geocoded = search.geocoded {
            values["placeShown"] = geocoded.placeName ?? geocoded.query
            values["streetNotFound"] = geocoded.streetNotFound
        }
        if let geocoded = search.geocoded, geocoded.isAmbiguous {
            values["ambiguous"] = true
            values["otherPlaces"] = geocoded.alternatives.map { other -> [String: Any] in
                var query = "/clinics/nearest?address=" + URLEncodedForm.encode(other.hint ?? other.name)
                if pediatric { query += "&pediatric=1" }
                if hospital { query += "&hospital=1" }
                if !everyday { query += "&all=1" }
                return ["name": other.name, "href": query]
            }
        }
        values["lat"] = String(point.latitude)
        values["lon"] = String(point.longitude)
        values["searched"] = true
        values["everydayOnly"] = everyday
        values["everyKindHref"] = Self.withParameter(request, "all", everyday ? "1" : nil)
        values["nearestId"] = found.first.map { String($0.clinic.id ?? 0) } ?? ""
        values["clinics"] = found.enumerated().map { index, item in
            ["id": item.clinic.id ?? 0, "name": item.clinic.name, "address": item.clinic.address, "city": item.clinic.city,
             "state": item.clinic.state, "distance": DistanceText.text(item.distance, web.language),
             "metres": String(Int(item.distance.rounded())), "nearest": index == 0,
             "lat": String(item.clinic.lat), "lon": String(item.clinic.lon),
             "kind": WebFormat.section(item.clinic.kind?.text(web.language))] as [String: Any]
        }
        return dependencies.page("nearest", web, values)
    }

    /// This page's own address with one parameter set to `value` (removed when nil), the others kept.
    static func withParameter(_ request: Request, _ name: String, _ value: String?) -> String {
        var items = URLComponents(string: "?" + (request.uri.query ?? ""))?.queryItems ?? []
        items.removeAll { $0.name == name }
        if let value { items.append(URLQueryItem(name: name, value: value)) }
        var components = URLComponents()
        components.path = request.uri.path
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? request.uri.path
    }

    /// A typed place that cannot be found (or cannot be an address): said on the search's own
    /// page, with what to try, the text kept in its field to correct; an error page would lose
    /// it. Nil for any other failure.
    func placeNotFound(_ error: any Error, _ page: String, _ web: WebRequest, _ values: [String: Any]) -> Response? {
        guard let failure = error as? APIFailure, let library = failure.libraryError,
              library.code == .geocodeFailed || library.key == .addressInvalid else { return nil }
        var values = values
        values["placeError"] = failure.message(in: web.language)
        return dependencies.page(page, web, values, status: failure.status)
    }

    /// `/clinics/{id}`: address, phone, local time and zone, distance from home, departments and doctors.
    @Sendable func clinic(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        let id = try context.parameters.id("id")
        let patient = web.patient
        let (clinic, departments) = try await dependencies.awaited(web.language) { [system] in try await system.clinicWithDepartments(id) }
        var values: [String: Any] = [
            "clinicId": id, "name": clinic.name, "address": clinic.address, "city": clinic.city, "state": clinic.state, "zip": clinic.zip,
            // Shown only when known (mustache shows a section even for an empty text).
            "phone": WebFormat.section(clinic.phone.trimmingCharacters(in: .whitespaces)),
            "phoneHref": "tel:" + clinic.phone.filter { $0.isNumber || $0 == "+" },
            "website": WebFormat.section(Self.webAddress(clinic.website)),
            "timeZone": clinic.timeZone,
            "localTime": WebFormat.clinicTime(Date(), clinic, web.language),
            "departments": departments.map { department, doctors in
                ["id": department.id ?? 0, "name": Specialization.displayName(department.specialization, web.language),
                 "doctors": doctors.map(\.name).joined(separator: ", ")] as [String: Any]
            },
        ]
        if let home = patient?.coordinate, let point = clinic.coordinate {
            values["distance"] = DistanceText.text(Geodesy.distance(home, point), web.language)
        }
        return dependencies.page("clinic", web, values)
    }

    /// What a day in the booking form was shown for: its department, visit type and doctor.
    static func dayChoiceKey(_ departmentId: Int64?, _ visitTypeId: Int64?, _ doctorId: Int64?) -> String {
        [departmentId, visitTypeId, doctorId].map { $0.map(String.init) ?? "" }.joined(separator: "-")
    }

    /// `/clinics/{id}/book`: department, visit type (its length and price), doctor ("any" or
    /// one), a day (those without a free time marked), then the free times of that day — grouped
    /// by doctor when "any" — each a link to the summary. Every step is a GET form or a link,
    /// so it works without JavaScript, and a log-in on the way comes back here.
    @Sendable func booking(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        let id = try context.parameters.id("id")
        _ = try context.webPatient()
        let departmentId = request.query("department").flatMap(Int64.init)
        let visitTypeId = request.query("visitType").flatMap { $0.isEmpty ? nil : Int64($0) }
        let doctorId = request.query("doctor").flatMap { $0.isEmpty ? nil : Int64($0) }
        // The form sends the day shown with the choices it was shown for (`dayFor`). A day shown
        // for another department, visit type or doctor was not chosen for these: a day with a
        // free 20-minute time may have none of 40 minutes (late in the afternoon, within the
        // lead time), so it is chosen again. A day asked for on its own (a link) is kept.
        let shownFor = Self.dayChoiceKey(departmentId, visitTypeId, doctorId)
        let carried = request.query("dayFor").map { $0 != shownFor } ?? false
        let chosenDay = carried ? nil : try request.query("day").flatMap { $0.isEmpty ? nil : try TimeInput.parseDay($0) }
        // No day chosen yet: the first day with a free time is (the picker marks the others).
        let choices = try await dependencies.awaited(web.language) { [system, runner = dependencies.poolRunner] in
            try await system.bookingChoices(clinicId: id, departmentId: departmentId, visitTypeId: visitTypeId, doctorId: doctorId,
                                            day: chosenDay, firstFreeDay: true, computing: runner)
        }
        let clinic = choices.clinic, day = choices.chosenDay
        let today = LocalDateTime.of(Date(), in: clinic.zone)
        let days = (0..<BookingChoices.days).map { today.adding(days: $0) }
        var values: [String: Any] = [
            "id": id, "name": clinic.name, "timeZone": clinic.timeZone,
            "clinicAddress": "\(clinic.address), \(clinic.city), \(clinic.state) \(clinic.zip)",
            "departments": choices.departments.map { ["id": $0.id ?? 0, "name": Specialization.displayName($0.specialization, web.language),
                                                      "selected": $0.id == departmentId] as [String: Any] },
            "days": days.map { date -> [String: Any] in
                ["value": date.dayText, "selected": date.dayText == day?.dayText, "free": choices.freeDays.contains(date.dayText),
                 "label": date.at(minuteOfDay: 720).firstInstant(in: clinic.zone)
                    .map { DateText.day($0, timeZone: clinic.zone, language: web.language) } ?? date.dayText]
            },
        ]
        if let departmentId {
            values["department"] = departmentId
            values["dayFor"] = shownFor
            values["visitTypes"] = choices.visitTypes.map { type in
                ["id": type.id, "name": Self.visitTypeLabel(type, web.language), "selected": type.id == visitTypeId] as [String: Any]
            }
            // A department without visit types has no list to choose from (it held only "—").
            values["hasVisitTypes"] = !choices.visitTypes.isEmpty
            values["doctors"] = choices.doctors.map { ["id": $0.id ?? 0, "name": $0.name, "selected": $0.id == doctorId] as [String: Any] }
            // No free time in the horizon, or none on the day shown: the waitlist tells when one frees up.
            if choices.freeDays.isEmpty || (day != nil && choices.freeSlots.isEmpty) { values["waitDepartment"] = departmentId }
        }
        if let day, let departmentId {
            values["day"] = day.dayText
            let slots = choices.freeSlots
            // With "any doctor", the times are grouped by doctor; with one, they are that doctor's.
            var order: [Int64] = [], byDoctor: [Int64: [Slot]] = [:]
            for slot in slots {
                if byDoctor[slot.doctorId] == nil { order.append(slot.doctorId) }
                byDoctor[slot.doctorId, default: []].append(slot)
            }
            values["hasSlots"] = !slots.isEmpty
            values["groups"] = order.map { doctor -> [String: Any] in
                let times = byDoctor[doctor] ?? []
                return ["doctor": WebFormat.section(doctorId == nil ? times.first?.doctorName : nil),
                        "times": times.map { slot -> [String: Any] in
                            var query = "department=\(departmentId)&doctor=\(slot.doctorId)&start=" + DateText.iso8601(slot.start)
                            if let visitTypeId { query += "&visitType=\(visitTypeId)" }
                            return ["time": DateText.time(slot.start, timeZone: clinic.zone, language: web.language),
                                    "label": "\(DateText.time(slot.start, timeZone: clinic.zone, language: web.language)) · \(slot.doctorName)",
                                    "href": "/clinics/\(id)/book/summary?" + query]
                        }]
            }
            values["zoneName"] = DateText.zoneName(slots.first?.start ?? Date(), timeZone: clinic.zone, language: web.language)
        }
        return dependencies.page("book", web, values)
    }

    /// `/clinics/{id}/book/summary?department&doctor&start[&visitType]`: what is about to be
    /// booked — the clinic and its address, the time in the clinic's zone, the department,
    /// the visit type with its length and price, the doctor — and the reason for the visit;
    /// Confirm posts it (`POST /appointments`). A time taken meanwhile says so.
    @Sendable func summary(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        let id = try context.parameters.id("id")
        _ = try context.webPatient()
        guard let departmentId = request.query("department").flatMap(Int64.init) else { throw ServerError.invalid(.fieldRequired, "department") }
        guard let doctorId = request.query("doctor").flatMap(Int64.init) else { throw ServerError.invalid(.fieldRequired, "doctor") }
        let visitTypeId = request.query("visitType").flatMap { $0.isEmpty ? nil : Int64($0) }
        let start = try TimeInput.resolve(TimeInput.parse(request.query("start") ?? ""), in: .gmt)
        let clinicZone = try await dependencies.awaited(web.language) { [system] in try await system.clinics.clinicWithDepartments(id).clinic.zone }
        let day = LocalDateTime.of(start, in: clinicZone).at(minuteOfDay: 0)
        let choices = try await dependencies.awaited(web.language) { [system, runner = dependencies.poolRunner] in
            try await system.bookingChoices(clinicId: id, departmentId: departmentId, visitTypeId: visitTypeId, doctorId: doctorId,
                                            day: day, computing: runner)
        }
        let clinic = choices.clinic, zone = clinic.zone
        var back = "/clinics/\(id)/book?department=\(departmentId)&doctor=\(doctorId)&day=\(day.dayText)"
        if let visitTypeId { back += "&visitType=\(visitTypeId)" }
        guard let slot = choices.freeSlots.first(where: { $0.start == start }) else {
            return dependencies.page("error", web, ["message": WebText.labels(web.language)["slotGone"] ?? "", "backHref": back],
                                     status: .conflict)
        }
        let visit = choices.visitTypes.first { $0.id == visitTypeId }
        return dependencies.page("book-summary", web, [
            "id": id, "name": clinic.name, "clinicAddress": "\(clinic.address), \(clinic.city), \(clinic.state) \(clinic.zip)",
            "when": DateText.dateTime(start, timeZone: zone, language: web.language),
            "zoneName": DateText.zoneName(start, timeZone: zone, language: web.language), "timeZone": clinic.timeZone,
            "departmentName": choices.departments.first { $0.id == departmentId }
                .map { Specialization.displayName($0.specialization, web.language) } ?? "",
            "visitTypeName": WebFormat.section(visit.map { web.language == .ru ? $0.nameRu : $0.nameEn }),
            "minutes": visit?.durationMinutes ?? Int(slot.end.timeIntervalSince(slot.start) / 60),
            "price": WebFormat.section(visit?.priceCents.map { PriceText.text(cents: $0, web.language) }),
            "doctor": slot.doctorName, "department": departmentId, "doctorId": doctorId,
            "visitType": visitTypeId.map(String.init) ?? "", "start": DateText.iso8601(start), "backHref": back,
        ])
    }

    /// A clinic's website as a link: only an http(s) address (a directory's text may be anything).
    static func webAddress(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "<" }) else { return nil }
        let lower = trimmed.lowercased()
        if lower.hasPrefix("https://") || lower.hasPrefix("http://") { return trimmed }
        return trimmed.contains(".") && !trimmed.contains(":") ? "https://" + trimmed : nil
    }

    /// "First visit · 20 min · $45.00": a visit type as a choice names its length and price.
    static func visitTypeLabel(_ type: VisitType, _ language: Language) -> String {
        let words = WebText.labels(language)
        return [language == .ru ? type.nameRu : type.nameEn, "\(type.durationMinutes) \(words["minutes"] ?? "min")",
                type.priceCents.map { PriceText.text(cents: $0, language) }].compactMap { $0 }.joined(separator: " · ")
    }

    /// `/find`: the nearest clinics with a free slot for a specialization, from the patient's
    /// address or a typed one; each result books in one click.
    @Sendable func find(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        let wanted = request.query("specialization") ?? ""
        let address = request.query("address")?.trimmingCharacters(in: .whitespaces) ?? ""
        var values: [String: Any] = [
            "address": address,
            "specializations": WebFormat.specializations(web.language, selected: wanted),
        ]
        guard !wanted.isEmpty else { return dependencies.page("find", web, values) }
        let patient = web.patient
        let choice: PlaceChoice = address.isEmpty ? .home : try PlaceChoice.choose(latitude: nil, longitude: nil, address: address, home: false)
        if choice == .home && patient == nil { throw WebRedirect.login }
        let owner: @Sendable () throws -> Client = {
            guard let patient else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            return patient
        }
        // The address awaited, the search in the searches' own gate.
        let place: LocatedPlace
        do {
            place = try await dependencies.awaited(web.language) { [system] in try await system.locate(choice, patient: owner) }
        } catch {
            guard let page = placeNotFound(error, "find", web, values) else { throw error }
            return page
        }
        let search = try await dependencies.searches.run {
            try await dependencies.awaited(web.language) { [system, runner = dependencies.poolRunner] in
                try await system.findFreeSlots(at: place, specialization: wanted, limit: 5, computing: runner).found
            }
        }
        let found = search.slots
        if !search.complete {
            values["incomplete"] = Strings.text(.findIncomplete, web.language, [String(search.clinicsExamined)])
        }
        values["searched"] = true
        values["results"] = found.map { item in
            ["clinic": item.clinic.clinic.name, "clinicId": item.clinic.clinic.id ?? 0,
             "distance": DistanceText.text(item.clinic.distance, web.language),
             "when": WebFormat.clinicTime(item.slot.start, item.clinic.clinic, web.language), "doctor": item.slot.doctorName, "doctorId": item.slot.doctorId,
             "department": item.departmentId, "start": DateText.iso8601(item.slot.start)] as [String: Any]
        }
        return dependencies.page("find", web, values)
    }
}

/// How the pages write clinic times (distances: `DistanceText`).
enum WebFormat {
    /// The specializations as a select's options, in the reader's language, `selected` chosen.
    static func specializations(_ language: Language, selected: String) -> [[String: Any]] {
        Specialization.all.map { item in
            ["key": item.key, "name": language == .ru ? item.russian : item.english, "selected": item.key == selected]
        }
    }

    /// A value a template shows in a section (`{{#key}}…{{/key}}`): none or an empty text is
    /// `false`, which hides it (mustache shows a section for any text, even an empty one).
    static func section(_ text: String?) -> Any {
        guard let text, !text.isEmpty else { return false }
        return text
    }

    /// A time in the clinic's zone, and the zone's name with the instant and the clinic's
    /// offset then: `zones.js` hides the name where the browser's clock shows the same time
    /// (without JavaScript the name always shows).
    static func clinicTime(_ date: Date, _ clinic: Clinic, _ language: Language) -> [String: String] {
        ["time": DateText.dateTime(date, timeZone: clinic.zone, language: language),
         "zone": DateText.zoneName(date, timeZone: clinic.zone, language: language),
         "at": DateText.iso8601(date), "offset": String(clinic.zone.secondsFromGMT(for: date) / 60)]
    }
}
