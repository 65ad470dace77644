import Foundation

// A patient's changes of their waitlist awaited (issue 56): joining, leaving, resuming an entry
// and declining an offer, each one transaction the caller awaits. The store gathers the facts under
// the locks that keep them true (the entry with its open offers, or the offer with its entry's
// status; for a join the patient's lock, then `WaitlistJoinFacts`), ClinicKit decides on them
// (`WaitlistController`'s pure `joining`, `leaving`, `resuming`, `declining`), and the store
// writes the decision (`WaitlistJoin`, or the `WaitlistWrite`s in order).

/// The awaited waitlist changes a `ClinicStore` offers.
public protocol WaitlistChangesStore: Sendable {
    /// One change of an entry in one transaction: the entry (nil: no such entry) and its open
    /// offers, locked until COMMIT on a store shared by several servers, `decide`, the writes.
    func changeWaitlistEntry<T: Sendable>(id: Int64, decide: @escaping @Sendable (WaitlistEntryState?) throws -> WaitlistDecision<T>)
        async throws -> T
    /// The front desk's waitlist of a clinic in one transaction (a read that writes the audit
    /// trail): `StaffWaitlistFacts` for the clinic and the department asked (nil: all), `decide`
    /// (`StaffController.shownWaitlist`), its audit rows written.
    func staffWaitlist<T: Sendable>(clinicId: Int64, departmentId: Int64?,
                                    decide: @escaping @Sendable (StaffWaitlistFacts) throws -> WaitlistDecision<T>) async throws -> T
    /// One answer to an offer in one transaction: the offer chosen (its link used up first; nil:
    /// no such offer, or no such link unused) locked until COMMIT with its entry's status,
    /// `decide`, the writes.
    func answerWaitlistOffer<T: Sendable>(_ choice: OfferChoice, decide: @escaping @Sendable (WaitlistOfferState?) throws -> WaitlistDecision<T>)
        async throws -> T
    /// An offer's acceptance in one transaction: the offer chosen (its link used up first)
    /// locked until COMMIT with its entry
    /// and, for "an earlier time", the later appointment's change facts (`OfferAcceptanceFacts`;
    /// nil: no such offer); `plan` checks them and says what booking facts the offered time is
    /// decided on; the store gathers those under the booking's locks; `decide` says what to
    /// write (`OfferAcceptance`); the store writes the booking (a new appointment, or the later
    /// one moved), then the offer's own writes. Returns the appointment, its notes opened.
    func acceptWaitlistOffer(_ choice: OfferChoice, plan: @escaping @Sendable (OfferAcceptanceFacts?) throws -> BookingFactsRequest,
                             decide: @escaping @Sendable (OfferAcceptanceFacts, BookingFacts) throws -> OfferAcceptance) async throws -> Appointment
    /// A join in one transaction: the patient's lock (their joins one after the other), then
    /// `WaitlistJoinFacts` for `ask`, `decide`, the entries it ends left and the new one
    /// stored, returned with its id. Refused (`already_waiting`), and nothing written, when the
    /// patient already waits at the department (the store's unique index, whoever wrote the other).
    func joinWaitlist(_ ask: WaitlistJoinAsk, decide: @escaping @Sendable (WaitlistJoinFacts) throws -> WaitlistJoin) async throws -> WaitlistEntry
    /// `joinWaitlist` with the answer to its `Idempotency-Key` kept in the same transaction, as
    /// `ClinicStore.perform(_:keeping:answer:)` keeps a booking's: the kept answer replayed, or
    /// the join made (in a savepoint: a refusal keeps its refusal and nothing of itself) and
    /// its answer kept.
    func joinWaitlist(_ ask: WaitlistJoinAsk, decide: @escaping @Sendable (WaitlistJoinFacts) throws -> WaitlistJoin,
                      keeping request: IdempotentRequest, answer: @escaping IdempotentRequest.Answer<WaitlistEntry>) async throws
        -> IdempotencyStore.Response
}

/// Which offer an answer is to: by its id (a signed-in patient's), or by the one-tap link of a
/// text, which the answer's transaction uses up first (nobody need be signed in: the link is
/// the patient's), so that it works once and a failure uses nothing.
public enum OfferChoice: Sendable, Equatable {
    case id(Int64)
    /// The link's hash (`Texts.linkHash`), used up at `at`.
    case link(hash: String, at: Date)

