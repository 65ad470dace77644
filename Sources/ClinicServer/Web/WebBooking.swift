import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

// The pages of finding a clinic, booking, and the patient's appointments.

extension API {
    func distanceText(_ metres: Double, _ language: Language) -> String {
        metres < 1000 ? "\(Int(metres.rounded())) m" : String(format: "%.1f %@", metres / 1000, language == .ru ? "км" : "km")
    }

    /// A time in the clinic's zone, and the zone's name with the instant and the clinic's
    /// offset then: `zones.js` hides the name where the browser's clock shows the same time
    /// (without JavaScript the name always shows).
    func clinicTime(_ date: Date, _ clinic: Clinic, _ language: Language) -> [String: String] {
        ["time": DateText.dateTime(date, timeZone: clinic.zone, language: language),
         "zone": DateText.zoneName(date, timeZone: clinic.zone, language: language),
         "at": DateText.iso8601(date), "offset": String(clinic.zone.secondsFromGMT(for: date) / 60)]
    }

    /// `/clinics/nearest?address=…` (or `lat`/`lon`, or `me=1`): the ten nearest as a list
    /// and a map; the nearest is highlighted on both.
    func nearestPage(_ request: Request, _ web: WebRequest) async throws -> Response {
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
            return page("nearest", web, values)
        }
        let patient = web.patient
        if me && patient == nil { throw WebRedirect.login }
        let query = NearestQuery(limit: 10, pediatricOnly: pediatric, hospitalOnly: hospital)
        let (point, found) = try await work(web) { [system] in
            let (point, geocoded) = try choice.resolve(system.geocoding) {
                guard let patient else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
                return patient
            }
            let found = try system.clinics.nearest(to: point, query)
            if let geocoded { try system.geocoding.remember(geocoded) }
            return (point, found)
        }
        values["lat"] = String(point.latitude)
        values["lon"] = String(point.longitude)
        values["searched"] = true
        values["nearestId"] = found.first.map { String($0.clinic.id ?? 0) } ?? ""
        values["clinics"] = found.enumerated().map { index, item in
            ["id": item.clinic.id ?? 0, "name": item.clinic.name, "address": item.clinic.address, "city": item.clinic.city,
             "state": item.clinic.state, "distance": distanceText(item.distance, web.language),
             "metres": String(Int(item.distance.rounded())), "nearest": index == 0,
             "lat": String(item.clinic.lat), "lon": String(item.clinic.lon)] as [String: Any]
        }
        return page("nearest", web, values)
    }

    /// `/clinics/{id}`: address, phone, local time and zone, distance from home, departments and doctors.
    func clinicPage(_ id: Int64, _ web: WebRequest) async throws -> Response {
        let patient = web.patient
        let (clinic, departments) = try await work(web) { [system] in
            let clinic = try system.clinics.getClinicById(id)
            let departments = try system.departments.getDepartmentsByClinicId(id).map { department in
                (department, try system.departments.getDoctorsByDepartmentId(department.id ?? 0))
            }
            return (clinic, departments)
        }
        var values: [String: Any] = [
            "clinicId": id, "name": clinic.name, "address": clinic.address, "city": clinic.city, "state": clinic.state, "zip": clinic.zip,
            "phone": clinic.phone, "timeZone": clinic.timeZone,
            "localTime": clinicTime(Date(), clinic, web.language),
            "departments": departments.map { department, doctors in
                ["id": department.id ?? 0, "name": Specialization.displayName(department.specialization, web.language),
                 "doctors": doctors.map(\.name).joined(separator: ", ")] as [String: Any]
            },
        ]
        if let home = patient?.coordinate, let point = clinic.coordinate {
            values["distance"] = distanceText(Geodesy.distance(home, point), web.language)
        }
        return page("clinic", web, values)
    }

    /// `/clinics/{id}/book`: department, visit type, day, then the free times of that day,
    /// each a confirm button; every step is a GET form, so it works without JavaScript.
    func bookingPage(_ id: Int64, _ request: Request, _ web: WebRequest) async throws -> Response {
        _ = try requirePatient(web)
        let departmentId = request.query("department").flatMap(Int64.init)
        let visitTypeId = request.query("visitType").flatMap { $0.isEmpty ? nil : Int64($0) }
        let day = try request.query("day").flatMap { $0.isEmpty ? nil : try TimeInput.parseDay($0) }
        let (clinic, departments, visitTypes, slots) = try await work(web) { [system] in
            let clinic = try system.clinics.getClinicById(id)
            let departments = try system.departments.getDepartmentsByClinicId(id)
            var visitTypes: [VisitType] = [], slots: [Slot] = []
            if let departmentId {
                guard departments.contains(where: { $0.id == departmentId }) else {
                    throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
                }
                visitTypes = try system.departments.visitTypes(departmentId: departmentId)
                if let day {
                    slots = try system.appointments.slots(departmentId: departmentId, from: day, days: 1, visitTypeId: visitTypeId)
                        .filter(\.isAvailable)
                }
            }
            return (clinic, departments, visitTypes, slots)
        }
        let today = LocalDateTime.of(Date(), in: clinic.zone)
        var values: [String: Any] = [
            "id": id, "name": clinic.name, "timeZone": clinic.timeZone,
            "departments": departments.map { ["id": $0.id ?? 0, "name": Specialization.displayName($0.specialization, web.language),
                                              "selected": $0.id == departmentId] as [String: Any] },
            "days": (0..<14).map { offset -> [String: Any] in
                let date = today.adding(days: offset)
                return ["value": date.dayText, "selected": date.dayText == day?.dayText,
                        "label": date.at(minuteOfDay: 720).firstInstant(in: clinic.zone)
                            .map { DateText.day($0, timeZone: clinic.zone, language: web.language) } ?? date.dayText]
            },
        ]
        if let departmentId {
            values["department"] = departmentId
            values["visitTypes"] = visitTypes.map { type in
                ["id": type.id, "name": (web.language == .ru ? type.nameRu : type.nameEn) + " · \(type.durationMinutes) min",
                 "selected": type.id == visitTypeId] as [String: Any]
            }
        }
        if let day {
            values["day"] = day.dayText
            values["visitType"] = visitTypeId.map(String.init) ?? ""
            values["slots"] = slots.map { slot in
                ["start": DateText.iso8601(slot.start), "time": DateText.time(slot.start, timeZone: clinic.zone, language: web.language),
                 "doctor": slot.doctorName] as [String: Any]
            }
            values["zoneName"] = DateText.zoneName(slots.first?.start ?? Date(), timeZone: clinic.zone, language: web.language)
        }
        return page("book", web, values)
    }

    /// `/appointments`: upcoming, then past and cancelled.
    func appointmentsPage(_ web: WebRequest) async throws -> Response {
        let patient = try requirePatient(web)
        let (list, clinics) = try await work(web) { [system] in
            let list = try system.appointments.getAppointmentsByClientId(patient.id ?? 0, scope: .all)
            var clinics: [Int64: Clinic] = [:]
            for appointment in list where clinics[appointment.clinicId] == nil {
                clinics[appointment.clinicId] = try system.clinics.getClinicById(appointment.clinicId)
            }
            return (list, clinics)
        }
        let now = Date()
        func row(_ appointment: Appointment) -> [String: Any] {
            let clinic = clinics[appointment.clinicId]
            return ["id": appointment.id ?? 0, "clinic": clinic?.name ?? "", "doctor": appointment.doctorName,
                    "when": clinic.map { clinicTime(appointment.startsAt, $0, web.language) } ?? ["time": DateText.iso8601(appointment.startsAt)],
                    "status": appointment.status.text(web.language)]
        }
        let upcoming = list.filter { AppointmentScope.upcoming.contains($0, now: now) }.map(row)
        let past = list.filter { !AppointmentScope.upcoming.contains($0, now: now) }.reversed().map(row)
        return page("appointments", web, ["upcoming": upcoming, "past": past, "hasUpcoming": !upcoming.isEmpty, "hasPast": !past.isEmpty])
    }

    /// `/appointments/{id}`: the appointment, its history, the calendar file, reschedule
    /// (a day, then its free times) and cancel (asked to confirm).
    func appointmentPage(_ id: Int64, _ request: Request, _ web: WebRequest) async throws -> Response {
        let patient = try requirePatient(web)
        let day = try request.query("day").flatMap { $0.isEmpty ? nil : try TimeInput.parseDay($0) }
        let (appointment, history, clinic, slots) = try await work(web) { [system] in
            let (appointment, history) = try system.appointments.appointmentWithHistory(id, clientId: patient.id ?? 0)
            let clinic = try system.clinics.getClinicById(appointment.clinicId)
            let slots = try day.map { try system.appointments.rescheduleTimes(appointment, from: $0) } ?? []
            return (appointment, history, clinic, slots)
        }
        let today = LocalDateTime.of(Date(), in: clinic.zone)
        var values: [String: Any] = [
            "id": id, "clinic": clinic.name, "clinicId": clinic.id ?? 0, "doctor": appointment.doctorName,
            "when": clinicTime(appointment.startsAt, clinic, web.language), "status": appointment.status.text(web.language),
            "active": appointment.status.isPatientChangeable,
            "askCancel": request.query("cancel") == "1",
            "history": history.map { event in
                var item: [String: Any] = ["event": event.text(web.language),
                                           "at": DateText.dateTime(event.at, timeZone: clinic.zone, language: web.language)]
                if let reason = event.reason, !reason.isEmpty { item["reason"] = reason }
                return item
            },
            "days": (0..<14).map { offset -> [String: Any] in
                let date = today.adding(days: offset)
                return ["value": date.dayText, "label": date.dayText, "selected": date.dayText == day?.dayText]
            },
        ]
        if day != nil {
            // Each time once; the doctor is named where it would not be the appointment's own.
            values["slots"] = slots.map { slot -> [String: Any] in
                var item: [String: Any] = ["start": DateText.iso8601(slot.start),
                                           "time": DateText.time(slot.start, timeZone: clinic.zone, language: web.language)]
                if slot.doctorId != appointment.doctorId { item["otherDoctor"] = slot.doctorName }
                return item
            }
            values["dayChosen"] = true
        }
        return page("appointment", web, values)
    }
}
