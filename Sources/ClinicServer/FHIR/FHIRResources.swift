import ClinicKit
import Foundation

/// The domain as FHIR R4 resources (docs/FHIR.md has the mapping and examples). Each function
/// maps one domain value; none reads the store.
enum FHIRResources {
    // MARK: Systems and profiles

    static let snomed = "http://snomed.info/sct"
    /// Our own code systems and identifiers (URNs: they name, they are not fetched).
    static let specializationSystem = "urn:clinickit:specialization"
    static let visitTypeSystem = "urn:clinickit:visit-type"
    static let clinicIdentifierSystem = "urn:clinickit:clinic-directory-id"
    static let errorSystem = "urn:clinickit:error-code"
    static let roleCodeSystem = "http://terminology.hl7.org/CodeSystem/v3-RoleCode"
    static let timezoneExtension = "http://hl7.org/fhir/StructureDefinition/timezone"
    static let distanceExtension = "http://hl7.org/fhir/StructureDefinition/location-distance"
    static let visitMinutesExtension = "urn:clinickit:extension:visit-minutes"
    static let visitPriceExtension = "urn:clinickit:extension:visit-price"
    static let appointmentProfile = "https://profiles.ihe.net/ITI/Scheduling/StructureDefinition/ihe-sched-appt"
    static let bundleProfile = "https://profiles.ihe.net/ITI/Scheduling/StructureDefinition/ihe-sched-avail-bundle"

    static func reference(_ type: String, _ id: Int64, display: String? = nil) -> FHIRJSON {
        .object(["reference": .string("\(type)/\(id)"), "display": .string(display)])
    }

    static func instant(_ date: Date) -> FHIRJSON { .string(DateText.iso8601(date)) }

    // MARK: Codes

    /// A specialization: its SNOMED CT code when it has one, and ours.
    static func specialty(_ key: String, _ language: Language) -> FHIRJSON {
        var codings: [FHIRJSON] = []
        if let code = Specialization.snomed[key] {
            codings.append(.object(["system": .string(snomed), "code": .string(code.code), "display": .string(code.display)]))
        }
        codings.append(.object(["system": .string(specializationSystem), "code": .string(key),
                                "display": .string(Specialization.displayName(key, .en))]))
        return .object(["coding": .array(codings), "text": .string(Specialization.displayName(key, language))])
    }

    /// A visit type: our code, its length and price as extensions.
    static func visitType(_ visit: VisitType, _ language: Language) -> FHIRJSON {
        var extensions: [FHIRJSON] = [.object(["url": .string(visitMinutesExtension), "valueInteger": .int(Int64(visit.durationMinutes))])]
        if let cents = visit.priceCents {
            extensions.append(.object(["url": .string(visitPriceExtension),
                                       "valueMoney": .object(["value": .number(Double(cents) / 100), "currency": "USD"])]))
        }
        return .object(["extension": .array(extensions),
                        "coding": [.object(["system": .string(visitTypeSystem), "code": .string(String(visit.id)),
                                            "display": .string(visit.nameEn)])],
                        "text": .string(visit.name(language))])
    }

    static func clinicTypes(_ clinic: Clinic) -> FHIRJSON {
        var codings: [FHIRJSON] = []
        if clinic.isHospital { codings.append(.object(["system": .string(roleCodeSystem), "code": "HOSP", "display": "Hospital"])) }
        if clinic.isPediatric {
            codings.append(.object(["system": .string(roleCodeSystem), "code": "PEDC", "display": "Pediatrics clinic"]))
        }
        return .array([.object(["coding": .array(codings), "text": .string(clinic.category)])])
    }

    // MARK: The directory

    static func address(_ clinic: Clinic) -> FHIRJSON {
        .object(["use": "work", "type": "physical", "line": [.string(clinic.address)], "city": .string(clinic.city),
                 "state": .string(clinic.state), "postalCode": .string(clinic.zip), "country": "US"])
    }

    static func telecom(_ clinic: Clinic) -> FHIRJSON {
        var items: [FHIRJSON] = []
        if !clinic.phone.isEmpty { items.append(.object(["system": "phone", "value": .string(clinic.phone), "use": "work"])) }
        if !clinic.website.isEmpty { items.append(.object(["system": "url", "value": .string(clinic.website)])) }
        return .array(items)
    }

    static let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    static func time(_ minute: Int) -> FHIRJSON {
        .string(minute >= 1440 ? "23:59:59" : String(format: "%02d:%02d:00", minute / 60, minute % 60))
    }

