import ClinicKit
import Foundation
import PostgresNIO

// A change of a patient's own record awaited (issue 56: `ClientChangesStore`): one transaction
// on a leased connection, each statement awaited. What is written is ClinicKit's decision
// (`ClientWrite`s); the record is sealed here under the stored key check (`SealedClient`), with
// the seam's own statements. The signed-in look-ups this store keeps carry the patient's record,
// so they are forgotten before and after, as `updateClient` does; other servers hear the
// database's notice.

extension PostgresStore {
    /// BEGIN, the patient's row locked (`FOR UPDATE`: their changes one after the other, so a
    /// code's guesses at once are decided in turn) with the e-mail confirmation, the key check
    /// and the texting gateway's sign of life, their phone's row (locked too) when asked, a
    /// number's key made when asked, the decision, its writes in order; COMMIT.
    public func changeClient<T: Sendable>(id: Int64, phone: Bool, number: String?,
                                          decide: @escaping @Sendable (ClientChangeFacts?) throws -> ClientChange<T>) async throws -> T {
        let sent = statementsSent, key = personalDataKey
        keptLookups.forgetSessions()
        defer { keptLookups.forgetSessions() }
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let row = try await tx.rows("""
                SELECT c.*, (SELECT value FROM settings WHERE key = $2) AS personal_key_check,
                       (SELECT value FROM settings WHERE key = $3) AS text_gateway_seen, e.code_hash, e.expires_at, e.attempts
                FROM clients c LEFT JOIN email_confirmations e ON e.client_id = c.id WHERE c.id = $1 FOR UPDATE OF c
                """, [id, PostgresTransaction.clientsKeyCheckSetting, Outbox.textGatewaySetting]).first.map(PostgresTransaction.row)
            let check: String? = try row?.value("personal_key_check", in: "settings")
            let phoneRow = row != nil && phone
                ? try await tx.rows(PostgresTransaction.phoneSQL + " FOR UPDATE", [id]).first.map(PostgresTransaction.row) : nil
            // Sealed under one cipher: with no key check stored yet, the first sealing stores it.
            var cipher: FieldCipher?
            if row != nil, number != nil { cipher = try await Self.sealingCipher(key, stored: check, tx) }
            let numberKey: String? = if let number, let cipher { StoredPhone.key(of: number, cipher: cipher) } else { nil }
            let facts = try row.map { row in
                let stored = try PostgresTransaction.storedClientOfRow(row)
                let seen: String? = numberKey == nil ? nil : try row.value("text_gateway_seen", in: "settings")
                return ClientChangeFacts(client: stored.personal == nil ? stored.client : try stored.opened(with: try key.cipher(keyCheck: check)),
                                         emailConfirmation: try PostgresTransaction.emailConfirmation(of: row),
                                         phone: try phoneRow.map(StoredPhone.init(row:)), numberKey: numberKey,
                                         textGatewaySeen: seen.flatMap { Int64($0) })
            }
            let change = try decide(facts)
            for write in change.writes {
                if write.seals, cipher == nil { cipher = try await Self.sealingCipher(key, stored: check, tx) }
                try await Self.write(write, clientId: id, tx, cipher: cipher)
            }
            return change.result
        }
    }

    /// One write of a change of a patient's record: a rewrite is the row's UPDATE (an error for
    /// a row gone) and the search tokens made again, sealed under `cipher`; the others one
    /// statement each.
    static func write(_ write: ClientWrite, clientId: Int64, _ tx: AwaitedConnection, cipher: FieldCipher?) async throws {
        switch write {
        case .rewrite(let client):
            guard let cipher else { throw ClinicError(.storage, .storageFailure, "a patient's record to seal without a cipher") }
            let sealed = try SealedClient(client, cipher: cipher)
            let updated = try await tx.rows(PostgresTransaction.updateClientSQL,
                                            PostgresTransaction.updateClientBinds(sealed.row, personal: sealed.personal, hasEmail: sealed.hasEmail))
            guard !updated.isEmpty else { throw PostgresTransaction.clientRowGone(client.id) }
            _ = try await tx.rows(PostgresTransaction.deleteSearchTokensSQL, [clientId])
            if !sealed.tokens.isEmpty {
                _ = try await tx.rows(PostgresTransaction.insertSearchTokensSQL(sealed.tokens.count), [clientId] + sealed.tokens)
            }
        case .deleteEmailConfirmation:
            _ = try await tx.rows(PostgresTransaction.deleteEmailConfirmationSQL, [clientId])
        case .countWrongEmailCode:
            _ = try await tx.rows(PostgresTransaction.countWrongEmailCodeSQL, [clientId])
        case .dropPendingDeliveries(let channels):
            _ = try await tx.rows(PostgresTransaction.dropPendingDeliveriesSQL(Set(channels)), [clientId])
        case .recordGeocode(let write):
            let statement = PostgresTransaction.binds(write)
            _ = try await tx.rows(statement.sql, statement.binds)
        case .savePhone(let phone, let at):
            _ = try await tx.rows(PostgresTransaction.savePhoneSQL, PostgresTransaction.savePhoneBinds(phone, at: at))
        case .countSend(let counted, let at):
            _ = try await tx.rows(PostgresTransaction.expiredSendCountsSQL, [PostgresTransaction.sendCountsExpiry(window: counted.window, at: at)])
            let count = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.countSendSQL,
                                                                   PostgresTransaction.countSendBinds(key: counted.key, window: counted.window, at: at)))
            guard let count else { throw ClinicError(.storage, .storageFailure, "send_counts: no row returned") }
            if count > Int64(counted.limit) { throw counted.refusal }
        case .replaceEmailConfirmation(let hash, let expiresAt):
            _ = try await tx.rows(PostgresTransaction.replaceEmailConfirmationSQL, [clientId, hash, expiresAt])
        case .dropPendingEmailCodes:
            _ = try await tx.rows(PostgresTransaction.dropPendingEmailCodesSQL, [clientId])
        case .enqueueEmailCode(let code, let at):
            guard let cipher else { throw ClinicError(.storage, .storageFailure, "a code to seal without a cipher") }
            guard let id = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.enqueueEmailCodeSQL, [clientId, at])) else {
                throw ClinicError(.storage, .storageFailure, "deliveries: no id returned")
            }
            _ = try await tx.rows(PostgresTransaction.deliveryPayloadSQL,
                                  [try cipher.seal(bytes: Data(code.utf8), context: ClientWrite.codeContext(id)), id])
        case .savePhoneNumber(let number, var phone, let at):
            guard let cipher else { throw ClinicError(.storage, .storageFailure, "a number to seal without a cipher") }
            phone.numberSealed = try ClientWrite.sealedNumber(number, clientId: clientId, cipher: cipher)
            _ = try await tx.rows(PostgresTransaction.savePhoneSQL, PostgresTransaction.savePhoneBinds(phone, at: at))
        case .enqueueCodeText(let body, let at):
            guard let cipher else { throw ClinicError(.storage, .storageFailure, "a text to seal without a cipher") }
            guard let id = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.enqueueTextSQL,
                                                                      [clientId, Int64?.none, "text_code", at])) else {
                throw ClinicError(.storage, .storageFailure, "deliveries: no id returned")
            }
            _ = try await tx.rows(PostgresTransaction.deliveryPayloadSQL,
                                  [try cipher.seal(bytes: Data(body.utf8), context: ClientWrite.codeContext(id)), id])
        }
    }
}

