import ClinicKit
import Foundation

// The attachment area's operations on PostgreSQL (`Storage/Seam/AttachmentStorage.swift`), as
// SQLiteTransaction+Attachments.swift does them. What SQLite's single writer gave for free is
// the appointment's row lock: a rule that counts an appointment's files or reads its thread
// and then writes takes it first (`lockAppointment`).

extension PostgresTransaction {
    func attachments(ofAppointment appointmentId: Int64) throws -> [StoredAttachment] {
        try rows("SELECT * FROM attachments WHERE appointment_id = $1 ORDER BY id", [appointmentId]).map(StoredAttachment.init(row:))
    }

    func attachments(ofClient clientId: Int64) throws -> [StoredAttachment] {
        try rows("SELECT * FROM attachments WHERE client_id = $1 ORDER BY appointment_id, id", [clientId])
            .map(StoredAttachment.init(row:))
    }

    func attachment(id: Int64) throws -> StoredAttachment? {
        try row(Self.attachmentSQL, [id]).map(StoredAttachment.init(row:))
    }

    /// The file's row: $1 the file.
    static let attachmentSQL = "SELECT * FROM attachments WHERE id = $1"

    func attachmentChunk(_ attachmentId: Int64, part: AttachmentPart, index: Int) throws -> Data? {
        try value(Data.self, Self.attachmentChunkSQL, [attachmentId, part.rawValue, index])
    }

    /// A chunk as stored: $1 the file, $2 the part, $3 the index.
    static let attachmentChunkSQL = "SELECT data FROM attachment_chunks WHERE attachment_id = $1 AND part = $2 AND idx = $3"


    func thread(ofAppointment appointmentId: Int64) throws -> StoredThread? {
        try row(Self.threadOfAppointmentSQL, [appointmentId]).map(StoredThread.init(row:))
    }

    static let threadOfAppointmentSQL = "SELECT * FROM threads WHERE appointment_id = $1"

    func threadMessages(ofAppointment appointmentId: Int64) throws -> [StoredThreadMessage] {
        try rows("SELECT * FROM thread_messages WHERE appointment_id = $1 ORDER BY id", [appointmentId])
            .map(StoredThreadMessage.init(row:))
    }

    func threadMessages(ofAppointment appointmentId: Int64, before: Int64?, limit: Int) throws -> [StoredThreadMessage] {
        try rows(Self.threadPageSQL, [appointmentId, before ?? Int64.max, limitBind(limit)]).map(StoredThreadMessage.init(row:))
    }

    /// Appointment `$1`'s messages before id `$2`, the latest first, at most `$3`.
    static let threadPageSQL = "SELECT * FROM thread_messages WHERE appointment_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3"

    func threadMessageCounts(ofAppointment appointmentId: Int64, author: AttachmentAuthor, since: Date) throws
        -> ThreadMessageCounts {
        guard let row = try row(Self.threadMessageCountsSQL, [appointmentId, author.rawValue, since]) else {
            return ThreadMessageCounts(total: 0, recent: 0, oldestRecent: nil)
        }
        return try ThreadMessageCounts(row: row)
    }

    /// How many messages of author `$2` conversation `$1` holds, how many since `$3`, and the oldest of those.
    static let threadMessageCountsSQL = """
        SELECT count(*) AS total, count(*) FILTER (WHERE created_at > $3) AS recent,
               min(created_at) FILTER (WHERE created_at > $3) AS oldest
        FROM thread_messages WHERE appointment_id = $1 AND author = $2
        """

    func threads(ofClinic clinicId: Int64, state: StoredThread.State, limit: Int) throws -> [StoredThread] {
        try rows(Self.clinicThreadsSQL, [clinicId, state.rawValue, limitBind(limit)]).map(StoredThread.init(row:))
    }

    /// Clinic `$1`'s conversations in state `$2`, the latest first, at most `$3`.
    static let clinicThreadsSQL = """
        SELECT * FROM threads WHERE clinic_id = $1 AND state = $2 ORDER BY last_at DESC, appointment_id DESC LIMIT $3
        """

    func threads(ofClient clientId: Int64) throws -> [StoredThread] {
        try rows("SELECT * FROM threads WHERE client_id = $1 ORDER BY last_at DESC, appointment_id DESC", [clientId])
            .map(StoredThread.init(row:))
    }

