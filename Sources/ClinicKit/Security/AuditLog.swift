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

    init(row: Row) {
        id = row["id"]
        at = Date(timeIntervalSince1970: TimeInterval(row["at"] as Int64))
        actor = row["actor"]
        staffId = row["staff_id"]
        role = row["role"]
        clinicId = row["clinic_id"]
        action = row["action"]
        clientId = row["client_id"]
        appointmentId = row["appointment_id"]
        requestId = row["request_id"]
        detail = row["detail"]
        hash = row["hash"]
    }
}

/// The append-only audit trail, chained by SHA-256: each row's hash covers the previous
/// row's hash and every field of its own (its id included), and the head (last id and hash)
/// is kept in `audit_head`. An edited row, a deleted one, two swapped, or a cut tail no
/// longer verify (`verify`, run by `clinic admin check`).
public enum AuditLog {
    /// The hash before the first row.
    static let genesis = String(repeating: "0", count: 64)

    /// Appends a row in the caller's transaction: what it records and its record commit
    /// together or not at all. Does nothing on a database older than migration 10.
    public static func append(_ db: Database, by actor: AuditActor, action: String, clientId: Int64? = nil,
                              appointmentId: Int64? = nil, clinicId: Int64? = nil, requestId: String? = nil,
                              detail: String = "", now: Date) throws {
        guard try db.tableExists("audit_events") else { return }
        let head = try Row.fetchOne(db.cachedStatement(sql: "SELECT last_id, hash FROM audit_head WHERE id = 1"))
        let previous: String = head?["hash"] ?? genesis
        let id: Int64 = (head?["last_id"] ?? 0) + 1
        let at = Int64(now.timeIntervalSince1970.rounded(.down))
        let clinic = clinicId ?? actor.clinicId
        let hash = Self.hash(previous: previous, fields: [
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

    /// SHA-256 (hex) of the previous hash and the fields, each length-prefixed so that no two
    /// different rows serialise alike.
    static func hash(previous: String, fields: [String]) -> String {
        var text = previous
        for field in fields { text += "|\(field.utf8.count):" + field }
        return SHA256.hash(data: Data(text.utf8)).hexString
    }

    static func hash(of entry: AuditEntry, previous: String) -> String {
        hash(previous: previous, fields: [
            String(entry.id), String(Int64(entry.at.timeIntervalSince1970)), entry.actor, entry.staffId.map(String.init) ?? "",
            entry.role, entry.clinicId.map(String.init) ?? "", entry.action, entry.clientId.map(String.init) ?? "",
            entry.appointmentId.map(String.init) ?? "", entry.requestId ?? "", entry.detail])
    }

    /// What is wrong with the chain: empty when every row and the head verify (or before
    /// migration 10). Reports the first broken row, not every one after it.
    public static func verify(_ db: Database) throws -> [String] {
        guard try db.tableExists("audit_events") else { return [] }
        var previous = genesis
        var expectedId: Int64 = 1
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM audit_events ORDER BY id")
        while let row = try rows.next() {
            let entry = AuditEntry(row: row)
            if entry.id != expectedId {
                return ["audit row \(expectedId) is missing (the next is \(entry.id))"]
            }
            if hash(of: entry, previous: previous) != entry.hash {
                return ["audit row \(entry.id) does not match its hash (edited, or a row before it changed)"]
            }
            previous = entry.hash
            expectedId += 1
        }
        let head = try Row.fetchOne(db, sql: "SELECT last_id, hash FROM audit_head WHERE id = 1")
        let lastId = expectedId - 1
        let headId: Int64 = head?["last_id"] ?? 0
        let headHash: String = head?["hash"] ?? genesis
        if headId != lastId || headHash != previous {
            return ["the audit trail ends at row \(lastId) but its head says \(headId) (rows cut from the end)"]
        }
        return []
    }

    /// A patient's rows, newest first: who read or changed their data.
    public static func entries(_ db: Database, clientId: Int64, limit: Int = 500) throws -> [AuditEntry] {
        guard try db.tableExists("audit_events") else { return [] }
        // Only rows from the account's own lifetime: ids are never given twice (migration 14),
        // and a database that gave one twice before that still shows no one the rows of an
        // earlier account with the same id.
        return try Row.fetchAll(db, sql: """
            SELECT * FROM audit_events
            WHERE client_id = ?1 AND at >= (SELECT created_at FROM clients WHERE id = ?1)
            ORDER BY id DESC LIMIT ?2
            """, arguments: [clientId, limit]).map(AuditEntry.init(row:))
    }

    /// Every row from `since` on, oldest first (the operator's export).
    public static func entries(_ db: Database, since: Date) throws -> [AuditEntry] {
        guard try db.tableExists("audit_events") else { return [] }
        return try Row.fetchAll(db, sql: "SELECT * FROM audit_events WHERE at >= ? ORDER BY id",
                                arguments: [Int64(since.timeIntervalSince1970.rounded(.down))]).map(AuditEntry.init(row:))
    }
}
