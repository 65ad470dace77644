import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

// FHIR's reads of appointments and patients: Find Existing Appointments (IHE ITI-118), an
// appointment by id, the patient.

extension FHIRController {
    // MARK: Find Existing Appointments (ITI-118)

    static let appointmentParameters: Set<String> = ["_id", "patient", "date", "status", "practitioner", "location", "_include"]
    static let includes: Set<String> = ["Appointment:patient", "Appointment:practitioner", "Appointment:location", "Appointment:actor"]

    /// `_include` (ITI-118): the appointments' doctors (`Practitioner`), clinics (`Location`)
    /// and, for a patient, their own `Patient`, each once, as `include` entries after the
    /// matches (`Appointment:actor`: all three). Staff are not given Patient resources.
    func included(_ request: Request, _ parameters: FHIRParameters, _ appointments: [FHIRJSON], patient: Patient?,
                  _ language: Language) async throws -> [FHIRResources.Entry] {
        let asked = Set(parameters.values("_include").flatMap { $0.split(separator: ",").map(String.init) })
        guard !asked.isEmpty else { return [] }
        guard asked.isSubset(of: Self.includes) else {
            throw ServerError.invalid(.fhirCode, asked.subtracting(Self.includes).sorted().joined(separator: ","))
        }
        var references: [String] = []
        for appointment in appointments {
            for participant in appointment["participant"]?.arrayValue ?? [] {
                guard let reference = participant["actor"]?["reference"]?.stringValue else { continue }
                let type = reference.split(separator: "/").first.map(String.init) ?? ""
                guard ["Patient", "Practitioner", "Location"].contains(type),
                      asked.contains("Appointment:actor") || asked.contains("Appointment:\(type.lowercased())"),
                      !references.contains(reference) else { continue }
                references.append(reference)
            }
        }
        let wanted = references
        let found = try await dependencies.awaited(language) { [system = dependencies.system] in
            var found: [(FHIRJSON, String)] = []
            for reference in wanted {
                let parts = reference.split(separator: "/")
                guard parts.count == 2, let id = Int64(parts[1]) else { continue }
                switch parts[0] {
                case "Practitioner": found.append((FHIRResources.practitioner(try await system.doctorPlace(id)), "Practitioner"))
                case "Location": found.append((FHIRResources.location(try await system.clinics.clinicWithDepartments(id).clinic), "Location"))
                default:
                    guard let patient, patient.id == id else { continue }
                    found.append((FHIRResources.patient(patient.client), "Patient"))
                }
            }
            return found
        }
        return found.map { resource, type in
            var item = entry(request, resource, type: type)
            item.mode = "include"
            return item
        }
    }

    /// A patient's own appointments (`patient` may only name them), by `date` (prefixes),
    /// `status`, `practitioner`, `location`, `_id`. A staff member's: one day of their clinic
    /// (`date=YYYY-MM-DD`), each patient shown written to the audit trail.
    @Sendable func searchAppointments(_ request: Request, context: APIContext) async throws -> Response {
        let parameters = try parameters(request, allowed: Self.appointmentParameters)
        let count = try parameters.count(fallback: 100, maximum: 500)
        if let staff = context.staff {
            return try await staffAppointments(request, context, staff, parameters)
        }
        let patient = try context.signedInPatient()
        let found = try await appointmentSearch(parameters, patient: patient, request: request)
        let page = Array(found.prefix(count))
        let extra = try await included(request, parameters, page, patient: patient, patient.language)
        return searchset(request, parameters, page.map { entry(request, $0, type: "Appointment") } + extra, total: found.count,
                         profile: true)
    }

    func appointmentSearch(_ parameters: FHIRParameters, patient: Patient, request: Request,
                           waitlist: Bool = true) async throws -> [FHIRJSON] {
        try parameters.check(allowed: Self.appointmentParameters, lenient: request.fhirLenient)
        if let text = parameters.first("patient"),
           try FHIRParameters.id(text, type: "Patient", parameter: "patient") != patient.id {
            throw ServerError(.forbidden, .fhirNotYours)
        }
        let dates = try parameters.values("date").map { try FHIRParameters.dateRange($0, parameter: "date") }
        let statuses = Set(parameters.values("status").flatMap { $0.split(separator: ",").map(String.init) })
        let ids = Set(parameters.values("_id").flatMap { $0.split(separator: ",").map(String.init) })
        let doctor = try parameters.first("practitioner").map { try FHIRParameters.id($0, type: "Practitioner", parameter: "practitioner") }
        let clinic = try parameters.first("location").map { try FHIRParameters.id($0, type: "Location", parameter: "location") }
        let language = patient.language
        let waiting = waitlist ? try await waitlistAppointments(patient: patient, dates: dates, statuses: statuses, ids: ids,
                                                                doctor: doctor, clinic: clinic) : []
        return try await waiting + dependencies.awaited(language) { [system = dependencies.system] in
            let list = try await system.appointments(ofPatient: patient.id, scope: .all).filter { item in
                let appointment = item.appointment
                return dates.allSatisfy { $0.contains(appointment.startsAt) }
                    && (statuses.isEmpty || statuses.contains(FHIRResources.status(appointment.status)))
                    && (ids.isEmpty || ids.contains(String(appointment.id ?? 0)))
                    && (doctor == nil || appointment.doctorId == doctor) && (clinic == nil || appointment.clinicId == clinic)
            }
            var visits: [Int64: [VisitType]] = [:]
            var resources: [FHIRJSON] = []
            for item in list {
                var visit: VisitType?
                if let id = item.appointment.visitTypeId, let department = item.department.id {
                    if visits[department] == nil { visits[department] = try await system.departments.visitTypes(departmentId: department) }
                    visit = visits[department]?.first { $0.id == id }
                }
                resources.append(FHIRResources.appointment(item.appointment, clinic: item.clinic, department: item.department,
                                                           visit: visit, language))
            }
            return resources
        }
    }

