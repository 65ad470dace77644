import Crypto
import Foundation

/// Crypto-shredding of attachments (issue 42): each file's bytes, thumbnail, name and checksum
/// are sealed under a key of its own (a fresh 256-bit key per attachment), and that key is kept
/// only in the attachment's row, sealed ("wrapped") under the personal-data key. Deleting the
/// row deletes the key, so whatever copies of the sealed chunks a database leaves behind (a
/// SQLite WAL or free page, a PostgreSQL heap page before VACUUM reuses it, a backup) no longer
/// open, whoever holds the data key. A key rotation re-wraps the small keys and leaves the
/// chunks as they are.
///
/// An attachment stored before (SQLite migration 20, PostgreSQL 9) has no key of its own
/// (`StoredAttachment.fileKey` is nil): its bytes are sealed directly under the data key, and
/// open as they did.
extension FieldCipher {
    /// A fresh key for one attachment, and the same key wrapped under this (the data) key,
    /// bound to the attachment (`AttachmentController.keyContext`).
    package func newAttachmentKey(context: String) throws -> (cipher: FieldCipher, wrapped: Data) {
        let key = SymmetricKey(size: .bits256)
        let wrapped = try seal(bytes: key.withUnsafeBytes { Data($0) }, context: context)
        return (FieldCipher(key: key), wrapped)
    }

    /// An attachment's own key, from its wrapped form in the attachment's row.
    package func attachmentKey(wrapped: Data, context: String) throws -> FieldCipher {
        let raw = try open(bytes: wrapped, context: context)
        guard raw.count == 32 else { throw ClinicError(.keyError, .personalUnreadable, context) }
        return FieldCipher(key: SymmetricKey(data: raw))
    }
}
