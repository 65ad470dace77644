import Foundation
import Testing
@testable import ClinicKit

/// A patient's log-in awaited (issue 56: `LogInStore`), on both stores: the same answers as the
/// synchronous `logIn` (ControllerTests, SecurityTests, ThrottlingTests), its lock, its
/// privacy policy and its renewed hash; and the completion's own guards, asked of the store directly.
@Suite struct AwaitedLogInTests {
    let passwords = InlinePasswordRunner()

    @Test func aLogInAwaitedOpensASessionAndRefusesAlike() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna").id ?? 0
        let phone = Device(name: "Phone", platform: "ios", appVersion: "1.0")
        let (client, token) = try await system.clients.logIn(login: "Anna", password: "correct-horse-42", device: phone,
                                                             passwords: passwords)
        #expect(client.id == anna && client.name == "Anna" && client.street == "Main Street")
        #expect(try await system.clients.signedInPatient(token: token).id == anna)
        let listed = try await system.clients.signedInSessions(clientId: anna, current: token)
        #expect(listed.count == 1 && listed.first?.isCurrent == true && listed.first?.device == phone)
        #expect(try storedInt(system, "SELECT count(*) FROM login_attempts") == 0, "a success gives its attempt back")

        // An unknown name, a wrong password, a name no account can have: one answer.
        for (login, password) in [("nobody", "correct-horse-42"), ("anna", "wrong-horse-42"),
                                  (String(repeating: "a", count: 300), "correct-horse-42")] {
            let refused = await #expect(throws: ClinicError.self) {
                _ = try await system.clients.logIn(login: login, password: password, passwords: passwords)
            }
            #expect(refused == ClinicError(.invalidCredentials, .invalidCredentials), "\(login.prefix(10))")
        }
        let badDevice = Device(name: String(repeating: "x", count: 500), platform: "ios", appVersion: "1.0")
        await #expect(throws: ClinicError.self) {
            _ = try await system.clients.logIn(login: "anna", password: "correct-horse-42", device: badDevice, passwords: passwords)
        }

        // A session's own, shorter idle limit.
        let web = try await system.clients.logIn(login: "anna", password: "correct-horse-42", idleSeconds: 600,
                                                 passwords: passwords).token
        clock.advance(601)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await system.clients.signedInPatient(token: web) }
        #expect(try await system.clients.signedInPatient(token: token).id == anna)
    }

    /// Five attempts a window: a success gives its own back, the sixth is refused unchecked (its
    /// count rolled back), and the window's end forgets them.
    @Test func theLockHoldsAwaited() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        _ = try register(system, "anna")
        func attempt(_ password: String) async -> ClinicError.Code? {
            do {
                _ = try await system.clients.logIn(login: "anna", password: password, passwords: passwords)
                return nil
            } catch let error as ClinicError {
                return error.code
            } catch {
                return .storage
            }
        }
        for _ in 0..<4 { #expect(await attempt("wrong-horse-42") == .invalidCredentials) }
        for _ in 0..<3 { #expect(await attempt("correct-horse-42") == nil) }
        #expect(try storedInt(system, "SELECT failures FROM login_attempts") == 4)
        #expect(await attempt("wrong-horse-42") == .invalidCredentials)
        #expect(await attempt("correct-horse-42") == .accountLocked, "the sixth: not even the right password is checked")
        #expect(try storedInt(system, "SELECT failures FROM login_attempts") == 5, "the refused attempt is not counted")
        clock.advance(ClientController.throttleWindow)
        #expect(await attempt("correct-horse-42") == nil)
        #expect(try storedInt(system, "SELECT count(*) FROM login_attempts") == 0)
    }

    /// A patient who accepted an older privacy policy: refused until they accept (the attempt
    /// given back), accepted at log-in then; a hash of other parameters renewed at log-in.
    @Test func privacyAndTheHashAwaited() async throws {
        let clock = TestClock()
        let weaker = PasswordHasher(parameters: .init(memoryKiB: 512, iterations: 1, parallelism: 1))
        let system = try makeSystem(clock: clock, hasher: weaker)
        let anna = try register(system, "anna").id ?? 0
        try system.database.writing { tx in
            let accepted = try #require(try tx.storedClient(id: anna)?.client.privacyAcceptedAt)
            try tx.setPrivacyAccepted(ofClient: anna, version: 0, at: accepted)
        }
        let refused = await #expect(throws: ClinicError.self) {
            _ = try await system.clients.logIn(login: "anna", password: "correct-horse-42", passwords: passwords)
        }
        #expect(refused?.code == .privacyNotAccepted && refused?.key == .privacyChanged)
        #expect(try storedInt(system, "SELECT count(*) FROM login_attempts") == 0, "not a failed log-in")

        // The same store with stronger parameters (the tests' standard): the weaker hash is renewed.
        let now = clock
        let renewing = ClinicSystem(store: system.database, resources: nil, hasher: fastHasher, now: { now.now })
        clock.advance(60)
        let (client, _) = try await renewing.clients.logIn(login: "anna", password: "correct-horse-42", acceptPrivacy: true,
                                                           passwords: passwords)
        #expect(client.privacyVersion == PrivacyPolicy.version && client.privacyAcceptedAt?.seconds == clock.now.seconds)
        let stored = try #require(try storedRows(system, "SELECT password_hash FROM clients").first?.columns["password_hash"])
        #expect(PasswordHasher.parameters(of: stored) == fastHasher.parameters && client.passwordHash == stored)
        #expect(fastHasher.verify("correct-horse-42", against: stored))
        _ = try await renewing.clients.logIn(login: "anna", password: "correct-horse-42", passwords: passwords)
    }

    /// The completion asked of the store: a hash renewed only while the stored one is the one it
    /// replaces (a password changed meanwhile wins), and nothing written for a patient gone.
    @Test func theCompletionKeepsAPasswordChangedMeanwhileAndWritesNothingForNoOne() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna").id ?? 0
        let stored = try #require(try storedRows(system, "SELECT password_hash FROM clients").first?.columns["password_hash"])
        func completion(_ clientId: Int64) -> LogInCompletion {
            LogInCompletion(clientId: clientId, loginKey: "anna", window: clock.now,
                            newHash: (try? fastHasher.hash("another-horse-42")).map { ($0, "not the stored hash") },
                            acceptedPrivacyVersion: nil, now: clock.now,
                            session: SessionManager.opening(token: SessionManager.newToken(), now: clock.now, device: nil, idleSeconds: nil))
        }
        let done = try #require(try await system.database.completePatientLogIn(completion(anna)))
        #expect(done.client.client.passwordHash == stored)
        #expect(try storedInt(system, "SELECT count(*) FROM sessions") == 1)
        #expect(try await system.database.completePatientLogIn(completion(anna + 1000)) == nil)
        #expect(try storedInt(system, "SELECT count(*) FROM sessions") == 1)
    }

    /// A staff member's log-in awaited: a session that signs in (its own idle limit kept), one
    /// answer for a wrong password, an unknown name and a disabled account, and the lock on the
    /// name's `staff:` key, a patient's attempts apart.
    @Test func aStaffLogInAwaited() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        _ = try register(system, "dana")
        let la1 = try clinic(system, "LA1").id ?? 0
        let dana = try system.staff.addStaff(StaffInput(login: "dana", name: "Dana", surname: "Desk", role: .receptionist,
                                                        clinicId: la1, password: "counter-shift-73"))
        let (member, token) = try await system.staff.logIn(login: "DANA", password: "counter-shift-73", idleSeconds: 600,
                                                           passwords: passwords)
        #expect(member.id == dana.id && member.login == "dana")
        #expect(try await system.staff.signedIn(token: token).id == dana.id)
        #expect(try storedInt(system, "SELECT count(*) FROM login_attempts") == 0)
        clock.advance(601)
        await #expect(throws: ClinicError.self) { _ = try await system.staff.signedIn(token: token) }

        func attempt(_ login: String, _ password: String) async -> ClinicError.Code? {
            do {
                _ = try await system.staff.logIn(login: login, password: password, passwords: passwords)
                return nil
            } catch let error as ClinicError {
                return error.code
            } catch {
                return .storage
            }
        }
        #expect(await attempt("nobody", "counter-shift-73") == .invalidCredentials)
        for _ in 0..<ClientController.throttleLimit { #expect(await attempt("dana", "wrong-shift-73") == .invalidCredentials) }
        #expect(await attempt("dana", "counter-shift-73") == .accountLocked)
        #expect(try await system.clients.logIn(login: "dana", password: "correct-horse-42", passwords: passwords).client.login == "dana",
                "the patient of the same name has attempts of their own")
        clock.advance(ClientController.throttleWindow)
        #expect(await attempt("dana", "counter-shift-73") == nil)
        _ = try system.staff.disable(dana.id)
        #expect(await attempt("dana", "counter-shift-73") == .invalidCredentials, "a disabled account is a wrong password")
    }
}
