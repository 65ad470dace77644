import ClinicKit
import ClinicTestPostgres
import Foundation
import Testing
@testable import ClinicStorePostgres

/// The round trips a hot request costs on PostgreSQL (issue 44's budgets), counted through the
/// store (`PostgresStore.statementsSent`: every statement, `BEGIN` and `COMMIT` included). A
/// request over its budget fails here, so the count cannot creep back.
@Suite struct RoundTripBudgetTests {
    static let now = Date(timeIntervalSince1970: 1_795_348_800)

    /// A bearer token's look-up (every signed-in request): one statement, not a read
    /// transaction of five (BEGIN, the session, the patient, the key check, COMMIT).
    @Test func aBearerTokensLookUpIsOneRoundTrip() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(try TestPostgres.migrations())
            try await onOwnThread {
                let now = Self.now
                let system = ClinicSystem(store: store, resources: nil,
                                          hasher: PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1)),
                                          now: { now })
                _ = try system.clinics.importClinics(Data("""
                    external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
                    LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE,0,1,America/Los_Angeles
                    """.utf8), demo: false)
                _ = try system.clients.registerUser(RegistrationRequest(
                    login: "anna", password: "correct-horse-42", name: "Anna", surname: "Smith", street: "Main Street",
                    house: "12", city: "Los Angeles", acceptedPrivacy: true))
                let token = try system.clients.logIn(login: "anna", password: "correct-horse-42").token

                func roundTrips(_ body: () throws -> Void) rethrows -> Int {
                    let before = store.statementsSent.current
                    try body()
                    return store.statementsSent.current - before
                }
                var client: Client?
                #expect(try roundTrips { client = try system.clients.currentUser(token: token) } == 1)
                // The sealed fields opened under the store's key: the whole patient, not only the session.
                #expect(client?.name == "Anna" && client?.street == "Main Street")
                // An unknown token costs the same one statement and is refused; a malformed one costs none.
                let unknown = String(repeating: "a", count: 64)
                #expect(roundTrips { #expect(throws: ClinicError.self) { _ = try system.clients.currentUser(token: unknown) } } == 1)
                #expect(roundTrips { #expect(throws: ClinicError.self) { _ = try system.clients.currentUser(token: "x") } } == 0)
                // After the session ends, the same token is refused.
                try system.clients.logOut(token: token)
                #expect(throws: ClinicError.self) { _ = try system.clients.currentUser(token: token) }

                // A staff session's look-up: one statement too.
                let clinicId = try #require(try store.reading { tx in try tx.clinic(externalId: "LA1")?.id })
                _ = try system.staff.addStaff(StaffInput(login: "dana", name: "Dana", surname: "Desk", role: .receptionist,
                                                         clinicId: clinicId, password: "counter-shift-73"))
                let staffToken = try system.staff.logIn(login: "dana", password: "counter-shift-73").token
                var member: StaffMember?
                #expect(try roundTrips { member = try system.staff.current(token: staffToken) } == 1)
                #expect(member?.login == "dana")
                _ = try system.staff.logOut(token: staffToken)
                #expect(throws: ClinicError.self) { _ = try system.staff.current(token: staffToken) }
            }
        }
    }
}
