import ClinicKit
import Foundation

/// The CapabilityStatement at /fhir/r4/metadata: what this server does, and only that (each
/// search parameter listed is one `FHIRController` reads; docs/FHIR.md says the same in words).
enum FHIRCapability {
    static let ihe = "https://profiles.ihe.net/ITI/Scheduling"

    static func search(_ name: String, _ type: String, _ text: String) -> FHIRJSON {
        .object(["name": .string(name), "type": .string(type), "documentation": .string(text)])
    }

    static func resource(_ type: String, interactions: [String], searches: [FHIRJSON], operations: [FHIRJSON] = [],
                         includes: [String] = [], profile: String? = nil, text: String) -> FHIRJSON {
        .object([
            "type": .string(type), "profile": .string(profile),
            "documentation": .string(text),
            "interaction": .array(interactions.map { .object(["code": .string($0)]) }),
            "searchInclude": .array(includes.map { .string($0) }),
            "searchParam": .array(searches), "operation": .array(operations),
        ])
    }

    static func operation(_ name: String, _ definition: String) -> FHIRJSON {
        .object(["name": .string(name), "definition": .string(definition)])
    }

    static func statement(base: String) -> FHIRJSON {
        let common = [search("_count", "number", "Page size, 1 to 100 (Appointment: 500)."),
                      search("_id", "token", "Logical id; several separated by commas.")]
        return .object([
            "resourceType": "CapabilityStatement",
            "status": "active", "date": "2026-11-25", "kind": "instance", "publisher": "ClinicKit",
            "name": "ClinicKitFHIRServer", "title": "Clinic appointments: FHIR R4 with IHE ITI Scheduling",
            "instantiates": [.string("\(ihe)/CapabilityStatement/IHE.Scheduling.server")],
            "software": .object(["name": "clinic serve"]),
            "implementation": .object(["description": "The clinic appointment system's FHIR front", "url": .string(base)]),
            "fhirVersion": "4.0.1", "format": ["json", "application/fhir+json"],
            "rest": [.object([
                "mode": "server",
                "documentation": "Public: the directory, slots and $find. A patient's bearer token (POST /v1/sessions): their own Patient and Appointments, $hold, $book, PUT and PATCH of their appointments. A staff token (POST /v1/staff/sessions): their clinic's appointments of one day, each patient shown recorded in the audit trail.",
                "security": .object([
                    "cors": false,
                    "service": [.object(["coding": [.object(["system": "http://terminology.hl7.org/CodeSystem/restful-security-service",
                                                             "code": "OAuth", "display": "OAuth"])],
                                         "text": "Bearer tokens of the clinic API's own sessions (not SMART on FHIR)"])],
                    "description": "Authorization: Bearer with a patient's or a staff member's session token from the /v1 API.",
                ]),
                "resource": [
                    resource("Location", interactions: ["read", "search-type"], searches: common + [
                        search("near", "special", "latitude|longitude|distance|unit (km, m, mi, [mi_i]): exact great-circle distance, nearest first, the distance in each entry's search.extension; paged by next links."),
                        search("type", "token", "v3-RoleCode HOSP (hospitals) or PEDC (pediatric); with near."),
                        search("address-state", "string", "Two-letter state; with near."),
                        search("address-city", "string", "City name, any case; paged by next links."),
                        search("_has:HealthcareService:location:specialty", "token", "Clinics with a department of a SNOMED CT specialty; with near."),
                    ], text: "A clinic: address, position, time zone (extension timezone), hours of operation on read."),
                    resource("Organization", interactions: ["read", "search-type"], searches: common + [
                        search("near", "special", "As for Location."), search("address-city", "string", "As for Location."),
                    ], text: "The clinic as the provider organisation."),
                    resource("HealthcareService", interactions: ["read", "search-type"], searches: common + [
                        search("location", "reference", "The clinic (required, or _id)."),
                        search("organization", "reference", "The clinic, as an Organization."),
                        search("specialty", "token", "SNOMED CT clinical specialty or our key."),
                    ], text: "A department: its specialty, its visit types (with length and price) in type."),
                    resource("Practitioner", interactions: ["read", "search-type"], searches: common, text: "A doctor."),
                    resource("PractitionerRole", interactions: ["read", "search-type"], searches: common + [
                        search("practitioner", "reference", "The doctor."), search("service", "reference", "The department."),
                        search("location", "reference", "The clinic."), search("specialty", "token", "SNOMED CT or our key."),
                    ], text: "A doctor in a department, with weekly hours (availableTime)."),
                    resource("Schedule", interactions: ["read", "search-type"], searches: common + [
                        search("actor", "reference", "Practitioner, Location or HealthcareService."),
                        search("service", "reference", "The department."), search("location", "reference", "The clinic."),
                    ], text: "One schedule per doctor (same id as the Practitioner)."),
                    resource("Slot", interactions: ["read", "search-type"], searches: [
                        search("schedule", "reference", "The doctor's schedule (required)."),
                        search("start", "date", "ge/gt/le/lt/eq bounds; default the next 7 days, at most 31."),
                        search("status", "token", "free, busy (booked or held), busy-unavailable (past or too soon)."),
                        search("service-type", "token", "A visit type (its length): urn:clinickit:visit-type|ID."),
                        search("specialty", "token", "SNOMED CT or our key."),
                    ], text: "A doctor's slot in the clinic's zone (id DOCTOR-STARTSECONDS)."),
                    resource("Appointment", interactions: ["read", "search-type", "update", "patch"], searches: common + [
                        search("patient", "reference", "The signed-in patient only."),
                        search("date", "date", "The start, with prefixes; staff: one day (YYYY-MM-DD)."),
                        search("status", "token", "booked, arrived, checked-in, fulfilled, cancelled, noshow."),
                        search("practitioner", "reference", "The doctor."), search("location", "reference", "The clinic."),
                    ], operations: [
                        operation("find", "\(ihe)/OperationDefinition/appointment-find"),
                        operation("hold", "\(ihe)/OperationDefinition/appointment-hold"),
                        operation("book", "\(ihe)/OperationDefinition/appointment-book"),
                    ], includes: FHIRController.includes.sorted(), profile: FHIRResources.appointmentProfile,
                       text: "The patient's own appointments; $find proposes (id p-…), $hold holds (id hold-N, status pending, for booking.hold_seconds), $book books, moves or cancels. Update: status cancelled or a new start. Retries: Idempotency-Key, or If-None-Exist on $book."),
                    resource("Patient", interactions: ["read", "search-type"], searches: common, text: "The signed-in patient's own record only."),
                ],
            ])],
        ])
    }
}
