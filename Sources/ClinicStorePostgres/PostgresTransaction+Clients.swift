import ClinicKit
import Foundation
import PostgresNIO

// The client area of the seam on PostgreSQL (SQLiteTransaction+Clients.swift's behaviour).

extension PostgresTransaction {
    /// The setting holding the personal-data key's check (SQLiteStore.keyCheckSetting).
    static let clientsKeyCheckSetting = "encryption.key_check"

    func clientExists(id: Int64) throws -> Bool {
        try value(Bool.self, "SELECT EXISTS (SELECT 1 FROM clients WHERE id = $1)", [id]) ?? false
    }

    func loginExists(loginKey: String) throws -> Bool {
        try value(Bool.self, Self.loginExistsSQL, [loginKey]) ?? false
    }

    static let loginExistsSQL = "SELECT EXISTS (SELECT 1 FROM clients WHERE login_key = $1)"

    func storedClient(id: Int64) throws -> StoredClient? {
        try row("SELECT * FROM clients WHERE id = $1", [id]).map(Self.storedClientOfRow)
    }

    func storedClient(loginKey: String) throws -> StoredClient? {
        try row(Self.clientOfLoginKeySQL, [loginKey]).map(Self.storedClientOfRow)
    }

    /// The patient whose login's key is `$1`.
    static let clientOfLoginKeySQL = "SELECT * FROM clients WHERE login_key = $1"

    /// Patient `$1` with the personal-data key's check (`$2`: its setting) as `personal_key_check`.
    /// The patients of the ids $1, by id.
    static let clientsOfIdsSQL = "SELECT * FROM clients WHERE id = ANY($1::bigint[]) ORDER BY id"

    static let clientWithKeyCheckSQL = """
        SELECT c.*, (SELECT value FROM settings WHERE key = $2) AS personal_key_check FROM clients c WHERE c.id = $1
        """

    static func storedClientOfRow(_ row: StoredRowValues) throws -> StoredClient {
        StoredClient(client: try Client(row: row), personal: try row.decode(Data?.self, forColumn: "personal"))
    }

    /// Read once per transaction: a booking's gather brings it along (`bookingGather`), and
    /// the kept answer of its request is sealed under it. Only this transaction may store one
    /// where none was (`storePersonalDataKeyCheckIfMissing`, which forgets it); a stored check
    /// is never changed on PostgreSQL (keys are rotated on a SQLite file).
    func personalDataKeyCheck() throws -> String? {
        if let known = keyCheck.current { return known }
        let check = try value(String.self, "SELECT value FROM settings WHERE key = $1", [Self.clientsKeyCheckSetting])
        keyCheck.withLock { $0 = .some(check) }
        return check
    }

    func sealedCalendarToken(ofClient clientId: Int64) throws -> Data? {
        try value(Data.self, "SELECT token_sealed FROM calendar_feeds WHERE client_id = $1", [clientId])
    }

    func calendarTokenOwner(tokenHash: String) throws -> Int64? {
        try value(Int64.self, "SELECT client_id FROM calendar_feeds WHERE token_hash = $1", [tokenHash])
    }

    func storedClients(after id: Int64, limit: Int) throws -> [StoredClient] {
        try rows(Self.storedClientsPageSQL, [id, Int64(limit)]).map(Self.storedClientOfRow)
    }

    /// The patients after id `$1`, by id, at most `$2`.
    static let storedClientsPageSQL = "SELECT * FROM clients WHERE id > $1 ORDER BY id LIMIT $2"

    func searchIndexCheck() throws -> String? {
        try value(String.self, "SELECT value FROM settings WHERE key = $1", [PatientIndex.checkSetting])
    }

    func patients(withAnySearchToken tokens: [Data], atClinic clinicId: Int64) throws -> [Int64] {
        guard !tokens.isEmpty else { return [] }
        return try rows(Self.patientsWithAnySearchTokenSQL(tokens.count), [clinicId] + tokens)
            .map { try $0.decode(Int64.self, forColumn: "client_id") }
    }

    /// The patients of the clinic $1 with any of the `count` tokens $2…, by id.
    static func patientsWithAnySearchTokenSQL(_ count: Int) -> String {
        let marks = (0..<count).map { "$\($0 + 2)" }.joined(separator: ", ")
        return """
            SELECT DISTINCT s.client_id FROM patient_search s
            WHERE s.token IN (\(marks))
              AND (EXISTS (SELECT 1 FROM appointments a WHERE a.client_id = s.client_id AND a.clinic_id = $1)
                   OR EXISTS (SELECT 1 FROM walk_ins w WHERE w.client_id = s.client_id AND w.clinic_id = $1))
            ORDER BY s.client_id
            """
    }

