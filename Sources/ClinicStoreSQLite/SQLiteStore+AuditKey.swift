import ClinicKit
import Foundation
import GRDB

extension AuditKey {
    /// The key check a database stores (nil: its trail was never keyed).
    static func storedCheck(_ db: Database) throws -> String? {
        guard try db.tableExists("settings") else { return nil }
        return try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM settings WHERE key = ?"), arguments: [checkSetting])
    }
}

extension SQLiteStore {
    /// `AuditKeyRing.forAppending` in this database's transaction.
    func auditKeyForAppending(_ db: Database) throws -> AuditKey {
        try auditKeys.forAppending(transaction(db))
    }

    /// After the audit migration's up part: the trail is new and empty, so a key left by a
    /// trail that a down migration dropped belongs to no trail (its anchor could never be
    /// reached). It goes aside (`<key>.dropped-…`, renamed, never deleted) and its check is
    /// forgotten, so that the first row makes a new key. Should the migration roll back after
    /// the rename, nothing needed the key: its trail was gone already.
    func setAsideDroppedAuditKey(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [AuditKey.checkSetting])
        auditKeys.cached.withLock { $0 = nil }
        auditKeys.memory.withLock { $0 = nil }
        guard let auditKeyFile = auditKeys.file, FileManager.default.fileExists(atPath: auditKeyFile.path) else { return }
        let target = auditKeyFile.path + ".dropped-" + UUID().uuidString.prefix(8)
        guard rename(auditKeyFile.path, target) == 0 else { throw ClinicError(.keyError, .keyUnwritable, target) }
        KeyFile.syncFolder(of: target)
    }

    /// After a restore: an audit key file that the restored trail was not keyed with (a backup
    /// from before audit keys, or of another database) goes aside with the replaced database
    /// (`<aside>.audit-key`), which it verifies; the restored trail is then keyed afresh at
    /// its next row, or reported as missing its key if it had one.
    func setAuditKeyAside(_ aside: String) throws {
        guard let auditKeyFile = auditKeys.file, let stored = try auditKeys.stored() else { return }
        let marker = try read { db in try AuditKey.storedCheck(db) }
        guard marker != stored.check else { return }
        let target = AuditKey.file(databasePath: aside).path
        guard rename(auditKeyFile.path, target) == 0 else { throw ClinicError(.keyError, .keyUnwritable, target) }
        KeyFile.syncFolder(of: target)
        auditKeys.cached.withLock { $0 = nil }
    }
}
