import Crypto
import Foundation

/// Who did something the audit trail records: the operator (whoever runs `clinic admin` on the
/// database file) or a staff account with its role and clinic.
public struct AuditActor: Sendable, Equatable {
    public enum Role: String, Sendable, CaseIterable {
        case `operator`, clinicAdmin = "clinic-admin", receptionist, doctor
    }

    public let staffId: Int64?
    public let role: Role
    public let clinicId: Int64?

    public init(staffId: Int64?, role: Role, clinicId: Int64?) {
        self.staffId = staffId
        self.role = role
        self.clinicId = clinicId
    }

    public static let `operator` = AuditActor(staffId: nil, role: .operator, clinicId: nil)

    var kind: String { role == .operator ? "operator" : "staff" }
}

/// One row of the audit trail (migration 10).
public struct AuditEntry: Sendable, Equatable {
    public let id: Int64
    public let at: Date
    /// `operator` or `staff`.
    public let actor: String
    public let staffId: Int64?
    public let role: String
    public let clinicId: Int64?
    /// What was done: `appointment.status`, `exception.add`, `patient.read`, …
    public let action: String
    /// The patient whose data was read or changed, if any.
    public let clientId: Int64?
    public let appointmentId: Int64?
    public let requestId: String?
    public let detail: String
    public let hash: String

    public init(id: Int64, at: Date, actor: String, staffId: Int64?, role: String, clinicId: Int64?, action: String,
                clientId: Int64?, appointmentId: Int64?, requestId: String?, detail: String, hash: String) {
        self.id = id; self.at = at; self.actor = actor; self.staffId = staffId; self.role = role; self.clinicId = clinicId
        self.action = action; self.clientId = clientId; self.appointmentId = appointmentId; self.requestId = requestId
        self.detail = detail; self.hash = hash
    }
}

/// A row of the audit trail (or its head) whose stored value is not what the schema says
/// (text where a number belongs): someone edited the file around the triggers.
public struct UnreadableAuditRow: Error, Sendable, Equatable {
    /// The row's id; nil for the head (or a row whose id itself is unreadable).
    public let id: Int64?
    public let column: String
    /// The stored value as SQLite holds it (`"x"`, `NULL`).
    public let value: String

    public init(id: Int64?, column: String, value: String) {
        self.id = id; self.column = column; self.value = value
    }

    public var error: ClinicError {
        ClinicError(.storage, .auditRowUnreadable, id.map(String.init) ?? "head", column, value)
    }
}

/// A row of the audit trail as a decision asks for it: who did what, to whom, when. Its id and
/// hash are the store's to give, from the head it locks (`AuditLog.entry`).
public struct AuditAsk: Sendable, Equatable {
    public var actor: AuditActor
    public var action: AuditAction
    public var clientId: Int64?
    public var appointmentId: Int64?
    /// The clinic concerned; nil: the actor's.
    public var clinicId: Int64?
    public var requestId: String?
    public var detail: String
    public var now: Date

    public init(by actor: AuditActor, action: AuditAction, clientId: Int64? = nil, appointmentId: Int64? = nil,
                clinicId: Int64? = nil, requestId: String? = nil, detail: String = "", now: Date) {
        self.actor = actor; self.action = action; self.clientId = clientId; self.appointmentId = appointmentId
        self.clinicId = clinicId; self.requestId = requestId; self.detail = detail; self.now = now
    }
}

/// The append-only audit trail, chained by HMAC-SHA256 under the audit key (kept outside the
/// database, see `AuditKey`): each row's hash covers the previous row's hash and every field
/// of its own (its id included), and the head (last id and hash) is kept in `audit_head`. An
/// edited row, a deleted one, two swapped, a cut tail, or a whole trail recomputed without
/// the key no longer verify (`verify`, run by `clinic admin check`). Rows written before the
/// audit key existed are chained by plain SHA-256; the key file records the last of them
/// and its hash (its anchor), so they cannot be rewritten either once the key exists.
public enum AuditLog {
    /// The hash before the first row.
    static let genesis = String(repeating: "0", count: 64)

