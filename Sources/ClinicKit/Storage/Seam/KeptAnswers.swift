import Foundation

// A patient's change with an `Idempotency-Key`, as one awaited transaction (issue 56): the
// store finds the answer kept for the key or runs the change and keeps its answer, in the
// change's own transaction, so that a retry finds both or neither.

/// One of the patient's changes a store runs as one awaited transaction: what
/// `ClinicStore.book`, `changeAppointment`, `moveAppointment` and `acceptWaitlistOffer` take, as one value, for
/// `ClinicStore.perform(_:keeping:answer:)`.
public enum AwaitedChange: Sendable {
    case book(BookingFactsRequest, decide: @Sendable (BookingFacts) throws -> BookingDecision)
    case change(id: Int64, decide: @Sendable (AppointmentChangeFacts?) throws -> BookingDecision?)
    case move(id: Int64, plan: @Sendable (AppointmentChangeFacts?) throws -> BookingFactsRequest,
              decide: @Sendable (AppointmentChangeFacts, BookingFacts) throws -> BookingDecision?)
    case acceptOffer(OfferChoice, plan: @Sendable (OfferAcceptanceFacts?) throws -> BookingFactsRequest,
                     decide: @Sendable (OfferAcceptanceFacts, BookingFacts) throws -> OfferAcceptance)
    /// A patient's hold booked (`ClinicStore.bookHold`).
    case bookHold(id: Int64, plan: @Sendable (SlotHold?) throws -> BookingFactsRequest,
                  decide: @Sendable (SlotHold, BookingFacts) throws -> BookingDecision)

    /// The change in the caller's write transaction (a store whose transactions run
    /// synchronously): gather, decide, write.
    package func run(_ tx: any StoreWriting) throws -> Appointment {
        switch self {
        case .book(let ask, let decide): try BookingDecision.book(tx, ask, decide: decide)
        case .change(let id, let decide): try BookingDecision.change(tx, id: id, decide: decide)
        case .move(let id, let plan, let decide): try BookingDecision.move(tx, id: id, plan: plan, decide: decide)
        case .acceptOffer(let choice, let plan, let decide): try OfferAcceptance.run(tx, choice, plan: plan, decide: decide)
        case .bookHold(let id, let plan, let decide): try BookingDecision.bookHold(tx, id: id, plan: plan, decide: decide)
        }
    }
}

/// What the answer to an `Idempotency-Key` is kept under, and when (`IdempotencyStore.request`).
public struct IdempotentRequest: Sendable {
    public let clientId: Int64
    public let key: String
    /// `IdempotencyStore.fingerprint` of the request (method, route, body).
    public let fingerprint: String
    public let now: Date
    /// Keys kept before this are forgotten first; nil when no purge is due.
    public let forgetBefore: Date?

    /// The answer to a change's outcome that is kept: the appointment's, or a refusal's. Nil
    /// for a failure whose answer a retry may change (`busy`, a storage failure): nothing is
    /// kept, the error is thrown and the transaction rolls back.
    public typealias Answer<Value> = @Sendable (Result<Value, ClinicError>) throws -> IdempotencyStore.Response?

    /// A kept answer, replayed: the same request (`idempotency_key_reused` for another), its
    /// body opened (`cipher`: the store's, for a body sealed).
    package func replay(_ kept: KeptResponse, cipher: () throws -> FieldCipher) throws -> IdempotencyStore.Response {
        guard kept.fingerprint == fingerprint else { throw ClinicError(.idempotencyKeyReused, .idempotencyKeyOtherRequest) }
        let body = IdempotencyStore.isSealed(kept.body)
            ? try cipher().open(bytes: Data(kept.body.dropFirst()), context: IdempotencyStore.context(clientId, key)) : kept.body
        return IdempotencyStore.Response(status: kept.status, body: body, replayed: true)
    }

    /// An answer as it is kept: sealed under the personal-data key, bound to its patient and key.
    package func kept(_ response: IdempotencyStore.Response, cipher: FieldCipher) throws -> KeptResponse {
        let sealed = IdempotencyStore.sealMark + (try cipher.seal(bytes: response.body, context: IdempotencyStore.context(clientId, key)))
        return KeptResponse(fingerprint: fingerprint, status: response.status, body: sealed)
    }

    /// The answer to keep for an outcome: `answer`'s, or the failure thrown when it keeps none.
    package static func answer<Value>(_ outcome: Result<Value, any Error>, _ answer: Answer<Value>) throws -> IdempotencyStore.Response {
        switch outcome {
        case .success(let value):
            guard let response = try answer(.success(value)) else {
                throw ClinicError(.internalError, .internalError, "an answer to keep for a change made")
            }
            return response
        case .failure(let error as ClinicError):
            guard let response = try answer(.failure(error)) else { throw error }
            return response
        case .failure(let error):
            throw error
        }
    }

    /// The whole in the caller's write transaction, whose writes made by `work` join it in a
    /// savepoint of their own (`ClinicStore.writingJoined`): the kept answer, or `work`'s kept.
    package func keep(_ tx: any StoreWriting, store: any ClinicStore,
                      _ work: () throws -> IdempotencyStore.Response) throws -> IdempotencyStore.Response {
        if let before = forgetBefore { try tx.forgetIdempotentResponses(createdBefore: before) }
        if let kept = try tx.idempotentResponse(ofClient: clientId, key: key) {
            return try replay(kept) { try store.cipher(tx) }
        }
        let response = try work()
        try tx.keepIdempotentResponse(ofClient: clientId, key: key, try kept(response, cipher: try store.sealingCipher(tx)), at: now)
        return response
    }
}

/// How a front keeps the answer to a patient's change with an `Idempotency-Key`: the process's
/// `IdempotencyStore`, the key, the request's fingerprint and the answer to the outcome (the
/// change's `Value`: an appointment, a waitlist entry).
public struct AnswerKeeping<Value: Sendable>: Sendable {
    public let store: IdempotencyStore
    public let key: String
    public let fingerprint: String
    public let answer: IdempotentRequest.Answer<Value>

    public init(store: IdempotencyStore, key: String, fingerprint: String, answer: @escaping IdempotentRequest.Answer<Value>) {
        self.store = store; self.key = key; self.fingerprint = fingerprint; self.answer = answer
    }
}

extension ClinicStore {
    /// A change in a transaction of its own (`book`, `changeAppointment`, `moveAppointment`).
    package func run(_ change: AwaitedChange) async throws -> Appointment {
        switch change {
        case .book(let ask, let decide): try await book(ask, decide: decide)
        case .change(let id, let decide): try await changeAppointment(id: id, decide: decide)
        case .move(let id, let plan, let decide): try await moveAppointment(id: id, plan: plan, decide: decide)
        case .acceptOffer(let choice, let plan, let decide): try await acceptWaitlistOffer(choice, plan: plan, decide: decide)
        case .bookHold(let id, let plan, let decide): try await bookHold(id: id, plan: plan, decide: decide)
        }
    }
}
