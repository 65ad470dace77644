import Foundation
import Testing
@testable import ClinicKit

/// The nearest search and a registration awaited (issue 56), on the store under test: the same
/// answers and refusals as the blocking ones, the directory's finder made again when the
/// directory changed, and a refused registration that changes nothing. The registration's
/// decision itself is `ClinicRulesTests/RegistrationRulesTests.swift`'s.
@Suite struct AwaitedRegistrationTests {
    static func queries() -> [(name: String, query: NearestQuery)] {
        var everyday = NearestQuery(limit: 2)
        everyday.everydayOnly = true
        var child = NearestQuery(limit: 1, pediatricOnly: true)
        child.everydayOnly = true
        return [("four", NearestQuery(limit: 4)), ("pediatric", NearestQuery(limit: 3, pediatricOnly: true)),
                ("hospital", NearestQuery(limit: 5, hospitalOnly: true)), ("within 10 km", NearestQuery(limit: 5, withinKilometres: 10)),
                ("cardiology", NearestQuery(limit: 3, specialization: "Cardiology")),
                ("russian name", NearestQuery(limit: 2, specialization: "Психиатрия")),
                ("unknown", NearestQuery(limit: 2, specialization: "cardiolgy")), ("everyday", everyday), ("everyday child", child),
                ("bad limit", NearestQuery(limit: 0))]
    }

    /// What a search answered, as text: the clinics and their distances, or the refusal's key and arguments.
    static func answer(_ body: () async throws -> [NearbyClinic]) async -> String {
        do {
            return try await body().map { "\($0.clinic.externalId)@\(Int($0.distance))" }.joined(separator: ",")
        } catch let error as ClinicError {
            return "\(error.key) \(error.arguments)"
        } catch {
            return "\(error)"
        }
    }

