import Foundation

/// A file on an appointment (`clinic appointments attachments`, `/v1/appointments/{id}/attachments`).
public struct AttachmentJSON: Encodable, Sendable {
    public let id: Int64
    public let appointmentId: Int64
    /// `patient` or `staff` (a document the clinic attached).
    public let author: String
    public let contentType: String
    public let size: Int
    public let name: String
    public let sha256: String
    public let width: Int?
    public let height: Int?
    public let hasThumbnail: Bool
    public let createdAt: String

    public init(_ info: AttachmentInfo) {
        id = info.id; appointmentId = info.appointmentId; author = info.author.rawValue; contentType = info.contentType
        size = info.size; name = info.name; sha256 = info.sha256; width = info.width; height = info.height
        hasThumbnail = info.hasThumbnail; createdAt = DateText.iso8601(info.createdAt)
    }
}

/// A list under `items` (the API's shape for lists that may grow fields beside them).
public struct ItemsJSON<Item: Encodable & Sendable>: Encodable, Sendable {
    public let items: [Item]
    public init(_ items: [Item]) { self.items = items }
}

/// A message of an appointment's conversation.
public struct ThreadMessageJSON: Encodable, Sendable {
    public let id: Int64
    /// `patient` or `staff`.
    public let author: String
    public let staffName: String?
    public let text: String
    public let attachmentId: Int64?
    public let createdAt: String

    public init(_ message: ThreadMessage) {
        id = message.id; author = message.author.rawValue; staffName = message.staffName; text = message.text
        attachmentId = message.attachmentId; createdAt = DateText.iso8601(message.createdAt)
    }
}

/// An appointment's conversation (`GET /v1/appointments/{id}/messages`, `clinic messages thread`).
public struct ConversationJSON: Encodable, Sendable {
    public let appointmentId: Int64
    /// `open` or `closed`.
    public let state: String
    /// Messages unread by this reader before this look.
    public let unread: Int
    /// The messages of this page, in the order written.
    public let items: [ThreadMessageJSON]
    /// Pass as `cursor` for the messages before these; null when there are none (never missing).
    public let nextCursor: String?

    public init(_ conversation: Conversation) {
        appointmentId = conversation.appointmentId; state = conversation.state.rawValue; unread = conversation.unread
        items = conversation.messages.map(ThreadMessageJSON.init); nextCursor = conversation.nextCursor
    }

    enum CodingKeys: String, CodingKey { case appointmentId, state, unread, items, nextCursor }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(appointmentId, forKey: .appointmentId)
        try container.encode(state, forKey: .state)
        try container.encode(unread, forKey: .unread)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

/// The front desk's list of conversations (`GET /v1/staff/threads`).
public struct ThreadListJSON: Encodable, Sendable {
    public struct Item: Encodable, Sendable {
        public let appointmentId: Int64
        public let state: String
        public let unread: Int
        public let lastAt: String
        public let startsAt: String
        public let doctorName: String
    }

    public let items: [Item]
    /// Unread messages in the clinic's open conversations.
    public let unread: Int

    public init(_ list: ThreadList) {
        items = list.items.map {
            Item(appointmentId: $0.appointmentId, state: $0.state.rawValue, unread: $0.unread, lastAt: DateText.iso8601($0.lastAt),
                 startsAt: DateText.iso8601($0.startsAt), doctorName: $0.doctorName)
        }
        unread = list.unread
    }
}
