import ClinicKit
import Foundation
import GRDB

// The security area's operations over SQLite (sessions, log-in throttling, the audit trail,
// idempotency keys, shared secrets): only rows are read and written here; the rules are in
// Security/ and Storage/Idempotency.swift. Instants are stored as whole UTC seconds.
//
// These statements need nothing but the GRDB connection — except the audit key, which the
// `SQLiteStore` knows. So they are written once, for any `SQLiteSecurityStatements`: the
// seam's `SQLiteTransaction`, and `SQLiteSecurityConnection`, a bare connection for this
// store's own code that holds only a `Database` (SQLiteForwarding.swift).

protocol SQLiteSecurityStatements: SecurityWriting {
    var db: Database { get }
    /// The manager whose audit key chains this connection's rows; nil outside a manager's
    /// write transaction.
    var auditKeyOwner: SQLiteStore? { get }
}

extension SQLiteTransaction: SQLiteSecurityStatements {
    var auditKeyOwner: SQLiteStore? { manager }
}

/// A bare GRDB connection (a migration hook, a backup's check, a test of this store's SQL), for
/// the security area's operations. Its audit key is the one of the store whose write
/// transaction is running (`AuditChain`).
struct SQLiteSecurityConnection: SQLiteSecurityStatements {
    let db: Database

    init(_ db: Database) { self.db = db }

    var auditKeyOwner: SQLiteStore? { AuditChain.manager(for: db) }
}

extension SQLiteStore {
    /// `writeJoined` behind the seam: one write transaction that the controllers' writes made
    /// inside `body`, on this thread, join (`IdempotencyStore.perform`).
    public func writingJoined<T>(_ body: (any StoreWriting) throws -> T) throws -> T {
        try writeJoined { db in try body(transaction(db)) }
    }
}

// MARK: Sessions

