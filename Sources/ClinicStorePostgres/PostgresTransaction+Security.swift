import ClinicKit
import Foundation

// The security area's operations on PostgreSQL (`Storage/Seam/SecurityStorage.swift`):
// sessions, log-in throttling, the audit trail, idempotency keys and shared secrets, as
// SQLiteTransaction+Security.swift does them. What SQLite's serialised writers gave for free
// is said here in SQL: an atomic upsert per log-in attempt, `FOR UPDATE` on the audit head,
// an advisory lock per idempotency key, `GREATEST` for a session's last use, ON CONFLICT for a
// shared secret.

extension PostgresTransaction {
    /// The hash an empty chain's head holds (AuditLog's genesis: the hash before the first row).
    /// Migrations/postgres/0002 writes the head row with it and `last_id` 0 so that appenders
    /// have a row to lock before the first append; that row reads as no head (nil), as SQLite's
    /// missing row does.
    static let emptyAuditChainHash = String(repeating: "0", count: 64)

    /// The namespace of the idempotency keys' advisory locks: the lock's key is
    /// `hashtextextended(namespace || client id || ':' || key, 0)`.
    static let idempotencyLockNamespace = "clinic.idempotency:"

    /// Rows of the audit trail read per statement by `forEachAuditEntry`.
    static let auditPageSize = 500
}

// MARK: Sessions

extension PostgresTransaction {
    func session(tokenHash: String) throws -> SessionLookup? {
        guard let row = try row("SELECT id, client_id, token_hash, last_used_at, idle_seconds FROM sessions WHERE token_hash = $1",
                                [tokenHash]) else { return nil }
        return SessionLookup(id: try row.value("id", in: "sessions"),
                             clientId: try row.value("client_id", in: "sessions"),
                             tokenHash: try row.value("token_hash", in: "sessions"),
                             lastUsedAt: try row.instant("last_used_at", in: "sessions"),
                             idleSeconds: try row.value("idle_seconds", in: "sessions"))
    }

    /// The session, its patient and the key check in one statement (`PostgresStore.signedInPatient`).
    func signedInPatient(tokenHash: String) throws -> SignedInPatientFacts? {
        try row(SignedInPatientStatement(Self.signedInPatientBinds(tokenHash))).map(Self.signedInPatientFacts)
    }

    static func signedInPatientBinds(_ tokenHash: String) -> [any PostgresBindable] { [tokenHash, clientsKeyCheckSetting] }

    /// `SignedInPatientStatement`'s row.
    static func signedInPatientFacts(_ row: StoredRowValues) throws -> SignedInPatientFacts {
        let session = SessionLookup(id: try row.value("session_id", in: "sessions"),
                                    clientId: try row.value("session_client_id", in: "sessions"),
                                    tokenHash: try row.value("token_hash", in: "sessions"),
                                    lastUsedAt: try row.instant("last_used_at", in: "sessions"),
                                    idleSeconds: try row.value("idle_seconds", in: "sessions"))
        return SignedInPatientFacts(session: session, client: try Self.storedClientOfRow(row),
                                    personalDataKeyCheck: try row.value("personal_key_check", in: "settings"))
    }

    func sessions(ofClient clientId: Int64, lastUsedSince: Date) throws -> [StoredSession] {
        try rows(Self.sessionsOfClientSQL, [clientId, lastUsedSince]).map(StoredSession.init(row:))
    }

    /// A patient's (`$1`) sessions last used at `$2` or later, oldest first.
    static let sessionsOfClientSQL = """
        SELECT id, client_id, token_hash, created_at, last_used_at, device_name, device_platform, device_app_version,
               idle_seconds
        FROM sessions WHERE client_id = $1 AND last_used_at >= $2 ORDER BY id
        """

    func deleteSessions(lastUsedBefore: Date) throws {
        try execute(Self.purgeSessionsSQL, [lastUsedBefore])
    }

    func insertSession(clientId: Int64, tokenHash: String, at: Date, device: Device?, idleSeconds: Int?) throws {
        try execute(Self.insertSessionSQL, Self.insertSessionBinds(clientId: clientId, tokenHash: tokenHash, at: at, device: device,
                                                                  idleSeconds: idleSeconds))
    }

    /// Anyone's sessions last used before `$1`.
    static let purgeSessionsSQL = "DELETE FROM sessions WHERE last_used_at < $1"
    /// A new session (`insertSessionBinds`).
    static let insertSessionSQL = """
        INSERT INTO sessions (client_id, token_hash, created_at, last_used_at, device_name, device_platform, device_app_version,
                              idle_seconds)
        VALUES ($1, $2, $3, $3, $4, $5, $6, $7)
        """

