import Crypto
import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

@Suite struct EncryptionTests {
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("crypt-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        var database: String { url.appendingPathComponent("c.sqlite").path }
        var key: String { database + ".key" }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    func open(_ folder: Folder) throws -> ClinicSystem {
        let database = try SQLiteStore.open(path: folder.database, migrations: projectMigrations)
        return ClinicSystem(store: database, resources: nil, hasher: fastHasher, now: { testNow })
    }

    func openWithClinic(_ folder: Folder) throws -> ClinicSystem {
        let system = try open(folder)
        _ = try system.importDirectory(Data("external_id,name,city,state,lat,lon\nLA1,Adventist,Los Angeles,CA,34.05,-118.25\n".utf8))
        return system
    }

    func raw(_ system: ClinicSystem) throws -> Row? {
        try system.sqliteFile.read { try Row.fetchOne($0, sql: "SELECT * FROM clients") }
    }

    @Test(.sqliteOnly) func personalFieldsAreSealedAndTheKeyFileIsPrivate() throws {
        let folder = try Folder()
        let system = try openWithClinic(folder)
        let client = try system.clients.registerUser(RegistrationRequest(
            login: "anna", password: "correct-horse-42", name: "Zelda", surname: "Quixote", street: "Xylophone Street",
            house: "77", city: "Los Angeles", acceptedPrivacy: true))
        let row = try #require(try raw(system))
        let blanks: [String] = ["name", "surname", "street", "house"].map { row[$0] }
        #expect(blanks == ["", "", "", ""])
        let lat: Double? = row["lat"], lon: Double? = row["lon"]
        #expect(lat == nil && lon == nil)
        let envelope: Data = try #require(row["personal"])
        for secret in ["Zelda", "Quixote", "Xylophone", "77"] {
            #expect(envelope.range(of: Data(secret.utf8)) == nil, "\(secret) in clear")
        }
        let file = try Data(contentsOf: URL(fileURLWithPath: folder.database))
        #expect(file.range(of: Data("Xylophone".utf8)) == nil, "nowhere in the database file")
        let read = try system.clients.getUserById(client.id ?? 0)
        #expect(read.name == "Zelda" && read.street == "Xylophone Street" && read.house == "77" && read.lat != nil)
        let mode = try FileManager.default.attributesOfItem(atPath: folder.key)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test(.sqliteOnly) func aMissingOrWrongKeyIsAClearErrorNeverGarbage() throws {
        let folder = try Folder()
        _ = try register(try openWithClinic(folder), "anna")
        let original = try Data(contentsOf: URL(fileURLWithPath: folder.key))
        try FileManager.default.removeItem(atPath: folder.key)
        #expect(expectError(.keyError) { _ = try open(folder).clients.getUserByLogin("anna") }?.key == .keyMissing)
        // A wrong password fails alike for a known and an unknown login, key or no key: the
        // key is needed only once the password matched.
        #expect(expectError(.invalidCredentials) { _ = try open(folder).clients.logIn(login: "anna", password: "wrong-horse-42") } != nil)
        #expect(expectError(.invalidCredentials) { _ = try open(folder).clients.logIn(login: "nobody", password: "wrong-horse-42") } != nil)
        #expect(expectError(.keyError) { _ = try open(folder).clients.logIn(login: "anna", password: "correct-horse-42") } != nil)
        #expect(!FileManager.default.fileExists(atPath: folder.key), "a missing key is never replaced by a new one")
        let other = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        try (other + "\n").write(toFile: folder.key, atomically: true, encoding: .utf8)
        chmod(folder.key, 0o600)
        #expect(expectError(.keyError) { _ = try open(folder).clients.getUserByLogin("anna") }?.key == .keyWrong)
        chmod(folder.key, 0o644)
        #expect(expectError(.keyError) { _ = try open(folder).clients.getUserByLogin("anna") }?.key == .keyInsecure)
        try original.write(to: URL(fileURLWithPath: folder.key))
        chmod(folder.key, 0o600)
        #expect(try open(folder).clients.getUserByLogin("anna").name == "Anna")
        // Directory search needs no key at all.
        try FileManager.default.removeItem(atPath: folder.key)
        #expect(try open(folder).clinics.getAllClinics().count == 1)
    }

    @Test func anEnvelopeMovedToAnotherPatientDoesNotOpen() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        try system.database.writing { tx in
            let annas = try #require(try tx.storedClient(id: anna.id ?? 0)?.personal)
            let bobs = try #require(try tx.storedClient(id: bob.id ?? 0)?.client)
            try tx.updateClient(bobs, personal: annas, hasEmail: false)
        }
        #expect(expectError(.keyError) { _ = try system.clients.getUserById(bob.id ?? 0) }?.key == .personalUnreadable)
    }

    @Test(.sqliteOnly) func rotatingTheKeyReencryptsEverythingAndRecoversFromAStop() throws {
        let folder = try Folder()
        let system = try openWithClinic(folder)
        for login in ["anna", "bob", "cleo"] { _ = try register(system, login) }
        let oldKey = try Data(contentsOf: URL(fileURLWithPath: folder.key))
        let oldEnvelope: Data = try #require(try raw(system)?["personal"])
        #expect(try system.sqliteFile.rotateKey() == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.key)) != oldKey)
        #expect(try #require(try raw(system)?["personal"]) != oldEnvelope)
        #expect(try open(folder).clients.getUserByLogin("cleo").name == "Anna", "a new process reads with the new key")

        // A rotation that stopped before its commit left a staged key that matches nothing:
        // readers ignore it (and never delete it: only a rotation, under the writer lock, may).
        let current = try Data(contentsOf: URL(fileURLWithPath: folder.key))
        try (SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() } + "\n")
            .write(toFile: folder.key + ".new", atomically: true, encoding: .utf8)
        chmod(folder.key + ".new", 0o600)
        #expect(try open(folder).clients.getUserByLogin("anna").name == "Anna")
        #expect(FileManager.default.fileExists(atPath: folder.key + ".new"))
        #expect(try open(folder).sqliteFile.rotateKey() == 3, "the next rotation clears it away first")
        #expect(!FileManager.default.fileExists(atPath: folder.key + ".new"))

        // One that stopped after its commit, before the rename: readers use the staged key,
        // which matches the database, and the next rotation installs it before moving on.
        let installed = try Data(contentsOf: URL(fileURLWithPath: folder.key))
        try FileManager.default.moveItem(atPath: folder.key, toPath: folder.key + ".new")
        try oldKey.write(to: URL(fileURLWithPath: folder.key))
        chmod(folder.key, 0o600)
        #expect(try open(folder).clients.getUserByLogin("bob").name == "Anna")
        #expect(try open(folder).sqliteFile.rotateKey() == 3)
        #expect(!FileManager.default.fileExists(atPath: folder.key + ".new"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.key)) != installed, "rotated past it")
        #expect(try open(folder).clients.getUserByLogin("cleo").name == "Anna")
        _ = current
    }

