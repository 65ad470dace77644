import Foundation

// The waitlist's worker awaited (issue 56): a round is one read (is there anything to do?), one
// transaction that closes the lapsed offers, then one transaction per freed time. The store
// reads under the locks that keep the facts true (a lapsed offer skipped when another server is
// closing it; a freed time taken by one server; the entries it may go to locked in their order;
// each candidate's booking facts under the booking's locks), ClinicKit decides on plain facts
// (`WaitlistController.closingLapsed`, `FreedTimeRules`), and the store writes what was decided.

/// The awaited waitlist worker a `ClinicStore` offers.
public protocol WaitlistWorkStore: Sendable {
    /// Whether the worker has anything to do at `now`: a freed time queued, an offer lapsed, or
    /// a patient's own hold run out at a department where somebody waits (one read).
    func waitlistHasWork(at now: Date) async throws -> Bool
    /// One transaction: the holds run out at `now` deleted (a patient's own queues its time for
    /// whoever waits), the offers lapsed by `now` (at most `limit`, each locked; one another
    /// server is closing is skipped) with their entries' statuses, `decide`, the writes.
    /// Returns the decision's result.
    func closeLapsedOffers(at now: Date, limit: Int,
                           decide: @escaping @Sendable ([WaitlistOfferState]) throws -> WaitlistDecision<Int>) async throws -> Int
    /// One transaction: the first freed time taken off the queue (false: none was queued), then,
    /// for a time still to come, the entries it may go to (locked in their order) tried in turn
    /// with `rules` (`FreedTimeRules.run`): the first it is offered to gets the offer, its
    /// hold, and the message and text that tell them.
    func offerFreedTime(_ rules: FreedTimeRules) async throws -> Bool
}

/// The worker's rules for one freed time, which the store calls between its reads and writes:
/// which booking facts each candidate entry is decided on, whether the time goes to it and how,
/// and how its patient is told. All pure: the store reads and writes.
public struct FreedTimeRules: Sendable {
    /// The round's moment: offers expire from it, rows are written at it.
    public let now: Date

    public init(now: Date) { self.now = now }

    /// How many waiting entries are tried.
    public var candidates: Int { WaitlistController.candidatesPerTime }

    /// Whether the time is offered at all: one that has begun is let go.
    public func offers(_ freed: FreedTime) -> Bool { freed.startsAt > now }

    /// The booking facts `entry` is decided on (nil: skipped, the visit it was to come before is
    /// no longer active). A move keeps the visit's length (its visit type's, as `relocate` does).
    public func request(_ freed: FreedTime, _ entry: WaitlistEntry, before: Appointment?) -> BookingFactsRequest? {
        if entry.beforeAppointmentId != nil, before?.status.isActive != true { return nil }
        return AppointmentController.factsRequest(
            clientId: entry.clientId, departmentId: freed.departmentId, visitTypeId: before?.visitTypeId ?? entry.visitTypeId,
            onlyDoctorId: freed.doctorId, at: .instant(freed.startsAt), exceptAppointment: entry.beforeAppointmentId, exceptHold: nil,
            now: now)
    }

    /// The offer to `entry` (nil: not for this patient: the booking's rules refuse it (their
    /// own overlap or limit, a visit longer than the free time, a visit type no longer offered),
    /// or the time is outside the days and hours the entry waits for).
    public func offer(_ freed: FreedTime, _ entry: WaitlistEntry, before: Appointment?, facts: BookingFacts) throws -> WaitlistOfferPlan? {
        let chosen: (clinic: Clinic, end: Date, policy: BookingPolicy)
        do {
            let policy = BookingPolicy(settings: facts.bookingSettings)
            let (department, clinic) = try BookingRules.departmentAndClinic(facts, freed.departmentId)
            let duration: Int?
            if before != nil {
                duration = facts.visitType?.durationMinutes
            } else {
                duration = try entry.visitTypeId.map {
                    try VisitType.offered(facts.visitType, id: $0, departmentId: freed.departmentId)
                }?.durationMinutes
            }
            let choice = try BookingRules.chooseDoctor(
                facts, department: department, clinic: clinic, start: freed.startsAt, preferred: freed.doctorId, strict: true,
                now: now, policy: policy, duration: duration)
            try BookingRules.checkPatient(facts, start: freed.startsAt, end: choice.end, excluding: entry.beforeAppointmentId,
                                          policy: policy, zone: clinic.zone)
            chosen = (clinic, choice.end, policy)
        } catch is ClinicError {
            return nil
        }
        guard entry.fits(start: freed.startsAt, end: chosen.end, zone: chosen.clinic.zone, before: before?.startsAt) else { return nil }
        let expires = now.addingTimeInterval(TimeInterval(chosen.policy.waitlistOfferMinutes * 60))
        let clinicId = chosen.clinic.id ?? entry.clinicId
        return WaitlistOfferPlan(
            hold: SlotHold(clientId: entry.clientId, clinicId: clinicId, departmentId: freed.departmentId, doctorId: freed.doctorId,
                           visitTypeId: entry.visitTypeId, startsAt: freed.startsAt, endsAt: chosen.end, expiresAt: expires, createdAt: now),
            offer: WaitlistOffer(entryId: entry.id ?? 0, clientId: entry.clientId, holdId: nil, clinicId: clinicId,
                                 departmentId: freed.departmentId, doctorId: freed.doctorId, startsAt: freed.startsAt, endsAt: chosen.end,
                                 expiresAt: expires, status: .open, appointmentId: nil, createdAt: now, closedAt: nil),
            context: facts.messageContext, doctorName: facts.doctors.first { $0.id == freed.doctorId }?.name ?? "")
    }

