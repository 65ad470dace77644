import CArgon2
import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

@Suite struct PasswordTests {
    @Test func hashesAreArgon2idWithOwaspParametersAndSalted() throws {
        let hasher = PasswordHasher()
        let first = try hasher.hash("correct-horse-42")
        let second = try hasher.hash("correct-horse-42")
        #expect(first.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(first != second, "each hash has its own salt")
        #expect(hasher.verify("correct-horse-42", against: first))
        #expect(!hasher.verify("correct-horse-43", against: first))
        #expect(!hasher.verify("correct-horse-42", against: "$argon2id$garbage"))
        #expect(!hasher.verify("", against: ""))
        #expect(!hasher.needsRehash(first))
    }

    @Test func weakerHashesNeedRehash() throws {
        let weak = try fastHasher.hash("pw")
        #expect(PasswordHasher.parameters(of: weak) == .init(memoryKiB: 1024, iterations: 1, parallelism: 1))
        #expect(PasswordHasher().needsRehash(weak))
        #expect(PasswordHasher().needsRehash("$2b$10$bcrypt-hash"))
    }

    @Test func loginUpgradesAWeakHash() throws {
        let system = try makeSystem(hasher: fastHasher)
        _ = try register(system, "anna")
        let strong = ClientController(database: system.database, hasher: PasswordHasher(), now: { testNow })
        let (client, _) = try strong.logIn(login: "anna", password: "correct-horse-42")
        #expect(client.passwordHash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        let stored = try system.clients.getUserByLogin("anna")
        #expect(stored.passwordHash == client.passwordHash)
        // A wrong password does not touch the hash.
        #expect(expectError(.invalidCredentials) { _ = try strong.logIn(login: "anna", password: "wrong-horse-42") } != nil)
        #expect(try system.clients.getUserByLogin("anna").passwordHash == client.passwordHash)
    }

    @Test func theDecoyHashCostsAFullArgon2Run() {
        // Decoding succeeds and the hash is computed: the verdict is a mismatch, not a decoding failure.
        let status = ClientController.owaspDecoy.withCString { encoded in
            Array("any-password".utf8).withUnsafeBytes { argon2id_verify(encoded, $0.baseAddress, $0.count) }
        }
        #expect(status == ARGON2_VERIFY_MISMATCH.rawValue)
        #expect(PasswordHasher.parameters(of: ClientController.owaspDecoy) == .owaspMinimum)
        #expect(ClientController.decoyHash(fastHasher) == ClientController.decoyHash(fastHasher), "made once per process")
    }

    @Test func aChangedPrivacyPolicyIsAcceptedAgainAtTheNextLogin() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        // As if anna had accepted an older version.
        try system.database.writing { tx in
            let accepted = try #require(try tx.storedClient(id: anna.id ?? 0)?.client.privacyAcceptedAt)
            try tx.setPrivacyAccepted(ofClient: anna.id ?? 0, version: 0, at: accepted)
        }
        let refused = expectError(.privacyNotAccepted) { _ = try system.clients.logIn(login: "anna", password: "correct-horse-42") }
        #expect(refused?.key == .privacyChanged)
        #expect(try storedInt(system, "SELECT count(*) FROM login_attempts") == 0, "not a failed log-in")
        #expect(expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "anna", password: "wrong-horse-42") } != nil,
                "a wrong password is still just that")
        let (client, _) = try system.clients.logIn(login: "anna", password: "correct-horse-42", acceptPrivacy: true)
        #expect(client.privacyVersion == PrivacyPolicy.version && client.privacyAcceptedAt == testNow)
        #expect(try system.clients.getUserById(anna.id ?? 0).privacyVersion == PrivacyPolicy.version)
        _ = try system.clients.logIn(login: "anna", password: "correct-horse-42")
    }

    @Test func unknownLoginAndWrongPasswordFailAlike() throws {
        let system = try makeSystem()
        _ = try register(system, "anna")
        let unknown = expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "nobody", password: "correct-horse-42") }
        let wrong = expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "anna", password: "wrong-horse-42") }
        #expect(unknown != nil)
        #expect(unknown == wrong)
    }
}

@Suite struct ThrottlingTests {
    @Test func fiveFailuresLockANameForFifteenMinutesKnownOrNot() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        _ = try register(system, "anna")
        for login in ["anna", "nobody"] {
            for _ in 0..<ClientController.throttleLimit {
                #expect(expectError(.invalidCredentials) { _ = try system.clients.logIn(login: login, password: "wrong-horse-42") } != nil)
                clock.advance(60)
            }
            // Locked now: even the right password is not checked, and the answer is the same for both names.
            let locked = expectError(.accountLocked) { _ = try system.clients.logIn(login: login.uppercased(), password: "correct-horse-42") }
            #expect(locked != nil, "\(login)")
        }
        clock.advance(15 * 60)
        #expect(try system.clients.logIn(login: "anna", password: "correct-horse-42").client.login == "anna")
        #expect(try storedInt(system, "SELECT count(*) FROM login_attempts WHERE login_key = 'anna'") == 0,
                "a success clears the counter")
    }

    @Test func failuresOutsideTheWindowStartAgain() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        _ = try register(system, "anna")
        for _ in 0..<4 { _ = expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "anna", password: "nope-nope-42") } }
        clock.advance(16 * 60)
        for _ in 0..<4 { _ = expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "anna", password: "nope-nope-42") } }
        #expect(try system.clients.logIn(login: "anna", password: "correct-horse-42").client.login == "anna", "4 + 4 in two windows")
    }
}