    static func insertSessionBinds(clientId: Int64, tokenHash: String, at: Date, device: Device?,
                                   idleSeconds: Int?) -> [any PostgresBindable] {
        [clientId, tokenHash, at, device?.name, device?.platform, device?.appVersion, idleSeconds]
    }

    func touchSession(tokenHash: String, at: Date) throws {
        try execute(Self.touchSessionSQL, [at, tokenHash])
    }

    /// A use of a patient's session at `$1` (never moving its last use back), by its token's hash (`$2`).
    static let touchSessionSQL = "UPDATE sessions SET last_used_at = GREATEST(last_used_at, $1) WHERE token_hash = $2"

    func deleteSession(tokenHash: String) throws -> Bool {
        noteSessionsChanged()
        return try execute(Self.deleteSessionSQL, [tokenHash]) > 0
    }

    func deleteSession(id: Int64, ofClient clientId: Int64) throws -> Bool {
        noteSessionsChanged()
        return try execute(Self.deleteSessionOfClientSQL, [id, clientId]) > 0
    }

    /// A patient's session ended by its token's hash; its id returned.
    static let deleteSessionSQL = "DELETE FROM sessions WHERE token_hash = $1 RETURNING id"
    /// A patient's session ended by its id (`$1`) and patient (`$2`); its id returned.
    static let deleteSessionOfClientSQL = "DELETE FROM sessions WHERE id = $1 AND client_id = $2 RETURNING id"

    func deleteSessions(ofClient clientId: Int64, except tokenHash: String?) throws -> Int {
        noteSessionsChanged()
        return try execute("DELETE FROM sessions WHERE client_id = $1 AND token_hash <> $2", [clientId, tokenHash ?? ""])
    }
}

// MARK: Log-in throttling

extension PostgresTransaction {
    func forgetLoginAttempts(windowStartedBy: Date) throws {
        try execute(Self.forgetLoginAttemptsSQL, [windowStartedBy])
    }

    /// Attempts of windows started at `$1` or earlier.
    static let forgetLoginAttemptsSQL = "DELETE FROM login_attempts WHERE first_failure_at <= $1"

    /// One statement: the upsert takes the name's row lock, held until this transaction ends,
    /// so a concurrent count of the same name waits and then adds to this one's committed
    /// count (or to nothing, if this one rolled back).
    func countLoginAttempt(loginKey: String, at: Date) throws -> LoginAttempts {
        try Self.loginAttempts(try row(Self.countLoginAttemptSQL, [loginKey, at]))
    }

    /// One attempt of `$1` counted at `$2`: the count and its window's start returned.
    static let countLoginAttemptSQL = """
        INSERT INTO login_attempts (login_key, failures, first_failure_at) VALUES ($1, 1, $2)
        ON CONFLICT (login_key) DO UPDATE SET failures = login_attempts.failures + 1
        RETURNING failures, first_failure_at
        """

    static func loginAttempts(_ row: StoredRowValues?) throws -> LoginAttempts {
        guard let row else { throw ClinicError(.storage, .storageFailure, "login_attempts: no row returned") }
        let table = "login_attempts"
        return LoginAttempts(count: try row.value("failures", in: table, key: "login_key"),
                             windowStart: try row.instant("first_failure_at", in: table, key: "login_key"))
    }

    /// One upsert: its row lock holds until the transaction ends, so parallel counts of one key
    /// on any server wait and add to the committed count.
    func countSend(key: String, window: Int64, at: Date) throws -> Int {
        try execute(Self.expiredSendCountsSQL, [Self.sendCountsExpiry(window: window, at: at)])
        guard let count = try value(Int64.self, Self.countSendSQL, Self.countSendBinds(key: key, window: window, at: at)) else {
            throw ClinicError(.storage, .storageFailure, "send_counts: no row returned")
        }
        return Int(count)
    }

    /// The counts whose windows ended a day before: $1 the instant (`sendCountsExpiry`).
    static let expiredSendCountsSQL = "DELETE FROM send_counts WHERE window_start <= $1"

    static func sendCountsExpiry(window: Int64, at: Date) -> Date { Date(seconds: at.seconds - 86_400 - window) }

    /// A send counted in one statement (`countSendBinds`): a window that ended starts again at
    /// one; the count now.
    static let countSendSQL = """
        INSERT INTO send_counts (key, window_start, count) VALUES ($1, $2, 1)
        ON CONFLICT (key) DO UPDATE SET
            count = CASE WHEN send_counts.window_start <= $3 THEN 1 ELSE send_counts.count + 1 END,
            window_start = CASE WHEN send_counts.window_start <= $3 THEN EXCLUDED.window_start ELSE send_counts.window_start END
        RETURNING count
        """

