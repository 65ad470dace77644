import Foundation

// The waitlist's worker: lapsed offers closed, freed times offered to the first entry they fit.

extension WaitlistController {
    // MARK: The worker

    /// Works the queue at `now`: closes the offers that lapsed (their times queued again for
    /// the next in line), then offers each queued freed time to the first waiting entry it fits,
    /// one transaction per time (on a shared store several servers do this at once, each time
    /// taken by one). Returns how many lapses and freed times it handled (at most about `limit`).
    /// Cheap when there is nothing to do: one read (`WaitlistWorkStore`).
    @discardableResult
    public func work(limit: Int = 100) async throws -> Int {
        let now = self.now()
        guard try await database.waitlistHasWork(at: now) else { return 0 }
        var handled = try await database.closeLapsedOffers(at: now, limit: limit) { lapsed in Self.closingLapsed(lapsed, now: now) }
        let rules = FreedTimeRules(now: now)
        while handled < limit, try await database.offerFreedTime(rules) { handled += 1 }
        return handled
    }

    /// What closing the lapsed offers writes (each as `closing` says, the lapse counted), and
    /// how many they are.
    public static func closingLapsed(_ lapsed: [WaitlistOfferState], now: Date) -> WaitlistDecision<Int> {
        WaitlistDecision(writes: lapsed.flatMap { closing($0.offer, as: .lapsed, entryStatus: $0.entryStatus, now: now) }, now: now,
                         result: lapsed.count)
    }

    /// The lapses' gather with the seam's statements, in the caller's write transaction: the
    /// holds run out deleted (a patient's own queues its time for whoever waits: the store's
    /// `slot_holds_expired` trigger), the lapsed offers (locked) with their entries' statuses.
    package static func lapsed(_ tx: any StoreWriting, at now: Date, limit: Int) throws -> [WaitlistOfferState] {
        try tx.deleteExpiredSlotHolds(at: now)
        return try tx.lapsedWaitlistOffers(at: now, limit: limit).map { offer in
            WaitlistOfferState(offer: offer, entryStatus: try tx.waitlistEntry(id: offer.entryId)?.status)
        }
    }

    /// The message that offers a time, in the patient's language.
    static func message(_ offer: WaitlistOffer, context: AppointmentMessageContext, doctorName: String) -> (subject: String, body: String) {
        let language = context.language ?? .en
        let zone = Clinic.zone(named: context.timeZone)
        let when = DateText.dateTime(offer.startsAt, timeZone: zone, language: language)
        let until = DateText.dateTime(offer.expiresAt, timeZone: zone, language: language)
        let details = Strings.text(.messageDetails, language, [
            when, context.timeZone, context.clinicName,
            [context.address, context.city, "\(context.state) \(context.zip)"].joined(separator: ", "),
            Specialization.displayName(context.specialization, language), doctorName, "—"])
        return (Strings.text(.waitlistOfferSubject, language, [when]),
                Strings.text(.waitlistOfferBody, language, [details, until, String(offer.id ?? 0)]))
    }

    /// The text that offers a time: the clinic, the time, until when it is held, the link.
    static func text(_ offer: WaitlistOffer, context: AppointmentMessageContext, link: String) -> String {
        let language = context.language ?? .en
        let zone = Clinic.zone(named: context.timeZone)
        return Strings.text(.textOffer, language, [
            context.clinicName, DateText.dateTimeWithZone(offer.startsAt, timeZone: zone, language: language),
            // The hold's end with its day and zone: the text may be read the next morning.
            DateText.dateTimeWithZone(offer.expiresAt, timeZone: zone, language: language), link])
    }

    func owned(offer id: Int64, _ tx: any StoreReading, _ clientId: Int64) throws -> WaitlistOffer {
        try Self.owned(try tx.waitlistOffer(id: id), id, clientId)
    }

    /// `owned`, its row locked to the transaction's end (`lockWaitlistOffer`): for an answer.
    func ownedLocked(offer id: Int64, _ tx: any StoreWriting, _ clientId: Int64) throws -> WaitlistOffer {
        try Self.owned(try tx.lockWaitlistOffer(id: id), id, clientId)
    }

    static func owned(_ found: WaitlistOffer?, _ id: Int64, _ clientId: Int64) throws -> WaitlistOffer {
        guard let offer = found, offer.clientId == clientId else { throw ClinicError(.notFound, .waitlistOfferNotFound, String(id)) }
        return offer
    }
}