    static func location(_ clinic: Clinic, hours: [OpeningHours]? = nil) -> FHIRJSON {
        let id = clinic.id ?? 0
        let opening: FHIRJSON? = hours.map { list in
            .array(list.filter { (1...7).contains($0.weekday) }.map { day in
                .object(["daysOfWeek": [.string(weekdays[day.weekday - 1])], "openingTime": time(day.startMinute),
                         "closingTime": time(day.endMinute)])
            })
        }
        return .object([
            "resourceType": "Location", "id": .string(String(id)),
            "extension": [.object(["url": .string(timezoneExtension), "valueCode": .string(clinic.timeZone)])],
            "identifier": [.object(["system": .string(clinicIdentifierSystem), "value": .string(clinic.externalId)])],
            "status": "active", "name": .string(clinic.name),
            "description": clinic.description.isEmpty ? nil : .string(clinic.description),
            "mode": "instance", "type": clinicTypes(clinic), "telecom": telecom(clinic), "address": address(clinic),
            "position": .object(["longitude": .number(clinic.lon), "latitude": .number(clinic.lat)]),
            "managingOrganization": reference("Organization", id, display: clinic.name),
            "hoursOfOperation": opening,
        ])
    }

    static func organization(_ clinic: Clinic) -> FHIRJSON {
        .object([
            "resourceType": "Organization", "id": .string(String(clinic.id ?? 0)),
            "identifier": [.object(["system": .string(clinicIdentifierSystem), "value": .string(clinic.externalId)])],
            "active": true,
            "type": [.object(["coding": [.object(["system": "http://terminology.hl7.org/CodeSystem/organization-type",
                                                  "code": "prov", "display": "Healthcare Provider"])]])],
            "name": .string(clinic.name), "telecom": telecom(clinic), "address": [address(clinic)],
        ])
    }

    static func healthcareService(_ department: Department, clinic: Clinic, visits: [VisitType], _ language: Language) -> FHIRJSON {
        .object([
            "resourceType": "HealthcareService", "id": .string(String(department.id ?? 0)), "active": true,
            "providedBy": reference("Organization", clinic.id ?? 0, display: clinic.name),
            "type": .array(visits.map { visitType($0, language) }),
            "specialty": [specialty(department.specialization, language)],
            "location": [reference("Location", clinic.id ?? 0, display: clinic.name)],
            "name": .string("\(Specialization.displayName(department.specialization, language)) — \(clinic.name)"),
            "telecom": telecom(clinic),
            "appointmentRequired": true,
        ])
    }

    static func practitioner(_ place: DoctorPlace) -> FHIRJSON {
        .object([
            "resourceType": "Practitioner", "id": .string(String(place.doctor.id ?? 0)), "active": .bool(place.doctor.isActive),
            "name": [.object(["text": .string(place.doctor.name)])],
        ])
    }

    static func availableTime(_ hours: [WorkingHours]) -> FHIRJSON {
        .array(hours.filter { (1...7).contains($0.weekday) }.sorted { ($0.weekday, $0.startMinute) < ($1.weekday, $1.startMinute) }.map {
            .object(["daysOfWeek": [.string(weekdays[$0.weekday - 1])], "availableStartTime": time($0.startMinute),
                     "availableEndTime": time($0.endMinute)])
        })
    }

    static func practitionerRole(_ place: DoctorPlace, _ language: Language) -> FHIRJSON {
        let id = place.doctor.id ?? 0
        return .object([
            "resourceType": "PractitionerRole", "id": .string(String(id)), "active": .bool(place.doctor.isActive),
            "practitioner": reference("Practitioner", id, display: place.doctor.name),
            "organization": reference("Organization", place.clinic.id ?? 0, display: place.clinic.name),
            "specialty": [specialty(place.department.specialization, language)],
            "location": [reference("Location", place.clinic.id ?? 0, display: place.clinic.name)],
            "healthcareService": [reference("HealthcareService", place.department.id ?? 0)],
            "availableTime": availableTime(place.hours),
        ])
    }

    static func schedule(_ place: DoctorPlace, _ language: Language) -> FHIRJSON {
        let id = place.doctor.id ?? 0
        return .object([
            "resourceType": "Schedule", "id": .string(String(id)), "active": .bool(place.doctor.isActive),
            "extension": [.object(["url": .string(timezoneExtension), "valueCode": .string(place.clinic.timeZone)])],
            "specialty": [specialty(place.department.specialization, language)],
            "actor": [reference("Practitioner", id, display: place.doctor.name),
                      reference("PractitionerRole", id),
                      reference("Location", place.clinic.id ?? 0, display: place.clinic.name),
                      reference("HealthcareService", place.department.id ?? 0)],
            "comment": .string("\(place.doctor.name), \(Specialization.displayName(place.department.specialization, language))"),
        ])
    }

    /// A slot's id: the doctor and the start (seconds since 1970), `12-1796454000`.
    static func slotId(doctorId: Int64, start: Date) -> String { "\(doctorId)-\(Int64(start.timeIntervalSince1970))" }

