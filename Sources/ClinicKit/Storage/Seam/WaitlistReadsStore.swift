import Foundation

// A patient's waitlist read awaited (issue 56): their entries with what decides whether each is
// over, and their open offers, in one read. Which of them are shown is `WaitlistController`'s
// (`WaitlistEntryFacts.isOver`, an offer's expiry), decided on these plain facts.

/// The awaited waitlist reads a `ClinicStore` offers.
public protocol WaitlistReadsStore: Sendable {
    /// The patient's entries still waiting or offered, by id, each with its facts, and their
    /// open offers, by id.
    func patientWaitlist(clientId: Int64) async throws -> PatientWaitlistFacts
    /// The offer whose text's link hashes to `hash` while the link is unused (nil: no such
    /// link, or used), with its department and clinic: what the link's page shows.
    func offerByLink(hash: String) async throws -> OfferLinkFacts?
}

/// An offer as its link's page is decided on.
public struct OfferLinkFacts: Sendable, Equatable {
    public let offer: WaitlistOffer
    /// Nil only if gone (the schema's foreign keys forbid it).
    public let department: Department?
    public let clinic: Clinic?

    public init(offer: WaitlistOffer, department: Department?, clinic: Clinic?) {
        self.offer = offer; self.department = department; self.clinic = clinic
    }

    /// The gather as the seam's reads, in the caller's read transaction (what SQLite runs).
    package static func read(_ tx: any StoreReading, hash: String) throws -> OfferLinkFacts? {
        guard let link = try tx.offerLink(hash: hash), link.usedAt == nil, let offer = try tx.waitlistOffer(id: link.offerId) else {
            return nil
        }
        let department = try tx.department(id: offer.departmentId)
        return OfferLinkFacts(offer: offer, department: department, clinic: try department.flatMap { try tx.clinic(id: $0.clinicId) })
    }
}

/// A patient's waitlist as stored, with what its rules are decided on.
public struct PatientWaitlistFacts: Sendable {
    public let entries: [WaitlistEntryFacts]
    public let offers: [WaitlistOffer]

    public init(entries: [WaitlistEntryFacts], offers: [WaitlistOffer]) {
        self.entries = entries; self.offers = offers
    }

    /// The gather as the seam's reads, in the caller's read transaction (what SQLite runs).
    package static func read(_ tx: any StoreReading, clientId: Int64) throws -> PatientWaitlistFacts {
        PatientWaitlistFacts(entries: try tx.activeWaitlistEntries(ofClient: clientId).map { try WaitlistEntryFacts.read(tx, $0) },
                             offers: try tx.openWaitlistOffers(ofClient: clientId))
    }
}

/// An entry with what decides whether anything can still be offered to it.
public struct WaitlistEntryFacts: Sendable, Equatable {
    public let entry: WaitlistEntry
    /// Its clinic's zone identifier (nil: the clinic is gone).
    public let clinicZone: String?
    /// Whether the appointment it waits to come before is still active (nil: it waits for none).
    public let beforeIsActive: Bool?

    public init(entry: WaitlistEntry, clinicZone: String?, beforeIsActive: Bool?) {
        self.entry = entry; self.clinicZone = clinicZone; self.beforeIsActive = beforeIsActive
    }

    /// The facts of one entry, in the caller's read transaction.
    package static func read(_ tx: any StoreReading, _ entry: WaitlistEntry) throws -> WaitlistEntryFacts {
        WaitlistEntryFacts(entry: entry, clinicZone: try tx.clinic(id: entry.clinicId)?.timeZone,
                           beforeIsActive: try entry.beforeAppointmentId.map { try tx.storedAppointment(id: $0)?.status.isActive == true })
    }

    /// Whether nothing can be offered to the entry any more: its last day is past in its
    /// clinic's zone, or the appointment it waits to come before is no longer active.
    public func isOver(now: Date) -> Bool {
        if beforeIsActive == false { return true }
        let zone = clinicZone.map(Clinic.zone(named:)) ?? TimeZone(identifier: "UTC") ?? .current
        return LocalDateTime.of(now, in: zone).dayText > entry.lastDay
    }
}