    /// The refusal when there is no such offer, or no such link unused (alike, whatever the cause).
    public var notFound: ClinicError {
        switch self {
        case .id(let id): ClinicError(.notFound, .waitlistOfferNotFound, String(id))
        case .link: ClinicError(.notFound, .offerLinkInvalid)
        }
    }

    /// The offer's id with the seam's statements, in the caller's write transaction (a link used up).
    package func offerId(_ tx: any StoreWriting) throws -> Int64? {
        switch self {
        case .id(let id): id
        case .link(let hash, let at): try tx.useOfferLink(hash: hash, at: at)
        }
    }
}

/// What a join's facts are gathered for.
public struct WaitlistJoinAsk: Sendable, Equatable {
    public var clientId: Int64
    public var departmentId: Int64
    public var visitTypeId: Int64?
    /// The appointment the patient waits to come before.
    public var appointmentId: Int64?

    public init(clientId: Int64, departmentId: Int64, visitTypeId: Int64?, appointmentId: Int64?) {
        self.clientId = clientId; self.departmentId = departmentId; self.visitTypeId = visitTypeId; self.appointmentId = appointmentId
    }
}

/// Everything a join is decided on, read under the patient's lock.
public struct WaitlistJoinFacts: Sendable, Equatable {
    public var clientExists: Bool
    public var department: Department?
    /// The department's clinic (nil: none, or no department).
    public var clinic: Clinic?
    /// The department's active doctors' ids.
    public var doctorIds: [Int64]
    /// The visit type asked for, whatever department it is of (nil: none asked, or no such type).
    public var visitType: VisitType?
    /// The stored `booking.` settings (`BookingPolicy`).
    public var bookingSettings: [String: String]
    /// The appointment asked to come before, as stored (nil: none asked, or no such appointment).
    public var before: Appointment?
    /// The patient's entries waiting or offered a time, by id, with their facts.
    public var entries: [WaitlistEntryFacts]

    public init(clientExists: Bool, department: Department?, clinic: Clinic?, doctorIds: [Int64], visitType: VisitType?,
                bookingSettings: [String: String], before: Appointment?, entries: [WaitlistEntryFacts]) {
        self.clientExists = clientExists; self.department = department; self.clinic = clinic; self.doctorIds = doctorIds
        self.visitType = visitType; self.bookingSettings = bookingSettings; self.before = before; self.entries = entries
    }

    /// The gather with the seam's reads, in the caller's write transaction: the patient's lock first.
    package static func read(_ tx: any StoreWriting, _ ask: WaitlistJoinAsk) throws -> WaitlistJoinFacts {
        try tx.lockWaitlist(ofClient: ask.clientId)
        let department = try tx.department(id: ask.departmentId)
        return WaitlistJoinFacts(
            clientExists: try tx.clientExists(id: ask.clientId), department: department,
            clinic: try department.flatMap { try tx.clinic(id: $0.clinicId) },
            doctorIds: try tx.activeDoctors(inDepartment: ask.departmentId).compactMap(\.id),
            visitType: try ask.visitTypeId.flatMap { try tx.visitType(id: $0) }, bookingSettings: try tx.settings(prefix: "booking."),
            before: try ask.appointmentId.flatMap { try tx.storedAppointment(id: $0) },
            entries: try tx.activeWaitlistEntries(ofClient: ask.clientId).map { try WaitlistEntryFacts.read(tx, $0) })
    }
}

/// What a join writes: the patient's entries that are over, left; the new entry.
public struct WaitlistJoin: Sendable, Equatable {
    /// Entries that can no longer be offered anything, ended (`left`) before the new one is stored.
    public let ended: [Int64]
    /// The new entry (no id yet); its `createdAt` is the moment written.
    public let entry: WaitlistEntry

    public init(ended: [Int64], entry: WaitlistEntry) {
        self.ended = ended; self.entry = entry
    }

    /// The writes with the seam's, in the caller's transaction, which a refusal rolls back.
    package func apply(_ tx: any StoreWriting) throws -> WaitlistEntry {
        for id in ended { try tx.setWaitlistEntryStatus(id: id, to: .left, at: entry.createdAt) }
        guard let stored = try tx.insertWaitlistEntry(entry) else { throw Self.alreadyWaiting }
        return stored
    }

    /// The refusal of a second entry at a department.
    package static let alreadyWaiting = ClinicError(.alreadyWaiting, .waitlistAlreadyWaiting)
}

/// An entry with its open offers, as a change of it is decided on.
public struct WaitlistEntryState: Sendable, Equatable {
    public let entry: WaitlistEntry
    /// The entry's offers still open (whatever their time), by id.
    public let openOffers: [WaitlistOffer]

