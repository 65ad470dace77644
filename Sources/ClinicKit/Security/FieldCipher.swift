import Crypto
import Foundation

/// The 256-bit key that encrypts personal data, kept in `<database>.key` (base64, mode 0600)
/// beside the database and never inside it. `settings.encryption.key_check` holds an HMAC
/// of a fixed text under the key, so a wrong key is told apart from a missing one and is
/// refused before it can produce garbage.
public struct KeyFile: Sendable {
    public let path: String

    public init(databasePath: String) { path = databasePath + ".key" }

    init(path: String) { self.path = path }

    /// What `carry` did.
    public enum Carried: Sendable, Equatable {
        case copied, same, differs, noSource
    }

    /// Copies the key file at `source` to `target` when `target` has none (mode 0600, a missing
    /// folder made 0700): a copied store's sealed data and audit chain need the keys they were
    /// made with. A target that holds a key already is left alone (`same` or `differs`).
    public static func carry(from source: String, to target: String) throws -> Carried {
        guard let text = try readText(source) else { return .noSource }
        if let existing = try readText(target) { return existing == text ? .same : .differs }
        try write(text: text, to: target, exclusive: true)
        return .copied
    }

    /// Before a copy: refuses (`copy_key_conflict`, nothing copied yet) when `target` holds a
    /// key other than `source`'s, which `carry` would then leave in place under the copied data.
    public static func checkCarry(from source: String, to target: String) throws {
        guard let text = try readText(source), let existing = try readText(target), existing != text else { return }
        throw ClinicError(.keyError, .copyKeyConflict, source, target)
    }

    /// Where a new key waits while `rotate-key` re-encrypts (see `SQLiteStore.rotateKey`).
    package var stagedPath: String { path + ".new" }

    package static func newKey() -> SymmetricKey { SymmetricKey(size: .bits256) }

    /// Writes a key file durably (the file and its folder entry are synced). `exclusive`: only
    /// if there is none yet (two processes creating a database's first key cannot both win).
    package static func write(_ key: SymmetricKey, to path: String, exclusive: Bool = false) throws {
        try write(text: base64(key) + "\n", to: path, exclusive: exclusive)
    }

    static func base64(_ key: SymmetricKey) -> String { key.withUnsafeBytes { Data($0).base64EncodedString() } }

    /// Writes a key file's text (the data key's, or the audit key's with its anchor line).
    /// A missing folder is made, readable by this user only (a PostgreSQL store's default key
    /// folder, `~/.config/clinic`, may not exist yet).
    ///
    /// `exclusive`: the file is written whole under a temporary name and then linked to its
    /// name, which fails if the name is taken. So a reader never sees a key file half written,
    /// and of two processes (or threads) making the first key of a database at once — servers of
    /// one PostgreSQL database registering their first patients — one wins and the other can
    /// read the winner's key (`keyUnwritable` for it here; see `PersonalDataKey`).
    static func write(text: String, to path: String, exclusive: Bool = false) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw ClinicError(.keyError, .keyUnwritable, path)
            }
        }
        guard exclusive else {
            try writeWhole(text: text, to: path, flags: O_TRUNC)
            syncFolder(of: path)
            return
        }
        let temporary = path + ".\(getpid()).\(UInt64.random(in: 0...UInt64.max)).tmp"
        try writeWhole(text: text, to: temporary, flags: O_EXCL)
        let linked = link(temporary, path) == 0
        unlink(temporary)
        syncFolder(of: path)
        guard linked else { throw ClinicError(.keyError, .keyUnwritable, path) }
    }

    /// The file at `path` (created, mode 0600) holding `text`, synced.
    private static func writeWhole(text: String, to path: String, flags: Int32) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | flags | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ClinicError(.keyError, .keyUnwritable, path) }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard fchmod(descriptor, 0o600) == 0,
              bytes.withUnsafeBytes({ Foundation.write(descriptor, $0.baseAddress, $0.count) }) == bytes.count,
              fsync(descriptor) == 0 else { throw ClinicError(.keyError, .keyUnwritable, path) }
    }

    /// Makes a new or renamed file's folder entry durable, as the database's commits are.
    package static func syncFolder(of path: String) {
        let folder = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent,
                          O_RDONLY | O_CLOEXEC)
        guard folder >= 0 else { return }
        fsync(folder)
        close(folder)
    }

    /// The key in a file; nil if there is no file.
    package static func read(_ path: String) throws -> SymmetricKey? {
        guard let text = try readText(path) else { return nil }
        guard let key = Self.key(base64: text) else { throw ClinicError(.keyError, .keyUnreadable, path) }
        return key
    }

    /// A key file's text, nil if there is no file; refused if others may read it.
    static func readText(_ path: String) throws -> String? {
        guard try checkPrivate(path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw ClinicError(.keyError, .keyUnreadable, path) }
        return String(decoding: data, as: UTF8.self)
    }

    /// Whether there is a file at `path`; refused (`key_error`, "chmod 600") if a group or other
    /// users may read or write it. The one rule for every secret key a process reads: the
    /// personal-data key and the server's TLS private key (`clinic serve --tls-key`).
    @discardableResult
    public static func checkPrivate(_ path: String) throws -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        guard info.st_mode & 0o077 == 0 else { throw ClinicError(.keyError, .keyInsecure, path) }
        return true
    }

    /// A 256-bit key from its base64 text, nil if it is not one.
    static func key(base64 text: String) -> SymmetricKey? {
        guard let key = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), key.count == 32 else { return nil }
        return SymmetricKey(data: key)
    }

    package static func check(_ key: SymmetricKey) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data("clinic personal data key v1".utf8), using: key)).base64EncodedString()
    }
}

