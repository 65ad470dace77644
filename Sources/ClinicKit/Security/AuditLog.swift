import Crypto
import Foundation
import GRDB

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

    /// Every column is decoded with a throwing read: a row edited in the file around the
    /// triggers (`at = 'x'`) is reported as `UnreadableAuditRow`, never a trap in GRDB's
    /// subscript (which would take a whole server down with it).
    init(row: Row) throws {
        id = try Self.column(row, "id", id: nil)
        at = Date(timeIntervalSince1970: TimeInterval(try Self.column(row, "at", id: id) as Int64))
        actor = try Self.column(row, "actor", id: id)
        staffId = try Self.column(row, "staff_id", id: id)
        role = try Self.column(row, "role", id: id)
        clinicId = try Self.column(row, "clinic_id", id: id)
        action = try Self.column(row, "action", id: id)
        clientId = try Self.column(row, "client_id", id: id)
        appointmentId = try Self.column(row, "appointment_id", id: id)
        requestId = try Self.column(row, "request_id", id: id)
        detail = try Self.column(row, "detail", id: id)
        hash = try Self.column(row, "hash", id: id)
    }

    static func column<Value: DatabaseValueConvertible>(_ row: Row, _ name: String, id: Int64?) throws -> Value {
        do {
            return try row.decode(Value.self, forColumn: name)
        } catch {
            // DatabaseValue reads any stored value (NULL included) without failing.
            throw UnreadableAuditRow(id: id, column: name, value: row.hasColumn(name) ? (row[name] as DatabaseValue).description : "missing")
        }
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

    public var error: ClinicError {
        ClinicError(.storage, .auditRowUnreadable, id.map(String.init) ?? "head", column, value)
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
    /// transaction must be a `DatabaseManager`'s (it knows where the audit key is): the first
    /// row after an upgrade creates the key, anchored at the plain chain's head.
    public static func append(_ db: Database, by actor: AuditActor, action: String, clientId: Int64? = nil,
                              appointmentId: Int64? = nil, clinicId: Int64? = nil, requestId: String? = nil,
                              detail: String = "", now: Date) throws {
        guard try db.tableExists("audit_events") else { return }
        guard let manager = AuditChain.manager(for: db) else {
            throw ClinicError(.internalError, .internalError, "an audit row outside a DatabaseManager transaction")
        }
        let key = try manager.auditKeyForAppending(db)
        let head = try self.head(db)
        let id = head.lastId + 1
        let at = Int64(now.timeIntervalSince1970.rounded(.down))
        let clinic = clinicId ?? actor.clinicId
        let hash = key.mac(previous: head.hash, fields: [
            String(id), String(at), actor.kind, actor.staffId.map(String.init) ?? "", actor.role.rawValue,
            clinic.map(String.init) ?? "", action, clientId.map(String.init) ?? "", appointmentId.map(String.init) ?? "",
            requestId ?? "", detail])
        try db.execute(sql: """
            INSERT INTO audit_events (id, at, actor, staff_id, role, clinic_id, action, client_id, appointment_id,
                                      request_id, detail, hash)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [id, at, actor.kind, actor.staffId, actor.role.rawValue, clinic, action, clientId, appointmentId,
                             requestId, detail, hash])
        try db.execute(sql: """
            INSERT INTO audit_head (id, last_id, hash) VALUES (1, ?, ?)
            ON CONFLICT (id) DO UPDATE SET last_id = excluded.last_id, hash = excluded.hash
            """, arguments: [id, hash])
    }

    /// The recorded head: the last row's id and hash (0 and the genesis hash before any row).
    static func head(_ db: Database) throws -> (lastId: Int64, hash: String) {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT last_id, hash FROM audit_head WHERE id = 1")) else {
            return (0, genesis)
        }
        do {
            return (try AuditEntry.column(row, "last_id", id: nil), try AuditEntry.column(row, "hash", id: nil))
        } catch let error as UnreadableAuditRow {
            throw error.error
        }
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
    public static func verify(_ db: Database, key: AuditKey?, keyed: Bool = false) throws -> [String] {
        guard try db.tableExists("audit_events") else { return [] }
        var previous = genesis
        var expectedId: Int64 = 1
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM audit_events ORDER BY id")
        while let row = try rows.next() {
            let entry: AuditEntry
            do {
                // A cursor's row reads through SQLite's own conversions ('x' as an integer is
                // 0); its copy holds the stored values, which decode strictly.
                entry = try AuditEntry(row: row.copy())
            } catch let error as UnreadableAuditRow {
                return [error.error.message(in: .en)]
            }
            if entry.id != expectedId {
                return ["audit row \(expectedId) is missing (the next is \(entry.id))"]
            }
            let expected: String
            if let key, entry.id > key.anchorId {
                expected = key.mac(previous: previous, fields: fields(of: entry))
            } else {
                expected = hash(of: entry, previous: previous)
            }
            if expected != entry.hash {
                if key == nil && keyed { return [] }
                return ["audit row \(entry.id) does not match its hash (edited, or a row before it changed)"]
            }
            if let key, entry.id == key.anchorId, entry.hash != key.anchorHash {
                return ["the audit trail up to row \(entry.id) was rewritten: it no longer ends in the hash its audit key file recorded"]
            }
            previous = entry.hash
            expectedId += 1
        }
        let lastId = expectedId - 1
        if let key, lastId < key.anchorId {
            return ["the audit trail ends at row \(lastId), before row \(key.anchorId) that its audit key file recorded (rows cut from the end)"]
        }
        let head: (lastId: Int64, hash: String)
        do { head = try self.head(db) } catch let error as ClinicError { return [error.message(in: .en)] }
        if head.lastId != lastId || head.hash != previous {
            return ["the audit trail ends at row \(lastId) but its head says \(head.lastId) (rows cut from the end)"]
        }
        return []
    }

    /// A patient's rows, newest first: who read or changed their data. A row that cannot be
    /// read (edited in the file) is left out: the patient sees the rest, and `clinic admin
    /// check` names the row to the operator.
    public static func entries(_ db: Database, clientId: Int64, limit: Int = 500) throws -> [AuditEntry] {
        guard try db.tableExists("audit_events") else { return [] }
        // Only rows from the account's own lifetime: ids are never given twice (migration 14),
        // and a database that gave one twice before that still shows no one the rows of an
        // earlier account with the same id.
        return try read(Row.fetchAll(db, sql: """
            SELECT * FROM audit_events
            WHERE client_id = ?1 AND at >= (SELECT created_at FROM clients WHERE id = ?1)
            ORDER BY id DESC LIMIT ?2
            """, arguments: [clientId, limit])).entries
    }

    /// Every row from `since` on, oldest first (the operator's export), and the rows that
    /// cannot be read, for the export to name. (A row whose `at` is not a number sorts after
    /// every number in SQLite, so it is among them whatever `since` is.)
    public static func export(_ db: Database, since: Date) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        guard try db.tableExists("audit_events") else { return ([], []) }
        return try read(Row.fetchAll(db, sql: "SELECT * FROM audit_events WHERE at >= ? ORDER BY id",
                                     arguments: [Int64(since.timeIntervalSince1970.rounded(.down))]))
    }

    /// `export` without the unreadable rows.
    public static func entries(_ db: Database, since: Date) throws -> [AuditEntry] {
        try export(db, since: since).entries
    }

    private static func read(_ rows: [Row]) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        var entries: [AuditEntry] = [], unreadable: [UnreadableAuditRow] = []
        for row in rows {
            do {
                entries.append(try AuditEntry(row: row))
            } catch let error as UnreadableAuditRow {
                unreadable.append(error)
            }
        }
        return (entries, unreadable)
    }
}

/// The `DatabaseManager` whose transaction is running on this thread, for `AuditLog.append`,
/// which is handed only a `Database` by the controllers but needs the manager's audit key.
/// (GRDB runs a write's body synchronously on one thread, as `JoinedTransaction` relies on.)
enum AuditChain {
    private static let key = "ClinicKit.AuditChain"

    static func manager(for db: Database) -> DatabaseManager? {
        guard let entry = Thread.current.threadDictionary[key] as? Entry, entry.db === db else { return nil }
        return entry.manager
    }

    static func with<T>(_ manager: DatabaseManager, _ db: Database, _ body: () throws -> T) rethrows -> T {
        let dictionary = Thread.current.threadDictionary
        let previous = dictionary[key]
        dictionary[key] = Entry(manager: manager, db: db)
        defer { dictionary[key] = previous }
        return try body()
    }

    private final class Entry {
        let manager: DatabaseManager
        let db: Database
        init(manager: DatabaseManager, db: Database) { self.manager = manager; self.db = db }
    }
}

extension ClinicSystem {
    /// The operator's export: every audit row from `since` on, oldest first, and the rows that
    /// cannot be read (for the export to name).
    public func auditExport(since: Date) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        try database.read { db in try AuditLog.export(db, since: since) }
    }
}
