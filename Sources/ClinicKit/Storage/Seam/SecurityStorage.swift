import Foundation

/// Sessions, log-in throttling, the audit trail and idempotency keys (issue #25's seam).
///
/// The rules stay in ClinicKit (`SessionManager`, `ClientController.reserveAttempt`,
/// `AuditLog`, `IdempotencyStore`): how long a session lives, how many attempts lock a name and
/// for how long, how the audit chain is hashed and keyed, how long a kept response is kept. A
/// store only reads and writes the rows, and keeps the contract written on each operation, which
/// is what makes those rules hold when several servers share one database.
///
/// Instants are whole UTC seconds: a store keeps what it is given rounded down to the second
/// and compares at that precision (`created_at = ?` must find the value it was given).
public protocol SecurityReading {
    // MARK: Sessions

    /// The session whose token has this SHA-256 (hex), whatever its age; nil for none.
    /// Looked up by the unique index on the hash; only what resolving a token needs is read.
    func session(tokenHash: String) throws -> SessionLookup?

    /// A patient's sessions last used at or after `lastUsedSince`, in the order they were
    /// created (by id).
    func sessions(ofClient clientId: Int64, lastUsedSince: Date) throws -> [StoredSession]

    // MARK: The audit trail

    /// Whether the store has an audit trail (a SQLite database from before migration 10 has
    /// none, and then nothing is appended or verified).
    func hasAuditTrail() throws -> Bool

    /// The recorded head of the chain: the last row's id and hash; nil before the first row.
    /// A head that cannot be read is a `ClinicError` (`auditRowUnreadable`). Inside a write
    /// transaction, use `lockAuditChainHead` to append.
    func auditChainHead() throws -> AuditChainHead?

    /// Every row of the trail in id order, each as it decoded: a row whose stored values are not
    /// what the schema says (edited around the triggers) is given as its `UnreadableAuditRow`,
    /// not thrown. `body` returns false to stop. Rows are read one at a time, not all at once.
    func forEachAuditEntry(_ body: (Result<AuditEntry, UnreadableAuditRow>) throws -> Bool) throws

    /// A patient's rows, newest first, at most `limit`: only rows written during the lifetime of
    /// the account that has this id now (`at` not before the account's creation), so that a
    /// reused id never shows anyone an earlier account's rows. Unreadable rows apart.
    func auditEntries(ofClient clientId: Int64, limit: Int) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow])

    /// Every row with `at` at or after `since`, oldest first (by id); unreadable rows apart (a
    /// store that cannot tell their `at` includes them whatever `since` is).
    func auditEntries(since: Date) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow])

    // MARK: Shared secrets

    /// The secret kept under `name` (hex text as `keepSharedSecret` stored it), or nil.
    func sharedSecret(named name: String) throws -> String?
}

public protocol SecurityWriting: SecurityReading {
    // MARK: Sessions

    /// Deletes every session (anyone's) last used before `lastUsedBefore`.
    func deleteSessions(lastUsedBefore: Date) throws

    /// Inserts a session created and last used `at`. The hash is unique in the store (a
    /// collision of 256-bit tokens is a storage error, not a second session).
    func insertSession(clientId: Int64, tokenHash: String, at: Date, device: Device?, idleSeconds: Int?) throws

    /// Records a use of the session: its last use becomes `at` unless it is later already (a
    /// slow request finishing after a newer one never moves it back: on PostgreSQL
    /// `GREATEST(last_used_at, $1)`).
    func touchSession(tokenHash: String, at: Date) throws

    /// Deletes the session with this token hash; true if there was one.
    func deleteSession(tokenHash: String) throws -> Bool

    /// Deletes a patient's session by its id; false when the patient has no session by that id
    /// (another patient's is left alone).
    func deleteSession(id: Int64, ofClient clientId: Int64) throws -> Bool

    /// Deletes every session of a patient but the one with `except`'s hash (nil: all of them);
    /// returns how many were deleted.
    func deleteSessions(ofClient clientId: Int64, except tokenHash: String?) throws -> Int

    // MARK: Log-in throttling

    /// Forgets every login name's attempts whose window started at or before `windowStartedBy`
    /// (windows that have ended).
    func forgetLoginAttempts(windowStartedBy: Date) throws

    /// Counts one attempt for `loginKey` and returns the attempts of its window including this
    /// one: a name without a row gets one (1 attempt, the window starting `at`), a name with one
    /// adds 1 to it (the window keeps its start). The count lives in the store, never in one
    /// process's memory, and the addition is atomic: two transactions counting the same name
    /// at once each see the other's committed attempt, and a transaction that rolls back takes
    /// its attempt with it — that is how the caller refuses an attempt past the limit (it
    /// throws, the count is undone). On PostgreSQL one statement,
    /// `INSERT … ON CONFLICT (login_key) DO UPDATE SET failures = login_attempts.failures + 1
    /// RETURNING failures, first_failure_at`, whose row lock holds until the transaction ends;
    /// never a read followed by a separate write, which lets parallel guesses all pass.
    func countLoginAttempt(loginKey: String, at: Date) throws -> LoginAttempts

    // MARK: Counted sends (confirmation codes, issue 55)

    /// Counts one send under `key` in a fixed window of `window` seconds and returns the sends
    /// of that window including this one: a key without a row, or whose window started at or
    /// before `at - window`, starts a new window at `at` with 1. Rows of windows that ended a day
    /// or more ago are forgotten. Atomic like `countLoginAttempt` (one upsert, its row lock
    /// held to the end of the transaction): parallel sends of one key all count. A caller that
    /// refuses a send over its limit throws, and the count rolls back with the transaction.
    func countSend(key: String, window: Int64, at: Date) throws -> Int

