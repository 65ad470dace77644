import ClinicKit
import Foundation
import Logging
import PostgresNIO

// The use cases as awaited transactions (issue 56): a connection is leased from the pool by the
// calling task, and each statement is sent and awaited on it, as hummingbird-examples'
// `todos-postgres-tutorial` does: no thread waits for PostgreSQL. The statements are the
// booking's own (PostgresHotStatements.swift), shared with the seam's transactions; the
// decision between the gather and the write is ClinicKit's (`BookingRules`).

/// A connection in an awaited transaction: statements sent and awaited, rows in SQLite's form
/// (`PostgresTransaction.row`), as `PostgresTransaction` reads them.
struct AwaitedConnection {
    let connection: PostgresConnection
    let logger: Logger
    /// The store's count of statements sent (`PostgresStore.statementsSent`).
    let sent: LockedBox<Int>

    /// A hot statement's rows, prepared once per connection. A failure that may have been the
    /// preparation's closes the connection, as `BlockingConnection.prepared` does: postgres-nio
    /// would remember it as failed for the connection's life.
    func rows<Statement: HotStatement & Sendable>(_ statement: Statement) async throws -> [PostgresRow] {
        sent.withLock { $0 += 1 }
        let connection = self.connection, logger = self.logger
        do {
            return try await ClosedConnectionGuard.run(connection) {
                var rows: [PostgresRow] = []
                for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
                return rows
            }
        } catch {
            if BlockingConnection.mayHaveFailedToPrepare(error) { try? await connection.close() }
            throw error
        }
    }

