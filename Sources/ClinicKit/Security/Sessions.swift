import Crypto
import Foundation

/// Login sessions. A token is 256 random bits, shown to the user once (written to the
/// session file); the database keeps only its SHA-256, so a copy of the database does not
/// let anyone log in. A session ends after `idleLimit` without use.
public struct SessionManager: Sendable {
    public static let idleLimit: TimeInterval = 30 * 24 * 3600

    public init() {}

    public static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }.hexString
    }

    package static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).hexString
    }

    /// Creates a session for the client and returns its token. Sessions idle for longer than
    /// `idleLimit` (anyone's) are purged on the way. `idleSeconds`: the session's own, shorter
    /// idle limit (a web session's, `WebSessionLimits`); nil: `idleLimit`.
    public func create(_ tx: any SecurityWriting, clientId: Int64, now: Date, device: Device? = nil,
                       idleSeconds: Int? = nil) throws -> String {
        let token = Self.newToken()
        let session = Self.opening(token: token, now: now, device: device, idleSeconds: idleSeconds)
        try tx.deleteSessions(lastUsedBefore: session.purgeBefore)
        try tx.insertSession(clientId: clientId, tokenHash: session.tokenHash, at: session.at, device: session.device,
                             idleSeconds: session.idleSeconds)
        return token
    }

    /// The session `create` opens for `token` (its own idle limit at most `idleLimit`), and the
    /// last use before which sessions are purged on the way.
    static func opening(token: String, now: Date, device: Device?, idleSeconds: Int?) -> NewSession {
        NewSession(tokenHash: hash(token), at: now, device: device, idleSeconds: idleSeconds.map { min($0, Int(idleLimit)) },
                   purgeBefore: oldestLive(now))
    }

    /// A patient's live sessions, oldest first, marking the one `token` belongs to.
    public func list(_ tx: any SecurityReading, clientId: Int64, current token: String?, now: Date) throws -> [SessionInfo] {
        Self.live(try tx.sessions(ofClient: clientId, lastUsedSince: Self.oldestLive(now)), current: token, now: now)
    }

    /// `list` awaited (`SessionStore.patientSessions`).
    public func list(awaiting store: any ClinicStore, clientId: Int64, current token: String?, now: Date) async throws -> [SessionInfo] {
        Self.live(try await store.patientSessions(clientId: clientId, lastUsedSince: Self.oldestLive(now)), current: token, now: now)
    }

    /// The earliest last use a live session can have: what a list of sessions reads from.
    static func oldestLive(_ now: Date) -> Date { Date(seconds: now.seconds - Int64(idleLimit)) }

    /// The sessions read that are live at `now` (their own idle limit too), marking `token`'s.
    static func live(_ sessions: [StoredSession], current token: String?, now: Date) -> [SessionInfo] {
        let currentHash = token.map(Self.hash)
        return sessions.filter { Self.isLive(lastUsedAt: $0.lastUsedAt, idleSeconds: $0.idleSeconds, now: now) }.map { session in
            SessionInfo(id: session.id, createdAt: session.createdAt, lastUsedAt: session.lastUsedAt, device: session.device,
                        isCurrent: currentHash == session.tokenHash)
        }
    }

    /// Whether a session last used at `lastUsedAt` is still live at `now`: idle for at most its
    /// own limit (`idleSeconds`), else `idleLimit`.
    static func isLive(lastUsedAt: Date, idleSeconds: Int?, now: Date) -> Bool {
        now.seconds - lastUsedAt.seconds <= Int64(idleSeconds ?? Int(idleLimit))
    }

    /// Ends one of a patient's sessions by its id; false when the patient has none by that id.
    public func delete(_ tx: any SecurityWriting, id: Int64, clientId: Int64) throws -> Bool {
        try tx.deleteSession(id: id, ofClient: clientId)
    }

    /// The client a token belongs to; nil for an unknown or expired token. Reads only: a
    /// command that fails must leave the database as it was, so the session's last use is
    /// recorded by `touch` once the command has succeeded.
    public func resolve(_ tx: any SecurityReading, token: String, now: Date) throws -> Int64? {
        guard Self.isWellFormed(token) else { return nil }
        let hash = Self.hash(token)
        guard let session = try tx.session(tokenHash: hash), accepts(session, tokenHash: hash, now: now) else { return nil }
        return session.clientId
    }

    /// The session of a token with its patient as stored, gathered by the store at once
    /// (`ClinicStore.signedInPatient`); nil for a malformed, unknown or expired token. Reads
    /// only, as `resolve`.
    public func signedIn(_ store: any ClinicStore, token: String, now: Date) throws -> SignedInPatientFacts? {
        guard Self.isWellFormed(token) else { return nil }
        let hash = Self.hash(token)
        guard let facts = try store.signedInPatient(tokenHash: hash), accepts(facts.session, tokenHash: hash, now: now)
        else { return nil }
        return facts
    }

    /// `signedIn` awaited (`ClinicStore.lookUpPatientSession`): what a server's request does.
    public func signedIn(awaiting store: any ClinicStore, token: String, now: Date) async throws -> SignedInPatientFacts? {
        guard Self.isWellFormed(token) else { return nil }
        let hash = Self.hash(token)
        guard let facts = try await store.lookUpPatientSession(tokenHash: hash), accepts(facts.session, tokenHash: hash, now: now)
        else { return nil }
        return facts
    }

    /// Whether a session found by a token's hash lets its holder in: the hash is compared again
    /// in constant time (the look-up was by hash, and the decision must not depend on how much
    /// of the value matched), and a session idle for longer than `idleLimit` has ended.
    func accepts(_ session: SessionLookup, tokenHash hash: String, now: Date) -> Bool {
        Self.constantTimeEquals(session.tokenHash, hash)
            && Self.isLive(lastUsedAt: session.lastUsedAt, idleSeconds: session.idleSeconds, now: now)
    }

    /// Records a use of the session, which keeps it alive for another `idleLimit`.
    public func touch(_ tx: any SecurityWriting, token: String, now: Date) throws {
        try tx.touchSession(tokenHash: Self.hash(token), at: now)
    }

    /// Deletes the session of a token; true if there was one.
    @discardableResult
    public func delete(_ tx: any SecurityWriting, token: String) throws -> Bool {
        try tx.deleteSession(tokenHash: Self.hash(token))
    }

    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 64 && token.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