    static func countSendBinds(key: String, window: Int64, at: Date) -> [any PostgresBindable] {
        [key, Date(seconds: at.seconds), Date(seconds: at.seconds - window)]
    }

    /// The name's row is locked first (`FOR UPDATE`), so that the count it decides on (the last
    /// attempt: delete; otherwise one fewer) is not changed by a concurrent count or withdrawal
    /// before this transaction ends.
    func withdrawLoginAttempt(loginKey: String, windowStart: Date) throws {
        guard let failures = try value(Int64.self, Self.lockLoginAttemptsSQL, [loginKey, windowStart]) else { return }
        try execute(Self.withdrawLoginAttemptSQL(last: failures <= 1), [loginKey, windowStart])
    }

    /// The count of `$1`'s window started at `$2`, its row locked until the transaction ends.
    static let lockLoginAttemptsSQL = "SELECT failures FROM login_attempts WHERE login_key = $1 AND first_failure_at = $2 FOR UPDATE"

    /// One attempt fewer in the window locked by `lockLoginAttemptsSQL`; the row goes with the `last` one.
    static func withdrawLoginAttemptSQL(last: Bool) -> String {
        last ? "DELETE FROM login_attempts WHERE login_key = $1 AND first_failure_at = $2"
            : "UPDATE login_attempts SET failures = failures - 1 WHERE login_key = $1 AND first_failure_at = $2"
    }

    func clearLoginAttempts(loginKey: String) throws {
        try execute(Self.clearLoginAttemptsSQL, [loginKey])
    }

    static let clearLoginAttemptsSQL = "DELETE FROM login_attempts WHERE login_key = $1"
}

// MARK: The audit trail

extension PostgresTransaction {
    /// Always: PostgreSQL's first migration makes every table (SQLite's older schemas had no
    /// audit trail), and this was a round trip on every audited write.
    func hasAuditTrail() throws -> Bool { true }

    func auditChainHead() throws -> AuditChainHead? {
        try auditHead(locked: false)
    }

    /// `SELECT … FOR UPDATE` on the head row (present from migration 0002 on, for an empty
    /// chain too): a second appender waits here until this transaction ends, then reads the
    /// head this one moved.
    func lockAuditChainHead() throws -> AuditChainHead? {
        try auditHead(locked: isWrite)
    }

    /// The head row, nil when there is none or it is the empty chain's (last id 0, genesis hash).
    private func auditHead(locked: Bool) throws -> AuditChainHead? {
        guard let row = try row("SELECT last_id, hash FROM audit_head WHERE id = 1" + (locked ? " FOR UPDATE" : "")) else {
            return nil
        }
        return try Self.auditHead(row)
    }

    func auditKeyForAppending() throws -> AuditKey {
        try store.auditKeyForAppending(self)
    }

    /// The entry's own id goes into the identity column (OVERRIDING SYSTEM VALUE); the head
    /// row, locked by `lockAuditChainHead`, moves to it (made, on a database whose head row is
    /// missing: not made by migration 0002). One statement, `appendAuditSQL`.
    func appendAuditEntry(_ entry: AuditEntry) throws {
        try execute(Self.appendAuditSQL, Self.auditEntryBinds(entry))
    }

    /// A row of the trail and the head moved to it, in one statement: $1…$12 `auditEntryBinds`.
    static let appendAuditSQL = """
        WITH e AS (
            INSERT INTO audit_events (id, at, actor, staff_id, role, clinic_id, action, client_id, appointment_id,
                                      request_id, detail, hash)
            OVERRIDING SYSTEM VALUE
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            RETURNING id, hash)
        INSERT INTO audit_head (id, last_id, hash) SELECT 1, id, hash FROM e
        ON CONFLICT (id) DO UPDATE SET last_id = EXCLUDED.last_id, hash = EXCLUDED.hash
        """

    static func auditEntryBinds(_ entry: AuditEntry) -> [any PostgresBindable] {
        [entry.id, entry.at, entry.actor, entry.staffId, entry.role, entry.clinicId, entry.action,
         entry.clientId, entry.appointmentId, entry.requestId, entry.detail, entry.hash]
    }