    func walkInClinic(ofClient clientId: Int64) throws -> Int64? {
        try value(Int64.self, "SELECT clinic_id FROM walk_ins WHERE client_id = $1", [clientId])
    }

    func claimCode(hash: String) throws -> (clientId: Int64, expiresAt: Date)? {
        guard let row = try row("SELECT client_id, expires_at FROM claim_codes WHERE code_hash = $1", [hash]) else { return nil }
        return (try row.decode(Int64.self, forColumn: "client_id"),
                Date(timeIntervalSince1970: TimeInterval(try row.decode(Int64.self, forColumn: "expires_at"))))
    }

    // MARK: Writes

    func insertClient(_ client: Client, personal: Data) throws -> Int64 {
        // A taken login key inserts nothing and returns no row (a unique violation would abort
        // the transaction). One inserted by a transaction not yet committed is waited for.
        // The id is the identity's, never `client.id` (GENERATED ALWAYS).
        guard let id = try value(Int64.self, Self.insertClientSQL, Self.insertClientBinds(client, personal: personal)) else {
            throw ClinicError(.loginTaken, .loginTaken, client.login)
        }
        return id
    }

    static let insertClientSQL = """
        INSERT INTO clients (login, login_key, password_hash, name, surname, street, house, city, lat, lon, home_clinic_id,
                             preferred_language, privacy_accepted_at, privacy_version, created_at, personal)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
        ON CONFLICT (login_key) DO NOTHING RETURNING id
        """

    static func insertClientBinds(_ client: Client, personal: Data) -> [any PostgresBindable] {
        [client.login, client.loginKey, client.passwordHash, client.name, client.surname, client.street, client.house,
         client.city, client.lat, client.lon, client.homeClinicId, client.preferredLanguage, client.privacyAcceptedAt,
         client.privacyVersion, client.createdAt, personal]
    }

    func updateClient(_ client: Client, personal: Data, hasEmail: Bool) throws {
        noteSessionsChanged()
        let changed = try execute(Self.updateClientSQL, Self.updateClientBinds(client, personal: personal, hasEmail: hasEmail))
        if changed == 0 { throw Self.clientRowGone(client.id) }
    }

    /// As GRDB's `update` on SQLite: every column of the model, the sealed fields, and whether
    /// mail may go to the patient (`updateClientBinds`); returns the id, no row for a row gone.
    static let updateClientSQL = """
        UPDATE clients SET login = $2, login_key = $3, password_hash = $4, name = $5, surname = $6, street = $7, house = $8,
            city = $9, lat = $10, lon = $11, home_clinic_id = $12, preferred_language = $13, privacy_accepted_at = $14,
            privacy_version = $15, created_at = $16, personal = $17, email_confirmed = $18
        WHERE id = $1 RETURNING id
        """

    static func updateClientBinds(_ client: Client, personal: Data, hasEmail: Bool) -> [any PostgresBindable] {
        [client.id, client.login, client.loginKey, client.passwordHash, client.name, client.surname, client.street,
         client.house, client.city, client.lat, client.lon, client.homeClinicId, client.preferredLanguage,
         client.privacyAcceptedAt, client.privacyVersion, client.createdAt, personal, hasEmail]
    }

    /// A patient's row to rewrite is gone: an error, as GRDB's on SQLite.
    static func clientRowGone(_ id: Int64?) -> ClinicError {
        ClinicError(.storage, .storageFailure, "clients row \(id.map(String.init) ?? "without an id") not found")
    }

    func setPasswordHash(_ hash: String, ofClient clientId: Int64) throws {
        noteSessionsChanged()
        try execute(Self.setPasswordHashSQL, [hash, clientId])
    }

    /// Hash `$1` as patient `$2`'s password.
    static let setPasswordHashSQL = "UPDATE clients SET password_hash = $1 WHERE id = $2"

    func setPrivacyAccepted(ofClient clientId: Int64, version: Int, at: Date) throws {
        noteSessionsChanged()
        try execute(Self.setPrivacyAcceptedSQL, [version, at, clientId])
    }

    /// Version `$1` of the privacy policy accepted at `$2` by patient `$3`.
    static let setPrivacyAcceptedSQL = "UPDATE clients SET privacy_version = $1, privacy_accepted_at = $2 WHERE id = $3"