    /// A patient row edited in the file to hold a number as its sealed data: the rotation fails
    /// with `storage_error` and changes nothing (it trapped in GRDB's subscript before).
    @Test(.sqliteOnly) func aRotationRefusesAnUnreadableRowAndChangesNothing() throws {
        let folder = try Folder()
        let system = try openWithClinic(folder)
        _ = try register(system, "anna")
        try system.sqliteFile.writer.write { db in try db.execute(sql: "UPDATE clients SET personal = 5") }
        let key = try Data(contentsOf: URL(fileURLWithPath: folder.key))
        let before = try fingerprint(system)
        let refused = expectError(.storage) { _ = try system.sqliteFile.rotateKey() }
        #expect(refused?.arguments == ["clients.personal holds a value of another type than its column"], "\(String(describing: refused))")
        #expect(try fingerprint(system) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.key)) == key)
    }

    /// The calendar token and a confirmation code waiting in the outbox are sealed too: a
    /// rotation seals them again, so both still open afterwards.
    @Test(.sqliteOnly) func aRotationSealsCalendarTokensAndCodesAgain() async throws {
        let folder = try Folder()
        let system = try openWithClinic(folder)
        let anna = try register(system, "anna")
        let token = try await system.clients.calendarToken(clientId: anna.id ?? 0)
        _ = try await system.clients.setEmail(clientId: anna.id ?? 0, address: "anna@example.org")
        #expect(try system.sqliteFile.rotateKey() == 1)
        let fresh = try open(folder)
        #expect(try await fresh.clients.calendarToken(clientId: anna.id ?? 0) == token)
        _ = try fresh.clients.calendarFeed(token: token)
        let mailer = RecordingMailer()
        #expect(try await fresh.outbox.run(mailer: mailer, from: "clinic@example.org").sent == 1)
        #expect(mailer.messages.first?.text.contains("Subject: Your confirmation code: ") == true)
    }

    @Test(.sqliteOnly) func aLongRunningProcessFollowsARotationMadeByAnother() throws {
        let folder = try Folder()
        let session = try openWithClinic(folder) // as `clinic shell`: one system for a long time
        _ = try register(session, "anna")
        #expect(try session.clients.getUserByLogin("anna").name == "Anna") // its key is loaded
        #expect(try open(folder).sqliteFile.rotateKey() == 1) // `clinic admin rotate-key` meanwhile
        #expect(try session.clients.getUserByLogin("anna").name == "Anna", "the new key is read, not keyWrong")
    }

    @Test(.sqliteOnly) func rotatingInAFreshProcessKeepsDatabaseAndKeyFileTogether() throws {
        let folder = try Folder()
        _ = try register(try openWithClinic(folder), "anna")
        for _ in 0..<3 {
            // A new system each time, as `clinic admin rotate-key` runs in a new process.
            #expect(try open(folder).sqliteFile.rotateKey() == 1)
            #expect(!FileManager.default.fileExists(atPath: folder.key + ".new"))
            #expect(try open(folder).clients.getUserByLogin("anna").name == "Anna")
        }
    }

    @Test(.sqliteOnly) func theEncryptionMigrationGoesDownAndUpWithTheData() throws {
        let system = try makeSystem()
        _ = try register(system, "anna")
        try system.sqliteFile.migrate(to: SQLiteStore.encryptionVersion - 1)
        let plain = try #require(try raw(system))
        let name: String = plain["name"], street: String = plain["street"]
        #expect(name == "Anna" && street == "Main Street", "back in clear before the column goes")
        try system.sqliteFile.migrate()
        let sealedName: String? = try raw(system)?["name"]
        #expect(sealedName == "")
        #expect(try system.clients.getUserByLogin("anna").surname == "Smith")
    }

    @Test(.sqliteOnly) func aBackupUnderAnotherKeyIsNotRestored() throws {
        let folder = try Folder(), other = try Folder()
        let mine = try openWithClinic(folder)
        _ = try register(mine, "anna")
        let theirs = try openWithClinic(other)
        _ = try register(theirs, "bob")
        let copy = other.url.appendingPathComponent("copy.sqlite").path
        try theirs.sqliteFile.backup(to: copy)
        let before = try fingerprint(mine.sqliteFile)
        #expect(expectError(.invalidInput) { try mine.sqliteFile.restore(from: copy, keepingAside: folder.database + ".aside") }?.key == .backupOtherKey)
        #expect(try fingerprint(mine.sqliteFile) == before)
    }
}