extension ClientWrite {
    /// Whether the write seals with the store's key (the record, a new number, a queued code or text).
    var seals: Bool {
        switch self {
        case .rewrite, .enqueueEmailCode, .savePhoneNumber, .enqueueCodeText: true
        default: false
        }
    }
}

// A walk-in's claim of their account awaited (`ClaimStore`).
extension PostgresStore {
    /// One statement: the code's patient with the key check, opened.
    public func claimCodeOwner(codeHash: String, at: Date) async throws -> Client? {
        let key = personalDataKey
        return try await readAwaited { tx in
            try await tx.rows(PostgresTransaction.claimCodeOwnerSQL, [codeHash, at, PostgresTransaction.clientsKeyCheckSetting]).first
                .map { try Self.openedClient(PostgresTransaction.row($0), key: key).client }
        }
    }

    /// BEGIN; the code used up (`DELETE … RETURNING`); its patient with the key check, their row
    /// locked; whether the login is taken; the rules' decision; the record rewritten; COMMIT.
    public func claimAccount(_ rules: ClaimRules) async throws -> Client {
        let sent = statementsSent, key = personalDataKey
        keptLookups.forgetSessions()
        defer { keptLookups.forgetSessions() }
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let consumed = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.consumeClaimCodeSQL, [rules.codeHash, rules.now]))
            var opened: (client: Client, check: String?)?
            if let consumed, let row = try await tx.rows(PostgresTransaction.clientWithKeyCheckSQL + " FOR UPDATE OF c",
                                                         [consumed, PostgresTransaction.clientsKeyCheckSetting]).first {
                opened = try Self.openedClient(PostgresTransaction.row(row), key: key)
            }
            let taken = try tx.value(Bool.self, try await tx.rows(PostgresTransaction.loginExistsSQL, [rules.loginKey])) ?? false
            let claimed = try rules.claiming(ClaimFacts(consumedBy: consumed, client: opened?.client, loginTaken: taken))
            try await Self.write(.rewrite(claimed), clientId: consumed ?? 0, tx,
                                 cipher: try await Self.sealingCipher(key, stored: opened?.check, tx))
            return claimed
        }
    }
}