@Suite struct SessionTests {
    @Test func tokensAreRandomAndOnlyTheirHashIsStored() throws {
        let system = try makeSystem()
        _ = try register(system, "anna")
        let (_, token) = try system.clients.logIn(login: "ANNA", password: "correct-horse-42")
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        let (_, other) = try system.clients.logIn(login: "anna", password: "correct-horse-42")
        #expect(token != other)
        let stored = try storedRows(system, "SELECT token_hash FROM sessions").compactMap { $0["token_hash"] as String? }
        #expect(stored.count == 2)
        #expect(!stored.contains(token))
        #expect(stored.contains(SessionManager.hash(token)))
        #expect(try system.clients.currentUser(token: token).login == "anna")
    }

    @Test func sessionsExpireAfterThirtyIdleDays() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        _ = try register(system, "anna")
        let (_, token) = try system.clients.logIn(login: "anna", password: "correct-horse-42")
        let before = try fingerprint(system)
        clock.advance(29 * 86_400)
        #expect(try system.clients.currentUser(token: token).login == "anna")
        #expect(try fingerprint(system) == before, "resolving a session writes nothing")
        try system.clients.touchSession(token: token)
        clock.advance(29 * 86_400)
        #expect(try system.clients.currentUser(token: token).login == "anna", "a recorded use keeps it alive")
        clock.advance(30 * 86_400 + 1)
        #expect(expectError(.notLoggedIn) { _ = try system.clients.currentUser(token: token) } != nil)
        // The next log-in purges the expired session.
        _ = try system.clients.logIn(login: "anna", password: "correct-horse-42")
        #expect(try storedInt(system, "SELECT count(*) FROM sessions") == 1)
    }

    /// A web session carries its own idle limit (issue 55: 30 minutes for a patient who did not
    /// tick "Keep me signed in", 15 for staff), counted from its last use; the API's and the
    /// CLI's sessions keep theirs. On both stores.
    @Test func webSessionsEndAfterTheirOwnIdleLimit() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let (_, web) = try system.clients.logIn(login: "anna", password: "correct-horse-42", idleSeconds: 1800)
        let (_, app) = try system.clients.logIn(login: "anna", password: "correct-horse-42")
        clock.advance(1800)
        #expect(try system.clients.currentUser(token: web).login == "anna", "idle for exactly its limit: still live")
        try system.clients.touchSession(token: web)
        clock.advance(1800)
        #expect(try system.clients.currentUser(token: web).login == "anna", "a use renews it")
        clock.advance(1)
        #expect(expectError(.notLoggedIn) { _ = try system.clients.currentUser(token: web) } != nil)
        #expect(try system.clients.currentUser(token: app).login == "anna", "the app's session keeps its 30 days")
        #expect(try system.clients.signedInSessions(clientId: anna.id ?? 0, current: app).count == 1,
                "an ended web session is not listed among the devices")

        let la1 = try clinic(system, "LA1").id ?? 0
        _ = try system.staff.addStaff(StaffInput(login: "desk", name: "Sam", surname: "Lee", role: .receptionist, clinicId: la1,
                                                 password: "staff-passphrase-77"))
        let (_, desk) = try system.staff.logIn(login: "desk", password: "staff-passphrase-77", idleSeconds: 900)
        let (_, deskApp) = try system.staff.logIn(login: "desk", password: "staff-passphrase-77")
        clock.advance(900)
        #expect(try system.staff.current(token: desk).login == "desk")
        clock.advance(1)
        #expect(expectError(.notLoggedIn) { _ = try system.staff.current(token: desk) } != nil)
        #expect(try system.staff.current(token: deskApp).login == "desk", "the staff API's session keeps its 12 hours")
    }

    @Test func logoutEndsTheSessionAndBadTokensAreRefused() throws {
        let system = try makeSystem()
        _ = try register(system, "anna")
        let (_, token) = try system.clients.logIn(login: "anna", password: "correct-horse-42")
        #expect(try system.clients.logOut(token: token))
        #expect(expectError(.notLoggedIn) { _ = try system.clients.currentUser(token: token) } != nil)
        for bad in [nil, "", "zz", String(repeating: "g", count: 64), token.uppercased(), "' OR 1=1 --"] {
            #expect(expectError(.notLoggedIn) { _ = try system.clients.currentUser(token: bad) } != nil)
        }
    }

    @Test func sessionFileIsPrivateAndItsLocationFollowsTheEnvironment() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("session-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = SessionFile(path: folder.path + "/state/clinic/session")
        try file.write("abc")
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try file.read() == "abc")
        chmod(file.path, 0o644)
        #expect(expectError(.insecureSessionFile) { _ = try file.read() } != nil)
        try file.write("def") // rewriting makes it private again
        #expect(try file.read() == "def")
        file.delete()
        #expect(try file.read() == nil)

        #expect(SessionFile.location(environment: ["CLINIC_SESSION": "/x/s", "XDG_STATE_HOME": "/y", "HOME": "/h"]).path == "/x/s")
        #expect(SessionFile.location(environment: ["XDG_STATE_HOME": "/y", "HOME": "/h"]).path == "/y/clinic/session")
        #expect(SessionFile.location(environment: ["HOME": "/h"]).path == "/h/.local/state/clinic/session")
    }
}