/// The device a session was opened on, as the app says (`POST /v1/sessions`); the CLI says none.
public struct Device: Sendable, Equatable {
    public let name: String
    public let platform: String
    public let appVersion: String

    public init(name: String, platform: String, appVersion: String) {
        self.name = name; self.platform = platform; self.appVersion = appVersion
    }

    /// Each field is at most 100 characters of text without control characters.
    public func validated() throws -> Device {
        for (field, value) in [("device.name", name), ("device.platform", platform), ("device.appVersion", appVersion)] {
            guard value.count <= 100, !Text.hasForbiddenControl(value) else { throw ClinicError.invalid(.fieldTextInvalid, field, "100") }
        }
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else { throw ClinicError.invalid(.fieldTextInvalid, "device.name", "100") }
        return self
    }
}

/// One signed-in session, never with its token.
public struct SessionInfo: Sendable, Equatable {
    public let id: Int64
    public let createdAt: Date
    public let lastUsedAt: Date
    public let device: Device?
    public let isCurrent: Bool
}

/// The file that keeps the session token between commands: `$CLINIC_SESSION`, else
/// `$XDG_STATE_HOME/clinic/session`, else `~/.local/state/clinic/session`, mode 0600.
public struct SessionFile: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    public static func location(environment: [String: String]) -> SessionFile {
        if let explicit = environment["CLINIC_SESSION"], !explicit.isEmpty {
            return SessionFile(path: explicit)
        }
        return SessionFile(path: UserFolders.state(environment) + "/session")
    }

    /// Writes the token, readable and writable by the owner only.
    public func write(_ token: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            throw ClinicError(.storage, .sessionFileUnwritable, path)
        }
        // Never through a link: one placed there would make a log-in overwrite and chmod its target.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw ClinicError(errno == ELOOP ? .insecureSessionFile : .storage, errno == ELOOP ? .sessionFileLink : .sessionFileUnwritable, path)
        }
        defer { close(descriptor) }
        // An existing file keeps its mode through O_CREAT: force 0600.
        guard fchmod(descriptor, 0o600) == 0 else { throw ClinicError(.storage, .sessionFileUnwritable, path) }
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw ClinicError(.storage, .sessionFileUnwritable, path) }
    }

    /// The stored token, or nil when there is no session file. A symbolic link is refused, and
    /// so is a file others can read: anyone who can read the token can act as the user.
    public func read() throws -> String? {
        let (token, exposed) = try readAllowingExposure()
        if exposed { throw ClinicError(.insecureSessionFile, .sessionFileInsecure, path) }
        return token
    }

    /// The stored token and whether others could read it, for `logout`: an exposed session is
    /// ended all the same, which is the safe thing to do with it. Opened with `O_NOFOLLOW`.
    public func readAllowingExposure() throws -> (token: String?, exposed: Bool) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ELOOP { throw ClinicError(.insecureSessionFile, .sessionFileLink, path) }
            return (nil, false)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return (nil, false) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while bytes.count < 4096 {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer.prefix(count)
        }
        let token = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return (token.isEmpty ? nil : token, info.st_mode & 0o077 != 0)
    }

    public func delete() {
        unlink(path)
    }
}

