import Foundation

/// What `GET /v1/me` shows besides the signed-in patient: their unread messages and their
/// mobile number's status, gathered by the store in one awaited read (issue 56; on PostgreSQL
/// one statement), the number opened here.
public struct AccountFacts: Sendable, Equatable {
    public var clientExists: Bool
    public var unreadMessages: Int
    /// The patient's number as stored (sealed), nil for none.
    public var phone: StoredPhone?
    /// The database's personal-data key check (nil: none stored yet).
    public var personalDataKeyCheck: String?

    public init(clientExists: Bool, unreadMessages: Int, phone: StoredPhone?, personalDataKeyCheck: String?) {
        self.clientExists = clientExists; self.unreadMessages = unreadMessages; self.phone = phone
        self.personalDataKeyCheck = personalDataKeyCheck
    }

    /// The gather as the seam's reads, in the caller's read transaction (what SQLite runs).
    public static func read(_ tx: any StoreReading, clientId: Int64) throws -> AccountFacts {
        AccountFacts(clientExists: try tx.clientExists(id: clientId), unreadMessages: try Inbox.unreadCount(tx, clientId: clientId),
                     phone: try tx.phone(ofClient: clientId), personalDataKeyCheck: try tx.personalDataKeyCheck())
    }
}

extension ClientController {
    /// The patient's unread messages and phone status, as `unreadCount` and `phone` give them,
    /// awaited in one read: what a server's `GET /v1/me` answers with. A patient who is gone is
    /// `not_logged_in`.
    public func account(clientId: Int64) async throws -> (unreadMessages: Int, phone: PhoneStatus) {
        let facts = try await database.accountFacts(clientId: clientId)
        guard facts.clientExists else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        guard let phone = facts.phone else { return (facts.unreadMessages, .none) }
        let cipher = try database.personalDataKey.cipher(keyCheck: facts.personalDataKeyCheck)
        return (facts.unreadMessages, Self.status(phone, number: try Texts.number(phone, cipher: cipher)))
    }
}