    /// How the patient of `offer` (stored, with its id) is told: a message in their inbox (and
    /// e-mailed to a confirmed address); a text with a one-tap link that opens the offer without
    /// signing in, to whom takes offers so (its token only in the text; the offer keeps its hash).
    /// Nil for a patient there is nothing to write from (no message context).
    public func notice(_ plan: WaitlistOfferPlan, offer: WaitlistOffer, phone: StoredPhone?) -> OfferNotice? {
        guard let context = plan.context else { return nil }
        let message = WaitlistController.message(offer, context: context, doctorName: plan.doctorName)
        var text: OfferNotice.Text?
        if Texts.takes(phone, .offer) {
            let link = Texts.newLink()
            text = OfferNotice.Text(linkHash: link.hash, ask: TextAsk(
                clientId: offer.clientId, topic: .offer,
                body: WaitlistController.text(offer, context: context, link: Texts.siteMark + "/o/" + link.token)))
        }
        return OfferNotice(subject: message.subject, body: message.body, emailConfirmed: context.emailConfirmed, text: text)
    }

    /// The whole freed time in the caller's write transaction (a store whose transactions run
    /// synchronously), with the seam's statements: what `WaitlistWorkStore.offerFreedTime` does.
    /// Returns whether a freed time was taken; `offered`, the offer made, if any.
    package func run(_ tx: any StoreWriting) throws -> (taken: Bool, offered: WaitlistOffer?) {
        guard let freed = try tx.takeFreedTime() else { return (false, nil) }
        guard offers(freed) else { return (true, nil) }
        let entries = try tx.waitingEntries(departmentId: freed.departmentId, doctorId: freed.doctorId, notOfferedAt: freed.startsAt,
                                            limit: candidates)
        guard !entries.isEmpty else { return (true, nil) }
        // Expired holds (an offer's among them) no longer stand in the way of this one's.
        try tx.deleteExpiredSlotHolds(at: now)
        for entry in entries {
            // Its time only: the notes need not be opened to decide.
            let before = try entry.beforeAppointmentId.flatMap { try tx.storedAppointment(id: $0) }
            guard let ask = request(freed, entry, before: before),
                  let plan = try offer(freed, entry, before: before, facts: try tx.bookingFacts(ask)) else { continue }
            // Held meanwhile by another transaction (a patient's `$hold` committed after the
            // gather): nobody else here can have it either. The store refuses without failing
            // the transaction, so the queued time is done with, not retried for ever.
            let hold: SlotHold
            do {
                hold = try tx.insertOfferHold(plan.hold)
            } catch let error as ClinicError where error.code == .slotTaken {
                return (true, nil)
            }
            guard let offer = try tx.insertWaitlistOffer(plan.offer(holdId: hold.id)) else {
                try tx.deleteSlotHold(id: hold.id ?? 0)
                continue
            }
            try tx.setWaitlistEntryStatus(id: offer.entryId, to: .offered, at: now)
            if plan.context != nil, let notice = notice(plan, offer: offer, phone: try tx.phone(ofClient: offer.clientId)) {
                let messageId = try Inbox.post(tx, clientId: offer.clientId, kind: .waitlist, subject: notice.subject, body: notice.body,
                                               clinicId: offer.clinicId, emailConfirmed: notice.emailConfirmed, now: now)
                if let text = notice.text, let offerId = offer.id {
                    try tx.setOfferLink(offerId: offerId, hash: text.linkHash)
                    _ = try Texts.enqueue(tx, clientId: offer.clientId, code: false, body: text.ask.body, messageId: messageId, now: now)
                }
            }
            return (true, offer)
        }
        return (true, nil)
    }
}

/// A freed time's offer to one entry, as decided: its hold, the offer (its hold's id given when
/// the hold is stored), and what the message that tells the patient is written from.
public struct WaitlistOfferPlan: Sendable, Equatable {
    /// The hold that keeps the time for the patient meanwhile (no id yet).
    public let hold: SlotHold
    /// The offer (no id, no hold yet).
    public let offer: WaitlistOffer
    /// What its message is written from (nil: nothing to write: no such patient, clinic or department).
    public let context: AppointmentMessageContext?
    public let doctorName: String

    /// The offer with its stored hold's id.
    public func offer(holdId: Int64?) -> WaitlistOffer {
        var offer = self.offer
        offer.holdId = holdId
        return offer
    }
}

/// How an offer's patient is told: the message (e-mailed too to a confirmed address; nil: the
/// store looks whether theirs is) and, to whom takes offers by text, the text with its link.
public struct OfferNotice: Sendable, Equatable {
    public let subject: String
    public let body: String
    public let emailConfirmed: Bool?
    public let text: Text?

    public struct Text: Sendable, Equatable {
        /// The link's hash, which the offer keeps (`setOfferLink`).
        public let linkHash: String
        public let ask: TextAsk
    }
}