    /// A statement's rows.
    func rows(_ sql: String, _ binds: [any PostgresBindable]) async throws -> [PostgresRow] {
        sent.withLock { $0 += 1 }
        let connection = self.connection, logger = self.logger, query = PostgresTransaction.query(sql, binds)
        return try await ClosedConnectionGuard.run(connection) {
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// The first column of the first row (nil for no row or NULL).
    func value<T: StoredCellValue>(_ type: T.Type, _ rows: [PostgresRow]) throws -> T? {
        guard let row = rows.first else { return nil }
        return try PostgresTransaction.first(row, as: T.self)
    }
}

extension PostgresStore {
    /// A booking in four awaited round trips and COMMIT, the same as the seam's: BEGIN, the
    /// locks with the new appointment's id, the gather, the decision, the one write.
    public func book(_ ask: BookingFactsRequest, decide: @escaping @Sendable (BookingFacts) throws -> BookingDecision) async throws -> Appointment {
        try await run(.book(ask, decide: decide))
    }

    /// A change of one appointment's status in three awaited round trips and COMMIT: BEGIN,
    /// the appointment with what its change is decided on, the decision, the one write.
    public func changeAppointment(id: Int64, decide: @escaping @Sendable (AppointmentChangeFacts?) throws -> BookingDecision?) async throws -> Appointment {
        try await run(.change(id: id, decide: decide))
    }

    /// A patient's move in five awaited round trips and COMMIT: BEGIN, the appointment with
    /// what its change is decided on, the booking's locks (no id) and gather for the new time,
    /// the decision, the one write.
    public func moveAppointment(id: Int64, plan: @escaping @Sendable (AppointmentChangeFacts?) throws -> BookingFactsRequest,
                                decide: @escaping @Sendable (AppointmentChangeFacts, BookingFacts) throws -> BookingDecision?) async throws -> Appointment {
        try await run(.move(id: id, plan: plan, decide: decide))
    }

    /// A hold booked in five awaited round trips and COMMIT: BEGIN, the hold, the booking's
    /// locks with the new id and its gather, the one write, the hold deleted. The hold is read
    /// as the seam reads it, unlocked: a second booking of it waits on the booking's own locks
    /// and then finds the first's appointment in its way.
    public func bookHold(id: Int64, plan: @escaping @Sendable (SlotHold?) throws -> BookingFactsRequest,
                         decide: @escaping @Sendable (SlotHold, BookingFacts) throws -> BookingDecision) async throws -> Appointment {
        try await run(.bookHold(id: id, plan: plan, decide: decide))
    }

    /// A hold in four awaited round trips and COMMIT: BEGIN, the booking's locks, the holds
    /// released, the gather, the insert.
    public func hold(_ ask: BookingFactsRequest, decide: @escaping @Sendable (HoldFacts) throws -> SlotHold) async throws -> SlotHold {
        let sent = statementsSent
        return try await transaction { connection, logger in
            try await Self.hold(ask, decide: decide, AwaitedConnection(connection: connection, logger: logger, sent: sent))
        }
    }

    /// `hold` with its answer kept in the same transaction (`keeping`).
    public func hold(_ ask: BookingFactsRequest, decide: @escaping @Sendable (HoldFacts) throws -> SlotHold,
                     keeping request: IdempotentRequest, answer: @escaping IdempotentRequest.Answer<SlotHold>) async throws
        -> IdempotencyStore.Response {
        try await keeping(request, answer) { tx in (try await Self.hold(ask, decide: decide, tx), false) }
    }

    /// The hold's statements: the same as the seam's `holdFacts` and `insertSlotHold`.
    static func hold(_ ask: BookingFactsRequest, decide: @Sendable (HoldFacts) throws -> SlotHold,
                     _ tx: AwaitedConnection) async throws -> SlotHold {
        var ask = ask
        ask.holds = true
        _ = try await tx.rows(BookingLocksStatement(PostgresTransaction.bookingLocksBinds(ask, reservingId: false)))
        let released = try await tx.rows(ReleaseHoldsStatement([ask.clientId, ask.now])).map { try SlotHold(row: try PostgresTransaction.row($0)) }
        let facts = HoldFacts(facts: try await gather(ask, appointmentId: nil, tx), released: HoldFacts.reported(released, ask))
        var hold = try decide(facts)
        guard let id = try tx.value(Int64.self, try await tx.rows(InsertHoldStatement(PostgresTransaction.insertHoldBinds(hold)))) else {
            throw ClinicError(.slotTaken, .slotTaken)
        }
        hold.id = id
        return hold
    }

    /// A change in a transaction of its own.
    func run(_ change: AwaitedChange) async throws -> Appointment {
        let sent = statementsSent, key = personalDataKey, ring = auditKeys
        let done = try await transaction { connection, logger in
            try await Self.run(change, AwaitedConnection(connection: connection, logger: logger, sent: sent), key: key, ring: ring)
        }
        // A key check stored by this booking: the sessions this store keeps were read without it.
        if done.storedKeyCheck { keptLookups.forgetSessions() }
        return done.appointment
    }

    /// A change with its answer kept, in one transaction: BEGIN, the purge when due, the
    /// (patient, key) pair's advisory lock (a second copy of the request waits here, then finds
    /// what the first kept), the kept answer with the key check, then either the replay or a
    /// savepoint, the change and the answer kept; COMMIT. A change refused keeps its refusal:
    /// the savepoint is rolled back to first (a refusal by a constraint ends PostgreSQL's
    /// transaction otherwise).
    public func perform(_ change: AwaitedChange, keeping request: IdempotentRequest,
                        answer: @escaping IdempotentRequest.Answer<Appointment>) async throws -> IdempotencyStore.Response {
        let key = personalDataKey, ring = auditKeys
        return try await keeping(request, answer) { tx in try await Self.run(change, tx, key: key, ring: ring) }
    }

    /// `run` with its answer kept under `request`'s key, in one transaction: BEGIN, the purge
    /// when due, the (patient, key) pair's advisory lock (a second copy of the request waits
    /// here, then finds what the first kept), the kept answer with the key check, then either
    /// the replay or a savepoint, `run` and the answer kept; COMMIT. A refusal keeps its
    /// refusal: the savepoint is rolled back to first (a refusal by a constraint ends
    /// PostgreSQL's transaction otherwise). `run` says whether it stored the first key check.
    func keeping<Value: Sendable>(_ request: IdempotentRequest, _ answer: @escaping IdempotentRequest.Answer<Value>,
                                  _ run: @escaping @Sendable (AwaitedConnection) async throws -> (Value, storedKeyCheck: Bool))
        async throws -> IdempotencyStore.Response {
        let sent = statementsSent, key = personalDataKey
        let done = try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            if let before = request.forgetBefore {
                _ = try await tx.rows(PostgresTransaction.forgetIdempotentSQL, [before])
            }
            // Two statements: one statement's snapshot is taken before its lock is granted.
            _ = try await tx.rows(PostgresTransaction.idempotencyLockSQL,
                                  [PostgresTransaction.idempotencyLockNamespace, request.clientId, request.key])
            guard let found = try await tx.rows("""
                SELECT k.fingerprint, k.status, k.body, s.value AS key_check FROM (SELECT 1) AS one
                LEFT JOIN idempotency_keys k ON k.client_id = $1 AND k.key = $2 LEFT JOIN settings s ON s.key = $3
                """, [request.clientId, request.key, PostgresTransaction.clientsKeyCheckSetting]).first else {
                throw ClinicError(.storage, .storageFailure, "the kept answer's look-up returned no row")
            }
            let row = try PostgresTransaction.row(found), table = "idempotency_keys"
            let check: String? = try row.value("key_check", in: "settings", key: "key")
            if let fingerprint = try row.value("fingerprint", in: table, key: "client_id") as String? {
                let kept = KeptResponse(fingerprint: fingerprint, status: try row.value("status", in: table, key: "client_id"),
                                        body: try row.value("body", in: table, key: "client_id"))
                return (try request.replay(kept) { try key.cipher(keyCheck: check) }, false)
            }
            _ = try await tx.rows("SAVEPOINT kept_answer", [])
            let outcome: Result<Value, any Error>
            var storedKeyCheck = false
            do {
                let done = try await run(tx)
                outcome = .success(done.0)
                storedKeyCheck = done.storedKeyCheck
            } catch let error as ClinicError {
                // The domain's refusals (the rules', the constraints' as `write` says them); a
                // driver's error (a lost connection, a serialization failure the transaction is
                // run again for) goes on as it is.
                outcome = .failure(error)
                _ = try await tx.rows("ROLLBACK TO SAVEPOINT kept_answer", [])
            }
            let response = try IdempotentRequest.answer(outcome, answer)
            let cipher = try await Self.sealingCipher(key, stored: check, tx)
            let kept = try request.kept(response, cipher: cipher)
            _ = try await tx.rows(PostgresTransaction.keepIdempotentSQL,
                                  [request.clientId, request.key, kept.fingerprint, Int64(kept.status), kept.body, request.now])
            return (response, storedKeyCheck || check == nil)
        }
        if done.1 { keptLookups.forgetSessions() }
        return done.0
    }

    /// One change on a transaction's connection; whether it stored the database's first key check.
    static func run(_ change: AwaitedChange, _ tx: AwaitedConnection, key: PersonalDataKey,
                    ring: AuditKeyRing) async throws -> (appointment: Appointment, storedKeyCheck: Bool) {
        switch change {
        case .book(let ask, let decide):
            let (id, facts) = try await bookingFacts(ask, reservingId: true, tx)
            return try await insert(try decide(facts), facts: facts, id: id, tx, key: key)
        case .change(let id, let decide):
            let facts = try await changeFacts(id, tx)
            guard let decision = try decide(facts) else {
                guard let facts else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
                return (try opened(facts.appointment, key: key, check: facts.personalDataKeyCheck), false)
            }
            try await write(decision, tx, ring: ring, key: key, keyCheck: facts?.personalDataKeyCheck)
            return (try opened(decision.appointment, key: key, check: facts?.personalDataKeyCheck), false)
        case .move(let id, let plan, let decide):
            let change = try await changeFacts(id, tx)
            let ask = try plan(change)
            guard let change else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
            let facts = try await bookingFacts(ask, reservingId: false, tx).facts
            guard let decision = try decide(change, facts) else {
                return (try opened(change.appointment, key: key, check: change.personalDataKeyCheck), false)
            }
            try await write(decision, tx, ring: ring, key: key, keyCheck: change.personalDataKeyCheck)
            return (try opened(decision.appointment, key: key, check: change.personalDataKeyCheck), false)
        case .acceptOffer(let choice, let plan, let decide):
            var found: OfferAcceptanceFacts?
            if let id = try await offerId(choice, tx) { found = try await offerAcceptanceFacts(id, tx) }
            let ask = try plan(found)
            guard let found else { throw choice.notFound }
            // A move (the plan asks for facts without the appointment it moves) reserves no id:
            // the appointment moved keeps its own.
            let (newId, facts) = try await bookingFacts(ask, reservingId: ask.exceptAppointment == nil, tx)
            let acceptance = try decide(found, facts)
            let done: (appointment: Appointment, storedKeyCheck: Bool)
            if acceptance.moves {
                let check = found.later?.personalDataKeyCheck
                try await write(acceptance.booking, tx, ring: ring, key: key, keyCheck: check)
                done = (try opened(acceptance.booking.appointment, key: key, check: check), false)
            } else {
                done = try await insert(acceptance.booking, facts: facts, id: newId, tx, key: key)
            }
            try await write(acceptance.writes(appointmentId: done.appointment.id), now: acceptance.now, tx, key: key)
            return done
        case .bookHold(let id, let plan, let decide):
            let hold = try await tx.rows(PostgresTransaction.slotHoldSQL, [id]).first.map { try SlotHold(row: try PostgresTransaction.row($0)) }
            let ask = try plan(hold)
            guard let hold else { throw ClinicError(.notFound, .holdNotFound, String(id)) }
            let (newId, facts) = try await bookingFacts(ask, reservingId: true, tx)
            let done = try await insert(try decide(hold, facts), facts: facts, id: newId, tx, key: key)
            _ = try await tx.rows(PostgresTransaction.deleteHoldSQL, [id])
            return done
        }
    }

    /// The booking's locks (with the new appointment's id when `reservingId`) and its gather:
    /// two round trips.
    static func bookingFacts(_ ask: BookingFactsRequest, reservingId: Bool,
                             _ tx: AwaitedConnection) async throws -> (id: Int64?, facts: BookingFacts) {
        let locks = try await tx.rows(BookingLocksStatement(PostgresTransaction.bookingLocksBinds(ask, reservingId: reservingId)))
        var id: Int64?
        if reservingId {
            guard let reserved = try tx.value(Int64.self, locks) else {
                throw ClinicError(.storage, .storageFailure, "the booking's locks gave no id")
            }
            id = reserved
        }
        return (id, try await gather(ask, appointmentId: id, tx))
    }

    /// The booking's gather: one round trip.
    static func gather(_ ask: BookingFactsRequest, appointmentId: Int64?, _ tx: AwaitedConnection) async throws -> BookingFacts {
        guard let row = try await tx.rows(BookingGatherStatement(PostgresTransaction.bookingGatherBinds(ask))).first else {
            throw ClinicError(.storage, .storageFailure, "the booking's gather returned no row")
        }
        return try PostgresTransaction.bookingFacts(try PostgresTransaction.row(row), appointmentId: appointmentId)
    }

    /// A new appointment's one write (its notes sealed to its id), refused by the exclusion
    /// constraints as `whyRefused` says; whether it stored the database's first key check.
    static func insert(_ decision: BookingDecision, facts: BookingFacts, id: Int64?, _ tx: AwaitedConnection,
                       key: PersonalDataKey) async throws -> (appointment: Appointment, storedKeyCheck: Bool) {
        guard let id else { throw ClinicError(.storage, .storageFailure, "the booking's locks gave no id") }
        let cipher = decision.appointment.notes.isEmpty ? nil : try await sealingCipher(key, stored: facts.personalDataKeyCheck, tx)
        let appointment = try decision.sealed(cipher)
        let written = try await tx.rows(InsertBookingStatement(
            PostgresTransaction.insertBookingBinds(id, appointment, decision.event, decision.message)))
        guard try tx.value(Int64.self, written) != nil else { throw try await whyRefused(appointment, tx) }
        var booked = appointment
        booked.notes = decision.appointment.notes
        return (booked, cipher != nil && facts.personalDataKeyCheck == nil)
    }

    /// What an offer's acceptance is decided on: the offer locked, its entry, the later
    /// appointment's change facts for "an earlier time" (three round trips at most).
    static func offerAcceptanceFacts(_ id: Int64, _ tx: AwaitedConnection) async throws -> OfferAcceptanceFacts? {
        guard let found = try await tx.rows("SELECT * FROM waitlist_offers WHERE id = $1 FOR UPDATE", [id]).first else { return nil }
        let offer = try WaitlistOffer(row: try PostgresTransaction.row(found))
        let entry = try await tx.rows("SELECT * FROM waitlist_entries WHERE id = $1", [offer.entryId]).first
            .map { try WaitlistEntry(row: try PostgresTransaction.row($0)) }
        var later: AppointmentChangeFacts?
        if let laterId = entry?.beforeAppointmentId { later = try await changeFacts(laterId, tx) }
        return OfferAcceptanceFacts(offer: offer, entry: entry, later: later)
    }

    static func changeFacts(_ id: Int64, _ tx: AwaitedConnection) async throws -> AppointmentChangeFacts? {
        let rows = try await tx.rows(AppointmentChangeFactsStatement([id, PostgresTransaction.clientsKeyCheckSetting]))
        return try rows.first.map { try PostgresTransaction.changeFacts(try PostgresTransaction.row($0)) }
    }

    /// A change's one write; a refusal by the exclusion constraints is `slot_taken` or
    /// `overlapping_appointment`, as the seam's `changeAppointment` says.
    static func write(_ decision: BookingDecision, _ tx: AwaitedConnection, ring: AuditKeyRing, key: PersonalDataKey,
                      keyCheck: String?) async throws {
        let changed: [PostgresRow]
        do {
            changed = try await tx.rows(ChangeAppointmentStatement(
                PostgresTransaction.changeAppointmentBinds(decision.appointment, decision.event, decision.message)))
        } catch let error as PSQLError where error.code == .server && error.serverInfo?[.sqlState] == "23P01" {
            throw PostgresErrorMapping.clinicError(error)
        }
        let messageId = try PostgresTransaction.changedMessageId(try changed.first.map(PostgresTransaction.row), decision.appointment)
        if let text = decision.text, let messageId {
            try await queue(text, messageId: messageId, at: decision.event.at, tx, key: key, keyCheck: keyCheck)
        }
        if let audit = decision.audit { try await append(audit, tx, ring: ring) }
    }

    /// A text about a message, as `Texts.queue` writes it: to a patient who takes texts of its
    /// topic (`TextAsk.isTaken` on their phone, read here), its body sealed to its delivery.
    static func queue(_ text: TextAsk, messageId: Int64, at now: Date, _ tx: AwaitedConnection, key: PersonalDataKey,
                      keyCheck: String?) async throws {
        let phone = try await tx.rows(PostgresTransaction.phoneSQL, [text.clientId]).first
            .map { try StoredPhone(row: try PostgresTransaction.row($0)) }
        guard text.isTaken(by: phone) else { return }
        try await enqueue(text, messageId: messageId, at: now, tx, key: key, keyCheck: keyCheck)
    }

    /// A text's delivery, its body sealed to it (the patient known to take it).
    static func enqueue(_ text: TextAsk, messageId: Int64?, at now: Date, _ tx: AwaitedConnection, key: PersonalDataKey,
                        keyCheck: String?) async throws {
        guard let id = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.enqueueTextSQL,
                                                                  [text.clientId, messageId, "text", now])) else {
            throw ClinicError(.storage, .storageFailure, "deliveries: no id returned")
        }
        let sealed = try text.sealedBody(deliveryId: id, cipher: try await sealingCipher(key, stored: keyCheck, tx))
        _ = try await tx.rows(PostgresTransaction.deliveryPayloadSQL, [sealed, id])
    }

    /// The audit trail's row of a change, after its write: the head locked, read with the
    /// trail's key marker in one statement; the key (`AuditKeyRing.forAppending(marker:head:)`)
    /// and the marker stored when this process had not used the key yet; the row and the head
    /// moved to it in one statement (`appendAuditSQL`), as the seam's `AuditLog.append` does.
    static func append(_ ask: AuditAsk, _ tx: AwaitedConnection, ring: AuditKeyRing) async throws {
        let found = try await tx.rows("""
            SELECT last_id, hash, (SELECT value FROM settings WHERE key = $1) AS marker FROM audit_head WHERE id = 1 FOR UPDATE
            """, [AuditKey.checkSetting])
        var head: AuditChainHead?, marker: String?
        if let first = found.first {
            let row = try PostgresTransaction.row(first)
            head = try PostgresTransaction.auditHead(row)
            marker = try row.value("marker", in: "settings", key: "key")
        } else {
            // A database whose head row is missing (the write below makes it).
            marker = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL, [AuditKey.checkSetting]))
        }
        let keyFound = try ring.forAppending(marker: marker, head: head)
        if keyFound.storeMarker {
            _ = try await tx.rows(PostgresTransaction.setSettingSQL, [AuditKey.checkSetting, keyFound.key.check])
        }
        _ = try await tx.rows(PostgresTransaction.appendAuditSQL,
                              PostgresTransaction.auditEntryBinds(AuditLog.entry(ask, after: head, key: keyFound.key)))
    }

    /// A patient of a row read with `personal_key_check` (`clientWithKeyCheckSQL`), personal
    /// fields opened (a row from before encryption has none); the key check read with it.
    static func openedClient(_ row: StoredRowValues, key: PersonalDataKey) throws -> (client: Client, check: String?) {
        let check: String? = try row.value("personal_key_check", in: "settings")
        let stored = try PostgresTransaction.storedClientOfRow(row)
        return (stored.personal == nil ? stored.client : try stored.opened(with: try key.cipher(keyCheck: check)), check)
    }

    /// The appointment with its notes opened under the stored key check.
    static func opened(_ appointment: Appointment, key: PersonalDataKey, check: String?) throws -> Appointment {
        try AppointmentNotes.opened(appointment) { try key.cipher(keyCheck: check) }
    }

    /// The cipher notes are sealed with: under the stored key check, or, on a database with
    /// none yet, a new one stored and read back (another server's stored first wins, and then
    /// this key is the wrong one: `key_wrong`), as `PersonalDataKey.sealingCipher` does.
    static func sealingCipher(_ key: PersonalDataKey, stored: String?, _ tx: AwaitedConnection) async throws -> FieldCipher {
        if let stored { return try key.cipher(keyCheck: stored) }
        let new = try key.cipherWithNewCheck()
        let setting = PostgresTransaction.clientsKeyCheckSetting
        _ = try await tx.rows("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [setting, new.check])
        let kept = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL, [setting]))
        guard kept == new.check else { throw ClinicError(.keyError, .keyWrong, key.filePath ?? "memory") }
        return new.cipher
    }

    /// Why the exclusion constraints refused the appointment (`ON CONFLICT DO NOTHING` wrote
    /// nothing): the doctor's time is taken, or the patient has another appointment then.
    static func whyRefused(_ appointment: Appointment, _ tx: AwaitedConnection) async throws -> ClinicError {
        let span = appointment.startsAt..<max(appointment.startsAt, appointment.endsAt)
        let doctor = try await tx.rows(PostgresTransaction.doctorIsBookedSQL, [appointment.doctorId, span.upperBound, span.lowerBound, Int64(-1)])
        if try tx.value(Bool.self, doctor) ?? true { return ClinicError(.slotTaken, .slotTaken) }
        if let client = appointment.clientId {
            let other = try await tx.rows(PostgresTransaction.activeAppointmentSQL, [client, span.upperBound, span.lowerBound, Int64(-1)])
            if try tx.value(Int64.self, other) != nil { return ClinicError(.overlappingAppointment, .overlappingUnknown) }
        }
        return ClinicError(.storage, .storageFailure, "an appointment was neither stored nor refused by a held slot")
    }
}
