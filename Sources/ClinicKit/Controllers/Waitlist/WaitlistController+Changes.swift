import Foundation

// A patient's changes of their waitlist (issue 56): leaving, resuming an entry, declining an
// offer. Each is decided by a pure function of the facts the store gathered under its locks
// (`WaitlistEntryState`, `WaitlistOfferState`), which says what to write (`WaitlistWrite`); the
// seam's path (the CLI's) and the awaited one (`WaitlistChangesStore`) run the same decision.

extension WaitlistController {
    /// What closing an open offer as `status` writes: the offer closed, its hold deleted; a
    /// lapse counted (to the back of the line, paused after `lapsesToPause`, issue 55, so that
    /// silent accounts do not hold each freed time in turn); the entry waiting again unless the
    /// offer was withdrawn; the time queued for the next in line unless it has begun.
    /// `entryStatus`: the entry's status before (nil: gone).
    public static func closing(_ offer: WaitlistOffer, as status: WaitlistOfferStatus, entryStatus: WaitlistEntryStatus?,
                               now: Date) -> [WaitlistWrite] {
        guard let id = offer.id else { return [] }
        var writes: [WaitlistWrite] = [.closeOffer(id: id, status: status, appointmentId: nil)]
        if let hold = offer.holdId { writes.append(.deleteHold(id: hold)) }
        if status == .lapsed { writes.append(.recordLapse(entryId: offer.entryId)) }
        if status != .withdrawn, entryStatus == .offered { writes.append(.setEntryStatus(id: offer.entryId, status: .waiting)) }
        if offer.startsAt > now {
            writes.append(.queueFreedTime(departmentId: offer.departmentId, doctorId: offer.doctorId, span: offer.startsAt..<offer.endsAt))
        }
        return writes
    }

    /// The patient's entry that is still waiting (or offered a time); `waitlist_entry_not_found`
    /// for one that is not, or not theirs.
    static func ownEntry(_ state: WaitlistEntryState?, id: Int64, clientId: Int64) throws -> WaitlistEntryState {
        guard let state, state.entry.clientId == clientId, state.entry.status == .waiting || state.entry.status == .offered else {
            throw ClinicError(.notFound, .waitlistEntryNotFound, String(id))
        }
        return state
    }

    /// Leaving: the entry's open offers withdrawn (their times go to the next in line), the entry left.
    public static func leaving(_ state: WaitlistEntryState?, id: Int64, clientId: Int64, now: Date) throws -> WaitlistDecision<Void> {
        let state = try ownEntry(state, id: id, clientId: clientId)
        let withdrawn = state.openOffers.flatMap { closing($0, as: .withdrawn, entryStatus: state.entry.status, now: now) }
        return WaitlistDecision(writes: withdrawn + [.setEntryStatus(id: id, status: .left)], now: now, result: ())
    }

    /// Resuming (issue 55): the entry back in line, at its back, its lapses forgotten; answered
    /// as it is then.
    public static func resuming(_ state: WaitlistEntryState?, id: Int64, clientId: Int64, now: Date) throws -> WaitlistDecision<WaitlistEntry> {
        var entry = try ownEntry(state, id: id, clientId: clientId).entry
        entry.lapses = 0
        entry.updatedAt = now
        return WaitlistDecision(writes: [.resumeEntry(id: id)], now: now, result: entry)
    }

    /// Declining the patient's open offer: closed, its time to the next in line, the entry
    /// waiting again (that time is not offered to it again). `waitlist_offer_not_found` for an
    /// offer not theirs; `invalid_transition` for one no longer open.
    public static func declining(_ state: WaitlistOfferState?, id: Int64, clientId: Int64, now: Date) throws -> WaitlistDecision<Void> {
        let offer = try owned(state?.offer, id, clientId)
        guard offer.status == .open else { throw ClinicError(.invalidTransition, .waitlistOfferClosed, offer.status.rawValue) }
        return WaitlistDecision(writes: closing(offer, as: .declined, entryStatus: state?.entryStatus, now: now), now: now, result: ())
    }

    /// What accepting the patient's offer books, checked on its facts: the offer theirs
    /// (`waitlist_offer_not_found`), open (`invalid_transition`) and within its time
    /// (`too_late`), its entry there; for "an earlier time", the later appointment still
    /// active, theirs and later than the offer (the store withdraws such an offer when it ends
    /// or moves earlier; checked again: never a new visit, never a move later). The booking's
    /// facts are asked for the offered start with the offered doctor, the offer's hold not in
    /// the way (nor, for a move, the appointment moved).
    public static func acceptancePlan(_ facts: OfferAcceptanceFacts?, id: Int64, clientId: Int64, now: Date) throws -> BookingFactsRequest {
        let offer = try owned(facts?.offer, id, clientId)
        guard offer.status == .open else { throw ClinicError(.invalidTransition, .waitlistOfferClosed, offer.status.rawValue) }
        guard offer.expiresAt > now else { throw ClinicError(.tooLate, .waitlistOfferLapsed) }
        guard let entry = facts?.entry else { throw ClinicError(.notFound, .waitlistEntryNotFound, String(offer.entryId)) }
        var moved: Appointment?
        if entry.beforeAppointmentId != nil {
            guard let later = facts?.later?.appointment, later.status.isActive, later.clientId == clientId,
                  offer.startsAt < later.startsAt else {
                throw ClinicError(.invalidTransition, .waitlistOfferClosed, WaitlistOfferStatus.withdrawn.rawValue)
            }
            moved = later
        }
        return AppointmentController.factsRequest(
            clientId: clientId, departmentId: moved?.departmentId ?? offer.departmentId,
            visitTypeId: moved == nil ? entry.visitTypeId : moved?.visitTypeId, onlyDoctorId: offer.doctorId, at: .instant(offer.startsAt),
            exceptAppointment: moved?.id, exceptHold: offer.holdId, now: now)
    }

