import Foundation

// The waitlist's worker: lapsed offers closed, freed times offered to the first entry they fit.

extension WaitlistController {
    // MARK: The worker

    /// Works the queue at `now`: closes the offers that lapsed (their times queued again for
    /// the next in line), then offers each queued freed time to the first waiting entry it fits,
    /// one transaction per time (on a shared store several servers do this at once, each time
    /// taken by one). Returns how many lapses and freed times it handled (at most about `limit`).
    /// Cheap when there is nothing to do: one read.
    @discardableResult
    public func work(limit: Int = 100) throws -> Int {
        let now = self.now()
        guard try database.reading({ try $0.hasWaitlistWork(at: now) }) else { return 0 }
        var handled = try database.writing { tx in
            // Patients' own holds that ran out: deleting them queues their times for whoever
            // waits (the store's `slot_holds_expired` trigger).
            try tx.deleteExpiredSlotHolds(at: now)
            let lapsed = try tx.lapsedWaitlistOffers(at: now, limit: limit)
            for offer in lapsed { try close(tx, offer, as: .lapsed, now: now) }
            return lapsed.count
        }
        while handled < limit {
            let took = try database.writing { tx -> Bool in
                guard let freed = try tx.takeFreedTime() else { return false }
                _ = try offer(tx, freed, now: now)
                return true
            }
            guard took else { break }
            handled += 1
        }
        return handled
    }

