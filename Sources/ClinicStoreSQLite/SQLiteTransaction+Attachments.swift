import ClinicKit
import Foundation
import GRDB

// The attachment area's operations in SQLite (`Storage/Seam/AttachmentStorage.swift`). The
// rows' decoding (`init(row:)`) is public: PostgreSQL's rows come in the same form.

extension SQLiteTransaction {
    /// A database before migration 16 has no attachments: nothing to read.
    private func keepsAttachments() throws -> Bool { try db.tableExists("attachments") }

    func attachments(ofAppointment appointmentId: Int64) throws -> [StoredAttachment] {
        guard try keepsAttachments() else { return [] }
        return try Row.fetchAll(db, sql: "SELECT * FROM attachments WHERE appointment_id = ? ORDER BY id",
                                arguments: [appointmentId]).map(StoredAttachment.init(row:))
    }

    func attachments(ofClient clientId: Int64) throws -> [StoredAttachment] {
        guard try keepsAttachments() else { return [] }
        return try Row.fetchAll(db, sql: "SELECT * FROM attachments WHERE client_id = ? ORDER BY appointment_id, id",
                                arguments: [clientId]).map(StoredAttachment.init(row:))
    }

    func attachment(id: Int64) throws -> StoredAttachment? {
        guard try keepsAttachments() else { return nil }
        return try Row.fetchOne(db, sql: "SELECT * FROM attachments WHERE id = ?", arguments: [id]).map(StoredAttachment.init(row:))
    }

    func attachmentChunk(_ attachmentId: Int64, part: AttachmentPart, index: Int) throws -> Data? {
        guard try keepsAttachments() else { return nil }
        return try Data.fetchOne(db.cachedStatement(sql: "SELECT data FROM attachment_chunks WHERE attachment_id = ? AND part = ? AND idx = ?"),
                                 arguments: [attachmentId, part.rawValue, index])
    }

    func thread(ofAppointment appointmentId: Int64) throws -> StoredThread? {
        guard try keepsAttachments() else { return nil }
        return try Row.fetchOne(db, sql: "SELECT * FROM threads WHERE appointment_id = ?", arguments: [appointmentId])
            .map(StoredThread.init(row:))
    }

    func threadMessages(ofAppointment appointmentId: Int64) throws -> [StoredThreadMessage] {
        guard try keepsAttachments() else { return [] }
        return try Row.fetchAll(db, sql: "SELECT * FROM thread_messages WHERE appointment_id = ? ORDER BY id",
                                arguments: [appointmentId]).map(StoredThreadMessage.init(row:))
    }

    func threadMessages(ofAppointment appointmentId: Int64, before: Int64?, limit: Int) throws -> [StoredThreadMessage] {
        guard try keepsAttachments() else { return [] }
        return try Row.fetchAll(db, sql: """
            SELECT * FROM thread_messages WHERE appointment_id = ? AND id < ? ORDER BY id DESC LIMIT ?
            """, arguments: [appointmentId, before ?? Int64.max, limit]).map(StoredThreadMessage.init(row:))
    }

    func threadMessageCounts(ofAppointment appointmentId: Int64, author: AttachmentAuthor, since: Date) throws
        -> ThreadMessageCounts {
        guard try keepsAttachments(), let row = try Row.fetchOne(db, sql: """
            SELECT count(*) AS total, count(CASE WHEN created_at > ? THEN 1 END) AS recent,
                   min(CASE WHEN created_at > ? THEN created_at END) AS oldest
            FROM thread_messages WHERE appointment_id = ? AND author = ?
            """, arguments: [since.seconds, since.seconds, appointmentId, author.rawValue]) else {
            return ThreadMessageCounts(total: 0, recent: 0, oldestRecent: nil)
        }
        return try ThreadMessageCounts(row: row)
    }