    public init(entry: WaitlistEntry, openOffers: [WaitlistOffer]) {
        self.entry = entry; self.openOffers = openOffers
    }

    /// The gather with the seam's reads, in the caller's write transaction: the entry, then its
    /// open offers, each locked (`lockWaitlistOffer`) where the store locks.
    package static func read(_ tx: any StoreWriting, id: Int64) throws -> WaitlistEntryState? {
        guard let entry = try tx.waitlistEntry(id: id) else { return nil }
        let offers = try tx.openWaitlistOffers(ofClient: entry.clientId).filter { $0.entryId == id }
        return WaitlistEntryState(entry: entry, openOffers: try offers.compactMap { offer in
            try offer.id.flatMap { try tx.lockWaitlistOffer(id: $0) }.flatMap { $0.status == .open ? $0 : nil }
        })
    }
}

/// An offer with the status of its entry, as an answer to it is decided on.
public struct WaitlistOfferState: Sendable, Equatable {
    public let offer: WaitlistOffer
    /// Its entry's status (nil: the entry is gone).
    public let entryStatus: WaitlistEntryStatus?

    public init(offer: WaitlistOffer, entryStatus: WaitlistEntryStatus?) {
        self.offer = offer; self.entryStatus = entryStatus
    }

    /// The gather with the seam's reads, in the caller's write transaction: the offer locked.
    package static func read(_ tx: any StoreWriting, _ choice: OfferChoice) throws -> WaitlistOfferState? {
        guard let id = try choice.offerId(tx), let offer = try tx.lockWaitlistOffer(id: id) else { return nil }
        return WaitlistOfferState(offer: offer, entryStatus: try tx.waitlistEntry(id: offer.entryId)?.status)
    }
}

/// What an offer's acceptance is decided on, gathered under the offer's lock.
public struct OfferAcceptanceFacts: Sendable, Equatable {
    public let offer: WaitlistOffer
    /// The offer's entry (nil: gone).
    public let entry: WaitlistEntry?
    /// For an entry waiting for an earlier time than its appointment: that appointment with
    /// what its move is decided on (nil: none asked, or gone).
    public let later: AppointmentChangeFacts?

    public init(offer: WaitlistOffer, entry: WaitlistEntry?, later: AppointmentChangeFacts?) {
        self.offer = offer; self.entry = entry; self.later = later
    }

    /// The gather with the seam's reads, in the caller's write transaction: the offer locked.
    package static func read(_ tx: any StoreWriting, _ choice: OfferChoice) throws -> OfferAcceptanceFacts? {
        guard let id = try choice.offerId(tx), let offer = try tx.lockWaitlistOffer(id: id) else { return nil }
        let entry = try tx.waitlistEntry(id: offer.entryId)
        return OfferAcceptanceFacts(offer: offer, entry: entry,
                                    later: try entry?.beforeAppointmentId.flatMap { try tx.appointmentChangeFacts(id: $0) })
    }
}

/// What an offer's acceptance writes: the booking (`moves`: the later appointment moved to the
/// offered time; else a new appointment), then the offer accepted with its appointment, its
/// hold deleted and its entry booked (`writes(appointmentId:)`).
public struct OfferAcceptance: Sendable, Equatable {
    public let booking: BookingDecision
    public let moves: Bool
    public let offer: WaitlistOffer
    public let now: Date

    public init(booking: BookingDecision, moves: Bool, offer: WaitlistOffer, now: Date) {
        self.booking = booking; self.moves = moves; self.offer = offer; self.now = now
    }

    /// The offer's writes once the booking is written as `appointmentId`: its hold deleted (the
    /// booking stood in its place), the offer accepted (none closed, as when another answer
    /// came first, refuses the whole), its entry booked.
    public func writes(appointmentId: Int64?) -> [WaitlistWrite] {
        guard let id = offer.id else { return [] }
        return (offer.holdId.map { [WaitlistWrite.deleteHold(id: $0)] } ?? [])
            + [.closeOffer(id: id, status: .accepted, appointmentId: appointmentId), .setEntryStatus(id: offer.entryId, status: .booked)]
    }

