import Foundation

// Holds (FHIR's Appointment/$hold, IHE ITI-116): a patient keeps a free slot for a few minutes
// (`booking.hold_seconds`, 300 unless set) while finishing a booking; nobody else can book or
// hold it meanwhile (`chooseDoctor` and `slots` count a live hold as taken), and it is free
// again when the hold expires, with nothing to clean up (every read compares with the clock).

extension AppointmentController {
    /// Holds the slot of `doctorId` in a department starting at `start` for the patient, under
    /// the booking's own rules (hours, lead time, horizon, a free slot, the patient's overlap
    /// and limit), so that booking the hold can only fail if those changed. A patient has one
    /// hold at a time: holding another slot releases the earlier hold (a failed hold keeps it).
    /// Holding the same time again keeps the first hold's expiry, and other patients may hold
    /// at most `booking.holds_per_doctor_day` of the doctor's times of that day (issue 42: free
    /// accounts held a whole day, renewing their holds, so it never came free).
    public func holdSlot(clientId: Int64, departmentId: Int64, doctorId: Int64, at start: Date,
                         visitTypeId: Int64? = nil) throws -> SlotHold {
        let (ask, decide) = holding(clientId: clientId, departmentId: departmentId, doctorId: doctorId, at: start,
                                    visitTypeId: visitTypeId)
        return try changes.count("hold") { try database.writing { tx in try BookingDecision.hold(tx, ask, decide: decide) } }
    }

    /// `holdSlot` as the store's one awaited operation (issue 56: `ClinicStore.hold`).
    public func hold(clientId: Int64, departmentId: Int64, doctorId: Int64, at start: Date,
                     visitTypeId: Int64? = nil) async throws -> SlotHold {
        let (ask, decide) = holding(clientId: clientId, departmentId: departmentId, doctorId: doctorId, at: start,
                                    visitTypeId: visitTypeId)
        return try await changes.count("hold") { try await database.hold(ask, decide: decide) }
    }

    /// `hold` with the answer to its `Idempotency-Key` kept in the same transaction; its
    /// outcome counted when it is made, not when a kept answer is replayed.
    public func hold(clientId: Int64, departmentId: Int64, doctorId: Int64, at start: Date, visitTypeId: Int64? = nil,
                     keeping: AnswerKeeping<SlotHold>) async throws -> IdempotencyStore.Response {
        let (ask, decide) = holding(clientId: clientId, departmentId: departmentId, doctorId: doctorId, at: start,
                                    visitTypeId: visitTypeId)
        let changes = self.changes
        return try await keeping.store.hold(ask, decide: decide, clientId: clientId, key: keeping.key,
                                            fingerprint: keeping.fingerprint) { outcome in
            changes.tell("hold", outcome)
            return try keeping.answer(outcome)
        }
    }

    /// A hold as the store runs it: the patient's holds (one may be of this very time) and
    /// every expired one are released first (a patient has one hold, and their own does not
    /// stand in the way of the new one); `BookingRules.hold` decides on the facts.
    func holding(clientId: Int64, departmentId: Int64, doctorId: Int64, at start: Date,
                 visitTypeId: Int64?) -> (BookingFactsRequest, @Sendable (HoldFacts) throws -> SlotHold) {
        let now = self.now()
        let ask = Self.factsRequest(clientId: clientId, departmentId: departmentId, visitTypeId: visitTypeId, onlyDoctorId: doctorId,
                                    at: .instant(start), exceptAppointment: nil, exceptHold: nil, now: now)
        return (ask, { facts in
            try BookingRules.hold(facts, clientId: clientId, departmentId: departmentId, doctorId: doctorId, start: start,
                                  visitTypeId: visitTypeId, now: now)
        })
    }

    /// The patient's own hold, live or expired (another patient's is `not_found`, as one that
    /// does not exist).
    public func slotHold(_ id: Int64, clientId: Int64) throws -> SlotHold {
        try database.reading { tx in try owned(hold: id, tx, clientId) }
    }

    /// `slotHold` awaited.
    public func slotHold(_ id: Int64, clientId: Int64) async throws -> SlotHold {
        try Self.owned(try await database.slotHold(id: id), id: id, clientId: clientId)
    }

    /// Lets a held slot go before its time (the patient's own hold).
    public func releaseHold(_ id: Int64, clientId: Int64) throws {
        try database.writing { tx in
            _ = try owned(hold: id, tx, clientId)
            try tx.deleteSlotHold(id: id)
        }
    }

    /// Books the patient's hold: its department, doctor, start and visit type, with every rule
    /// of a booking checked again, in one transaction that ends the hold. An expired hold still
    /// books while nobody else took the slot.
    public func bookHold(_ id: Int64, clientId: Int64, notes: String = "") throws -> Appointment {
        let change = try holdBooking(id, clientId: clientId, notes: notes)
        return try changes.count("book") { try database.writing { tx in try change.run(tx) } }
    }

    /// `bookHold` as the store's one awaited operation (issue 56: `ClinicStore.bookHold`).
    public func book(hold id: Int64, clientId: Int64, notes: String = "") async throws -> Appointment {
        let change = try holdBooking(id, clientId: clientId, notes: notes)
        return try await changes.count("book") { try await database.run(change) }
    }

    /// `book(hold:)` with the answer to its `Idempotency-Key` kept in the same transaction.
    public func book(hold id: Int64, clientId: Int64, notes: String = "",
                     keeping: AnswerKeeping<Appointment>) async throws -> IdempotencyStore.Response {
        try await perform("book", try holdBooking(id, clientId: clientId, notes: notes), clientId: clientId, keeping: keeping)
    }

    /// A hold's booking as the store runs it: the hold must be the patient's (another's is
    /// `hold_not_found`, as one that does not exist); its time is decided as a booking's, with
    /// the hold itself out of the way.
    func holdBooking(_ id: Int64, clientId: Int64, notes: String) throws -> AwaitedChange {
        let notes = try Self.checkedNotes(notes)
        let now = self.now()
        return .bookHold(id: id, plan: { hold in
            let hold = try Self.owned(hold, id: id, clientId: clientId)
            return Self.factsRequest(clientId: clientId, departmentId: hold.departmentId, visitTypeId: hold.visitTypeId,
                                     onlyDoctorId: hold.doctorId, at: .instant(hold.startsAt), exceptAppointment: nil,
                                     exceptHold: id, now: now)
        }, decide: { hold, facts in
            try BookingRules.book(facts, BookingAsk(clientId: clientId, departmentId: hold.departmentId, time: .instant(hold.startsAt),
                                                    doctorId: hold.doctorId, notes: notes, staffId: nil,
                                                    visitTypeId: hold.visitTypeId), now: now)
        })
    }

    static func owned(_ hold: SlotHold?, id: Int64, clientId: Int64) throws -> SlotHold {
        guard let hold, hold.clientId == clientId else { throw ClinicError(.notFound, .holdNotFound, String(id)) }
        return hold
    }

    func owned(hold id: Int64, _ tx: any StoreReading, _ clientId: Int64) throws -> SlotHold {
        try Self.owned(try tx.slotHold(id: id), id: id, clientId: clientId)
    }
}
