import ClinicKit
import Foundation
import GRDB

// The client area of the seam on SQLite. The look-ups on the booking path use cached statements.

extension SQLiteTransaction {
    func clientExists(id: Int64) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM clients WHERE id = ?)"), arguments: [id]) ?? false
    }

    func loginExists(loginKey: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM clients WHERE login_key = ?)"),
                          arguments: [loginKey]) ?? false
    }

    func storedClient(id: Int64) throws -> StoredClient? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM clients WHERE id = ?"), arguments: [id]).map(Self.storedClient)
    }

    func storedClient(loginKey: String) throws -> StoredClient? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM clients WHERE login_key = ?"), arguments: [loginKey])
            .map(Self.storedClient)
    }

    static func storedClient(_ row: Row) throws -> StoredClient {
        // A database before migration 4 has no `personal` column: its fields are all plain.
        let personal: Data? = row.hasColumn("personal") ? try row.value("personal", in: "clients") : nil
        return StoredClient(client: try Client(row: row), personal: personal)
    }

    func personalDataKeyCheck() throws -> String? {
        try SQLiteStore.keyCheck(db)
    }

    func sealedCalendarToken(ofClient clientId: Int64) throws -> Data? {
        guard try db.tableExists("calendar_feeds") else { return nil }
        return try Data.fetchOne(db, sql: "SELECT token_sealed FROM calendar_feeds WHERE client_id = ?", arguments: [clientId])
    }

    func calendarTokenOwner(tokenHash: String) throws -> Int64? {
        guard try db.tableExists("calendar_feeds") else { return nil }
        return try Int64.fetchOne(db, sql: "SELECT client_id FROM calendar_feeds WHERE token_hash = ?", arguments: [tokenHash])
    }

    func storedClients(after id: Int64, limit: Int) throws -> [StoredClient] {
        try Row.fetchAll(db, sql: "SELECT * FROM clients WHERE id > ? ORDER BY id LIMIT ?", arguments: [id, limit])
            .map(Self.storedClient)
    }

    func searchIndexCheck() throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [PatientIndex.checkSetting])
    }

    func patients(withAnySearchToken tokens: [Data], atClinic clinicId: Int64) throws -> [Int64] {
        guard !tokens.isEmpty else { return [] }
        // The clinic is ?1, the tokens ?2 on.
        let marks = (0..<tokens.count).map { "?\($0 + 2)" }.joined(separator: ", ")
        var arguments: StatementArguments = [clinicId]
        arguments += StatementArguments(tokens)
        return try Int64.fetchAll(db, sql: """
            SELECT DISTINCT s.client_id FROM patient_search s
            WHERE s.token IN (\(marks))
              AND (EXISTS (SELECT 1 FROM appointments a WHERE a.client_id = s.client_id AND a.clinic_id = ?1)
                   OR EXISTS (SELECT 1 FROM walk_ins w WHERE w.client_id = s.client_id AND w.clinic_id = ?1))
            ORDER BY s.client_id
            """, arguments: arguments)
    }

    func walkInClinic(ofClient clientId: Int64) throws -> Int64? {
        guard try db.tableExists("walk_ins") else { return nil }
        return try Int64.fetchOne(db, sql: "SELECT clinic_id FROM walk_ins WHERE client_id = ?", arguments: [clientId])
    }

    func claimCode(hash: String) throws -> (clientId: Int64, expiresAt: Date)? {
        guard let row = try Row.fetchOne(db, sql: "SELECT client_id, expires_at FROM claim_codes WHERE code_hash = ?",
                                         arguments: [hash]) else { return nil }
        return (try row.decode(Int64.self, forColumn: "client_id"),
                Date(seconds: try row.decode(Int64.self, forColumn: "expires_at")))
    }

    // MARK: Writes

    func insertClient(_ client: Client, personal: Data) throws -> Int64 {
        var stored = client
        do {
            try stored.insert(db)
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            // The only unique index of `clients` besides its id is the login key's.
            if try loginExists(loginKey: client.loginKey) { throw ClinicError(.loginTaken, .loginTaken, client.login) }
            throw error
        }
        guard let id = stored.id else { throw ClinicError(.internalError, .storageFailure, "a patient stored without an id") }
        try db.execute(sql: "UPDATE clients SET personal = ? WHERE id = ?", arguments: [personal, id])
        return id
    }

    func updateClient(_ client: Client, personal: Data, hasEmail: Bool) throws {
        try client.update(db)
        try db.execute(sql: "UPDATE clients SET personal = ? WHERE id = ?", arguments: [personal, client.id])
        // Whether to e-mail the patient is decided without opening the profile (migration 13).
        if try db.tableExists("calendar_feeds") {
            try db.execute(sql: "UPDATE clients SET email_confirmed = ? WHERE id = ?", arguments: [hasEmail, client.id])
        }
    }

    func setPasswordHash(_ hash: String, ofClient clientId: Int64) throws {
        try db.execute(sql: "UPDATE clients SET password_hash = ? WHERE id = ?", arguments: [hash, clientId])
    }

    func setPrivacyAccepted(ofClient clientId: Int64, version: Int, at: Date) throws {
        try db.execute(sql: "UPDATE clients SET privacy_version = ?, privacy_accepted_at = ? WHERE id = ?",
                       arguments: [version, at.seconds, clientId])
    }

    func storePersonalDataKeyCheckIfMissing(_ check: String) throws {
        try setSettingIfAbsent(SQLiteStore.keyCheckSetting, to: check)
    }

    func detachAppointments(ofClient clientId: Int64) throws {
        try db.execute(sql: "UPDATE appointments SET notes = '', client_id = NULL WHERE client_id = ?", arguments: [clientId])
    }

    func deleteClient(id: Int64) throws {
        try db.execute(sql: "DELETE FROM clients WHERE id = ?", arguments: [id])
    }

    func replaceCalendarToken(ofClient clientId: Int64, tokenHash: String, sealed: Data, at: Date) throws {
        try db.execute(sql: """
            INSERT OR REPLACE INTO calendar_feeds (client_id, token_hash, token_sealed, created_at) VALUES (?, ?, ?, ?)
            """, arguments: [clientId, tokenHash, sealed, at.seconds])
    }

    func deleteCalendarToken(ofClient clientId: Int64) throws {
        try db.execute(sql: "DELETE FROM calendar_feeds WHERE client_id = ?", arguments: [clientId])
    }

    func replaceSearchTokens(ofClient clientId: Int64, with tokens: [Data]) throws {
        // A database at a version before the index (a test of an older migration) has none to keep.
        guard try db.tableExists("patient_search") else { return }
        try db.execute(sql: "DELETE FROM patient_search WHERE client_id = ?", arguments: [clientId])
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO patient_search (token, client_id) VALUES (?, ?)")
        for token in tokens { try insert.execute(arguments: [token, clientId]) }
    }

    func clearSearchIndex() throws {
        try db.execute(sql: "DELETE FROM patient_search")
        try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [PatientIndex.checkSetting])
    }

    func setSearchIndexCheck(_ check: String) throws {
        try setSetting(PatientIndex.checkSetting, to: check)
    }

    func insertWalkIn(clientId: Int64, clinicId: Int64, staffId: Int64, at: Date) throws {
        try db.execute(sql: "INSERT INTO walk_ins (client_id, clinic_id, staff_id, created_at) VALUES (?, ?, ?, ?)",
                       arguments: [clientId, clinicId, staffId, at.seconds])
    }

    func replaceClaimCode(ofClient clientId: Int64, hash: String, expiresAt: Date) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO claim_codes (client_id, code_hash, expires_at) VALUES (?, ?, ?)",
                       arguments: [clientId, hash, expiresAt.seconds])
    }

    func deleteClaimCode(ofClient clientId: Int64) throws {
        try db.execute(sql: "DELETE FROM claim_codes WHERE client_id = ?", arguments: [clientId])
    }

    func consumeClaimCode(hash: String, at now: Date) throws -> Int64? {
        try Int64.fetchOne(db, sql: "DELETE FROM claim_codes WHERE code_hash = ? AND expires_at > ? RETURNING client_id",
                           arguments: [hash, now.seconds])
    }
}