    /// Gives back one attempt counted in the window that started at `windowStart`: the count
    /// goes down by one, and the row goes when it was the last. Nothing happens when the name's
    /// window is another (that window ended and a new one began: not this attempt's to undo).
    func withdrawLoginAttempt(loginKey: String, windowStart: Date) throws

    /// Forgets every attempt of `loginKey` (its account is deleted).
    func clearLoginAttempts(loginKey: String) throws

    // MARK: The audit trail

    /// The key to chain the next row with. It belongs to the store: SQLite's is the file beside
    /// the database (`AuditKey`), made on first use and anchored at the current head. Every
    /// process appending to one trail must use the same key, so on a store shared by several
    /// servers it is provisioned once for all of them, never made by whichever appends first.
    func auditKeyForAppending() throws -> AuditKey

    /// The chain's head, locked for this transaction: the appender reads it, computes the next
    /// row and writes it with `appendAuditEntry`, and no other transaction may read the same
    /// head to append until this one ends, else two rows would follow one head and the chain
    /// would fork. SQLite's write transactions are serialised already (IMMEDIATE, the writer
    /// lock); on PostgreSQL `SELECT … FROM audit_head WHERE id = 1 FOR UPDATE`, with the head
    /// row present from the schema on (before the first row there is nothing to lock).
    func lockAuditChainHead() throws -> AuditChainHead?

    /// Writes `entry` with its own id (the id is part of its hash, so the store never assigns
    /// another) and moves the head to it, both in this transaction. Rows are never updated or
    /// deleted afterwards.
    func appendAuditEntry(_ entry: AuditEntry) throws

    // MARK: Idempotency keys

    /// Forgets every kept response created before `createdBefore`.
    func forgetIdempotentResponses(createdBefore: Date) throws

    /// The response kept for a patient's key, if any. Only in a write transaction: until it
    /// ends, another transaction asking for the same (patient, key) waits, then finds what this
    /// one kept, so that two copies of one request never both run. SQLite's write
    /// transactions are serialised already; on PostgreSQL take
    /// `pg_advisory_xact_lock` on the (patient, key) pair before the look-up (there may be no
    /// row to lock yet).
    func idempotentResponse(ofClient clientId: Int64, key: String) throws -> KeptResponse?

    /// Keeps the response to a patient's key, created `at`; (patient, key) is unique, and a
    /// second one is an error, never a silent overwrite. Kept responses go with their patient.
    func keepIdempotentResponse(ofClient clientId: Int64, key: String, _ response: KeptResponse, at: Date) throws

    // MARK: Shared secrets

    /// Keeps `value` under `name` unless a value is kept there already (then that one stays:
    /// another process made it first). On PostgreSQL `ON CONFLICT DO NOTHING`.
    func keepSharedSecret(named name: String, value: String) throws
}

/// A session as a store keeps it: the SHA-256 of its token, never the token.
public struct StoredSession: Sendable, Equatable {
    public let id: Int64
    public let clientId: Int64
    /// SHA-256 of the token, 64 lowercase hex digits.
    public let tokenHash: String
    public let createdAt: Date
    public let lastUsedAt: Date
    public let device: Device?
    /// The session's own idle limit in seconds (a web session's); nil: `SessionManager.idleLimit`.
    public let idleSeconds: Int?

    public init(id: Int64, clientId: Int64, tokenHash: String, createdAt: Date, lastUsedAt: Date, device: Device?,
                idleSeconds: Int? = nil) {
        self.id = id; self.clientId = clientId; self.tokenHash = tokenHash
        self.createdAt = createdAt; self.lastUsedAt = lastUsedAt; self.device = device; self.idleSeconds = idleSeconds
    }
}

/// What resolving a token reads of its session.
public struct SessionLookup: Sendable, Equatable {
    public let id: Int64
    public let clientId: Int64
    /// SHA-256 of the token, 64 lowercase hex digits.
    public let tokenHash: String
    public let lastUsedAt: Date
    /// The session's own idle limit in seconds (a web session's); nil: `SessionManager.idleLimit`.
    public let idleSeconds: Int?

    public init(id: Int64, clientId: Int64, tokenHash: String, lastUsedAt: Date, idleSeconds: Int? = nil) {
        self.id = id; self.clientId = clientId; self.tokenHash = tokenHash; self.lastUsedAt = lastUsedAt
        self.idleSeconds = idleSeconds
    }
}

/// A login name's counted attempts in its current window.
public struct LoginAttempts: Sendable, Equatable {
    public let count: Int
    /// When the window began: its first counted attempt.
    public let windowStart: Date

    public init(count: Int, windowStart: Date) {
        self.count = count; self.windowStart = windowStart
    }
}

/// The audit chain's head: the last row's id and hash.
public struct AuditChainHead: Sendable, Equatable {
    public let lastId: Int64
    public let hash: String

    public init(lastId: Int64, hash: String) {
        self.lastId = lastId; self.hash = hash
    }
}

/// A response kept under an idempotency key, with the fingerprint of the request it answered.
public struct KeptResponse: Sendable, Equatable {
    public let fingerprint: String
    public let status: Int
    public let body: Data

    public init(fingerprint: String, status: Int, body: Data) {
        self.fingerprint = fingerprint; self.status = status; self.body = body
    }
}

extension SecurityWriting {
    /// A session with the idle limit of its kind (the API's and the CLI's).
    public func insertSession(clientId: Int64, tokenHash: String, at: Date, device: Device?) throws {
        try insertSession(clientId: clientId, tokenHash: tokenHash, at: at, device: device, idleSeconds: nil)
    }
}