extension SQLiteSecurityStatements {
    func session(tokenHash: String) throws -> SessionLookup? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, client_id, token_hash, last_used_at, idle_seconds FROM sessions WHERE token_hash = ?"),
            arguments: [tokenHash]) else { return nil }
        return SessionLookup(id: try row.value("id", in: "sessions"), clientId: try row.value("client_id", in: "sessions"),
                             tokenHash: try row.value("token_hash", in: "sessions"),
                             lastUsedAt: try row.instant("last_used_at", in: "sessions"),
                             idleSeconds: try row.value("idle_seconds", in: "sessions"))
    }

    func sessions(ofClient clientId: Int64, lastUsedSince: Date) throws -> [StoredSession] {
        try Row.fetchAll(db, sql: """
            SELECT id, client_id, token_hash, created_at, last_used_at, device_name, device_platform, device_app_version,
                   idle_seconds
            FROM sessions WHERE client_id = ? AND last_used_at >= ? ORDER BY id
            """, arguments: [clientId, lastUsedSince.seconds]).map(StoredSession.init(row:))
    }

    func deleteSessions(lastUsedBefore: Date) throws {
        try db.execute(sql: "DELETE FROM sessions WHERE last_used_at < ?", arguments: [lastUsedBefore.seconds])
    }

    func insertSession(clientId: Int64, tokenHash: String, at: Date, device: Device?, idleSeconds: Int?) throws {
        try db.execute(
            sql: """
                INSERT INTO sessions (client_id, token_hash, created_at, last_used_at, device_name, device_platform,
                                      device_app_version, idle_seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [clientId, tokenHash, at.seconds, at.seconds, device?.name, device?.platform, device?.appVersion, idleSeconds])
    }

    func touchSession(tokenHash: String, at: Date) throws {
        try db.execute(sql: "UPDATE sessions SET last_used_at = max(last_used_at, ?) WHERE token_hash = ?",
                       arguments: [at.seconds, tokenHash])
    }

    func deleteSession(tokenHash: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM sessions WHERE token_hash = ?", arguments: [tokenHash])
        return db.changesCount > 0
    }

    func deleteSession(id: Int64, ofClient clientId: Int64) throws -> Bool {
        try db.execute(sql: "DELETE FROM sessions WHERE id = ? AND client_id = ?", arguments: [id, clientId])
        return db.changesCount > 0
    }

    func deleteSessions(ofClient clientId: Int64, except tokenHash: String?) throws -> Int {
        try db.execute(sql: "DELETE FROM sessions WHERE client_id = ? AND token_hash <> ?", arguments: [clientId, tokenHash ?? ""])
        return db.changesCount
    }
}

// MARK: Log-in throttling

extension SQLiteSecurityStatements {
    func forgetLoginAttempts(windowStartedBy: Date) throws {
        try db.execute(sql: "DELETE FROM login_attempts WHERE first_failure_at <= ?", arguments: [windowStartedBy.seconds])
    }

    func countLoginAttempt(loginKey: String, at: Date) throws -> LoginAttempts {
        // SQLite's write transactions are serialised (IMMEDIATE, under the writer lock), so the
        // row read first is the one the upsert changes. Reading it strictly first also reports a
        // row edited to hold text (which `failures + 1` would quietly turn into a number).
        let before = try Row.fetchOne(db, sql: "SELECT failures, first_failure_at FROM login_attempts WHERE login_key = ?",
                                      arguments: [loginKey])
        let counted = try before.map { row in
            LoginAttempts(count: try row.decode(Int.self, forColumn: "failures") + 1,
                          windowStart: Date(seconds: try row.decode(Int64.self, forColumn: "first_failure_at")))
        }
        try db.execute(sql: """
            INSERT INTO login_attempts (login_key, failures, first_failure_at) VALUES (?, 1, ?)
            ON CONFLICT (login_key) DO UPDATE SET failures = failures + 1
            """, arguments: [loginKey, at.seconds])
        return counted ?? LoginAttempts(count: 1, windowStart: Date(seconds: at.seconds))
    }

    func countSend(key: String, window: Int64, at: Date) throws -> Int {
        // Serialised like every SQLite write (IMMEDIATE, under the writer lock).
        try db.execute(sql: "DELETE FROM send_counts WHERE window_start <= ?", arguments: [at.seconds - 86_400 - window])
        let row = try Row.fetchOne(db, sql: """
            INSERT INTO send_counts (key, window_start, count) VALUES (?, ?, 1)
            ON CONFLICT (key) DO UPDATE SET
                count = CASE WHEN window_start <= ? THEN 1 ELSE count + 1 END,
                window_start = CASE WHEN window_start <= ? THEN excluded.window_start ELSE window_start END
            RETURNING count
            """, arguments: [key, at.seconds, at.seconds - window, at.seconds - window])
        guard let row else { throw ClinicError(.storage, .storageFailure, "send_counts: no row returned") }
        return try row.decode(Int.self, forColumn: "count")
    }

    func withdrawLoginAttempt(loginKey: String, windowStart: Date) throws {
        try db.execute(sql: "DELETE FROM login_attempts WHERE login_key = ? AND first_failure_at = ? AND failures <= 1",
                       arguments: [loginKey, windowStart.seconds])
        try db.execute(sql: "UPDATE login_attempts SET failures = failures - 1 WHERE login_key = ? AND first_failure_at = ?",
                       arguments: [loginKey, windowStart.seconds])
    }

    func clearLoginAttempts(loginKey: String) throws {
        try db.execute(sql: "DELETE FROM login_attempts WHERE login_key = ?", arguments: [loginKey])
    }
}

// MARK: The audit trail

extension SQLiteSecurityStatements {
    func hasAuditTrail() throws -> Bool {
        try db.tableExists("audit_events")
    }

    func auditChainHead() throws -> AuditChainHead? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT last_id, hash FROM audit_head WHERE id = 1")) else {
            return nil
        }
        do {
            return AuditChainHead(lastId: try AuditEntry.column(row, "last_id", id: nil), hash: try AuditEntry.column(row, "hash", id: nil))
        } catch let error as UnreadableAuditRow {
            throw error.error
        }
    }

    /// SQLite's write transactions are serialised (IMMEDIATE, under the writer lock): the head
    /// read in one cannot move before it ends.
    func lockAuditChainHead() throws -> AuditChainHead? {
        try auditChainHead()
    }

    func auditKeyForAppending() throws -> AuditKey {
        guard let manager = auditKeyOwner else {
            throw ClinicError(.internalError, .internalError, "an audit row outside a SQLiteStore transaction")
        }
        return try manager.auditKeyForAppending(db)
    }

    func appendAuditEntry(_ entry: AuditEntry) throws {
        try db.execute(sql: """
            INSERT INTO audit_events (id, at, actor, staff_id, role, clinic_id, action, client_id, appointment_id,
                                      request_id, detail, hash)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [entry.id, entry.at.seconds, entry.actor, entry.staffId, entry.role, entry.clinicId, entry.action,
                             entry.clientId, entry.appointmentId, entry.requestId, entry.detail, entry.hash])
        try db.execute(sql: """
            INSERT INTO audit_head (id, last_id, hash) VALUES (1, ?, ?)
            ON CONFLICT (id) DO UPDATE SET last_id = excluded.last_id, hash = excluded.hash
            """, arguments: [entry.id, entry.hash])
    }

    func forEachAuditEntry(_ body: (Result<AuditEntry, UnreadableAuditRow>) throws -> Bool) throws {
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM audit_events ORDER BY id")
        while let row = try rows.next() {
            let entry: Result<AuditEntry, UnreadableAuditRow>
            do {
                // A cursor's row reads through SQLite's own conversions ('x' as an integer is
                // 0); its copy holds the stored values, which decode strictly.
                entry = .success(try AuditEntry(row: row.copy()))
            } catch let error as UnreadableAuditRow {
                entry = .failure(error)
            }
            guard try body(entry) else { return }
        }
    }

    func auditEntries(ofClient clientId: Int64, limit: Int) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        try AuditEntry.read(Row.fetchAll(db, sql: """
            SELECT * FROM audit_events
            WHERE client_id = ?1 AND at >= (SELECT created_at FROM clients WHERE id = ?1)
            ORDER BY id DESC LIMIT ?2
            """, arguments: [clientId, limit]))
    }

    /// (A row whose `at` is not a number sorts after every number in SQLite, so it is among
    /// them whatever `since` is.)
    func auditEntries(since: Date) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        try AuditEntry.read(Row.fetchAll(db, sql: "SELECT * FROM audit_events WHERE at >= ? ORDER BY id",
                                         arguments: [since.seconds]))
    }
}