    func staffAppointments(_ request: Request, _ context: APIContext, _ staff: StaffIdentity,
                           _ parameters: FHIRParameters) async throws -> Response {
        guard let text = parameters.first("date"), text.count == 10 || (text.hasPrefix("eq") && text.count == 12) else {
            throw ServerError.invalid(.fhirStaffDate)
        }
        let day = try TimeInput.parseDay(text.hasPrefix("eq") ? String(text.dropFirst(2)) : text)
        let statuses = Set(parameters.values("status").flatMap { $0.split(separator: ",").map(String.init) })
        let patientId = try parameters.first("patient").map { try FHIRParameters.id($0, type: "Patient", parameter: "patient") }
        let language = context.language
        let requestId = context.requestId
        let page = try await dependencies.awaited(language) { [system = dependencies.system] in
            try await system.frontDeskDay(staff.member, day: day, requestId: requestId)
        }
        let resources: [FHIRJSON] = page.entries.map(\.appointment).filter { appointment in
            (statuses.isEmpty || statuses.contains(FHIRResources.status(appointment.status)))
                && (patientId == nil || appointment.clientId == patientId)
        }.compactMap { appointment -> FHIRJSON? in
            guard let department = page.departments.first(where: { $0.id == appointment.departmentId }) else { return nil }
            return FHIRResources.appointment(appointment, clinic: page.clinic, department: department, visit: nil, language)
        }
        let extra = try await included(request, parameters, resources, patient: nil, language)
        return searchset(request, parameters, resources.map { entry(request, $0, type: "Appointment") } + extra,
                         total: resources.count, profile: true)
    }

    /// `Appointment/N` (the patient's own), `Appointment/hold-N` (their hold), or a proposed
    /// appointment of `$find` (anyone: it says what could be booked, if it still can).
    @Sendable func readAppointment(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: [])
        let text = context.parameters.get("id") ?? ""
        let language = context.language
        if let proposed = FHIRResources.proposed(text) {
            let query = PotentialQuery(start: proposed.start, end: proposed.start.addingTimeInterval(1), visitTypeId: proposed.visitTypeId,
                                       doctorId: proposed.doctorId, departmentId: proposed.departmentId, limit: 1)
            let found = try await dependencies.awaited(language) { [system = dependencies.system, runner = dependencies.poolRunner] in
                try await system.findPotentialAppointments(query, computing: runner).first
            }
            guard let found else { throw ClinicError(.notFound, .resourceNotFound, "Appointment", text) }
            return respond(FHIRResources.proposed(found, patient: context.patient?.id, language))
        }
        let patient = try context.signedInPatient()
        if let hold = FHIRResources.hold(text) {
            let held = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
                try await system.appointments.slotHold(hold, clientId: patient.id)
            }
            return respond(try await heldResource(held, patient.language))
        }
        if let waiting = try await readWaitlistAppointment(text, patient: patient) { return respond(waiting) }
        guard let id = Int64(text), id > 0 else { throw ClinicError(.notFound, .resourceNotFound, "Appointment", text) }
        let found = try await dependencies.awaited(patient.language) { [system = dependencies.system] in
            let appointment = try await system.appointments.appointmentWithHistory(id, clientId: patient.id).appointment
            return try await Self.resource(appointment, system, patient.language)
        }
        return respond(found)
    }

    // MARK: Patient

    @Sendable func readPatient(_ request: Request, context: APIContext) async throws -> Response {
        _ = try parameters(request, allowed: [])
        let patient = try context.signedInPatient()
        guard context.parameters.get("id") == String(patient.id) else {
            throw ClinicError(.notFound, .resourceNotFound, "Patient", context.parameters.get("id") ?? "")
        }
        return respond(FHIRResources.patient(patient.client))
    }

    @Sendable func searchPatients(_ request: Request, context: APIContext) async throws -> Response {
        let parameters = try parameters(request, allowed: ["_id"])
        let patient = try context.signedInPatient()
        let ids = Set(parameters.values("_id").flatMap { $0.split(separator: ",").map(String.init) })
        let mine = ids.isEmpty || ids.contains(String(patient.id))
        return searchset(request, parameters, mine ? [entry(request, FHIRResources.patient(patient.client), type: "Patient")] : [],
                         total: mine ? 1 : 0)
    }
}
