import Crypto
import Foundation

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
        try database.reading { tx in
            guard try tx.clientExists(id: clientId) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            return try Inbox.messages(tx, clientId: clientId, unreadOnly: unreadOnly)
        }
    }

    public func unreadCount(clientId: Int64) throws -> Int {
        try database.reading { tx in try Inbox.unreadCount(tx, clientId: clientId) }
    }

    /// `unreadCount` awaited (`InboxStore.unreadCount`).
    public func unreadCount(clientId: Int64) async throws -> Int {
        try await database.unreadCount(clientId: clientId)
    }

    /// Marks one of the patient's messages read (again: nothing changes); another patient's
    /// message is not found.
    @discardableResult
    public func markRead(clientId: Int64, messageId: Int64) throws -> InboxMessage {
        let now = self.now()
        return try database.writing { tx in
            guard let message = try tx.markMessageRead(messageId, ofClient: clientId, at: now) else {
                throw ClinicError(.notFound, .messageNotFound, String(messageId))
            }
            return message
        }
    }

    /// Marks every unread message of the patient read, in one transaction; how many were.
    @discardableResult
    public func markAllRead(clientId: Int64) throws -> Int {
        let now = self.now()
        return try database.writing { tx in try Inbox.markAllRead(tx, clientId: clientId, at: now) }
    }

    // MARK: Inbox, awaited (issue 56: `InboxStore`)

    /// `messages` awaited: what a server's request does, with no thread waiting for the store.
    public func messages(clientId: Int64, unreadOnly: Bool = false) async throws -> [InboxMessage] {
        guard let messages = try await database.inbox(clientId: clientId, unreadOnly: unreadOnly, limit: Inbox.pageLimit) else {
            throw ClinicError(.notLoggedIn, .notLoggedIn)
        }
        return messages
    }

    /// `markRead` awaited.
    @discardableResult
    public func markRead(clientId: Int64, messageId: Int64) async throws -> InboxMessage {
        guard let message = try await database.markRead(messageId: messageId, clientId: clientId, at: now()) else {
            throw ClinicError(.notFound, .messageNotFound, String(messageId))
        }
        return message
    }

    /// `markAllRead` awaited.
    @discardableResult
    public func markAllRead(clientId: Int64) async throws -> Int {
        try await database.markAllRead(clientId: clientId, at: now())
    }

    // MARK: E-mail address

    /// Minutes a confirmation code is valid; wrong codes allowed per code.
    static let emailCodeMinutes: Int64 = 30
    static let emailCodeAttempts = 5

    public func email(clientId: Int64) throws -> EmailStatus {
        let client = try getUserById(clientId)
        return EmailStatus(confirmed: client.email, pending: client.pendingEmail)
    }

    /// `email` awaited.
    public func email(clientId: Int64) async throws -> EmailStatus {
        let client = try await getUserById(clientId)
        return EmailStatus(confirmed: client.email, pending: client.pendingEmail)
    }

    /// Sets an address to confirm: a six-digit code goes to it through the outbox (the address
    /// in use, if any, stays until the new one is confirmed). A new code at most once a minute.
    /// The store's one awaited transaction (issue 56: `ClientChangesStore`): the
    /// record locked, the counts, the record, the code and its mail written together.
    public func setEmail(clientId: Int64, address: String, from clientAddress: String? = nil) async throws -> EmailStatus {
        let address = try Mail.checkedAddress(address)
        let now = self.now(), code = Self.newCode(), limits = codeLimits
        return try await database.changeClient(id: clientId) { facts in
            try Self.settingEmail(facts, address: address, code: code, from: clientAddress, limits: limits, now: now)
        }
    }

    /// A six-digit code, from the system's random source.
    static func newCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
    }

    /// What setting `address` writes: at most one code a minute (counted in one statement:
    /// requests at once get one code, the others `rate_limited`) and within `CodeLimits`; the
    /// address waits to be confirmed (the one in use stays until then); the code's hash waits
    /// `emailCodeMinutes`; earlier codes not yet sent are dropped (not worth sending), and the
    /// code's mail is queued. `not_logged_in` for a patient gone.
    static func settingEmail(_ facts: ClientChangeFacts?, address: String, code: String, from clientAddress: String?,
                             limits: CodeLimits, now: Date) throws -> ClientChange<EmailStatus> {
        guard let facts, let clientId = facts.client.id else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        var client = facts.client
        client.pendingEmail = address
        let minute = SendCount(key: "code:mail:minute:\(clientId)", window: 60, limit: 1,
                               refusal: ClinicError(.rateLimited, .emailCodeTooSoon, "60"))
        let counts = [minute] + limits.counts(channel: .mail, clientId: clientId, destination: CodeLimits.mailKey(address), from: clientAddress)
        return ClientChange(writes: counts.map { ClientWrite.countSend($0, at: now) } + [
            .rewrite(client),
            .replaceEmailConfirmation(codeHash: codeHash(code, clientId: clientId), expiresAt: Date(seconds: now.seconds + emailCodeMinutes * 60)),
            .dropPendingEmailCodes,
            .enqueueEmailCode(code, at: now),
        ], result: EmailStatus(confirmed: client.email, pending: address))
    }

    /// Confirms the waiting address with its code; from then on messages are e-mailed too.
    /// The store's one awaited transaction (issue 56: `ClientChangesStore`).
    public func confirmEmail(clientId: Int64, code: String) async throws -> EmailStatus {
        let now = self.now()
        return try Self.confirmedEmail(try await database.changeClient(id: clientId) { facts in
            try Self.confirmingEmail(facts, code: code, now: now)
        })
    }

    /// Forgets both addresses; e-mail not yet sent is dropped, the inbox stays.
    /// The store's one awaited transaction (issue 56: `ClientChangesStore`).
    public func removeEmail(clientId: Int64) async throws {
        try await database.changeClient(id: clientId, decide: Self.removingEmail)
    }

    /// What a typed e-mail code is found to be, once its decision is written.
    public enum EmailCodeOutcome: Sendable, Equatable {
        case confirmed(EmailStatus)
        /// A wrong guess, counted.
        case wrong
        /// No address waits to be confirmed.
        case nothingWaits
    }

    /// What `code` does to the patient's record: the waiting address confirmed (the code ends),
    /// a wrong guess counted, or nothing; `not_logged_in` for a patient gone.
    public static func confirmingEmail(_ facts: ClientChangeFacts?, code: String, now: Date) throws -> ClientChange<EmailCodeOutcome> {
        guard let facts else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        var client = facts.client
        guard let pending = client.pendingEmail, let waiting = facts.emailConfirmation, let clientId = client.id else {
            return ClientChange(writes: [], result: .nothingWaits)
        }
        let sent = WaitingCode(hash: waiting.codeHash, expiresAt: waiting.expiresAt, wrongAttempts: waiting.wrongAttempts)
        switch CodeCheck.of(code, against: sent, attempts: emailCodeAttempts, now: now, hash: { codeHash($0, clientId: clientId) }) {
        case .right:
            client.email = pending
            client.pendingEmail = nil
            return ClientChange(writes: [.rewrite(client), .deleteEmailConfirmation],
                                result: .confirmed(EmailStatus(confirmed: pending, pending: nil)))
        case .wrong, .nothingWaits:
            // The wrong guess is counted even though the confirmation fails.
            return ClientChange(writes: [.countWrongEmailCode], result: .wrong)
        }
    }

    /// Both addresses forgotten, the code waiting ended and the e-mail not yet sent dropped;
    /// `not_logged_in` for a patient gone.
    public static func removingEmail(_ facts: ClientChangeFacts?) throws -> ClientChange<Void> {
        guard var client = facts?.client else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        client.email = nil
        client.pendingEmail = nil
        return ClientChange(writes: [.rewrite(client), .deleteEmailConfirmation, .dropPendingDeliveries([.email])], result: ())
    }

    /// The answer to a typed code: the address's status, or the refusal (after the wrong guess was counted).
    static func confirmedEmail(_ outcome: EmailCodeOutcome) throws -> EmailStatus {
        switch outcome {
        case .confirmed(let status): return status
        case .wrong: throw ClinicError.invalid(.emailCodeWrong)
        case .nothingWaits: throw ClinicError(.notFound, .emailNoPending)
        }
    }

    static func codeHash(_ code: String, clientId: Int64) -> String {
        Array(SHA256.hash(data: Data("email-code:\(clientId):\(code)".utf8))).hexString
    }
}
