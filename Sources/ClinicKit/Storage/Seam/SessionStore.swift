import Foundation

// Sessions as awaited operations of a store (issue 56): a log-out, a patient's "sign out that
// device", the use a request records and the list of a patient's devices, one statement each on
// PostgreSQL with no thread waiting for it. A store that keeps signed-in look-ups (PostgreSQL's)
// forgets them before and after an end, as its synchronous writes of sessions do; a recorded
// use changes nothing it keeps (a kept session is one far from its idle limit).

/// The awaited sessions a `ClinicStore` offers.
public protocol SessionStore: Sendable {
    /// Ends the patient's session whose token hashes to `tokenHash`; whether there was one.
    func endPatientSession(tokenHash: String) async throws -> Bool
    /// Ends the patient's session `id` (another patient's is none of theirs); whether there was one.
    func endPatientSession(id: Int64, clientId: Int64) async throws -> Bool
    /// Ends the staff session whose token hashes to `tokenHash`; whether there was one.
    func endStaffSession(tokenHash: String) async throws -> Bool
    /// Records a use of the patient's session at `at`: its last use never moves back.
    func touchPatientSession(tokenHash: String, at: Date) async throws
    /// Records a use of the staff session at `at`, as `touchPatientSession`.
    func touchStaffSession(tokenHash: String, at: Date) async throws
    /// The patient's sessions last used at `lastUsedSince` or later, oldest first.
    func patientSessions(clientId: Int64, lastUsedSince: Date) async throws -> [StoredSession]
}