    /// Appends a row in the caller's transaction: what it records and its record commit
    /// together or not at all. Does nothing on a database older than migration 10. The
    /// transaction must be a store's (it knows the audit key): on SQLite the first row after an
    /// upgrade creates the key, anchored at the plain chain's head. The head is read locked
    /// (`lockAuditChainHead`), so that two appends never follow the same head.
    public static func append(_ tx: any SecurityWriting, by actor: AuditActor, action: AuditAction, clientId: Int64? = nil,
                              appointmentId: Int64? = nil, clinicId: Int64? = nil, requestId: String? = nil,
                              detail: String = "", now: Date) throws {
        try append(tx, AuditAsk(by: actor, action: action, clientId: clientId, appointmentId: appointmentId, clinicId: clinicId,
                                requestId: requestId, detail: detail, now: now))
    }

    /// `append` of a row decided before (a use case's decision carries it to the store's write).
    public static func append(_ tx: any SecurityWriting, _ ask: AuditAsk) throws {
        guard try tx.hasAuditTrail() else { return }
        // The head first: its lock also orders the first appends of several servers, so that
        // only one of them makes the trail's key.
        let head = try tx.lockAuditChainHead()
        try tx.appendAuditEntry(entry(ask, after: head, key: try tx.auditKeyForAppending()))
    }

    /// The row `ask` appends after `head` (nil: the empty chain), chained under `key`: what a
    /// store whose statements are awaited writes, with the head it locked and the key
    /// `AuditKeyRing.forAppending(marker:head:)` gave.
    public static func entry(_ ask: AuditAsk, after head: AuditChainHead?, key: AuditKey) -> AuditEntry {
        let head = head ?? AuditChainHead(lastId: 0, hash: genesis)
        let id = head.lastId + 1
        let at = Int64(ask.now.timeIntervalSince1970.rounded(.down))
        let clinic = ask.clinicId ?? ask.actor.clinicId
        let hash = key.mac(previous: head.hash, fields: [
            String(id), String(at), ask.actor.kind, ask.actor.staffId.map(String.init) ?? "", ask.actor.role.rawValue,
            clinic.map(String.init) ?? "", ask.action.rawValue, ask.clientId.map(String.init) ?? "",
            ask.appointmentId.map(String.init) ?? "", ask.requestId ?? "", ask.detail])
        return AuditEntry(
            id: id, at: Date(timeIntervalSince1970: TimeInterval(at)), actor: ask.actor.kind, staffId: ask.actor.staffId,
            role: ask.actor.role.rawValue, clinicId: clinic, action: ask.action.rawValue, clientId: ask.clientId,
            appointmentId: ask.appointmentId, requestId: ask.requestId, detail: ask.detail, hash: hash)
    }

    /// The recorded head: the last row's id and hash (0 and the genesis hash before any row).
    package static func head(_ tx: any SecurityReading) throws -> (lastId: Int64, hash: String) {
        guard let head = try tx.auditChainHead() else { return (0, genesis) }
        return (head.lastId, head.hash)
    }

    /// The text a row's hash covers: the previous hash and the fields, each length-prefixed so
    /// that no two different rows serialise alike.
    static func text(previous: String, fields: [String]) -> String {
        var text = previous
        for field in fields { text += "|\(field.utf8.count):" + field }
        return text
    }

    /// Plain SHA-256 (hex): how rows from before the audit key were chained.
    static func hash(previous: String, fields: [String]) -> String {
        SHA256.hash(data: Data(text(previous: previous, fields: fields).utf8)).hexString
    }

    static func fields(of entry: AuditEntry) -> [String] {
        [String(entry.id), String(Int64(entry.at.timeIntervalSince1970)), entry.actor, entry.staffId.map(String.init) ?? "",
         entry.role, entry.clinicId.map(String.init) ?? "", entry.action, entry.clientId.map(String.init) ?? "",
         entry.appointmentId.map(String.init) ?? "", entry.requestId ?? "", entry.detail]
    }

