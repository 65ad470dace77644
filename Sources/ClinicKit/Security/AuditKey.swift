import Crypto
import Foundation

/// The key of the audit trail's HMAC chain, kept in `<database>.audit-key` (mode 0600) beside
/// the database and never inside it, as the personal-data key is: someone who can write the
/// database but not read this file cannot recompute the chain after rewriting rows.
///
/// The file's second line is the anchor: the last row chained by plain SHA-256 before the key
/// existed (0 for a trail that starts keyed) and that row's hash. Rows up to the anchor keep
/// their plain hashes (exports taken before still match them); the anchor pins them, and
/// every later row is chained by HMAC. The key never changes, so one copy of the file kept
/// with the data key's copy serves every backup.
///
/// `settings.audit.key_check` holds an HMAC of a fixed text under the key: it says that the
/// trail is keyed (so a missing file is "cannot verify", not "never keyed") and tells a wrong
/// key file from an edited row.
public struct AuditKey: Sendable, Equatable {
    let key: SymmetricKey
    let anchorId: Int64
    let anchorHash: String

    package static let checkSetting = "audit.key_check"

    package static func file(databasePath: String) -> KeyFile { KeyFile(path: path(databasePath: databasePath)) }
    /// A SQLite database's audit key file: `<database>.audit-key`.
    public static func path(databasePath: String) -> String { databasePath + ".audit-key" }

    package var check: String {
        Data(HMAC<SHA256>.authenticationCode(for: Data("clinic audit chain key v1".utf8), using: key)).base64EncodedString()
    }

    /// HMAC-SHA256 (hex) of what `AuditLog.hash` covers.
    func mac(previous: String, fields: [String]) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data(AuditLog.text(previous: previous, fields: fields).utf8), using: key)).hexString
    }

    var fileText: String { KeyFile.base64(key) + "\n\(anchorId) \(anchorHash)\n" }

    /// The key and anchor of a file's text; nil when it is not two such lines.
    init?(fileText: String) {
        let lines = fileText.split(whereSeparator: \.isNewline).map(String.init)
        guard lines.count == 2, let key = KeyFile.key(base64: lines[0]) else { return nil }
        let anchor = lines[1].split(separator: " ")
        guard anchor.count == 2, let id = Int64(anchor[0]), id >= 0,
              anchor[1].count == 64, anchor[1].allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        self.init(key: key, anchorId: id, anchorHash: String(anchor[1]))
    }

    init(key: SymmetricKey, anchorId: Int64, anchorHash: String) {
        self.key = key
        self.anchorId = anchorId
        self.anchorHash = anchorHash
    }

    public static func == (a: AuditKey, b: AuditKey) -> Bool {
        a.check == b.check && a.anchorId == b.anchorId && a.anchorHash == b.anchorHash
    }

}

/// Where a store's audit key is kept (a file, or for a database in memory the key itself) and
/// the key last loaded. Every process appending to one trail uses the same key: a SQLite
/// database's is `<database>.audit-key` beside it; a PostgreSQL store's is the file the
/// operator names once for every server (`CLINIC_AUDIT_KEY_FILE`).
public final class AuditKeyRing: Sendable {
    package let file: KeyFile?
    package let cached = LockedBox<AuditKey?>(nil)
    package let memory = LockedBox<AuditKey?>(nil)

    package init(file: KeyFile?) { self.file = file }

    /// A key kept in the file at `path` (made there on the first append if there is none).
    public convenience init(path: String) { self.init(file: KeyFile(path: path)) }

    /// Where the key is, for messages.
    public var location: String { file?.path ?? "memory" }
    /// The key file's path, nil in memory (a copy carries the file).
    public var filePath: String? { file?.path }

    /// The key as stored (the file, or in memory the ring's own); nil when there is none.
    package func stored() throws -> AuditKey? {
        guard let file else { return memory.current }
        guard let text = try KeyFile.readText(file.path) else { return nil }
        guard let key = AuditKey(fileText: text) else { throw ClinicError(.keyError, .auditKeyUnreadable, file.path) }
        return key
    }

