import Foundation

// Attachments and conversations on appointments (issue 28): the storage seam's operations for
// them. The rules (who may add, open or remove what, how many, how big, what a file is, who is
// told) are `AttachmentController`'s; a store keeps rows and sealed bytes. A file's bytes are
// chunks written and read one at a time, so neither a store nor its driver holds a file whole.

/// Who wrote an attachment or a message.
public enum AttachmentAuthor: String, Sendable, Codable {
    case patient, staff
}

/// Which bytes of an attachment: the file, or its thumbnail (photos only).
public enum AttachmentPart: Int, Sendable {
    case file = 0, thumbnail = 1
}

/// An attachment's row, its bytes aside.
public struct StoredAttachment: Sendable, Equatable {
    public let id: Int64
    public let appointmentId: Int64
    public let clientId: Int64
    public let author: AttachmentAuthor
    public let staffId: Int64?
    public let contentType: String
    public let size: Int
    public let width: Int?
    public let height: Int?
    public let thumbnailSize: Int
    /// The size of every chunk but the last.
    public let chunkSize: Int
    /// The name and checksum, sealed (context `attachment:<id>`); nil only inside the
    /// transaction that stores the file, before it is set.
    public let meta: Data?
    public let createdAt: Date
    /// The attachment's own key, wrapped under the personal-data key (context
    /// `attachment-key:<id>`), under which its chunks and meta are sealed; nil for a file stored
    /// before (SQLite migration 20, PostgreSQL 9), sealed directly under the data key.
    public let fileKey: Data?

    public init(id: Int64, appointmentId: Int64, clientId: Int64, author: AttachmentAuthor, staffId: Int64?, contentType: String,
                size: Int, width: Int?, height: Int?, thumbnailSize: Int, chunkSize: Int, meta: Data?, createdAt: Date,
                fileKey: Data? = nil) {
        self.id = id; self.appointmentId = appointmentId; self.clientId = clientId; self.author = author; self.staffId = staffId
        self.contentType = contentType; self.size = size; self.width = width; self.height = height
        self.thumbnailSize = thumbnailSize; self.chunkSize = chunkSize; self.meta = meta; self.createdAt = createdAt
        self.fileKey = fileKey
    }
}

/// What a new attachment's row says (its id and sealed meta come from the store).
public struct NewAttachment: Sendable {
    public let appointmentId: Int64
    public let clientId: Int64
    public let author: AttachmentAuthor
    public let staffId: Int64?
    public let contentType: String
    public let size: Int
    public let width: Int?
    public let height: Int?
    public let thumbnailSize: Int
    public let chunkSize: Int
    public let createdAt: Date
}

/// A conversation's row: one per appointment.
public struct StoredThread: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable {
        case open, closed
    }

    public let appointmentId: Int64
    public let clientId: Int64
    public let clinicId: Int64
    public var state: State
    public var patientUnread: Int
    public var staffUnread: Int
    public var lastAt: Date

    public init(appointmentId: Int64, clientId: Int64, clinicId: Int64, state: State, patientUnread: Int, staffUnread: Int,
                lastAt: Date) {
        self.appointmentId = appointmentId; self.clientId = clientId; self.clinicId = clinicId; self.state = state
        self.patientUnread = patientUnread; self.staffUnread = staffUnread; self.lastAt = lastAt
    }
}

/// A message of a conversation, its text sealed (context `thread:<appointment id>`).
public struct StoredThreadMessage: Sendable, Equatable {
    public let id: Int64
    public let appointmentId: Int64
    public let author: AttachmentAuthor
    public let staffId: Int64?
    public let body: Data
    public let attachmentId: Int64?
    public let createdAt: Date

    public init(id: Int64, appointmentId: Int64, author: AttachmentAuthor, staffId: Int64?, body: Data, attachmentId: Int64?,
                createdAt: Date) {
        self.id = id; self.appointmentId = appointmentId; self.author = author; self.staffId = staffId; self.body = body
        self.attachmentId = attachmentId; self.createdAt = createdAt
    }
}

