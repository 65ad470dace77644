import ClinicKit
import Foundation
import PostgresNIO

// A patient's registration awaited (issue 56: `RegistrationStore`): one transaction on a leased
// connection, each statement awaited, with the seam's own statements. What is written is
// ClinicKit's decision (`NewClient`); the patient is sealed here under the stored key check.

extension PostgresStore {
    /// One statement.
    public func loginTaken(loginKey: String) async throws -> Bool {
        let sent = statementsSent, logger = self.logger
        return try await withConnection { connection in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            return try tx.value(Bool.self, try await tx.rows(PostgresTransaction.loginExistsSQL, [loginKey])) ?? false
        }
    }

    /// BEGIN, the login and the home clinic looked for, the decision, the city's geocode kept,
    /// the key check (stored first if there is none), the patient inserted (a login inserted
    /// meanwhile by another registration inserts nothing: `login_taken`) with their search
    /// tokens, a walk-in's row and audit row; COMMIT. The home clinic's row is held by the
    /// patient's reference to it.
    public func addClient(_ ask: RegistrationFactsRequest, decide: @escaping @Sendable (RegistrationFacts) throws -> NewClient)
        async throws -> Client {
        let sent = statementsSent, key = personalDataKey, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let taken = try tx.value(Bool.self, try await tx.rows(PostgresTransaction.loginExistsSQL, [ask.loginKey])) ?? false
            var clinicExists: Bool?
            if let clinicId = ask.homeClinicId { clinicExists = try await !tx.rows(PostgresTransaction.clinicSQL, [clinicId]).isEmpty }
            let new = try decide(RegistrationFacts(loginTaken: taken, homeClinicExists: clinicExists))
            if let geocode = new.geocode {
                let statement = PostgresTransaction.binds(geocode)
                _ = try await tx.rows(statement.sql, statement.binds)
            }
            let check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL, [PostgresTransaction.clientsKeyCheckSetting]))
            let sealed = try SealedClient(new.client, cipher: try await Self.sealingCipher(key, stored: check, tx))
            let inserted = try await tx.rows(PostgresTransaction.insertClientSQL,
                                             PostgresTransaction.insertClientBinds(sealed.row, personal: sealed.personal))
            guard let id = try tx.value(Int64.self, inserted) else { throw ClinicError(.loginTaken, .loginTaken, new.client.login) }
            if !sealed.tokens.isEmpty {
                _ = try await tx.rows(PostgresTransaction.insertSearchTokensSQL(sealed.tokens.count), [id] + sealed.tokens)
            }
            if let walkIn = new.walkIn {
                _ = try await tx.rows(PostgresTransaction.insertWalkInSQL, [id, walkIn.clinicId, walkIn.staffId, walkIn.at])
                try await Self.append(walkIn.audit(of: id), tx, ring: ring)
            }
            var added = new.client
            added.id = id
            return added
        }
    }
}
