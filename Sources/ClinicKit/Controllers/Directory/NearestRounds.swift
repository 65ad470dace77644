import Foundation

/// The rounds of one nearest-clinic search, decided on what was read (`ClinicController`'s
/// blocking search and its awaited one run the same rounds; only how they read differs).
/// The finder is asked for `asked` matches; the clinics it names that are not kept are read
/// (`missing`, `read`); `answer` says whether the round found enough. Only a search for
/// everyday hospitals needs more than one round: the kind is the clinic row's, so the finder is
/// asked for more (twice as many each round, at most `ClinicController.maximumReach`) until
/// enough of them are found. Rows read in an earlier round are not read again.
struct NearestRounds {
    let query: NearestQuery
    let reach: Int
    /// What the finder is asked to skip: the kinds, the radius, the specialization's clinics and the state's.
    let filter: NearestClinicFinder.Filter
    /// How many matches the finder is asked for this round.
    private(set) var asked: Int
    private var read: [Int64: Clinic] = [:]

    /// `clinics`: every clinic of the directory, needed only for `state` (its two letters, any case).
    init(_ query: NearestQuery, facts: NearestSearchFacts, state: String?, clinics: [Clinic]?, reach: Int) {
        var filter = NearestClinicFinder.Filter(pediatricOnly: query.pediatricOnly, hospitalOnly: query.hospitalOnly,
                                                withinMeters: query.withinKilometres.map { $0 * 1000 })
        if query.specialization != nil, let ids = facts.clinicIds { filter.clinicIds = ids }
        if let state {
            let code = state.trimmingCharacters(in: .whitespaces).uppercased()
            let inState = Set((clinics ?? []).filter { $0.state.uppercased() == code }.compactMap(\.id))
            filter.clinicIds = filter.clinicIds.map { $0.intersection(inState) } ?? inState
        }
        self.query = query
        self.reach = reach
        self.filter = filter
        asked = reach
    }

    /// The clinics of `matches` not read in an earlier round.
    func missing(_ matches: [NearestClinicFinder.Match]) -> [Int64] {
        matches.map(\.clinicId).filter { read[$0] == nil }
    }

    mutating func read(_ clinics: [Clinic]) {
        for clinic in clinics { read[clinic.id ?? 0] = clinic }
    }

    /// The clinics found, nearest first, when this round is the last; nil: ask again (`asked`
    /// grew). `kept`: the directory's clinics when kept, else those read.
    mutating func answer(_ matches: [NearestClinicFinder.Match], kept: [Int64: Clinic]?) -> [NearbyClinic]? {
        let clinics = kept ?? read
        let found = matches.compactMap { match in clinics[match.clinicId].map { NearbyClinic(clinic: $0, distance: match.distance) } }
        guard query.everydayOnly else { return found }
        let everyday = found.filter { $0.clinic.servesEveryday(child: query.pediatricOnly) }
        if everyday.count >= reach || matches.count < asked || asked >= ClinicController.maximumReach {
            return Array(everyday.prefix(reach))
        }
        asked = min(asked * 2, ClinicController.maximumReach)
        return nil
    }
}