    func lockAppointment(id: Int64) throws {
        try execute("SELECT 1 FROM appointments WHERE id = $1 FOR UPDATE", [id])
    }

    func insertAttachment(_ a: NewAttachment) throws -> Int64 {
        guard let id = try value(Int64.self, """
            INSERT INTO attachments (appointment_id, client_id, author, staff_id, content_type, size, width, height, thumbnail_size,
                                     chunk_size, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id
            """, [a.appointmentId, a.clientId, a.author.rawValue, a.staffId, a.contentType, a.size, a.width, a.height,
                  a.thumbnailSize, a.chunkSize, a.createdAt]) else {
            throw ClinicError(.storage, .storageFailure, "attachments: no id returned")
        }
        return id
    }

    func setAttachmentMeta(_ sealed: Data, fileKey: Data?, ofAttachment id: Int64) throws {
        try execute("UPDATE attachments SET meta = $1, file_key = $2 WHERE id = $3", [sealed, fileKey, id])
    }

    func insertAttachmentChunk(_ attachmentId: Int64, part: AttachmentPart, index: Int, data: Data) throws {
        try execute("INSERT INTO attachment_chunks (attachment_id, part, idx, data) VALUES ($1, $2, $3, $4)",
                    [attachmentId, part.rawValue, index, data])
    }

    func deleteAttachment(id: Int64) throws {
        try execute("DELETE FROM attachments WHERE id = $1", [id])
    }

    func appointmentsWithFolders(endedBefore date: Date, limit: Int) throws -> [Int64] {
        try rows(Self.foldersEndedSQL, [date, Int64(limit)]).map { row -> Int64 in try row.value("id", in: "appointments") }
    }

    /// The appointments with files or a conversation that ended before $1, by id, at most $2 (with their patient).
    static let foldersEndedSQL = """
        SELECT a.id, a.client_id FROM appointments a
        WHERE a.id IN (SELECT appointment_id FROM attachments UNION SELECT appointment_id FROM threads) AND a.ends_at < $1
        ORDER BY a.id LIMIT $2
        """

    func deleteFolder(ofAppointment appointmentId: Int64) throws -> (files: Int, messages: Int) {
        let files = try execute(Self.deleteFilesSQL, [appointmentId])
        let messages = try execute(Self.deleteThreadMessagesSQL, [appointmentId])
        try execute(Self.deleteThreadSQL, [appointmentId])
        return (files, messages)
    }

    /// An appointment's folder deleted, $1 its id: the files, the conversation's messages, the conversation.
    static let deleteFilesSQL = "DELETE FROM attachments WHERE appointment_id = $1"
    static let deleteThreadMessagesSQL = "DELETE FROM thread_messages WHERE appointment_id = $1"
    static let deleteThreadSQL = "DELETE FROM threads WHERE appointment_id = $1"

    func saveThread(_ t: StoredThread) throws {
        try execute(Self.saveThreadSQL, Self.saveThreadBinds(t))
    }

    /// A conversation written whole, new or in place of its row.
    static let saveThreadSQL = """
        INSERT INTO threads (appointment_id, client_id, clinic_id, state, patient_unread, staff_unread, last_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7)
        ON CONFLICT (appointment_id) DO UPDATE SET state = excluded.state, patient_unread = excluded.patient_unread,
            staff_unread = excluded.staff_unread, last_at = excluded.last_at
        """

    static func saveThreadBinds(_ t: StoredThread) -> [any PostgresBindable] {
        [t.appointmentId, t.clientId, t.clinicId, t.state.rawValue, t.patientUnread, t.staffUnread, t.lastAt]
    }

    func insertThreadMessage(appointmentId: Int64, author: AttachmentAuthor, staffId: Int64?, body: Data, attachmentId: Int64?,
                             at: Date) throws -> Int64 {
        guard let id = try value(Int64.self, Self.insertThreadMessageSQL, [appointmentId, author.rawValue, staffId, body, attachmentId, at])
        else { throw ClinicError(.storage, .storageFailure, "thread_messages: no id returned") }
        return id
    }

    /// A message in conversation `$1` by author `$2` (staff account `$3`), its sealed words `$4`,
    /// pointing at file `$5`, written at `$6`; its id.
    static let insertThreadMessageSQL = """
        INSERT INTO thread_messages (appointment_id, author, staff_id, body, attachment_id, created_at)
        VALUES ($1, $2, $3, $4, $5, $6) RETURNING id
        """
}
