import Foundation
import Testing
@testable import ClinicKit

/// A profile's change awaited (issue 56), on the store under test: the city looked up awaited,
/// one change of the patient's locked record with the geocode and the phone in it, and a refusal
/// that changes nothing. The decision itself is `ClinicRulesTests/ProfileRulesTests.swift`'s.
@Suite struct AwaitedProfileTests {
    @Test func theAwaitedChangeGeocodesTheCityAndKeepsTheDataSealed() async throws {
        let system = try makeSystem()
        _ = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nZZ1,Desert,Zzyzx Springs,CA,35.14,-116.1\n".utf8))
        let anna = try register(system, "anna")
        let id = try #require(anna.id)
        let updated = try await system.clients.updateProfile(clientId: id, ProfileChanges(surname: " Ivanova ", city: "Zzyzx Springs",
                                                                                          language: .ru))
        #expect(updated.surname == "Ivanova" && updated.city == "Zzyzx Springs" && updated.language == .ru)
        #expect(abs((updated.lat ?? 0) - 35.14) < 1e-9, "the new city was looked up")
        #expect(try await system.clients.getUserById(id) == updated)
        #expect(try storedInt(system, "SELECT hits FROM geocode_cache WHERE query = 'zzyzx springs'") == 0, "its geocode kept")
        let raw = try system.database.reading { tx in try tx.storedClient(id: id)?.client }
        #expect(raw?.surname == "" && raw?.name == "", "still sealed")
        // The same city again counts the cached geocode's use, in the same transaction.
        _ = try await system.clients.updateProfile(clientId: id, ProfileChanges(city: "zzyzx springs"))
        #expect(try storedInt(system, "SELECT hits FROM geocode_cache WHERE query = 'zzyzx springs'") == 1)
    }

    @Test func aRefusedChangeChangesNothing() async throws {
        let system = try makeSystem()
        let id = try #require(try register(system, "anna").id)
        let before = try fingerprint(system)
        for (changes, texts, code): (ProfileChanges, (Bool?, Bool?), MessageKey) in [
            (ProfileChanges(name: "R2D2"), (nil, nil), .fieldLettersOnly),
            (ProfileChanges(city: "Qwertyville"), (nil, nil), .cityUnknown),
            (ProfileChanges(clinicId: 99_999), (nil, nil), .clinicNotFound),
            (ProfileChanges(surname: "Ivanova"), (false, nil), .phoneNone),
        ] {
            do {
                _ = try await system.clients.updateProfile(clientId: id, changes, texts: texts)
                Issue.record("\(changes) was taken")
            } catch let error as ClinicError {
                #expect(error.key == code, "\(error)")
            }
        }
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) {
            _ = try await system.clients.updateProfile(clientId: 99_999, ProfileChanges(surname: "Nobody"))
        }
        #expect(try fingerprint(system) == before)
    }

    @Test func whatComesByTextIsSavedWithTheProfile() async throws {
        let system = try makeSystem()
        let id = try #require(try register(system, "anna").id)
        // A number as the store keeps it (no text gateway here to confirm one through).
        try system.database.writing { tx in
            try tx.savePhone(StoredPhone(clientId: id, numberSealed: Data([1, 2, 3]), numberKey: "key", confirmed: true,
                                         textReminders: true, textOffers: true), at: testNow)
        }
        let updated = try await system.clients.updateProfile(clientId: id, ProfileChanges(surname: "Ivanova"),
                                                            texts: (reminders: false, offers: nil))
        #expect(updated.surname == "Ivanova")
        #expect(try storedInt(system, "SELECT count(*) FROM phones WHERE NOT text_reminders AND text_offers AND confirmed") == 1)
    }
}