    static func hash(of entry: AuditEntry, previous: String) -> String {
        hash(previous: previous, fields: fields(of: entry))
    }

    /// What is wrong with the chain: empty when every row and the head verify (or before
    /// migration 10). Reports the first broken row, not every one after it.
    ///
    /// With `key`, rows up to its anchor are checked by plain SHA-256 and must end in the
    /// anchor's hash, and the rows after it by HMAC. Without it (`keyed`: the database says it
    /// has a key that is not at hand), the plain rows are checked up to the first that does
    /// not match, and the rest is left unverified rather than called broken: that is
    /// `CheckReport.auditKeyProblem`'s to say.
    public static func verify(_ tx: any SecurityReading, key: AuditKey?, keyed: Bool = false) throws -> [String] {
        guard try tx.hasAuditTrail() else { return [] }
        var previous = genesis
        var expectedId: Int64 = 1
        // What the walk found when it stopped before the end (empty: the rest is unverifiable).
        var stopped: [String]?
        try tx.forEachAuditEntry { read in
            let entry: AuditEntry
            switch read {
            case .success(let decoded):
                entry = decoded
            case .failure(let error):
                stopped = [error.error.message(in: .en)]
                return false
            }
            if entry.id != expectedId {
                stopped = ["audit row \(expectedId) is missing (the next is \(entry.id))"]
                return false
            }
            let expected: String
            if let key, entry.id > key.anchorId {
                expected = key.mac(previous: previous, fields: fields(of: entry))
            } else {
                expected = hash(of: entry, previous: previous)
            }
            if expected != entry.hash {
                stopped = key == nil && keyed ? [] : ["audit row \(entry.id) does not match its hash (edited, or a row before it changed)"]
                return false
            }
            if let key, entry.id == key.anchorId, entry.hash != key.anchorHash {
                stopped = ["the audit trail up to row \(entry.id) was rewritten: it no longer ends in the hash its audit key file recorded"]
                return false
            }
            previous = entry.hash
            expectedId += 1
            return true
        }
        if let stopped { return stopped }
        let lastId = expectedId - 1
        if let key, lastId < key.anchorId {
            return ["the audit trail ends at row \(lastId), before row \(key.anchorId) that its audit key file recorded (rows cut from the end)"]
        }
        let head: (lastId: Int64, hash: String)
        do { head = try self.head(tx) } catch let error as ClinicError { return [error.message(in: .en)] }
        if head.lastId != lastId || head.hash != previous {
            return ["the audit trail ends at row \(lastId) but its head says \(head.lastId) (rows cut from the end)"]
        }
        return []
    }

    /// A patient's rows, newest first: who read or changed their data. A row that cannot be
    /// read (edited in the file) is left out: the patient sees the rest, and `clinic admin
    /// check` names the row to the operator.
    /// How many rows a patient's access log shows.
    public static let accessLogLimit = 500

    public static func entries(_ tx: any SecurityReading, clientId: Int64, limit: Int = accessLogLimit) throws -> [AuditEntry] {
        guard try tx.hasAuditTrail() else { return [] }
        // Only rows from the account's own lifetime: ids are never given twice (migration 14),
        // and a database that gave one twice before that still shows no one the rows of an
        // earlier account with the same id.
        return try tx.auditEntries(ofClient: clientId, limit: limit).entries
    }

    /// Every row from `since` on, oldest first (the operator's export), and the rows that
    /// cannot be read, for the export to name.
    public static func export(_ tx: any SecurityReading, since: Date) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        guard try tx.hasAuditTrail() else { return ([], []) }
        return try tx.auditEntries(since: since)
    }

    /// `export` without the unreadable rows.
    public static func entries(_ tx: any SecurityReading, since: Date) throws -> [AuditEntry] {
        try export(tx, since: since).entries
    }

}

extension ClinicSystem {
    /// The operator's export: every audit row from `since` on, oldest first, and the rows that
    /// cannot be read (for the export to name). Awaited (issue 56: `OperatorStore.auditExport`).
    public func auditExport(since: Date) async throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        try await database.auditExport(since: since)
    }
}
