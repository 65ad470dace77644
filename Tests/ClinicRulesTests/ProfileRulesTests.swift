import Foundation
import Testing
@testable import ClinicKit

// A profile's change on plain facts (issue 56): `ClientController.changingProfile`. The stores'
// gather and write are `ClinicKitTests/AwaitedProfileTests.swift`'s.

@Suite struct ProfileRulesTests {
    static let now = Fixture.now

    static func anna() -> Client {
        Client(id: 1, login: "anna", loginKey: "anna", passwordHash: "x", name: "Anna", surname: "Smith", street: "Elm St", house: "1",
               city: "Boston", lat: 42.36, lon: -71.06, homeClinicId: 7, preferredLanguage: "en", privacyAcceptedAt: nil,
               privacyVersion: nil, createdAt: now)
    }

    static func phone() -> StoredPhone {
        StoredPhone(clientId: 1, numberSealed: Data([1, 2, 3]), numberKey: "k", confirmed: true, textReminders: true, textOffers: true)
    }

    static func reno() throws -> GeocodeResult {
        GeocodeResult(query: "reno, nv", coordinate: try #require(Coordinate(latitude: 39.53, longitude: -119.81)),
                      precision: "city", source: "directory", cached: false, placeName: "Reno")
    }

    @Test func theRecordIsRewrittenWithTheNewCitysPointAndItsGeocodeKept() throws {
        let write = GeocodeCacheWrite.insert(query: "reno, nv", CachedGeocode(latitude: 39.53, longitude: -119.81, precision: "city",
                                                                               source: "directory"), at: Self.now)
        let change = try ClientController.changingProfile(
            ClientChangeFacts(client: Self.anna(), emailConfirmation: nil), ProfileChanges(surname: " Ivanova ", city: " Reno, NV ", language: .ru),
            place: try Self.reno(), geocode: write, texts: (nil, nil), now: Self.now)
        var expected = Self.anna()
        expected.surname = "Ivanova"; expected.city = "Reno, NV"; expected.lat = 39.53; expected.lon = -119.81
        expected.preferredLanguage = "ru"
        #expect(change.writes == [.rewrite(expected), .recordGeocode(write)])
        #expect(change.result == expected && change.result.homeClinicId == 7, "the home clinic stays without one given")
    }

    @Test func whatComesByTextIsSavedOnTheNumberAndNeedsOne() throws {
        let withPhone = ClientChangeFacts(client: Self.anna(), emailConfirmation: nil, phone: Self.phone())
        let change = try ClientController.changingProfile(withPhone, ProfileChanges(clinicId: 9), place: nil, geocode: nil,
                                                          texts: (reminders: false, offers: nil), now: Self.now)
        var saved = Self.phone()
        saved.textReminders = false
        var moved = Self.anna()
        moved.homeClinicId = 9
        #expect(change.writes == [.rewrite(moved), .savePhone(saved, at: Self.now)])
        let untouched = try ClientController.changingProfile(withPhone, ProfileChanges(), place: nil, geocode: nil,
                                                             texts: (nil, nil), now: Self.now)
        #expect(untouched.writes == [.rewrite(Self.anna())], "the phone is not saved when texts are not changed")
        let none = ClientChangeFacts(client: Self.anna(), emailConfirmation: nil)
        #expect(throws: ClinicError(.notFound, .phoneNone)) {
            _ = try ClientController.changingProfile(none, ProfileChanges(), place: nil, geocode: nil, texts: (nil, true), now: Self.now)
        }
        #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) {
            _ = try ClientController.changingProfile(nil, ProfileChanges(), place: nil, geocode: nil, texts: (nil, nil), now: Self.now)
        }
    }
}