    /// The acceptance decided on the booking's facts, every booking rule applying (a time
    /// meanwhile booked by staff, an overlap, the limit refuse it): the later appointment moved
    /// to the offered time (`BookingRules.move`), or a new one booked (`BookingRules.book`).
    public static func accepting(_ facts: OfferAcceptanceFacts, _ booking: BookingFacts, clientId: Int64,
                                 now: Date) throws -> OfferAcceptance {
        let offer = facts.offer, time = TimeInput.Parsed.instant(offer.startsAt)
        if facts.entry?.beforeAppointmentId != nil, let later = facts.later {
            guard let decision = try BookingRules.move(booking, MoveAsk(appointment: later.appointment, time: time, doctorId: offer.doctorId),
                                                       policy: BookingPolicy(settings: later.bookingSettings), now: now) else {
                throw ClinicError(.invalidTransition, .waitlistOfferClosed, WaitlistOfferStatus.withdrawn.rawValue)
            }
            return OfferAcceptance(booking: decision, moves: true, offer: offer, now: now)
        }
        let ask = BookingAsk(clientId: clientId, departmentId: offer.departmentId, time: time, doctorId: offer.doctorId, notes: "",
                             staffId: nil, visitTypeId: facts.entry?.visitTypeId)
        return OfferAcceptance(booking: try BookingRules.book(booking, ask, now: now), moves: false, offer: offer, now: now)
    }

    /// An acceptance as the store runs it: of the patient's offer by id; by a link, of the
    /// offer it was made for, as its patient (nil `clientId`).
    static func acceptance(_ choice: OfferChoice, clientId: Int64?, now: Date) -> AwaitedChange {
        .acceptOffer(choice, plan: { facts in
            guard let facts else { throw choice.notFound }
            return try acceptancePlan(facts, id: facts.offer.id ?? 0, clientId: clientId ?? facts.offer.clientId, now: now)
        }, decide: { facts, booking in try accepting(facts, booking, clientId: clientId ?? facts.offer.clientId, now: now) })
    }

    /// `accept` awaited: one transaction of the store (`acceptWaitlistOffer`).
    public func accept(_ id: Int64, clientId: Int64) async throws -> Appointment {
        let change = Self.acceptance(.id(id), clientId: clientId, now: now())
        return try await appointments.changes.count("book") { try await database.run(change) }
    }

    /// `accept` with the answer to its `Idempotency-Key` kept in the same transaction; the
    /// outcome counted when it is made, not when a kept answer is replayed.
    public func accept(_ id: Int64, clientId: Int64, keeping: AnswerKeeping<Appointment>) async throws -> IdempotencyStore.Response {
        let changes = appointments.changes
        return try await keeping.store.perform(Self.acceptance(.id(id), clientId: clientId, now: now()), clientId: clientId, key: keeping.key,
                                               fingerprint: keeping.fingerprint) { outcome in
            changes.tell("book", outcome)
            return try keeping.answer(outcome)
        }
    }

    /// `leave` awaited: one transaction of the store (`changeWaitlistEntry`).
    public func leave(_ id: Int64, clientId: Int64) async throws {
        let now = self.now()
        try await database.changeWaitlistEntry(id: id) { try Self.leaving($0, id: id, clientId: clientId, now: now) }
    }

    /// `resume` awaited.
    public func resume(_ id: Int64, clientId: Int64) async throws -> WaitlistEntry {
        let now = self.now()
        return try await database.changeWaitlistEntry(id: id) { try Self.resuming($0, id: id, clientId: clientId, now: now) }
    }

    /// `decline` awaited: one transaction of the store (`answerWaitlistOffer`).
    public func decline(_ id: Int64, clientId: Int64) async throws {
        let now = self.now()
        try await database.answerWaitlistOffer(.id(id)) { try Self.declining($0, id: id, clientId: clientId, now: now) }
    }

    /// Accepts (or declines) the offer through its link, for the patient it was made to: the
    /// link used up, then the offer accepted or declined, in one transaction of the store, so
    /// that it works once (a failure uses nothing). Answered with the offer's patient, time and
    /// clinic, and the appointment booked (nil: declined).
    public func answer(link token: String, accept: Bool) async throws
        -> (clientId: Int64, startsAt: Date, clinicId: Int64, appointment: Appointment?) {
        guard Texts.isLinkToken(token) else { throw ClinicError(.notFound, .offerLinkInvalid) }
        let now = self.now(), choice = OfferChoice.link(hash: Texts.linkHash(token), at: now)
        if accept {
            let change = Self.acceptance(choice, clientId: nil, now: now)
            let booked = try await appointments.changes.count("book") { try await database.run(change) }
            return (booked.clientId ?? 0, booked.startsAt, booked.clinicId, booked)
        }
        let offer = try await database.answerWaitlistOffer(choice) { state in
            guard let offer = state?.offer else { throw choice.notFound }
            let declining = try Self.declining(state, id: offer.id ?? 0, clientId: offer.clientId, now: now)
            return WaitlistDecision(writes: declining.writes, now: now, result: offer)
        }
        return (offer.clientId, offer.startsAt, offer.clinicId, nil)
    }
}