// MARK: Idempotency keys

extension SQLiteSecurityStatements {
    func forgetIdempotentResponses(createdBefore: Date) throws {
        try db.execute(sql: "DELETE FROM idempotency_keys WHERE created_at < ?", arguments: [createdBefore.seconds])
    }

    /// SQLite's write transactions are serialised (IMMEDIATE, under the writer lock), so a
    /// second copy of a request waits for the first's commit before it looks.
    func idempotentResponse(ofClient clientId: Int64, key: String) throws -> KeptResponse? {
        guard let row = try Row.fetchOne(db, sql: "SELECT fingerprint, status, body FROM idempotency_keys WHERE client_id = ? AND key = ?",
                                         arguments: [clientId, key]) else { return nil }
        let table = "idempotency_keys"
        return KeptResponse(fingerprint: try row.value("fingerprint", in: table, key: "client_id"),
                            status: try row.value("status", in: table, key: "client_id"),
                            body: try row.value("body", in: table, key: "client_id"))
    }

    func keepIdempotentResponse(ofClient clientId: Int64, key: String, _ response: KeptResponse, at: Date) throws {
        try db.execute(sql: """
            INSERT INTO idempotency_keys (client_id, key, fingerprint, status, body, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """, arguments: [clientId, key, response.fingerprint, response.status, response.body, at.seconds])
    }
}

// MARK: Shared secrets

extension SQLiteSecurityStatements {
    func sharedSecret(named name: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [name])
    }

    func keepSharedSecret(named name: String, value: String) throws {
        try db.execute(sql: "INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)", arguments: [name, value])
    }
}
