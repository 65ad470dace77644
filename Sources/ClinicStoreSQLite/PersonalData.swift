import ClinicKit
import Crypto
import Foundation
import GRDB

/// The personal-data key of a database: loading and checking it, sealing old plain rows,
/// opening rows for a down migration, and rotating the key.
extension SQLiteStore {
    static let keyCheckSetting = "encryption.key_check"

    // Over the `Database` of a migration hook (this store's own).
    func cipher(_ db: Database) throws -> FieldCipher {
        try personalDataKey.cipher(keyCheck: try Self.keyCheck(db))
    }

    // Over the `Database` of a migration hook (this store's own).
    func sealingCipher(_ db: Database) throws -> FieldCipher {
        try sealingCipher(transaction(db))
    }

    /// After the encryption migration: seals the personal fields of rows that still have them
    /// in clear, and blanks those columns.
    func sealPlainRows(_ db: Database) throws {
        let cipher = try sealingCipher(db)
        for row in try Row.fetchAll(db, sql: "SELECT * FROM clients WHERE personal IS NULL") {
            let client = try Client(row: row)
            try db.execute(sql: """
                UPDATE clients SET personal = ?, name = '', surname = '', street = '', house = '', lat = NULL, lon = NULL
                WHERE id = ?
                """, arguments: [try cipher.seal(client.personal, loginKey: client.loginKey), client.id])
        }
    }