extension ClinicStore {
    /// A random 32-byte secret kept in the database under `name` (made on first use): one for
    /// every process that shares the database, so that what one server signs another accepts.
    /// For keys whose loss costs nothing lasting (the web forms' CSRF tokens): whoever can
    /// read the database can read everything they protect anyway.
    /// A read, and a write only the first time (`OperatorStore.keepSetting`).
    public func sharedSecret(_ name: String) async throws -> [UInt8] {
        let key = "secret." + name
        if let stored = try await settings(prefix: key)[key], let bytes = Self.hexBytes(stored), bytes.count == 32 {
            return bytes
        }
        // Another process may have made it first: its value is the one.
        guard let bytes = Self.hexBytes(try await keepSetting(key, proposing: SessionManager.newToken())), bytes.count == 32 else {
            throw ClinicError(.storage, .storageFailure, key)
        }
        return bytes
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = UInt8(String(UnicodeScalar(digits[index])), radix: 16),
                  let low = UInt8(String(UnicodeScalar(digits[index + 1])), radix: 16) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

/// This user's folders, from the environment as the XDG base directories say.
public enum UserFolders {
    /// `HOME` (when set and not empty), else the account's home.
    public static func home(_ environment: [String: String]) -> String {
        environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    }

    /// The program's state folder: `$XDG_STATE_HOME/clinic`, else `~/.local/state/clinic`.
    public static func state(_ environment: [String: String]) -> String {
        (environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home(environment) + "/.local/state") + "/clinic"
    }
}

extension Device {
    /// The name a web session's device is listed by when the browser says nothing we know.
    public static let unknownBrowser = "Web browser"

    /// A web browser's session, named by the browser and the system its `User-Agent` says
    /// ("Chrome · Android", "Safari · iOS", "Firefox · Windows"): proper names, the same in
    /// every language, so that a patient tells their phone from their laptop in the list of
    /// devices. Anything else is `unknownBrowser`; nothing of the header is kept but those names.
    public static func webBrowser(userAgent: String?) -> Device {
        let agent = userAgent ?? ""
        func has(_ word: String) -> Bool { agent.range(of: word, options: .caseInsensitive) != nil }
        // Order matters: Edge and Opera say "Chrome", Chrome says "Safari", iOS says "Mac OS X".
        let browser: String? =
            has("Edg/") || has("EdgA/") || has("EdgiOS/") ? "Edge"
            : has("OPR/") || has("Opera") ? "Opera"
            : has("YaBrowser/") ? "Yandex Browser"
            : has("SamsungBrowser/") ? "Samsung Internet"
            : has("Firefox/") || has("FxiOS/") ? "Firefox"
            : has("Chrome/") || has("CriOS/") || has("Chromium/") ? "Chrome"
            : has("Safari/") ? "Safari"
            : nil
        let system: String? =
            has("iPhone") || has("iPad") || has("iPod") ? "iOS"
            : has("Android") ? "Android"
            : has("Windows") ? "Windows"
            : has("CrOS") ? "ChromeOS"
            : has("Mac OS X") || has("Macintosh") ? "macOS"
            : has("Linux") ? "Linux"
            : nil
        let name = [browser, system].compactMap { $0 }.joined(separator: " · ")
        return Device(name: name.isEmpty ? unknownBrowser : name, platform: "web", appVersion: "1")
    }
}