    func storePersonalDataKeyCheckIfMissing(_ check: String) throws {
        noteSessionsChanged()
        keyCheck.withLock { $0 = nil }
        try execute("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                    [Self.clientsKeyCheckSetting, check])
    }

    func detachAppointments(ofClient clientId: Int64) throws {
        try execute(Self.detachAppointmentsSQL, [clientId])
    }

    /// Patient `$1`'s appointments kept for the clinic with nothing personal.
    static let detachAppointmentsSQL = "UPDATE appointments SET notes = '', client_id = NULL WHERE client_id = $1"

    func deleteClient(id: Int64) throws {
        noteSessionsChanged()
        try execute(Self.deleteClientSQL, [id])
    }

    static let deleteClientSQL = "DELETE FROM clients WHERE id = $1"

    func replaceCalendarToken(ofClient clientId: Int64, tokenHash: String, sealed: Data, at: Date) throws {
        try execute(Self.replaceCalendarTokenSQL, [clientId, tokenHash, sealed, at])
    }

    /// Patient `$1`'s calendar token, its hash `$2` and sealed `$3`, made at `$4`, in place of the one there was.
    static let replaceCalendarTokenSQL = """
        INSERT INTO calendar_feeds (client_id, token_hash, token_sealed, created_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (client_id) DO UPDATE
            SET token_hash = excluded.token_hash, token_sealed = excluded.token_sealed, created_at = excluded.created_at
        """

    func deleteCalendarToken(ofClient clientId: Int64) throws {
        try execute(Self.deleteCalendarTokenSQL, [clientId])
    }

    /// Patient `$1`'s calendar token ended.
    static let deleteCalendarTokenSQL = "DELETE FROM calendar_feeds WHERE client_id = $1"

    func replaceSearchTokens(ofClient clientId: Int64, with tokens: [Data]) throws {
        try execute(Self.deleteSearchTokensSQL, [clientId])
        guard !tokens.isEmpty else { return }
        try execute(Self.insertSearchTokensSQL(tokens.count), [clientId] + tokens)
    }

    /// A patient's search tokens deleted: $1 the patient.
    static let deleteSearchTokensSQL = "DELETE FROM patient_search WHERE client_id = $1"

    /// `count` search tokens of patient $1 inserted in one statement (a patient has a few dozen): $2… the tokens.
    static func insertSearchTokensSQL(_ count: Int) -> String {
        let marks = (0..<count).map { "($\($0 + 2)::bytea, $1)" }.joined(separator: ", ")
        return "INSERT INTO patient_search (token, client_id) VALUES \(marks) ON CONFLICT DO NOTHING"
    }

    func clearSearchIndex() throws {
        try execute(Self.clearSearchIndexSQL)
        try execute(Self.deleteSettingSQL, [PatientIndex.checkSetting])
    }

    /// Every patient's search tokens deleted.
    static let clearSearchIndexSQL = "DELETE FROM patient_search"
    /// Setting `$1` deleted.
    static let deleteSettingSQL = "DELETE FROM settings WHERE key = $1"

    func insertWalkIn(clientId: Int64, clinicId: Int64, staffId: Int64, at: Date) throws {
        try execute(Self.insertWalkInSQL, [clientId, clinicId, staffId, at])
    }

    static let insertWalkInSQL = "INSERT INTO walk_ins (client_id, clinic_id, staff_id, created_at) VALUES ($1, $2, $3, $4)"

    func replaceClaimCode(ofClient clientId: Int64, hash: String, expiresAt: Date) throws {
        try execute(Self.replaceClaimCodeSQL, [clientId, hash, expiresAt])
    }

    /// Patient `$1`'s claim code: hash `$2`, working until `$3`, in place of any earlier one.
    static let replaceClaimCodeSQL = """
        INSERT INTO claim_codes (client_id, code_hash, expires_at) VALUES ($1, $2, $3)
        ON CONFLICT (client_id) DO UPDATE SET code_hash = EXCLUDED.code_hash, expires_at = EXCLUDED.expires_at
        """

    func deleteClaimCode(ofClient clientId: Int64) throws {
        try execute("DELETE FROM claim_codes WHERE client_id = $1", [clientId])
    }

    func consumeClaimCode(hash: String, at now: Date) throws -> Int64? {
        try value(Int64.self, Self.consumeClaimCodeSQL, [hash, now])
    }

    /// The claim code of hash `$1` used up if it has not expired at `$2`: the patient it was given to.
    static let consumeClaimCodeSQL = "DELETE FROM claim_codes WHERE code_hash = $1 AND expires_at > $2 RETURNING client_id"

    /// The patient a claim code of hash `$1` not expired at `$2` was given to, with the key check (`$3`: its setting).
    static let claimCodeOwnerSQL = """
        SELECT c.*, (SELECT value FROM settings WHERE key = $3) AS personal_key_check
        FROM claim_codes k JOIN clients c ON c.id = k.client_id WHERE k.code_hash = $1 AND k.expires_at > $2
        """

    func setSearchIndexCheck(_ check: String) throws {
        try execute(Self.setSearchIndexCheckSQL, [PatientIndex.checkSetting, check])
    }

    /// Setting `$1` (the index's check) to `$2`.
    static let setSearchIndexCheckSQL = """
        INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
        """
}