    /// The key to chain a new row with, inside the appending transaction (after the chain's
    /// head is locked: two first appends never both make a key). A trail that has none yet
    /// (new, or written before audit keys) gets one, anchored at its current head: the old rows
    /// stay as they are and are pinned from then on. A key is never made for a trail that says
    /// it has one (a missing file is refused, not replaced), and a key file is never adopted
    /// by a trail that does not end at its anchor (that trail was rewritten without the key,
    /// or a backup from before the key was restored).
    public func forAppending(_ tx: any StoreWriting) throws -> AuditKey {
        let marker = try tx.setting(AuditKey.checkSetting)
        if let cached = cached.current, cached.check == marker { return cached }
        let found = try forAppending(marker: marker, head: try tx.auditChainHead())
        if found.storeMarker { try tx.setSetting(AuditKey.checkSetting, to: found.key.check) }
        return found.key
    }

    /// `forAppending` on facts a store gathered in the appending transaction: the trail's key
    /// marker (the `AuditKey.checkSetting` setting) and its head, locked. `storeMarker`: the
    /// store sets the marker to the key's check in the same transaction.
    public func forAppending(marker: String?, head found: AuditChainHead?) throws -> (key: AuditKey, storeMarker: Bool) {
        if let cached = cached.current, cached.check == marker { return (cached, false) }
        let head = found ?? AuditChainHead(lastId: 0, hash: AuditLog.genesis)
        let key: AuditKey
        if let stored = try stored() {
            if let marker {
                guard marker == stored.check else { throw ClinicError(.keyError, .auditKeyWrong, location) }
            } else {
                // Left by a transaction that created the key and then rolled back: the trail
                // still ends where the key took over.
                guard head.lastId == stored.anchorId, head.hash == stored.anchorHash else {
                    throw ClinicError(.keyError, .auditKeyMismatch, location)
                }
            }
            key = stored
        } else {
            guard marker == nil else { throw ClinicError(.keyError, .auditKeyMissing, location) }
            key = AuditKey(key: KeyFile.newKey(), anchorId: head.lastId, anchorHash: head.hash)
            if let file {
                try KeyFile.write(text: key.fileText, to: file.path, exclusive: true)
            } else {
                memory.withLock { $0 = key }
            }
        }
        cached.withLock { $0 = key }
        return (key, true)
    }

    /// What `check` verifies a trail with: the key, whether the trail is keyed, or why it cannot
    /// be verified (`problem`: a missing, wrong or damaged key file for a keyed trail). A trail
    /// with rows that was never keyed (written before audit keys, no change audited since) is
    /// verified as the plain chain it is, with a `note` saying so. Reads only.
    public struct Checking: Sendable {
        public let key: AuditKey?
        public let keyed: Bool
        public let problem: ClinicError?
        public let note: ClinicError?
    }

    public func forChecking(_ tx: any StoreReading) -> Checking {
        do {
            guard try tx.hasAuditTrail() else { return Checking(key: nil, keyed: false, problem: nil, note: nil) }
            let marker = try tx.setting(AuditKey.checkSetting)
            if let stored = try stored() {
                if let marker, marker != stored.check {
                    return Checking(key: nil, keyed: true, problem: ClinicError(.keyError, .auditKeyWrong, location), note: nil)
                }
                return Checking(key: stored, keyed: true, problem: nil, note: nil)
            }
            if marker != nil {
                return Checking(key: nil, keyed: true, problem: ClinicError(.keyError, .auditKeyMissing, location), note: nil)
            }
            let rows = try tx.auditChainHead()?.lastId ?? 0
            return Checking(key: nil, keyed: false, problem: nil,
                            note: rows == 0 ? nil : ClinicError(.keyError, .auditNotKeyed, String(rows), location))
        } catch let error as ClinicError {
            return Checking(key: nil, keyed: true, problem: error, note: nil)
        } catch {
            return Checking(key: nil, keyed: true, problem: ClinicError(.storage, .storageFailure, String(describing: error)), note: nil)
        }
    }
}