    @Test func theAwaitedNearestSearchAnswersAsTheBlockingOne() async throws {
        let system = try makeSystem()
        let nearLA = try #require(Coordinate(latitude: 34.099, longitude: -118.289))
        // The awaited search first (it builds the finder), a second time (the clinics kept beside
        // it), then the blocking one.
        for round in 1...2 {
            for (name, query) in Self.queries() {
                let awaited = await Self.answer { try await system.clinics.nearest(to: nearLA, query) }
                let blocking = await Self.answer { try system.clinics.nearest(to: nearLA, query) }
                #expect(awaited == blocking, "\(name), round \(round)")
                #expect(!awaited.isEmpty || query.withinKilometres != nil, "\(name)")
            }
        }
        #expect(await Self.answer { try await system.clinics.nearest(to: nearLA, NearestQuery(limit: 5, specialization: "cardiolgy")) }
            .hasPrefix("specializationUnknown"))
        // A page of one state's clinics, and the page after it.
        let asked = NearestQuery(limit: 1)
        let first = try await system.clinics.nearestPage(to: nearLA, asked, state: " ca ", offset: 0)
        let second = try await system.clinics.nearestPage(to: nearLA, asked, state: "CA", offset: 1)
        func blockingPage() throws -> [NearbyClinic] {
            try system.clinics.nearestPage(to: nearLA, NearestQuery(limit: 2), state: "ca", offset: 0).items
        }
        #expect((first.items + second.items).map(\.clinic.externalId) == ["LA2", "LA1"] && first.more && !second.more)
        #expect(try blockingPage().map(\.clinic.externalId) == ["LA2", "LA1"])
        // A clinic added elsewhere moves the directory's version: the awaited search finds it.
        _ = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nLA3,Sunset Clinic,Los Angeles,CA,34.0991,-118.2891\n".utf8))
        #expect(try await system.clinics.nearest(to: nearLA).first?.clinic.externalId == "LA3")
        let everyKind = NearestQuery(limit: 3)
        let awaited = await Self.answer { try await system.clinics.nearest(to: nearLA, everyKind) }
        let blocking = await Self.answer { try system.clinics.nearest(to: nearLA, everyKind) }
        #expect(awaited == blocking && awaited.hasPrefix("LA3"))
    }

    @Test func theAwaitedNearestClinicsRemembersTheAddress() async throws {
        let system = try makeSystem()
        _ = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nZZ1,Desert,Zzyzx Springs,CA,35.14,-116.1\n".utf8))
        let search = try await system.nearestClinics(from: .address("Zzyzx Springs"), NearestQuery(limit: 1)) {
            throw ClinicError(.notLoggedIn, .notLoggedIn)
        }
        #expect(search.found.map(\.clinic.externalId) == ["ZZ1"])
        #expect(try storedInt(system, "SELECT hits FROM geocode_cache WHERE query = 'zzyzx springs'") == 0, "the address kept")
    }

    static func request(_ login: String, city: String = "Zzyzx Springs", clinicId: Int64? = nil) -> RegistrationRequest {
        RegistrationRequest(login: login, password: "correct-horse-42", name: "Anna", surname: "Smith", street: "Main Street",
                            house: "12", city: city, clinicId: clinicId, acceptedPrivacy: true)
    }

    @Test func anAwaitedRegistrationStoresThePatientSealedWithTheNearestClinic() async throws {
        let system = try makeSystem()
        _ = try system.clinics.importClinics(Data("external_id,name,city,state,lat,lon\nZZ1,Desert,Zzyzx Springs,CA,35.14,-116.1\n".utf8))
        let anna = try await system.clients.registerUser(Self.request(" anna "), passwords: InlinePasswordRunner())
        let id = try #require(anna.id)
        #expect(anna.login == "anna" && anna.city == "Zzyzx Springs" && abs((anna.lat ?? 0) - 35.14) < 1e-9)
        #expect(anna.homeClinicId == (try clinic(system, "ZZ1").id), "the nearest clinic is hers")
        #expect(try await system.clients.getUserById(id) == anna)
        let raw = try system.database.reading { tx in try tx.storedClient(id: id)?.client }
        #expect(raw?.name == "" && raw?.street == "", "sealed")
        #expect(try storedInt(system, "SELECT count(*) FROM patient_search WHERE client_id = \(id)") ?? 0 > 0, "her search tokens")
        #expect(try storedInt(system, "SELECT hits FROM geocode_cache WHERE query = 'zzyzx springs'") == 0, "the city's geocode kept")
        _ = try await system.clients.logIn(login: "ANNA", password: "correct-horse-42", passwords: InlinePasswordRunner())
        // A home clinic chosen is kept.
        let ny = try clinic(system, "NY1").id
        let boris = try await system.clients.registerUser(Self.request("boris", clinicId: ny), passwords: InlinePasswordRunner())
        #expect(boris.homeClinicId == ny)
        let borisTaken = try await system.clients.isLoginTaken("BORIS"), veraTaken = try await system.clients.isLoginTaken("vera")
        #expect(borisTaken && !veraTaken)
    }

    @Test func aRefusedAwaitedRegistrationChangesNothing() async throws {
        let system = try makeSystem()
        _ = try register(system, "anna")
        let before = try fingerprint(system)
        for (request, code): (RegistrationRequest, MessageKey) in [
            (Self.request("ANNA", city: "Los Angeles"), .loginTaken),
            (Self.request("boris", city: "Los Angeles", clinicId: 99_999), .clinicNotFound),
            (Self.request("boris", city: "Qwertyville"), .cityUnknown), (Self.request("a b"), .loginInvalid),
        ] {
            do {
                _ = try await system.clients.registerUser(request, passwords: InlinePasswordRunner())
                Issue.record("\(request.login) was registered")
            } catch let error as ClinicError {
                #expect(error.key == code, "\(error)")
            }
            // The form's problems awaited are the blocking ones.
            let awaited = try await system.clients.registrationProblems(request).map { "\($0.field) \($0.error.key)" }
            func blockingProblems() throws -> [String] {
                try system.clients.registrationProblems(request).map { "\($0.field) \($0.error.key)" }
            }
            let blocking = try blockingProblems()
            #expect(awaited == blocking)
        }
        #expect(try fingerprint(system) == before)
    }
}