    func threads(ofClinic clinicId: Int64, state: StoredThread.State, limit: Int) throws -> [StoredThread] {
        guard try keepsAttachments() else { return [] }
        return try Row.fetchAll(db, sql: """
            SELECT * FROM threads WHERE clinic_id = ? AND state = ? ORDER BY last_at DESC, appointment_id DESC LIMIT ?
            """, arguments: [clinicId, state.rawValue, limit]).map(StoredThread.init(row:))
    }

    func threads(ofClient clientId: Int64) throws -> [StoredThread] {
        guard try keepsAttachments() else { return [] }
        return try Row.fetchAll(db, sql: "SELECT * FROM threads WHERE client_id = ? ORDER BY last_at DESC, appointment_id DESC",
                                arguments: [clientId]).map(StoredThread.init(row:))
    }

    func lockAppointment(id: Int64) throws {}

    func insertAttachment(_ a: NewAttachment) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO attachments (appointment_id, client_id, author, staff_id, content_type, size, width, height, thumbnail_size,
                                     chunk_size, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [a.appointmentId, a.clientId, a.author.rawValue, a.staffId, a.contentType, a.size, a.width, a.height,
                             a.thumbnailSize, a.chunkSize, a.createdAt.seconds])
        return db.lastInsertedRowID
    }

    func setAttachmentMeta(_ sealed: Data, fileKey: Data?, ofAttachment id: Int64) throws {
        try db.execute(sql: "UPDATE attachments SET meta = ?, file_key = ? WHERE id = ?", arguments: [sealed, fileKey, id])
    }

    func insertAttachmentChunk(_ attachmentId: Int64, part: AttachmentPart, index: Int, data: Data) throws {
        try db.execute(sql: "INSERT INTO attachment_chunks (attachment_id, part, idx, data) VALUES (?, ?, ?, ?)",
                       arguments: [attachmentId, part.rawValue, index, data])
    }

    func deleteAttachment(id: Int64) throws {
        try db.execute(sql: "DELETE FROM attachments WHERE id = ?", arguments: [id])
    }

    func appointmentsWithFolders(endedBefore date: Date, limit: Int) throws -> [Int64] {
        guard try keepsAttachments() else { return [] }
        return try Int64.fetchAll(db, sql: """
            SELECT a.id FROM appointments a
            WHERE a.id IN (SELECT appointment_id FROM attachments UNION SELECT appointment_id FROM threads) AND a.ends_at < ?
            ORDER BY a.id LIMIT ?
            """, arguments: [date.seconds, limit])
    }

    func deleteFolder(ofAppointment appointmentId: Int64) throws -> (files: Int, messages: Int) {
        try db.execute(sql: "DELETE FROM attachments WHERE appointment_id = ?", arguments: [appointmentId])
        let files = db.changesCount
        try db.execute(sql: "DELETE FROM thread_messages WHERE appointment_id = ?", arguments: [appointmentId])
        let messages = db.changesCount
        try db.execute(sql: "DELETE FROM threads WHERE appointment_id = ?", arguments: [appointmentId])
        return (files, messages)
    }

    func saveThread(_ t: StoredThread) throws {
        try db.execute(sql: """
            INSERT INTO threads (appointment_id, client_id, clinic_id, state, patient_unread, staff_unread, last_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (appointment_id) DO UPDATE SET state = excluded.state, patient_unread = excluded.patient_unread,
                staff_unread = excluded.staff_unread, last_at = excluded.last_at
            """, arguments: [t.appointmentId, t.clientId, t.clinicId, t.state.rawValue, t.patientUnread, t.staffUnread,
                             t.lastAt.seconds])
    }

    func insertThreadMessage(appointmentId: Int64, author: AttachmentAuthor, staffId: Int64?, body: Data, attachmentId: Int64?,
                             at: Date) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO thread_messages (appointment_id, author, staff_id, body, attachment_id, created_at) VALUES (?, ?, ?, ?, ?, ?)
            """, arguments: [appointmentId, author.rawValue, staffId, body, attachmentId, at.seconds])
        return db.lastInsertedRowID
    }
}
