import Crypto
import Foundation
import GRDB

/// A patient's e-mail address as the profile shows it.
public struct EmailStatus: Sendable, Equatable {
    public let confirmed: String?
    public let pending: String?
    public init(confirmed: String?, pending: String?) { self.confirmed = confirmed; self.pending = pending }
}

extension ClientController {
    // MARK: Inbox

    /// The patient's messages, newest first (at most 200).
    public func messages(clientId: Int64, unreadOnly: Bool = false) throws -> [InboxMessage] {
        try database.read { db in
            guard try database.clientExists(db, clientId) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            return try Inbox.messages(db, clientId: clientId, unreadOnly: unreadOnly)
        }
    }

    public func unreadCount(clientId: Int64) throws -> Int {
        try database.read { db in try Inbox.unreadCount(db, clientId: clientId) }
    }

    /// Marks one of the patient's messages read (again: nothing changes); another patient's
    /// message is not found.
    @discardableResult
    public func markRead(clientId: Int64, messageId: Int64) throws -> InboxMessage {
        let now = self.now()
        return try database.write { db in
            try db.execute(sql: "UPDATE messages SET read_at = coalesce(read_at, ?) WHERE id = ? AND client_id = ?",
                           arguments: [now.seconds, messageId, clientId])
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM messages WHERE id = ? AND client_id = ?",
                                             arguments: [messageId, clientId]) else {
                throw ClinicError(.notFound, .messageNotFound, String(messageId))
            }
            return try InboxMessage(row: row)
        }
    }

    // MARK: E-mail address

    /// Minutes a confirmation code is valid; wrong codes allowed per code.
    static let emailCodeMinutes: Int64 = 30
    static let emailCodeAttempts = 5

    public func email(clientId: Int64) throws -> EmailStatus {
        let client = try getUserById(clientId)
        return EmailStatus(confirmed: client.email, pending: client.pendingEmail)
    }

    /// Sets an address to confirm: a six-digit code goes to it through the outbox (the address
    /// in use, if any, stays until the new one is confirmed). A new code at most once a minute.
    public func setEmail(clientId: Int64, address: String) throws -> EmailStatus {
        let address = address.trimmingCharacters(in: .whitespaces)
        guard Mail.isAddress(address) else { throw ClinicError.invalid(.emailInvalid, String(address.prefix(254))) }
        let now = self.now()
        var generator = SystemRandomNumberGenerator()
        let code = String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
        return try database.write { db in
            guard var client = try database.getUserById(db, clientId) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            if let expires = try Int64.fetchOne(db, sql: "SELECT expires_at FROM email_confirmations WHERE client_id = ?",
                                                arguments: [clientId]),
               now.seconds < expires - Self.emailCodeMinutes * 60 + 60 {
                throw ClinicError(.rateLimited, .emailCodeTooSoon, "60")
            }
            client.pendingEmail = address
            try database.updateUser(db, client)
            try db.execute(sql: "INSERT OR REPLACE INTO email_confirmations (client_id, code_hash, expires_at, attempts) VALUES (?, ?, ?, 0)",
                           arguments: [clientId, Self.codeHash(code, clientId: clientId), now.seconds + Self.emailCodeMinutes * 60])
            // Earlier codes not yet sent are not worth sending.
            try db.execute(sql: "UPDATE deliveries SET state = 'dropped' WHERE client_id = ? AND purpose = 'email_code' AND state = 'pending'",
                           arguments: [clientId])
            try db.execute(sql: """
                INSERT INTO deliveries (client_id, purpose, created_at, next_attempt_at) VALUES (?, 'email_code', ?, ?)
                """, arguments: [clientId, now.seconds, now.seconds])
            let id = db.lastInsertedRowID
            try db.execute(sql: "UPDATE deliveries SET payload = ? WHERE id = ?",
                           arguments: [try database.sealingCipher(db).seal(bytes: Data(code.utf8), context: "delivery:\(id)"), id])
            return EmailStatus(confirmed: client.email, pending: address)
        }
    }

    /// Confirms the waiting address with its code; from then on messages are e-mailed too.
    public func confirmEmail(clientId: Int64, code: String) throws -> EmailStatus {
        let now = self.now()
        enum Outcome { case confirmed(EmailStatus), wrong, none }
        let outcome = try database.write { db -> Outcome in
            guard var client = try database.getUserById(db, clientId) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            guard let pending = client.pendingEmail,
                  let row = try Row.fetchOne(db, sql: "SELECT * FROM email_confirmations WHERE client_id = ?", arguments: [clientId])
            else { return .none }
            let attempts: Int = try row.value("attempts", in: "email_confirmations", key: "client_id")
            let expires: Int64 = try row.value("expires_at", in: "email_confirmations", key: "client_id")
            let hash: String = try row.value("code_hash", in: "email_confirmations", key: "client_id")
            let given = code.trimmingCharacters(in: .whitespaces)
            guard attempts < Self.emailCodeAttempts, now.seconds < expires, given.count == 6,
                  Self.codeHash(given, clientId: clientId) == hash else {
                // The wrong guess is counted even though the confirmation fails.
                try db.execute(sql: "UPDATE email_confirmations SET attempts = attempts + 1 WHERE client_id = ?", arguments: [clientId])
                return .wrong
            }
            client.email = pending
            client.pendingEmail = nil
            try database.updateUser(db, client)
            try db.execute(sql: "DELETE FROM email_confirmations WHERE client_id = ?", arguments: [clientId])
            return .confirmed(EmailStatus(confirmed: pending, pending: nil))
        }
        switch outcome {
        case .confirmed(let status): return status
        case .wrong: throw ClinicError.invalid(.emailCodeWrong)
        case .none: throw ClinicError(.notFound, .emailNoPending)
        }
    }

    /// Forgets both addresses; e-mail not yet sent is dropped, the inbox stays.
    public func removeEmail(clientId: Int64) throws {
        try database.write { db in
            guard var client = try database.getUserById(db, clientId) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            client.email = nil
            client.pendingEmail = nil
            try database.updateUser(db, client)
            try db.execute(sql: "DELETE FROM email_confirmations WHERE client_id = ?", arguments: [clientId])
            try db.execute(sql: "UPDATE deliveries SET state = 'dropped', payload = NULL WHERE client_id = ? AND state = 'pending'",
                           arguments: [clientId])
        }
    }

    static func codeHash(_ code: String, clientId: Int64) -> String {
        Array(SHA256.hash(data: Data("email-code:\(clientId):\(code)".utf8))).hexString
    }
}
