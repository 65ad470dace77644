import ClinicKit
import Dispatch
import Foundation
import PostgresNIO

// The PostgreSQL store as the storage seam's `ClinicStore`: the controllers run on it exactly as
// on SQLite. Transactions run on the calling thread (`blockingTransaction`); a write joined by
// the writes made inside it on the same thread (`writingJoined`: group commit, idempotent
// requests) gives each of them a savepoint, as SQLite's `writeJoined` does.

extension PostgresTransaction: StoreWriting {}

/// Where a PostgreSQL store's key files are. Every server of one database must use the same
/// two files (copy them with the same care as the database's backups): the personal-data key
/// seals what patients typed, the audit key chains the audit trail.
///
/// `CLINIC_KEY_FILE` and `CLINIC_AUDIT_KEY_FILE` name them; by default they are
/// `$XDG_CONFIG_HOME/clinic/<database>.key` and `<database>.audit-key` (`~/.config/clinic/…`).
/// A key is made on first use only where the database has sealed or chained nothing yet; a
/// database that has is refused a missing or different key (`key_missing`, `key_wrong`).
public struct PostgresStoreKeys: Sendable, Equatable {
    public let personal: String
    public let audit: String

    public init(personal: String, audit: String) {
        self.personal = personal
        self.audit = audit
    }

    public static func locate(environment: [String: String], database: String) -> PostgresStoreKeys {
        func setting(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let home = UserFolders.home(environment)
        let folder = (setting("XDG_CONFIG_HOME") ?? home + "/.config") + "/clinic/"
        // A database name may hold any character but '/' and NUL in a file name.
        let name = database.replacingOccurrences(of: "/", with: "_")
        return PostgresStoreKeys(personal: setting("CLINIC_KEY_FILE") ?? folder + name + ".key",
                                 audit: setting("CLINIC_AUDIT_KEY_FILE") ?? folder + name + ".audit-key")
    }
}

extension PostgresStore: ClinicStore {
    public func reading<T>(_ body: (any StoreReading) throws -> T) throws -> T {
        // Inside a joined write on this thread: its connection, which sees its changes (and a
        // second connection is never needed while one is held).
        if let joined = JoinedPostgresTransaction.current(self) { return try body(joined.transaction) }
        return try readTransaction(body)
    }

    public func writing<T>(_ body: (any StoreWriting) throws -> T) throws -> T {
        if let joined = JoinedPostgresTransaction.current(self) { return try joined.inSavepoint { try body($0) } }
        return try writeTransaction(body)
    }

    public func writingJoined<T>(_ body: (any StoreWriting) throws -> T) throws -> T {
        if let joined = JoinedPostgresTransaction.current(self) { return try joined.inSavepoint { try body($0) } }
        return try writeTransaction { tx in try JoinedPostgresTransaction.with(tx) { try body(tx) } }
    }

    public var isReadOnly: Bool { false }

    /// A read that is one statement, in one round trip: outside any transaction (one statement
    /// is a consistent snapshot by itself), or inside the joined write running here, whose
    /// connection sees its changes.
    func oneStatement<T>(_ read: (PostgresTransaction) throws -> T) throws -> T {
        if let joined = JoinedPostgresTransaction.current(self) { return try read(joined.transaction) }
        return try blockingStatement { connection in
            try read(PostgresTransaction(connection: connection, store: self, isWrite: false))
        }
    }

    public func awaitedSchemaStatus() async throws -> (current: Int, latest: Int) {
        try await schemaStatus(migrations)
    }
}

/// The write transaction `writingJoined` opened, which the writes made inside it join in
/// savepoints: a joined write's failure undoes only its own changes (PostgreSQL would otherwise
/// abort the whole transaction at its first failed statement). It is a task-local value bound
/// for `writingJoined`'s synchronous body, on the thread that runs it (with or without a task),
/// and used only there.
final class JoinedPostgresTransaction: @unchecked Sendable {
    @TaskLocal private static var joined: JoinedPostgresTransaction?
    let transaction: PostgresTransaction
    private var depth = 0

    private init(_ transaction: PostgresTransaction) { self.transaction = transaction }

    static func current(_ store: PostgresStore) -> JoinedPostgresTransaction? {
        guard let joined, joined.transaction.store === store else { return nil }
        return joined
    }

    static func with<T>(_ transaction: PostgresTransaction, _ body: () throws -> T) rethrows -> T {
        try $joined.withValue(JoinedPostgresTransaction(transaction), operation: body)
    }

    /// `body` in a savepoint: released when it returns, rolled back to when it throws. The
    /// error is the domain's (a constraint violation is `slot_taken`, …) so that the caller
    /// can tell it from one that spoils the whole transaction.
    func inSavepoint<T>(_ body: (PostgresTransaction) throws -> T) throws -> T {
        depth += 1
        defer { depth -= 1 }
        let name = "joined_\(depth)"
        try transaction.execute("SAVEPOINT " + name)
        do {
            let result = try body(transaction)
            try transaction.execute("RELEASE SAVEPOINT " + name)
            return result
        } catch {
            do {
                try transaction.execute("ROLLBACK TO SAVEPOINT " + name)
                try transaction.execute("RELEASE SAVEPOINT " + name)
            } catch {
                // The connection or transaction is gone: the outer transaction fails with it.
                throw PostgresErrorMapping.clinicError(error)
            }
            if let error = error as? ClinicError { throw error }
            throw PostgresErrorMapping.clinicError(error)
        }
    }
}
