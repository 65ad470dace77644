import Foundation

// A patient's waitlist read awaited (issue 56: `WaitlistReadsStore`): the same lists as
// `entries`, `offers` and `overview`, decided on the facts of one read (`WaitlistEntryFacts.isOver`,
// an offer's expiry), each clinic then read once with its departments.

extension WaitlistController {
    /// `entries` awaited: the patient's entries still waiting (or offered a time), by id.
    public func entries(clientId: Int64) async throws -> [WaitlistEntry] {
        Self.shown(try await database.patientWaitlist(clientId: clientId), now: now()).entries
    }

    /// `offers` awaited: the patient's open offers still within their time, by id.
    public func offers(clientId: Int64) async throws -> [WaitlistOffer] {
        Self.shown(try await database.patientWaitlist(clientId: clientId), now: now()).offers
    }

    /// The patient's `Overview`, in one snapshot: the entries and offers, and the department and
    /// clinic of each.
    public func overview(clientId: Int64) async throws -> Overview {
        let (entries, offers) = Self.shown(try await database.patientWaitlist(clientId: clientId), now: now())
        let places = try await database.departmentsWithClinics(
            entries.map { ($0.clinicId, $0.departmentId) } + offers.map { ($0.clinicId, $0.departmentId) })
        return Overview(entries: entries, offers: offers, places: places)
    }

    /// What the patient is shown of their waitlist at `now`: the entries not over, the offers not expired.
    static func shown(_ facts: PatientWaitlistFacts, now: Date) -> (entries: [WaitlistEntry], offers: [WaitlistOffer]) {
        (facts.entries.filter { !$0.isOver(now: now) }.map(\.entry), facts.offers.filter { $0.expiresAt > now })
    }
}