    /// The whole acceptance in the caller's write transaction (a store whose transactions run
    /// synchronously): gather, plan, the booking's facts, decide, write.
    package static func run(_ tx: any StoreWriting, _ choice: OfferChoice, plan: (OfferAcceptanceFacts?) throws -> BookingFactsRequest,
                            decide: (OfferAcceptanceFacts, BookingFacts) throws -> OfferAcceptance) throws -> Appointment {
        let found = try OfferAcceptanceFacts.read(tx, choice)
        let ask = try plan(found)
        guard let facts = found else { throw choice.notFound }
        let booking = try tx.bookingFacts(ask)
        let acceptance = try decide(facts, booking)
        let appointment: Appointment
        if acceptance.moves {
            let decision = acceptance.booking
            let messageId = try tx.changeAppointment(decision.appointment, event: decision.event, message: decision.message)
            try decision.writeFollowing(tx, messageId: messageId)
            appointment = try AppointmentNotes.opened(decision.appointment, tx, keyCheck: facts.later?.personalDataKeyCheck)
        } else {
            appointment = try acceptance.booking.write(tx, facts: booking)
        }
        for write in acceptance.writes(appointmentId: appointment.id) { try WaitlistDecision<Void>.apply(write, tx, now: acceptance.now) }
        return appointment
    }
}

/// One write of a waitlist change, as plain data: what the store runs, in order.
public enum WaitlistWrite: Sendable, Equatable {
    /// The offer closed (`closeWaitlistOffer`): only an open one is; none closed refuses the change.
    case closeOffer(id: Int64, status: WaitlistOfferStatus, appointmentId: Int64?)
    case deleteHold(id: Int64)
    /// One more unanswered offer, and to the back of the line (`recordWaitlistLapse`).
    case recordLapse(entryId: Int64)
    case setEntryStatus(id: Int64, status: WaitlistEntryStatus)
    /// No lapses, to the back of the line (`resumeWaitlistEntry`).
    case resumeEntry(id: Int64)
    /// The time free again, for the next in line (`queueFreedTime`).
    case queueFreedTime(departmentId: Int64, doctorId: Int64, span: Range<Date>)
    /// The order in which times are offered (`setWaitlistEntryPriority`).
    case setPriority(id: Int64, priority: Int)
    /// The front desk's note, checked (empty: none); the store seals it under the personal-data
    /// key to its entry (`StaffController.noteContext`) and stores it (`setWaitlistNote`).
    case setNote(entryId: Int64, note: String)
}

/// What a waitlist change writes, and what its caller is answered.
public struct WaitlistDecision<Result: Sendable>: Sendable {
    public let writes: [WaitlistWrite]
    /// The moment written as the rows' `updated_at`, `closed_at`, `queued_at`.
    public let now: Date
    public let result: Result
    /// The audit trail's rows, for a change the staff make (written after the writes, in order).
    public let audits: [AuditAsk]

    public init(writes: [WaitlistWrite], now: Date, result: Result, audits: [AuditAsk] = []) {
        self.writes = writes; self.now = now; self.result = result; self.audits = audits
    }

    /// The writes with the seam's, in the caller's transaction, then the audit row. An offer
    /// that was no longer open refuses the change (`waitlist_offer_closed`): the caller's
    /// transaction rolls back.
    package func apply(_ tx: any StoreWriting) throws {
        for write in writes { try Self.apply(write, tx, now: now) }
        for audit in audits { try AuditLog.append(tx, audit) }
    }

    package static func apply(_ write: WaitlistWrite, _ tx: any StoreWriting, now: Date) throws {
        switch write {
        case let .closeOffer(id, status, appointmentId):
            guard try tx.closeWaitlistOffer(id: id, as: status, appointmentId: appointmentId, at: now) else {
                throw ClinicError(.invalidTransition, .waitlistOfferClosed, status.rawValue)
            }
        case let .deleteHold(id): try tx.deleteSlotHold(id: id)
        case let .recordLapse(entryId): try tx.recordWaitlistLapse(entryId: entryId, at: now)
        case let .setEntryStatus(id, status): try tx.setWaitlistEntryStatus(id: id, to: status, at: now)
        case let .resumeEntry(id): try tx.resumeWaitlistEntry(id: id, at: now)
        case let .queueFreedTime(departmentId, doctorId, span):
            try tx.queueFreedTime(departmentId: departmentId, doctorId: doctorId, span: span, at: now)
        case let .setPriority(id, priority): try tx.setWaitlistEntryPriority(id: id, to: priority, at: now)
        case let .setNote(entryId, note):
            try tx.setWaitlistNote(entryId: entryId, sealed: note.isEmpty ? nil : try StaffController.sealedNote(
                note, entryId: entryId, cipher: try AppointmentNotes.sealingCipher(tx)))
        }
    }
}
