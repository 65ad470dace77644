import Foundation

/// A patient's row as a store keeps it: the plain columns, and the personal fields sealed
/// apart (FieldCipher's envelope). Sealing and opening are ClinicKit's, never a store's: a
/// store only ever sees the envelope.
public struct StoredClient: Sendable {
    /// The patient with the personal fields as stored in the plain columns (blank once sealed).
    public var client: Client
    /// The sealed personal fields; nil on a row from before encryption (migration 4).
    public var personal: Data?

    public init(client: Client, personal: Data?) {
        self.client = client
        self.personal = personal
    }
}

/// Patients' rows, the personal-data key's check, and calendar addresses (issue #25's seam).
public protocol ClientReading {
    /// Whether a patient exists, without opening their personal data.
    func clientExists(id: Int64) throws -> Bool
    /// Whether a login (its case-folded key) is taken.
    func loginExists(loginKey: String) throws -> Bool
    func storedClient(id: Int64) throws -> StoredClient?
    func storedClient(loginKey: String) throws -> StoredClient?
    /// The check of the key the personal data is sealed with (nil before anything was sealed).
    func personalDataKeyCheck() throws -> String?
    /// The patient's calendar token, sealed; nil when they have no calendar address.
    func sealedCalendarToken(ofClient clientId: Int64) throws -> Data?
    /// The patient a calendar token (its hash) belongs to.
    func calendarTokenOwner(tokenHash: String) throws -> Int64?
    /// Patients' rows by id, from the first id above `after`, at most `limit` (`PatientIndex.rebuild`).
    func storedClients(after id: Int64, limit: Int) throws -> [StoredClient]
    /// The check of the key the search index's tokens were made under (`PatientIndex.check`).
    func searchIndexCheck() throws -> String?
    /// The patients of a clinic (`isPatient`: an appointment there in any state, or registered
    /// there as a walk-in) who have at least one of these search tokens, by id.
    func patients(withAnySearchToken tokens: [Data], atClinic clinicId: Int64) throws -> [Int64]
    /// The clinic whose front desk registered the patient (a walk-in), nil for others.
    func walkInClinic(ofClient clientId: Int64) throws -> Int64?
    /// The patient a claim code (its hash) was given to, and when it expires.
    func claimCode(hash: String) throws -> (clientId: Int64, expiresAt: Date)?
}

public protocol ClientWriting: ClientReading {
    /// Stores a new patient (personal fields blank, `personal` sealed) and returns the id, never
    /// one used before. A login taken meanwhile is refused with `login_taken` by the store's
    /// own unique constraint on the login key.
    func insertClient(_ client: Client, personal: Data) throws -> Int64
    /// Rewrites a patient's row; `hasEmail` says whether mail may go to them without opening
    /// the profile.
    func updateClient(_ client: Client, personal: Data, hasEmail: Bool) throws
    func setPasswordHash(_ hash: String, ofClient clientId: Int64) throws
    /// Records the patient's consent to a version of the privacy policy.
    func setPrivacyAccepted(ofClient clientId: Int64, version: Int, at: Date) throws
    /// Stores the key check if there is none yet (the first sealing of a database).
    func storePersonalDataKeyCheckIfMissing(_ check: String) throws
    /// Leaves a patient's appointments to the clinic's records: no patient, no notes.
    func detachAppointments(ofClient clientId: Int64) throws
    /// Deletes a patient's row (their sessions and calendar address go with it).
    func deleteClient(id: Int64) throws
    /// Gives the patient a new calendar token in place of the one they had.
    func replaceCalendarToken(ofClient clientId: Int64, tokenHash: String, sealed: Data, at: Date) throws
    func deleteCalendarToken(ofClient clientId: Int64) throws
    /// Puts these search tokens in place of the patient's (they go with the patient's row).
    func replaceSearchTokens(ofClient clientId: Int64, with tokens: [Data]) throws
    /// Empties the search index and forgets its key's check (before it is made again).
    func clearSearchIndex() throws
    func setSearchIndexCheck(_ check: String) throws
    /// Records that a clinic's front desk registered the patient.
    func insertWalkIn(clientId: Int64, clinicId: Int64, staffId: Int64, at: Date) throws
    /// Gives the patient this claim code (its hash) in place of any earlier one.
    func replaceClaimCode(ofClient clientId: Int64, hash: String, expiresAt: Date) throws
    func deleteClaimCode(ofClient clientId: Int64) throws
    /// Uses a claim code up: deletes it if it is still valid at `now` and returns the patient it
    /// was given to, in one statement (`DELETE … RETURNING`), so that of two servers claiming
    /// with one code at once exactly one gets the patient (the other waits for the first's
    /// commit and then finds no row); nil when the code is unknown, used or expired.
    func consumeClaimCode(hash: String, at now: Date) throws -> Int64?
}
