import Foundation

// The nearest-clinic search's reads awaited (issue 56): the directory's version (with a
// specialization's clinics), the points the finder is built from, the clinics it returns. Each
// is one snapshot of the store (on PostgreSQL one awaited statement or an awaited read-only
// transaction) with no thread waiting for it. The finder and the search's rounds are
// `ClinicController`'s, the same for the blocking search and the awaited one.

/// The awaited reads of a nearest-clinic search a `ClinicStore` offers.
public protocol NearestSearchStore: Sendable {
    /// `ClinicStore.nearestSearchFacts` awaited (kept between searches where the blocking one is).
    func searchFacts(specialization key: String?) async throws -> NearestSearchFacts
    /// Every clinic's point (by id) and the directory's version, in one snapshot: what the finder is built from.
    func directoryPoints() async throws -> DirectorySnapshot<ClinicPoint>
    /// Every clinic (by id) and the directory's version, in one snapshot.
    func directoryClinics() async throws -> DirectorySnapshot<Clinic>
    /// The clinics of these ids, in no particular order (an id with no clinic is left out).
    func searchedClinics(ids: [Int64]) async throws -> [Clinic]
    /// The specializations the departments have (sorted): an unknown name is refused with the closest.
    func knownSpecializations() async throws -> [String]
    /// The department of specialization `key` in each clinic that has one (clinic id to the
    /// first such department's id): where a search for free slots near a point looks.
    func specializationDepartments(_ key: String) async throws -> [Int64: Int64]
    /// The longest stretch of hours (minutes), weekly or on a date, any doctor of
    /// specialization `key` works; 0 without any. A visit longer than it fits nowhere.
    func longestStretch(specialization key: String) async throws -> Int
}

/// Rows of the directory with the directory's version they were read at.
public struct DirectorySnapshot<Row: Sendable>: Sendable {
    public let rows: [Row]
    public let version: Int64

    public init(rows: [Row], version: Int64) { self.rows = rows; self.version = version }
}
