import ClinicKit
import Foundation
import Hummingbird

/// The waitlist in FHIR (issue 45): a patient's waiting entry is an `Appointment` with status
/// `waitlist`, no start, and the days waited for as `requestedPeriod` (`Appointment/waitlist-N`);
/// a time offered from it is a `pending` one held until its `hold-expires` extension
/// (`Appointment/offer-N`), which `$book` accepts (`appointment-reference` `Appointment/offer-N`).
/// Both are found by the patient's `Appointment` search (status `waitlist`, `pending`).
extension FHIRResources {
    static func waitlistId(_ id: Int64) -> String { "waitlist-\(id)" }
    static func offerId(_ id: Int64) -> String { "offer-\(id)" }
    static func waitlist(_ id: String) -> Int64? { number(id, prefix: "waitlist-") }
    static func offer(_ id: String) -> Int64? { number(id, prefix: "offer-") }

    static func number(_ id: String, prefix: String) -> Int64? {
        guard id.hasPrefix(prefix), let number = Int64(id.dropFirst(prefix.count)), number > 0 else { return nil }
        return number
    }

    /// Midnight starting `day` (YYYY-MM-DD) in `zone`.
    static func midnight(_ day: String, _ zone: TimeZone) -> Date? {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))
    }

    /// The days an entry waits for, as instants: from its first day's midnight to the midnight after its last.
    static func requested(_ entry: WaitlistEntry, _ clinic: Clinic) -> Range<Date>? {
        guard let start = midnight(entry.firstDay, clinic.zone), let last = midnight(entry.lastDay, clinic.zone) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = clinic.zone
        guard let end = calendar.date(byAdding: .day, value: 1, to: last), end > start else { return nil }
        return start..<end
    }

    static func waitlistEntry(_ entry: WaitlistEntry, clinic: Clinic, department: Department, doctorName: String?,
                              _ language: Language) -> FHIRJSON {
        var participants: [FHIRJSON] = [.object(["actor": reference("Patient", entry.clientId), "required": "required",
                                                 "status": "accepted"])]
        if let doctor = entry.doctorId {
            participants.append(.object(["actor": reference("Practitioner", doctor, display: doctorName), "required": "required",
                                         "status": "needs-action"]))
        }
        participants.append(.object(["actor": reference("Location", clinic.id ?? 0, display: clinic.name), "required": "required",
                                     "status": "needs-action"]))
        participants.append(.object(["actor": reference("HealthcareService", entry.departmentId), "required": "information-only",
                                     "status": "needs-action"]))
        let period = requested(entry, clinic)
        return .object([
            "resourceType": "Appointment", "id": .string(waitlistId(entry.id ?? 0)),
            "meta": .object(["profile": [.string(appointmentProfile)]]),
            "extension": [.object(["url": .string(timezoneExtension), "valueCode": .string(clinic.timeZone)])],
            "status": "waitlist",
            "specialty": [specialty(department.specialization, language)],
            "created": instant(entry.createdAt),
            "participant": .array(participants),
            "requestedPeriod": period.map { [.object(["start": instant($0.lowerBound), "end": instant($0.upperBound)])] },
        ])
    }

    static func offered(_ offer: WaitlistOffer, clinic: Clinic, department: Department, doctorName: String,
                        _ language: Language) -> FHIRJSON {
        appointmentShape(
            id: offerId(offer.id ?? 0), status: "pending", specialization: department.specialization, visit: nil,
            start: offer.startsAt, end: offer.endsAt, created: offer.createdAt, comment: nil,
            participants: participants(Participants(patient: offer.clientId, doctorId: offer.doctorId, doctorName: doctorName,
                                                    clinic: clinic, departmentId: offer.departmentId, status: "needs-action")),
            timeZone: clinic.timeZone, language,
            extra: .object(["url": .string(holdExpiryExtension), "valueInstant": instant(offer.expiresAt)]))
    }
}

extension FHIRController {
    /// What a patient's waitlist adds to their `Appointment` search: each entry (status
    /// `waitlist`, matched by a date within the days it waits for) and each open offer (status
    /// `pending`, by its start).
    func waitlistAppointments(patient: Patient, dates: [Range<Date>], statuses: Set<String>, ids: Set<String>, doctor: Int64?,
                              clinic: Int64?) async throws -> [FHIRJSON] {
        let wantsEntries = statuses.isEmpty || statuses.contains("waitlist")
        let wantsOffers = statuses.isEmpty || statuses.contains("pending")
        guard wantsEntries || wantsOffers else { return [] }
        let language = patient.language
        return try await dependencies.awaited(language) { [system = dependencies.system] in
            let overview = try await system.waitlist.overview(clientId: patient.id)
            // Each department's doctors read once (a department's active doctors, as before).
            var doctors: [Int64: [DoctorWithHours]] = [:]
            for departmentId in Set(overview.entries.compactMap { $0.doctorId == nil ? nil : $0.departmentId }
                                    + overview.offers.map(\.departmentId)) {
                doctors[departmentId] = try await system.departments.doctorsWithHours(departmentId: departmentId)
            }
            func doctorName(_ departmentId: Int64, _ doctorId: Int64?) -> String? {
                guard let doctorId else { return nil }
                return doctors[departmentId]?.first { $0.doctor.id == doctorId }?.doctor.name
            }
            var found: [FHIRJSON] = []
            if wantsEntries {
                for entry in overview.entries {
                    guard let (department, place) = overview.places[entry.departmentId],
                          ids.isEmpty || ids.contains(FHIRResources.waitlistId(entry.id ?? 0)),
                          doctor == nil || entry.doctorId == doctor, clinic == nil || place.id == clinic else { continue }
                    let period = FHIRResources.requested(entry, place)
                    guard dates.allSatisfy({ range in period.map { $0.overlaps(range) } ?? false }) else { continue }
                    found.append(FHIRResources.waitlistEntry(entry, clinic: place, department: department,
                                                             doctorName: doctorName(entry.departmentId, entry.doctorId), language))
                }
            }
            if wantsOffers {
                for offer in overview.offers {
                    guard let (department, place) = overview.places[offer.departmentId],
                          ids.isEmpty || ids.contains(FHIRResources.offerId(offer.id ?? 0)),
                          doctor == nil || offer.doctorId == doctor, clinic == nil || place.id == clinic,
                          dates.allSatisfy({ $0.contains(offer.startsAt) }) else { continue }
                    found.append(FHIRResources.offered(offer, clinic: place, department: department,
                                                       doctorName: doctorName(offer.departmentId, offer.doctorId) ?? "", language))
                }
            }
            return found
        }
    }

    /// `Appointment/waitlist-N` or `Appointment/offer-N`, the patient's own; nil for another id.
    func readWaitlistAppointment(_ text: String, patient: Patient) async throws -> FHIRJSON? {
        let entryId = FHIRResources.waitlist(text), offerId = FHIRResources.offer(text)
        guard entryId != nil || offerId != nil else { return nil }
        let found = try await waitlistAppointments(patient: patient, dates: [], statuses: [], ids: [text], doctor: nil, clinic: nil)
        guard let resource = found.first else { throw ClinicError(.notFound, .resourceNotFound, "Appointment", text) }
        return resource
    }
}
