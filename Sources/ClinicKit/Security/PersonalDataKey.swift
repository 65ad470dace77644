import Crypto
import Foundation

/// The key a store's personal data is sealed with, whatever the store: it lives in a key file
/// of its own, never in the database, and the database keeps only a check of it
/// (`personalDataKeyCheck`), so a wrong or missing key is told before anything is opened or
/// sealed. A SQLite database's key file is `<database>.key`; in memory (tests) the key itself
/// is given.
public final class PersonalDataKey: Sendable {
    /// Where the key is kept, nil in memory.
    package let file: KeyFile?
    /// The key file's path, nil in memory (a copy carries the file).
    public var filePath: String? { file?.path }
    /// The key last loaded (or, in memory, the key).
    package let cached: LockedBox<SymmetricKey?>

    package init(file: KeyFile?, key: SymmetricKey? = nil) {
        self.file = file
        cached = LockedBox(key)
    }

    /// A key kept in the file at `path` (made there when the store has sealed nothing yet).
    public convenience init(path: String) { self.init(file: KeyFile(path: path)) }

    /// The cipher under this key. The first use loads the key: a new database gets a new key
    /// file; otherwise the key file — or, while a rotation is between its commit and its
    /// rename, the staged `<key>.new` — must match the stored key check. Loading never renames
    /// or deletes a key file: only a rotation does. A key loaded before is used while it
    /// matches; when it no longer does (another process rotated the key under a long-running
    /// session), the key file is read again.
    func cipher(_ tx: any StoreReading) throws -> FieldCipher {
        try cipher(keyCheck: try tx.personalDataKeyCheck())
    }

    /// The cipher, with the key check stored if the database has none yet: for write
    /// transactions that are about to seal personal data.
    ///
    /// On a database with no check yet, the check that is stored afterwards is read back: two
    /// servers on different machines (each with a key file of its own) may seal their first
    /// rows at the same moment, and only the first check stored counts. The other's write is
    /// refused (`key_wrong`) rather than sealed under a key nobody can read it with.
    func sealingCipher(_ tx: any StoreWriting) throws -> FieldCipher {
        let stored = try tx.personalDataKeyCheck()
        let cipher = try cipher(keyCheck: stored)
        guard stored == nil else { return cipher }
        let check = KeyFile.check(cipher.key)
        try tx.storePersonalDataKeyCheckIfMissing(check)
        guard try tx.personalDataKeyCheck() == check else {
            throw ClinicError(.keyError, .keyWrong, file?.path ?? "memory")
        }
        return cipher
    }

    /// The cipher of a database with no key check yet, with the check to store: for a store
    /// whose awaited write stores it itself (then reads it back, as `sealingCipher` does).
    package func cipherWithNewCheck() throws -> (cipher: FieldCipher, check: String) {
        let cipher = try cipher(keyCheck: nil)
        return (cipher, KeyFile.check(cipher.key))
    }

    /// `cipher(keyCheck:)` made once, when first asked for: a read that opens nothing needs no key.
    func lazyCipher(keyCheck check: String?) -> () throws -> FieldCipher {
        var opened: FieldCipher?
        return {
            if let opened { return opened }
            let made = try self.cipher(keyCheck: check)
            opened = made
            return made
        }
    }

    package func cipher(keyCheck check: String?) throws -> FieldCipher {
        if let key = cached.current {
            if check == nil || check == KeyFile.check(key) { return FieldCipher(key: key) }
            guard file != nil else { throw ClinicError(.keyError, .keyWrong, "memory") }
            cached.withLock { $0 = nil }
        }
        guard let file else { throw ClinicError(.keyError, .keyMissing, "memory") }
        if let check, let staged = try? KeyFile.read(file.stagedPath), KeyFile.check(staged) == check {
            cached.withLock { $0 = staged }
            return FieldCipher(key: staged)
        }
        var key = try KeyFile.read(file.path)
        if key == nil {
            guard check == nil else { throw ClinicError(.keyError, .keyMissing, file.path) }
            let fresh = KeyFile.newKey()
            do {
                try KeyFile.write(fresh, to: file.path, exclusive: true)
                key = fresh
            } catch let error as ClinicError {
                // Another process or thread made the first key at the same moment (servers of
                // one PostgreSQL database sealing their first patients): the key is theirs.
                guard let theirs = try KeyFile.read(file.path) else { throw error }
                key = theirs
            }
        }
        guard let key else { throw ClinicError(.keyError, .keyMissing, file.path) }
        if let check, check != KeyFile.check(key) { throw ClinicError(.keyError, .keyWrong, file.path) }
        cached.withLock { $0 = key }
        return FieldCipher(key: key)
    }
}