    static func slot(_ slot: Slot, department: Department, _ language: Language) -> FHIRJSON {
        let status = slot.isAvailable ? "free" : slot.isTaken ? "busy" : "busy-unavailable"
        return .object([
            "resourceType": "Slot", "id": .string(slotId(doctorId: slot.doctorId, start: slot.start)),
            "schedule": reference("Schedule", slot.doctorId, display: slot.doctorName),
            "specialty": [specialty(department.specialization, language)],
            "status": .string(status), "start": instant(slot.start), "end": instant(slot.end),
        ])
    }

    // MARK: Appointments

    static func status(_ status: AppointmentStatus) -> String {
        switch status {
        case .scheduled, .confirmed: "booked"
        case .arrived: "arrived"
        case .inProgress: "checked-in"
        case .completed: "fulfilled"
        case .cancelled: "cancelled"
        case .noShow: "noshow"
        }
    }

    /// The id of a proposed appointment (`$find`): everything needed to hold or book it,
    /// `p-DEPARTMENT-DOCTOR-START[-VISITTYPE]`.
    static func proposedId(departmentId: Int64, doctorId: Int64, start: Date, visitTypeId: Int64?) -> String {
        "p-\(departmentId)-\(doctorId)-\(Int64(start.timeIntervalSince1970))" + (visitTypeId.map { "-\($0)" } ?? "")
    }

    struct Proposed: Equatable {
        let departmentId: Int64, doctorId: Int64, start: Date, visitTypeId: Int64?
    }

    /// The parts of a proposed appointment's id; nil for another id.
    static func proposed(_ id: String) -> Proposed? {
        let parts = id.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.first == "p", parts.count == 4 || parts.count == 5 else { return nil }
        let numbers = parts.dropFirst().compactMap { Int64($0) }.filter { $0 > 0 }
        guard numbers.count == parts.count - 1, let start = FHIRParameters.instant(seconds: numbers[2]) else { return nil }
        return Proposed(departmentId: numbers[0], doctorId: numbers[1], start: start, visitTypeId: numbers.count == 4 ? numbers[3] : nil)
    }

    /// A hold's id, `hold-7`, and back.
    static func holdId(_ id: Int64) -> String { "hold-\(id)" }
    static func hold(_ id: String) -> Int64? {
        guard id.hasPrefix("hold-"), let number = Int64(id.dropFirst(5)), number > 0 else { return nil }
        return number
    }

    struct Participants {
        var patient: Int64?
        var doctorId: Int64
        var doctorName: String
        var clinic: Clinic
        var departmentId: Int64
        var status: String
    }

    static func participants(_ who: Participants) -> FHIRJSON {
        var items: [FHIRJSON] = []
        if let patient = who.patient {
            items.append(.object(["actor": reference("Patient", patient), "required": "required", "status": .string(who.status)]))
        }
        items.append(.object(["actor": reference("Practitioner", who.doctorId, display: who.doctorName), "required": "required",
                              "status": .string(who.status)]))
        items.append(.object(["actor": reference("Location", who.clinic.id ?? 0, display: who.clinic.name), "required": "required",
                              "status": .string(who.status)]))
        items.append(.object(["actor": reference("HealthcareService", who.departmentId), "required": "information-only",
                              "status": .string(who.status)]))
        return .array(items)
    }

    static func appointmentShape(id: String, status: String, specialization: String, visit: VisitType?, start: Date, end: Date,
                                 created: Date?, comment: String?, participants: FHIRJSON, timeZone: String,
                                 _ language: Language, extra: FHIRJSON? = nil) -> FHIRJSON {
        .object([
            "resourceType": "Appointment", "id": .string(id),
            "meta": .object(["profile": [.string(appointmentProfile)]]),
            "extension": .array([.object(["url": .string(timezoneExtension), "valueCode": .string(timeZone)])] + (extra.map { [$0] } ?? [])),
            "status": .string(status),
            "serviceType": visit.map { [visitType($0, language)] },
            "specialty": [specialty(specialization, language)],
            "start": instant(start), "end": instant(end),
            "minutesDuration": .int(Int64(end.timeIntervalSince(start) / 60)),
            "created": created.map(instant),
            "comment": comment.flatMap { $0.isEmpty ? nil : .string($0) },
            "participant": participants,
            "requestedPeriod": [.object(["start": instant(start), "end": instant(end)])],
        ])
    }

    static func appointment(_ appointment: Appointment, clinic: Clinic, department: Department, visit: VisitType?,
                            _ language: Language) -> FHIRJSON {
        let status = status(appointment.status)
        let participantStatus = appointment.status == .cancelled || appointment.status == .noShow ? "declined" : "accepted"
        return appointmentShape(
            id: String(appointment.id ?? 0), status: status, specialization: department.specialization, visit: visit,
            start: appointment.startsAt, end: appointment.endsAt, created: appointment.createdAt, comment: appointment.notes,
            participants: participants(Participants(patient: appointment.clientId, doctorId: appointment.doctorId,
                                                    doctorName: appointment.doctorName, clinic: clinic,
                                                    departmentId: appointment.departmentId, status: participantStatus)),
            timeZone: clinic.timeZone, language)
    }

