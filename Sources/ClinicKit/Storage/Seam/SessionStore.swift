import Foundation

// Ending a session as an awaited operation of a store (issue 56): a log-out, or a patient's
// "sign out that device", one statement on PostgreSQL with no thread waiting for it. A store
// that keeps signed-in look-ups (PostgreSQL's) forgets them before and after, as its
// synchronous writes of sessions do.

/// The awaited ends of sessions a `ClinicStore` offers.
public protocol SessionStore: Sendable {
    /// Ends the patient's session whose token hashes to `tokenHash`; whether there was one.
    func endPatientSession(tokenHash: String) async throws -> Bool
    /// Ends the patient's session `id` (another patient's is none of theirs); whether there was one.
    func endPatientSession(id: Int64, clientId: Int64) async throws -> Bool
    /// Ends the staff session whose token hashes to `tokenHash`; whether there was one.
    func endStaffSession(tokenHash: String) async throws -> Bool
}
