import Foundation
import Testing
@testable import ClinicKit

// A registration decided on plain facts (issue 56): `ClientController.registering`. The stores'
// reads and write are `ClinicKitTests/AwaitedRegistrationTests.swift`'s.

@Suite struct RegistrationRulesTests {
    static let now = Fixture.now

    static func request(clinicId: Int64? = nil) -> RegistrationRequest {
        RegistrationRequest(login: " Anna ", password: "correct-horse-42", name: " Anna ", surname: "Smith", street: "Elm St",
                            house: "1", city: " Reno, NV ", clinicId: clinicId, language: .ru, acceptedPrivacy: true)
    }

    static func reno() throws -> GeocodeResult {
        GeocodeResult(query: "reno, nv", coordinate: try #require(Coordinate(latitude: 39.53, longitude: -119.81)),
                      precision: "city", source: "directory", cached: false, placeName: "Reno")
    }

    @Test func thePatientIsMadeFromTheFormWithTheNearestClinicOrTheOneChosen() throws {
        let write = GeocodeCacheWrite.hit(query: "reno, nv")
        let new = try ClientController.registering(
            RegistrationFacts(loginTaken: false, homeClinicExists: nil), Self.request(), place: try Self.reno(), nearest: 7,
            extras: (birthDate: "1990-02-03", phone: nil), hash: "argon", geocode: write, now: Self.now)
        #expect(new.geocode == write)
        let anna = new.client
        #expect(anna.id == nil && anna.login == "Anna" && anna.loginKey == "anna" && anna.passwordHash == "argon")
        #expect(anna.name == "Anna" && anna.city == "Reno, NV" && anna.lat == 39.53 && anna.lon == -119.81)
        #expect(anna.homeClinicId == 7 && anna.language == .ru && anna.birthDate == "1990-02-03")
        #expect(anna.privacyVersion == PrivacyPolicy.version && anna.privacyAcceptedAt == Self.now && anna.createdAt == Self.now)
        let chosen = try ClientController.registering(
            RegistrationFacts(loginTaken: false, homeClinicExists: true), Self.request(clinicId: 9), place: try Self.reno(), nearest: nil,
            extras: (nil, nil), hash: "argon", geocode: nil, now: Self.now)
        #expect(chosen.client.homeClinicId == 9 && chosen.geocode == nil)
    }

    @Test func aLoginTakenMeanwhileAndAClinicGoneAreRefused() throws {
        #expect(throws: ClinicError(.loginTaken, .loginTaken, "Anna")) {
            _ = try ClientController.registering(RegistrationFacts(loginTaken: true, homeClinicExists: nil), Self.request(),
                                                 place: try Self.reno(), nearest: 7, extras: (nil, nil), hash: "argon", geocode: nil,
                                                 now: Self.now)
        }
        #expect(throws: ClinicError(.notFound, .clinicNotFound, "9")) {
            _ = try ClientController.registering(RegistrationFacts(loginTaken: false, homeClinicExists: false), Self.request(clinicId: 9),
                                                 place: try Self.reno(), nearest: nil, extras: (nil, nil), hash: "argon", geocode: nil,
                                                 now: Self.now)
        }
    }

    /// A walk-in at the front desk (`StaffController.walkIn`): the fields are checked before
    /// anything is read; the member's clinic is the patient's; the walk-in row and the audit row
    /// name the member and, once inserted, the patient.
    @Test func aWalkInIsTheDesksClinicsPatient() throws {
        let desk = StaffMember(id: 40, login: "desk", name: "Dana", surname: "Reyes", role: .receptionist, clinicId: 10, doctorId: nil,
                               isActive: true, createdAt: Self.now)
        let request = WalkInRequest(name: " Olga ", surname: "Petrova", birthDate: "1961-04-12", phone: "+1 (775) 555-0134",
                                    email: " ", language: .ru)
        let (ask, decide) = try StaffController.walkIn(desk, request, requestId: "r1", now: Self.now)
        #expect(ask.homeClinicId == 10 && ask.loginKey.hasPrefix("~walk-in-"))
        let new = try decide(RegistrationFacts(loginTaken: false, homeClinicExists: true))
        #expect(new.client.name == "Olga" && new.client.email == nil && new.client.passwordHash.isEmpty && new.client.homeClinicId == 10)
        #expect(new.client.preferredLanguage == "ru" && new.client.birthDate == "1961-04-12" && new.geocode == nil)
        let walkIn = try #require(new.walkIn)
        #expect(walkIn.clinicId == 10 && walkIn.staffId == 40 && walkIn.at == Self.now)
        let audit = walkIn.audit(of: 77)
        #expect(audit.clientId == 77 && audit.action == .patientRegister && audit.requestId == "r1" && audit.actor == desk.auditActor)
        #expect(throws: ClinicError(.notFound, .clinicNotFound, "10")) {
            _ = try decide(RegistrationFacts(loginTaken: false, homeClinicExists: false))
        }
        #expect(throws: ClinicError.self) { _ = try decide(RegistrationFacts(loginTaken: true, homeClinicExists: true)) }
        let doctor = StaffMember(id: 41, login: "doc", name: "D", surname: "R", role: .doctor, clinicId: 10, doctorId: 1, isActive: true,
                                 createdAt: Self.now)
        #expect(throws: ClinicError.self) { _ = try StaffController.walkIn(doctor, request, requestId: nil, now: Self.now) }
        var bad = request
        bad.birthDate = "2099-01-01"
        #expect(throws: ClinicError.self) { _ = try StaffController.walkIn(desk, bad, requestId: nil, now: Self.now) }
    }
}