    /// The head as `auditHead` reads it, from a row of `last_id` and `hash`.
    static func auditHead(_ row: StoredRowValues) throws -> AuditChainHead? {
        let lastId: Int64, hash: String
        do {
            lastId = try AuditEntry.column(row, "last_id", id: nil)
            hash = try AuditEntry.column(row, "hash", id: nil)
        } catch let unreadable as UnreadableAuditRow {
            throw unreadable.error
        }
        if lastId == 0 && hash == emptyAuditChainHash { return nil }
        return AuditChainHead(lastId: lastId, hash: hash)
    }

    /// Read in pages of `auditPageSize` rows by id (keyset), never the whole trail at once.
    func forEachAuditEntry(_ body: (Result<AuditEntry, UnreadableAuditRow>) throws -> Bool) throws {
        var after: Int64?
        while true {
            let page = try rows("""
                SELECT \(Self.auditColumns) FROM audit_events WHERE $1::bigint IS NULL OR id > $1 ORDER BY id LIMIT $2
                """, [after, Self.auditPageSize])
            for row in page {
                let entry: Result<AuditEntry, UnreadableAuditRow>
                do {
                    entry = .success(try AuditEntry(row: row))
                } catch let error as UnreadableAuditRow {
                    entry = .failure(error)
                }
                guard try body(entry) else { return }
            }
            guard page.count == Self.auditPageSize, let last = page.last,
                  let id = try? last.decode(Int64.self, forColumn: "id") else { return }
            after = id
        }
    }

    func auditEntries(ofClient clientId: Int64, limit: Int) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        try AuditEntry.read(try rows(Self.accessLogSQL, [clientId, limitBind(limit)]))
    }

    /// A patient's audit rows from their account's own lifetime, the latest first: $1 the
    /// patient, $2 the limit.
    static let accessLogSQL = """
        SELECT \(auditColumns) FROM audit_events
        WHERE client_id = $1 AND at >= (SELECT created_at FROM clients WHERE id = $1)
        ORDER BY id DESC LIMIT $2
        """

    func auditEntries(since: Date) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        try AuditEntry.read(try rows(Self.auditSinceSQL, [since]))
    }

    /// The audit rows from $1 on, oldest first.
    static let auditSinceSQL = "SELECT \(auditColumns) FROM audit_events WHERE at >= $1 ORDER BY id"

    static let auditColumns = "id, at, actor, staff_id, role, clinic_id, action, client_id, appointment_id, request_id, detail, hash"
}

// MARK: Idempotency keys

extension PostgresTransaction {
    // The statements of idempotency keys, shared with the awaited path (`PostgresStore.perform`).
    static let forgetIdempotentSQL = "DELETE FROM idempotency_keys WHERE created_at < $1"
    static let idempotencyLockSQL = "SELECT pg_advisory_xact_lock(hashtextextended($1 || $2::bigint::text || ':' || $3, 0))"
    static let keepIdempotentSQL = """
        INSERT INTO idempotency_keys (client_id, key, fingerprint, status, body, created_at) VALUES ($1, $2, $3, $4, $5, $6)
        """

    func forgetIdempotentResponses(createdBefore: Date) throws {
        try execute(Self.forgetIdempotentSQL, [createdBefore])
    }

    /// In a write transaction the (patient, key) pair's advisory lock is taken first and held
    /// until the transaction ends: a second copy of the request waits here, then finds what the
    /// first kept (there is no row to lock before the first keeps one).
    func idempotentResponse(ofClient clientId: Int64, key: String) throws -> KeptResponse? {
        if isWrite {
            try execute(Self.idempotencyLockSQL, [Self.idempotencyLockNamespace, clientId, key])
        }
        guard let row = try row("SELECT client_id, fingerprint, status, body FROM idempotency_keys WHERE client_id = $1 AND key = $2",
                                [clientId, key]) else { return nil }
        let table = "idempotency_keys"
        return KeptResponse(fingerprint: try row.value("fingerprint", in: table, key: "client_id"),
                            status: try row.value("status", in: table, key: "client_id"),
                            body: try row.value("body", in: table, key: "client_id"))
    }

    func keepIdempotentResponse(ofClient clientId: Int64, key: String, _ response: KeptResponse, at: Date) throws {
        try execute(Self.keepIdempotentSQL, [clientId, key, response.fingerprint, response.status, response.body, at])
    }
}

// MARK: Shared secrets

extension PostgresTransaction {
    func sharedSecret(named name: String) throws -> String? {
        try value(String.self, "SELECT value FROM settings WHERE key = $1", [name])
    }

    func keepSharedSecret(named name: String, value: String) throws {
        try execute(Self.keepSettingSQL, [name, value])
    }

    /// Setting `$1` stored as `$2` unless it has a value.
    static let keepSettingSQL = "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING"
}