/// How many messages one author wrote in a conversation: in all, and after an instant (with the
/// oldest of those), read together for the conversation's limits (`ThreadLimits`).
public struct ThreadMessageCounts: Sendable, Equatable {
    public let total: Int
    public let recent: Int
    /// The oldest of the `recent` messages (nil when there are none).
    public let oldestRecent: Date?

    public init(total: Int, recent: Int, oldestRecent: Date?) {
        self.total = total; self.recent = recent; self.oldestRecent = oldestRecent
    }
}

public protocol AttachmentReading {
    /// An appointment's attachments, oldest first.
    func attachments(ofAppointment appointmentId: Int64) throws -> [StoredAttachment]
    /// A patient's attachments on all their appointments, by appointment then id (the export).
    func attachments(ofClient clientId: Int64) throws -> [StoredAttachment]
    func attachment(id: Int64) throws -> StoredAttachment?
    /// One sealed chunk (nil past the last, or when the attachment is gone).
    func attachmentChunk(_ attachmentId: Int64, part: AttachmentPart, index: Int) throws -> Data?

    func thread(ofAppointment appointmentId: Int64) throws -> StoredThread?
    /// A conversation's messages, oldest first.
    func threadMessages(ofAppointment appointmentId: Int64) throws -> [StoredThreadMessage]
    /// A page of a conversation: its messages with an id below `before` (all when nil), the
    /// newest first, at most `limit`.
    func threadMessages(ofAppointment appointmentId: Int64, before: Int64?, limit: Int) throws -> [StoredThreadMessage]
    /// How many messages `author` wrote in a conversation, in all and after `since`. Read after
    /// `lockAppointment` in the transaction that inserts, the counts hold until commit.
    func threadMessageCounts(ofAppointment appointmentId: Int64, author: AttachmentAuthor, since: Date) throws
        -> ThreadMessageCounts
    /// A clinic's conversations in a state, the latest first, at most `limit`.
    func threads(ofClinic clinicId: Int64, state: StoredThread.State, limit: Int) throws -> [StoredThread]
    /// A patient's conversations, the latest first.
    func threads(ofClient clientId: Int64) throws -> [StoredThread]
    /// Appointments that ended before `date` and still have files or a conversation, by id,
    /// at most `limit` (the retention purge).
    func appointmentsWithFolders(endedBefore date: Date, limit: Int) throws -> [Int64]
}

public protocol AttachmentWriting: AttachmentReading {
    /// Takes the appointment's row lock until the transaction ends (PostgreSQL: `FOR UPDATE`),
    /// so counts read after it hold until commit; SQLite's single writer holds them already.
    func lockAppointment(id: Int64) throws
    /// Stores an attachment's row (meta not yet set) and returns its id.
    func insertAttachment(_ attachment: NewAttachment) throws -> Int64
    /// Sets the sealed name and checksum, and the attachment's own key wrapped under the data
    /// key (`StoredAttachment.fileKey`; nil: sealed under the data key, the scheme before).
    func setAttachmentMeta(_ sealed: Data, fileKey: Data?, ofAttachment id: Int64) throws
    func insertAttachmentChunk(_ attachmentId: Int64, part: AttachmentPart, index: Int, data: Data) throws
    /// Deletes an attachment, its wrapped key and its chunks (a message that carried it keeps its text).
    func deleteAttachment(id: Int64) throws
    /// Deletes an appointment's files and its conversation; answers how many of each were deleted.
    func deleteFolder(ofAppointment appointmentId: Int64) throws -> (files: Int, messages: Int)

    /// Stores the conversation's row, new or changed.
    func saveThread(_ thread: StoredThread) throws
    /// Stores a message and returns its id.
    func insertThreadMessage(appointmentId: Int64, author: AttachmentAuthor, staffId: Int64?, body: Data, attachmentId: Int64?,
                             at: Date) throws -> Int64
}
