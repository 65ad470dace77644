import Foundation

// The front desk's patient search awaited (issue 56): the store reads the key checks, ClinicKit
// makes each word's token under the key (`PatientIndex`), the store reads the clinic's patients
// that have every token, ClinicKit opens and ranks them, and the store appends one audit row per
// patient shown. The tokens' cryptography and the ranking stay in ClinicKit.

/// The awaited patient search a `ClinicStore` offers.
public protocol PatientSearchStore: Sendable {
    /// The personal-data key's check and the search index's (`PatientIndex.checkSetting`): the
    /// index is current when it was made under the key.
    func patientIndexChecks() async throws -> PatientIndexChecks
    /// The patients of the clinic (`StaffStorage.isPatient`) whose search entries hold every one
    /// of `wordTokens` (a word's token each), by id; their personal fields as stored (sealed).
    func searchedPatients(clinicId: Int64, wordTokens: [Data]) async throws -> [StoredClient]
    /// Appends the rows to the audit trail in one transaction, in order.
    func appendAudit(_ asks: [AuditAsk]) async throws
    /// In one write transaction: the index made again under the personal-data key when it was
    /// made under another key or never made (each patient's tokens: `PatientIndex.rebuildTokens`);
    /// returns the key's cipher.
    func makePatientIndexCurrent() async throws -> FieldCipher
}

/// The stored checks of the personal-data key and of the search index.
public struct PatientIndexChecks: Sendable, Equatable {
    /// Nil: no personal data sealed yet.
    public let personalData: String?
    /// Nil: no index made yet.
    public let index: String?

    public init(personalData: String?, index: String?) { self.personalData = personalData; self.index = index }
}

/// The search's reads in the caller's snapshot (the seam's path, and SQLite's).
package enum PatientSearchReads {
    package static func checks(_ tx: any StoreReading) throws -> PatientIndexChecks {
        PatientIndexChecks(personalData: try tx.personalDataKeyCheck(), index: try tx.searchIndexCheck())
    }

    package static func patients(_ tx: any StoreReading, clinicId: Int64, wordTokens: [Data]) throws -> [StoredClient] {
        var candidates: Set<Int64>?
        for token in wordTokens {
            let found = Set(try tx.patients(withAnySearchToken: [token], atClinic: clinicId))
            candidates = candidates.map { $0.intersection(found) } ?? found
            if candidates?.isEmpty == true { break }
        }
        return try (candidates ?? []).sorted().compactMap { try tx.storedClient(id: $0) }
    }
}
