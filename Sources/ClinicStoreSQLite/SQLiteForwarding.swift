import ClinicKit
import Foundation
import GRDB

// The audit trail, the inbox and log-in attempts over a bare GRDB `Database`: what this store's
// own code holds where it has no `SQLiteTransaction` (migration hooks, `check` of a backup file)
// and the tests of this store's SQL. ClinicKit's code calls the seam.

extension AuditLog {
    public static func append(_ db: Database, by actor: AuditActor, action: AuditAction, clientId: Int64? = nil,
                              appointmentId: Int64? = nil, clinicId: Int64? = nil, requestId: String? = nil,
                              detail: String = "", now: Date) throws {
        try append(SQLiteSecurityConnection(db), by: actor, action: action, clientId: clientId, appointmentId: appointmentId,
                   clinicId: clinicId, requestId: requestId, detail: detail, now: now)
    }

    static func head(_ db: Database) throws -> (lastId: Int64, hash: String) {
        try head(SQLiteSecurityConnection(db))
    }

    public static func verify(_ db: Database, key: AuditKey?, keyed: Bool = false) throws -> [String] {
        try verify(SQLiteSecurityConnection(db), key: key, keyed: keyed)
    }

    public static func entries(_ db: Database, clientId: Int64, limit: Int = 500) throws -> [AuditEntry] {
        try entries(SQLiteSecurityConnection(db), clientId: clientId, limit: limit)
    }

    public static func export(_ db: Database, since: Date) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        try export(SQLiteSecurityConnection(db), since: since)
    }

    public static func entries(_ db: Database, since: Date) throws -> [AuditEntry] {
        try entries(SQLiteSecurityConnection(db), since: since)
    }
}

/// The `SQLiteStore` whose write transaction is running (a task-local value bound for the
/// transaction's body), for `SQLiteSecurityConnection`: a bare `Database` handed to the audit
/// trail's forwarding overloads (migrations, backup's check, tests) finds the store's audit key
/// through it; a store's transaction knows its key itself.
enum AuditChain {
    @TaskLocal private static var entry: Entry?

    static func manager(for db: Database) -> SQLiteStore? {
        guard let entry, entry.db === db else { return nil }
        return entry.manager
    }

    static func with<T>(_ manager: SQLiteStore, _ db: Database, _ body: () throws -> T) rethrows -> T {
        try $entry.withValue(Entry(manager: manager, db: db), operation: body)
    }

    /// Used only on the thread that runs the transaction (see `JoinedTransaction`).
    private final class Entry: @unchecked Sendable {
        let manager: SQLiteStore
        let db: Database
        init(manager: SQLiteStore, db: Database) { self.manager = manager; self.db = db }
    }
}

extension Inbox {
    @discardableResult
    static func post(_ db: Database, clientId: Int64, kind: MessageKind, subject: String, body: String,
                     appointmentId: Int64? = nil, clinicId: Int64? = nil, staffId: Int64? = nil,
                     dedupeKey: String? = nil, now: Date) throws -> Int64? {
        try post(SQLiteInbox(db: db), clientId: clientId, kind: kind, subject: subject, body: body, appointmentId: appointmentId,
                 clinicId: clinicId, staffId: staffId, dedupeKey: dedupeKey, now: now)
    }

    public static func messages(_ db: Database, clientId: Int64, unreadOnly: Bool = false, limit: Int = 200) throws -> [InboxMessage] {
        try messages(SQLiteInbox(db: db), clientId: clientId, unreadOnly: unreadOnly, limit: limit)
    }
}

extension ClientController {
    static func releaseAttempt(_ db: Database, _ key: String, window: Int64) throws {
        try releaseAttempt(SQLiteSecurityConnection(db), key, window: window)
    }
}