    /// Before the encryption migration's down part: puts the personal fields back in clear,
    /// and forgets the key check (nothing is sealed any more).
    func openAllRows(_ db: Database) throws {
        defer { _ = try? db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [Self.keyCheckSetting]) }
        for row in try Row.fetchAll(db, sql: "SELECT * FROM clients WHERE personal IS NOT NULL") {
            let client = try opened(transaction(db), try SQLiteTransaction.storedClient(row))
            try db.execute(sql: "UPDATE clients SET name = ?, surname = ?, street = ?, house = ?, lat = ?, lon = ?, personal = NULL WHERE id = ?",
                           arguments: [client.name, client.surname, client.street, client.house, client.lat, client.lon, client.id])
        }
    }

    /// Re-encrypts every patient's personal data under a new key in one transaction. The new
    /// key is written to `<key>.new` first and takes the key file's place only after the commit;
    /// if the process dies between the two, the next use sees which key the stored check
    /// matches and finishes or undoes the swap. Returns how many patients were re-encrypted.
    @discardableResult
    public func rotateKey() throws -> Int {
        // The whole rotation holds the writer lock, so no other process of this program writes
        // meanwhile; readers find whichever key matches the check, staged or not.
        try checkWritable()
        guard let writerLock else { return try rotate() }
        return try writerLock.withLock(limit: Self.busyLimit) { try rotate() }
    }

    private func rotate() throws -> Int {
        if let keyFile { try settleStagedKey(keyFile) }
        _ = try read { db in try cipher(db) }
        let fresh = KeyFile.newKey()
        if let keyFile { try KeyFile.write(fresh, to: keyFile.stagedPath) }
        let count = try transaction { db -> Int in
            let old = try cipher(db)
            let next = FieldCipher(key: fresh)
            let rows = try Row.fetchAll(db, sql: "SELECT id, login_key, personal FROM clients WHERE personal IS NOT NULL")
            for row in rows {
                let loginKey: String = try Self.stored(row, "login_key", of: "clients")
                let personal = try old.open(try Self.stored(row, "personal", of: "clients"), loginKey: loginKey)
                try db.execute(sql: "UPDATE clients SET personal = ? WHERE id = ?",
                               arguments: [try next.seal(personal, loginKey: loginKey), try Self.stored(row, "id", of: "clients") as Int64])
            }
            try Self.reseal(db, table: "deliveries", column: "payload", key: "id", old: old, next: next) { "delivery:\($0)" }
            // Mobile numbers: sealed again, and their lookup keys (derived from the data key) made again.
            try Self.reseal(db, table: "waitlist_entries", column: "note", key: "id", old: old, next: next) { "waitlist-note:\($0)" }
            try Self.reseal(db, table: "phones", column: "number_sealed", key: "client_id", old: old, next: next) { "phone:\($0)" }
            try TextController.rekeyPhones(transaction(db), cipher: next)
            try Self.reseal(db, table: "calendar_feeds", column: "token_sealed", key: "client_id", old: old, next: next) { "calendar:\($0)" }
            try Self.resealAttachmentBytes(db, old: old, next: next)
            try AppointmentNotes.reseal(transaction(db), old: old, next: next)
            try Self.resealKeptResponses(db, old: old, next: next)
            // The search index's key is derived from the data key: its tokens are made again.
            if try db.tableExists("patient_search") {
                try PatientIndex.rebuild(transaction(db), cipher: next) { try $0.opened(with: next) }
            }
            try db.execute(sql: "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
                           arguments: [Self.keyCheckSetting, KeyFile.check(fresh)])
            return rows.count
        }
        cachedKey.withLock { $0 = fresh }
        // Should this fail, the staged key matches the stored check: readers use it, and the
        // next rotation installs it.
        if let keyFile {
            guard rename(keyFile.stagedPath, keyFile.path) == 0 else { throw ClinicError(.keyError, .keyUnwritable, keyFile.path) }
            KeyFile.syncFolder(of: keyFile.path)
        }
        return count
    }

    /// Seals a table's sealed column again under the next key (a table an older schema lacks is skipped).
    static func reseal(_ db: Database, table: String, column: String, key: String, old: FieldCipher, next: FieldCipher,
                       context: (Int64) -> String) throws {
        guard try db.tableExists(table) else { return }
        for row in try Row.fetchAll(db, sql: "SELECT \(key), \(column) FROM \(table) WHERE \(column) IS NOT NULL") {
            let id: Int64 = try stored(row, key, of: table)
            let plain = try old.open(bytes: try stored(row, column, of: table), context: context(id))
            try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(key) = ?",
                           arguments: [try next.seal(bytes: plain, context: context(id)), id])
        }
    }

    /// Seals the responses kept under idempotency keys again (`IdempotencyStore`).
    static func resealKeptResponses(_ db: Database, old: FieldCipher, next: FieldCipher) throws {
        guard try db.tableExists("idempotency_keys") else { return }
        let table = "idempotency_keys"
        for row in try Row.fetchAll(db, sql: "SELECT client_id, key, body FROM idempotency_keys") {
            let clientId: Int64 = try stored(row, "client_id", of: table), key: String = try stored(row, "key", of: table)
            let body: Data = try stored(row, "body", of: table)
            guard IdempotencyStore.isSealed(body) else { continue }
            let context = IdempotencyStore.context(clientId, key)
            let plain = try old.open(bytes: Data(body.dropFirst()), context: context)
            try db.execute(sql: "UPDATE idempotency_keys SET body = ? WHERE client_id = ? AND key = ?",
                           arguments: [IdempotencyStore.sealMark + (try next.seal(bytes: plain, context: context)), clientId, key])
        }
    }

    /// Re-wraps every attachment's own key under the next key: its chunks and meta, sealed under
    /// its own key, stay as they are. A file of the scheme before (no key of its own: migration
    /// 20) is given one, its meta and chunks sealed again under it, since they must be rewritten
    /// anyway: after a rotation every file is crypto-shredded by its deletion. Then seals the
    /// conversations' messages again under the next key.
    static func resealAttachmentBytes(_ db: Database, old: FieldCipher, next: FieldCipher) throws {
        guard try db.tableExists("attachment_chunks") else { return }
        let keyed = try hasAttachmentKeys(db)
        let table = "attachments"
        for row in try Row.fetchAll(db, sql: "SELECT id, \(keyed ? "file_key" : "NULL AS file_key") FROM attachments ORDER BY id") {
            let id: Int64 = try stored(row, "id", of: table)
            let context = AttachmentController.keyContext(id)
            if let wrapped: Data = try stored(row, "file_key", of: table) {
                let rewrapped = try next.seal(bytes: try old.open(bytes: wrapped, context: context), context: context)
                try db.execute(sql: "UPDATE attachments SET file_key = ? WHERE id = ?", arguments: [rewrapped, id])
            } else if keyed {
                let (own, wrapped) = try next.newAttachmentKey(context: context)
                try resealAttachment(db, id: id, from: old, to: own, fileKey: wrapped)
            } else {
                try resealAttachment(db, id: id, from: old, to: next, fileKey: nil)
            }
        }
        for row in try Row.fetchAll(db, sql: "SELECT id, appointment_id, body FROM thread_messages") {
            let context = AttachmentController.threadContext(try stored(row, "appointment_id", of: "thread_messages"))
            let plain = try old.open(bytes: try stored(row, "body", of: "thread_messages"), context: context)
            try db.execute(sql: "UPDATE thread_messages SET body = ? WHERE id = ?",
                           arguments: [try next.seal(bytes: plain, context: context), try stored(row, "id", of: "thread_messages") as Int64])
        }
    }

    /// Whether the attachments have keys of their own (migration 20).
    static func hasAttachmentKeys(_ db: Database) throws -> Bool {
        try db.tableExists("attachments") && db.columns(in: "attachments").contains { $0.name == "file_key" }
    }

    /// Seals one attachment's meta and chunks again, from one cipher to another, one chunk row at
    /// a time (a chunk is up to 256 KiB: the rows are never all in memory at once), and sets its
    /// wrapped key (where the schema has the column).
    static func resealAttachment(_ db: Database, id: Int64, from: FieldCipher, to: FieldCipher, fileKey: Data?) throws {
        if let meta = try Data.fetchOne(db, sql: "SELECT meta FROM attachments WHERE id = ?", arguments: [id]) {
            let context = AttachmentController.metaContext(id)
            try db.execute(sql: "UPDATE attachments SET meta = ? WHERE id = ?",
                           arguments: [try to.seal(bytes: try from.open(bytes: meta, context: context), context: context), id])
        }
        if try hasAttachmentKeys(db) {
            try db.execute(sql: "UPDATE attachments SET file_key = ? WHERE id = ?", arguments: [fileKey, id])
        }
        for chunkId in try Int64.fetchAll(db, sql: "SELECT id FROM attachment_chunks WHERE attachment_id = ? ORDER BY id",
                                          arguments: [id]) {
            guard let row = try Row.fetchOne(db, sql: "SELECT part, idx, data FROM attachment_chunks WHERE id = ?",
                                             arguments: [chunkId]) else { continue }
            let part = AttachmentPart(rawValue: try stored(row, "part", of: "attachment_chunks")) ?? .file
            let context = AttachmentController.chunkContext(id, part, try stored(row, "idx", of: "attachment_chunks"))
            let plain = try from.open(bytes: try stored(row, "data", of: "attachment_chunks"), context: context)
            try db.execute(sql: "UPDATE attachment_chunks SET data = ? WHERE id = ?",
                           arguments: [try to.seal(bytes: plain, context: context), chunkId])
        }
    }

    /// Before migration 20's down part: the files with keys of their own are sealed again
    /// directly under the data key, which is all the older schema knows.
    func unwrapAttachmentKeys(_ db: Database) throws {
        guard try Self.hasAttachmentKeys(db) else { return }
        let cipher = try self.cipher(db)
        for row in try Row.fetchAll(db, sql: "SELECT id, file_key FROM attachments WHERE file_key IS NOT NULL ORDER BY id") {
            let id: Int64 = try Self.stored(row, "id", of: "attachments")
            let own = try cipher.attachmentKey(wrapped: try Self.stored(row, "file_key", of: "attachments"),
                                               context: AttachmentController.keyContext(id))
            try Self.resealAttachment(db, id: id, from: own, to: cipher, fileKey: nil)
        }
    }

    /// A stored value read with GRDB's throwing decode: a value of another type than its column
    /// (edited in the file) fails the rotation, which then changes nothing, instead of trapping
    /// in GRDB's subscript halfway through.
    static func stored<Value: DatabaseValueConvertible>(_ row: Row, _ column: String, of table: String) throws -> Value {
        do {
            return try row.decode(Value.self, forColumn: column)
        } catch {
            throw ClinicError(.storage, .storageFailure, "\(table).\(column) holds a value of another type than its column")
        }
    }

    /// A `<key>.new` left by a rotation that stopped: installed if the database committed
    /// under it, deleted if not. Only under the writer lock.
    func settleStagedKey(_ keyFile: KeyFile) throws {
        guard let staged = try? KeyFile.read(keyFile.stagedPath) else { return }
        let check = try read { db in try Self.keyCheck(db) }
        if KeyFile.check(staged) == check {
            guard rename(keyFile.stagedPath, keyFile.path) == 0 else { throw ClinicError(.keyError, .keyUnwritable, keyFile.path) }
        } else {
            unlink(keyFile.stagedPath)
        }
        KeyFile.syncFolder(of: keyFile.path)
        cachedKey.withLock { $0 = nil }
    }

    /// The key check stored in a database (nil before it has one).
    static func keyCheck(_ db: Database) throws -> String? {
        guard try db.tableExists("settings") else { return nil }
        return try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [keyCheckSetting])
    }
}