/// Seals and opens a patient's personal fields with ChaCha20-Poly1305. The patient's login
/// is the associated data, so an envelope copied onto another patient's row does not open.
public struct FieldCipher: Sendable {
    let key: SymmetricKey

    package init(key: SymmetricKey) { self.key = key }

    public struct Personal: Codable, Equatable, Sendable {
        public var name: String
        public var surname: String
        public var street: String
        public var house: String
        public var lat: Double?
        public var lon: Double?
        /// The confirmed e-mail address, and one waiting for its code (migration 13; absent in
        /// envelopes sealed before).
        public var email: String? = nil
        public var pendingEmail: String? = nil
        /// A walk-in patient's date of birth (YYYY-MM-DD) and phone, as the front desk took them
        /// (issue 29; absent in envelopes sealed before, and for patients who registered online).
        public var birthDate: String? = nil
        public var phone: String? = nil
    }

    package func seal(_ personal: Personal, loginKey: String) throws -> Data {
        let plain = try JSONEncoder().encode(personal)
        do {
            return try ChaChaPoly.seal(plain, using: key, authenticating: Data(loginKey.utf8)).combined
        } catch {
            throw ClinicError(.internalError, .internalError, "seal: \(error)")
        }
    }

    /// Seals bytes that are not a profile (an e-mail confirmation code, a calendar token),
    /// bound to `context`.
    package func seal(bytes: Data, context: String) throws -> Data {
        do {
            return try ChaChaPoly.seal(bytes, using: key, authenticating: Data(context.utf8)).combined
        } catch {
            throw ClinicError(.internalError, .internalError, "seal: \(error)")
        }
    }

    package func open(bytes envelope: Data, context: String) throws -> Data {
        do {
            return try ChaChaPoly.open(try ChaChaPoly.SealedBox(combined: envelope), using: key,
                                       authenticating: Data(context.utf8))
        } catch {
            throw ClinicError(.keyError, .personalUnreadable, context)
        }
    }

    package func open(_ envelope: Data, loginKey: String) throws -> Personal {
        do {
            let box = try ChaChaPoly.SealedBox(combined: envelope)
            let plain = try ChaChaPoly.open(box, using: key, authenticating: Data(loginKey.utf8))
            return try JSONDecoder().decode(Personal.self, from: plain)
        } catch {
            throw ClinicError(.keyError, .personalUnreadable, loginKey)
        }
    }
}

extension Client {
    package var personal: FieldCipher.Personal {
        FieldCipher.Personal(name: name, surname: surname, street: street, house: house, lat: lat, lon: lon,
                             email: email, pendingEmail: pendingEmail, birthDate: birthDate, phone: phone)
    }

    mutating func take(_ personal: FieldCipher.Personal) {
        name = personal.name; surname = personal.surname; street = personal.street; house = personal.house
        lat = personal.lat; lon = personal.lon; email = personal.email; pendingEmail = personal.pendingEmail
        birthDate = personal.birthDate; phone = personal.phone
    }
}
