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
}