    static func proposed(_ found: PotentialAppointment, patient: Int64?, _ language: Language) -> FHIRJSON {
        appointmentShape(
            id: proposedId(departmentId: found.department.id ?? 0, doctorId: found.slot.doctorId, start: found.slot.start,
                           visitTypeId: found.visitTypeId),
            status: "proposed", specialization: found.department.specialization, visit: found.visitType, start: found.slot.start,
            end: found.slot.end, created: nil, comment: nil,
            participants: participants(Participants(patient: patient, doctorId: found.slot.doctorId, doctorName: found.slot.doctorName,
                                                    clinic: found.clinic, departmentId: found.department.id ?? 0,
                                                    status: "needs-action")),
            timeZone: found.clinic.timeZone, language)
    }

    static let holdExpiryExtension = "urn:clinickit:extension:hold-expires"

    static func held(_ hold: SlotHold, place: DoctorPlace, visit: VisitType?, _ language: Language) -> FHIRJSON {
        appointmentShape(
            id: holdId(hold.id ?? 0), status: "pending", specialization: place.department.specialization, visit: visit,
            start: hold.startsAt, end: hold.endsAt, created: hold.createdAt, comment: nil,
            participants: participants(Participants(patient: hold.clientId, doctorId: hold.doctorId, doctorName: place.doctor.name,
                                                    clinic: place.clinic, departmentId: hold.departmentId, status: "tentative")),
            timeZone: place.clinic.timeZone, language,
            extra: .object(["url": .string(holdExpiryExtension), "valueInstant": instant(hold.expiresAt)]))
    }

    // MARK: The patient

    static func patient(_ client: Client) -> FHIRJSON {
        .object([
            "resourceType": "Patient", "id": .string(String(client.id ?? 0)), "active": true,
            "name": [.object(["use": "official", "family": .string(client.surname), "given": [.string(client.name)]])],
            "address": [.object(["use": "home", "line": [.string("\(client.street) \(client.house)".trimmingCharacters(in: .whitespaces))],
                                 "city": .string(client.city)])],
            "communication": [.object(["language": .object(["coding": [.object(["system": "urn:ietf:bcp:47",
                                                                                "code": .string(client.language.rawValue)])]]),
                                       "preferred": true])],
        ])
    }

    // MARK: Bundles and outcomes

    struct Entry {
        var resource: FHIRJSON
        var fullUrl: String
        var mode = "match"
        var distance: Double? = nil
    }

    static func bundle(_ entries: [Entry], total: Int?, selfLink: String, next: String? = nil,
                       profile: Bool = false) -> FHIRJSON {
        var links: [FHIRJSON] = [.object(["relation": "self", "url": .string(selfLink)])]
        if let next { links.append(.object(["relation": "next", "url": .string(next)])) }
        let items: [FHIRJSON] = entries.map(entryJSON)
        let meta: FHIRJSON? = profile ? .object(["profile": [.string(bundleProfile)]]) : nil
        let count: FHIRJSON? = total.map { .int(Int64($0)) }
        return .object([
            "resourceType": "Bundle", "id": .string(UUID().uuidString.lowercased()), "meta": meta, "type": "searchset",
            "total": count, "link": .array(links), "entry": .array(items),
        ])
    }

    /// An OperationOutcome that informs (severity `information`), for a search set's outcome
    /// entry.
    static func information(_ text: String) -> FHIRJSON {
        .object([
            "resourceType": "OperationOutcome",
            "issue": [.object(["severity": "information", "code": "informational", "diagnostics": .string(text)])],
        ])
    }

    static func entryJSON(_ entry: Entry) -> FHIRJSON {
        var search: [FHIRJSON.Member] = [.init(key: "mode", value: .string(entry.mode))]
        if let distance = entry.distance {
            let rounded: Double = (distance * 1000).rounded() / 1000
            let value: FHIRJSON = .object(["value": .number(rounded), "unit": "m", "system": "http://unitsofmeasure.org",
                                           "code": "m"])
            let distanceExtension: FHIRJSON = .object(["url": .string(Self.distanceExtension), "valueDistance": value])
            search.insert(.init(key: "extension", value: .array([distanceExtension])), at: 0)
        }
        let members: [FHIRJSON.Member] = [.init(key: "fullUrl", value: .string(entry.fullUrl)),
                                          .init(key: "resource", value: entry.resource),
                                          .init(key: "search", value: FHIRJSON.object(search))]
        return FHIRJSON.object(members)
    }
}