    /// Offers a freed time to the first waiting entry it fits and whose patient may take it
    /// (the booking's rules over the gathered facts: the time still free and within the lead
    /// time and horizon, the patient's overlap and limit); nil when nobody gets it.
    func offer(_ tx: any StoreWriting, _ freed: FreedTime, now: Date) throws -> WaitlistOffer? {
        guard freed.startsAt > now else { return nil }
        let entries = try tx.waitingEntries(departmentId: freed.departmentId, doctorId: freed.doctorId, notOfferedAt: freed.startsAt,
                                            limit: Self.candidatesPerTime)
        guard !entries.isEmpty else { return nil }
        // Expired holds (an offer's among them) no longer stand in the way of this one's.
        try tx.deleteExpiredSlotHolds(at: now)
        for entry in entries {
            // Its time only: the notes need not be opened to decide.
            let before = try entry.beforeAppointmentId.flatMap { try tx.storedAppointment(id: $0) }
            if entry.beforeAppointmentId != nil, before?.status.isActive != true { continue }
            // A move keeps the visit's length (its visit type's, as `relocate` does).
            let facts = try tx.bookingFacts(AppointmentController.factsRequest(
                clientId: entry.clientId, departmentId: freed.departmentId, visitTypeId: before?.visitTypeId ?? entry.visitTypeId,
                onlyDoctorId: freed.doctorId, at: .instant(freed.startsAt), exceptAppointment: entry.beforeAppointmentId,
                exceptHold: nil, now: now))
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
                // Not for this patient (their own overlap or limit, a visit longer than the
                // free time, a visit type no longer offered): the next in line.
                continue
            }
            guard entry.fits(start: freed.startsAt, end: chosen.end, zone: chosen.clinic.zone, before: before?.startsAt) else {
                continue
            }
            let expires = now.addingTimeInterval(TimeInterval(chosen.policy.waitlistOfferMinutes * 60))
            // Held meanwhile by another transaction (a patient's `$hold` committed after the
            // gather): nobody else here can have it either. The store refuses without failing
            // the transaction, so the queued time is done with, not retried for ever.
            let hold: SlotHold
            do {
                hold = try tx.insertOfferHold(SlotHold(
                    clientId: entry.clientId, clinicId: chosen.clinic.id ?? entry.clinicId, departmentId: freed.departmentId,
                    doctorId: freed.doctorId, visitTypeId: entry.visitTypeId, startsAt: freed.startsAt, endsAt: chosen.end,
                    expiresAt: expires, createdAt: now))
            } catch let error as ClinicError where error.code == .slotTaken {
                return nil
            }
            guard let offer = try tx.insertWaitlistOffer(WaitlistOffer(
                entryId: entry.id ?? 0, clientId: entry.clientId, holdId: hold.id, clinicId: hold.clinicId,
                departmentId: freed.departmentId, doctorId: freed.doctorId, startsAt: freed.startsAt, endsAt: chosen.end,
                expiresAt: expires, status: .open, appointmentId: nil, createdAt: now, closedAt: nil)) else {
                try tx.deleteSlotHold(id: hold.id ?? 0)
                continue
            }
            try tx.setWaitlistEntryStatus(id: offer.entryId, to: .offered, at: now)
            if let context = facts.messageContext {
                let doctor = facts.doctors.first { $0.id == freed.doctorId }?.name ?? ""
                let message = Self.message(offer, context: context, doctorName: doctor)
                let messageId = try Inbox.post(tx, clientId: entry.clientId, kind: .waitlist, subject: message.subject,
                                               body: message.body, clinicId: offer.clinicId, emailConfirmed: context.emailConfirmed,
                                               now: now)
                // By text too, to whom takes offers so: with a one-tap link that opens the offer
                // without signing in (its token is only in the text; the offer keeps its hash).
                if let offerId = offer.id, let phone = try tx.phone(ofClient: entry.clientId), phone.confirmed, !phone.stopped,
                   phone.textOffers {
                    let link = Texts.newLink()
                    try tx.setOfferLink(offerId: offerId, hash: link.hash)
                    try Texts.queue(tx, clientId: entry.clientId, topic: .offer,
                                    body: Self.text(offer, context: context, link: Texts.siteMark + "/o/" + link.token),
                                    messageId: messageId, now: now)
                }
            }
            return offer
        }
        return nil
    }

    /// Closes an open offer as `status`: its hold released, its entry waiting again (unless it
    /// left), its time queued for the next in line. Nothing (false) when it was closed meanwhile.
    @discardableResult
    func close(_ tx: any StoreWriting, _ offer: WaitlistOffer, as status: WaitlistOfferStatus, now: Date) throws -> Bool {
        // The close first: whether it closed anything decides whether the rest is written.
        guard let id = offer.id, try tx.closeWaitlistOffer(id: id, as: status, appointmentId: nil, at: now) else { return false }
        let entryStatus = status == .withdrawn ? nil : try tx.waitlistEntry(id: offer.entryId)?.status
        for write in Self.closing(offer, as: status, entryStatus: entryStatus, now: now).dropFirst() {
            try WaitlistDecision<Void>.apply(write, tx, now: now)
        }
        return true
    }

    /// The front desk books a time that an offer holds (issue 55: the desk can always book a
    /// held time): the offer of the doctor's `span` is withdrawn, its patient waits again (that
    /// time is not offered to them again) and is told, in the booking's transaction.
    func withdrawOffers(_ tx: any StoreWriting, holding doctorId: Int64, span: Range<Date>, now: Date) throws {
        for hold in try tx.liveSlotHolds(doctorId: doctorId, overlapping: span, at: now) {
            guard let offer = try tx.openWaitlistOffers(ofClient: hold.clientId).first(where: { $0.holdId == hold.id }),
                  try close(tx, offer, as: .withdrawn, now: now) else { continue }
            if let entry = try tx.waitlistEntry(id: offer.entryId), entry.status == .offered {
                try tx.setWaitlistEntryStatus(id: offer.entryId, to: .waiting, at: now)
            }
            let language = try database.client(tx, id: offer.clientId)?.language ?? .en
            let clinic = try tx.clinic(id: offer.clinicId)
            let when = DateText.dateTimeWithZone(offer.startsAt, timeZone: clinic?.zone ?? .gmt, language: language)
            _ = try Inbox.post(tx, clientId: offer.clientId, kind: .waitlist, subject: Strings.text(.waitlistOfferTakenSubject, language),
                               body: Strings.text(.waitlistOfferTakenBody, language, [when, clinic?.name ?? ""]), clinicId: offer.clinicId,
                               now: now)
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
