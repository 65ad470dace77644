import ClinicKit
import Foundation
import PostgresNIO

// A patient's waitlist changes awaited (issue 56: `WaitlistChangesStore`): one transaction on a
// leased connection, each statement awaited. The gather locks what the decision stands on (the
// entry and its open offers, or the offer), so that the worker or another server answering at
// once waits, then finds what this change wrote; ClinicKit decides; each `WaitlistWrite` is one
// statement, the seam's own (PostgresTransaction+Waitlist.swift).

extension PostgresStore {
    /// BEGIN, the entry locked, its open offers locked, the writes, the audit row if any; COMMIT.
    public func changeWaitlistEntry<T: Sendable>(id: Int64, decide: @escaping @Sendable (WaitlistEntryState?) throws -> WaitlistDecision<T>)
        async throws -> T {
        let sent = statementsSent, ring = auditKeys, key = personalDataKey
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            var state: WaitlistEntryState?
            if let found = try await tx.rows("SELECT * FROM waitlist_entries WHERE id = $1 FOR UPDATE", [id]).first {
                let offers = try await tx.rows("SELECT * FROM waitlist_offers WHERE entry_id = $1 AND status = 'open' ORDER BY id FOR UPDATE",
                                               [id])
                state = WaitlistEntryState(entry: try WaitlistEntry(row: try PostgresTransaction.row(found)),
                                           openOffers: try offers.map { try WaitlistOffer(row: try PostgresTransaction.row($0)) })
            }
            let decision = try decide(state)
            try await Self.write(decision, tx, ring: ring, key: key)
            return decision.result
        }
    }

    /// BEGIN, the link used up (for one), the offer locked with its entry's status, the writes; COMMIT.
    public func answerWaitlistOffer<T: Sendable>(_ choice: OfferChoice, decide: @escaping @Sendable (WaitlistOfferState?) throws -> WaitlistDecision<T>)
        async throws -> T {
        let sent = statementsSent, ring = auditKeys, key = personalDataKey
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            var state: WaitlistOfferState?
            if let id = try await Self.offerId(choice, tx), let found = try await tx.rows("""
                SELECT o.*, e.status AS entry_status FROM waitlist_offers o LEFT JOIN waitlist_entries e ON e.id = o.entry_id
                WHERE o.id = $1 FOR UPDATE OF o
                """, [id]).first {
                let row = try PostgresTransaction.row(found)
                let status: String? = try row.value("entry_status", in: "waitlist_entries")
                state = WaitlistOfferState(offer: try WaitlistOffer(row: row), entryStatus: status.flatMap(WaitlistEntryStatus.init(rawValue:)))
            }
            let decision = try decide(state)
            try await Self.write(decision, tx, ring: ring, key: key)
            return decision.result
        }
    }

    /// BEGIN, the offer locked with its entry (and the later appointment for "an earlier
    /// time"), the booking's locks and gather, the booking's write, the offer's; COMMIT.
    public func acceptWaitlistOffer(_ choice: OfferChoice, plan: @escaping @Sendable (OfferAcceptanceFacts?) throws -> BookingFactsRequest,
                                    decide: @escaping @Sendable (OfferAcceptanceFacts, BookingFacts) throws -> OfferAcceptance) async throws
        -> Appointment {
        try await run(.acceptOffer(choice, plan: plan, decide: decide))
    }

    /// BEGIN; the department asked, the clinic's entries, their patients (opened), the entries'
    /// notes (opened): four statements, and the key check when there is anything to open; the
    /// decision; its audit rows; COMMIT.
    public func staffWaitlist<T: Sendable>(clinicId: Int64, departmentId: Int64?,
                                           decide: @escaping @Sendable (StaffWaitlistFacts) throws -> WaitlistDecision<T>) async throws -> T {
        let sent = statementsSent, ring = auditKeys, key = personalDataKey
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            var department: Department?
            if let departmentId {
                department = try await tx.rows(PostgresTransaction.departmentSQL, [departmentId]).first
                    .map { try Department(row: try PostgresTransaction.row($0)) }
            }
            let entries = try await tx.rows(PostgresTransaction.clinicWaitlistSQL, [clinicId, departmentId])
                .map { try WaitlistEntry(row: try PostgresTransaction.row($0)) }
            var names: [Int64: String] = [:], notes: [Int64: String] = [:]
            if !entries.isEmpty {
                let check = try tx.value(String.self, try await tx.rows("SELECT value FROM settings WHERE key = $1",
                                                                        [PostgresTransaction.clientsKeyCheckSetting]))
                var cipher: FieldCipher?
                func opening() throws -> FieldCipher {
                    if let cipher { return cipher }
                    let made = try key.cipher(keyCheck: check)
                    cipher = made
                    return made
                }
                for row in try await tx.rows(PostgresTransaction.clientsOfIdsSQL,
                                             [DirectoryIdArray(Array(Set(entries.map(\.clientId))))]) {
                    let stored = try PostgresTransaction.storedClientOfRow(try PostgresTransaction.row(row))
                    let client = stored.personal == nil ? stored.client : try stored.opened(with: try opening())
                    names[client.id ?? 0] = "\(client.name) \(client.surname)"
                }
                for row in try await tx.rows(PostgresTransaction.waitlistNotesSQL, [DirectoryIdArray(entries.compactMap(\.id))]) {
                    let found = try PostgresTransaction.row(row)
                    let id: Int64 = try found.value("id", in: "waitlist_entries")
                    notes[id] = try StaffController.openedNote(try found.value("note", in: "waitlist_entries"), entryId: id, cipher: try opening())
                }
            }
            let decision = try decide(StaffWaitlistFacts(department: department, entries: entries, names: names, notes: notes))
            try await Self.write(decision, tx, ring: ring, key: key)
            return decision.result
        }
    }

    // MARK: The worker (`WaitlistWorkStore`)

    /// One statement on a connection of the pool.
    public func waitlistHasWork(at now: Date) async throws -> Bool {
        try await awaitedRows(PostgresTransaction.hasWorkSQL, [now]).first.map { try $0.value("work", in: "waitlist") } ?? false
    }

    /// BEGIN, the holds run out deleted, the lapsed offers locked with their entries' statuses
    /// (one statement), the decision's writes; COMMIT.
    public func closeLapsedOffers(at now: Date, limit: Int,
                                  decide: @escaping @Sendable ([WaitlistOfferState]) throws -> WaitlistDecision<Int>) async throws -> Int {
        let sent = statementsSent, ring = auditKeys, key = personalDataKey
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            _ = try await tx.rows(PostgresTransaction.deleteExpiredHoldsSQL, [now])
            let lapsed = try await tx.rows(PostgresTransaction.lapsedOffersSQL, [now, limit]).map { found in
                let row = try PostgresTransaction.row(found)
                let status: String? = try row.value("entry_status", in: "waitlist_entries")
                return WaitlistOfferState(offer: try WaitlistOffer(row: row), entryStatus: status.flatMap(WaitlistEntryStatus.init(rawValue:)))
            }
            let decision = try decide(lapsed)
            try await Self.write(decision, tx, ring: ring, key: key)
            return decision.result
        }
    }

    /// BEGIN, a freed time taken (none: false), and for one still to come its entries locked,
    /// the holds run out deleted, then per entry until one is offered it: the visit it comes
    /// before, the booking's locks and gather, `rules`' decision; the hold, the offer, the
    /// entry offered, the message (one statement) and the text with its link; COMMIT. The same
    /// steps as `FreedTimeRules.run`.
    public func offerFreedTime(_ rules: FreedTimeRules) async throws -> Bool {
        let sent = statementsSent, key = personalDataKey
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            guard let freed = try await tx.rows(PostgresTransaction.takeFreedSQL, []).first
                .map({ try FreedTime(row: try PostgresTransaction.row($0)) }) else { return false }
            guard rules.offers(freed) else { return true }
            let entries = try await tx.rows(PostgresTransaction.waitingEntriesSQL,
                                            [freed.departmentId, freed.doctorId, freed.startsAt, rules.candidates])
                .map { try WaitlistEntry(row: try PostgresTransaction.row($0)) }
            guard !entries.isEmpty else { return true }
            _ = try await tx.rows(PostgresTransaction.deleteExpiredHoldsSQL, [rules.now])
            for entry in entries {
                var before: Appointment?
                if let id = entry.beforeAppointmentId {
                    before = try await tx.rows(PostgresTransaction.storedAppointmentSQL, [id]).first
                        .map { try Appointment(row: try PostgresTransaction.row($0)) }
                }
                guard let ask = rules.request(freed, entry, before: before) else { continue }
                let facts = try await Self.bookingFacts(ask, reservingId: false, tx).facts
                guard let plan = try rules.offer(freed, entry, before: before, facts: facts) else { continue }
                // Held meanwhile (a patient's hold committed after the gather): nobody here gets it.
                guard let holdId = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.insertOfferHoldSQL,
                                                                              PostgresTransaction.insertHoldBinds(plan.hold))) else {
                    return true
                }
                var offer = plan.offer(holdId: holdId)
                guard let offerId = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.insertOfferSQL,
                                                                               PostgresTransaction.insertOfferBinds(offer))) else {
                    _ = try await tx.rows(PostgresTransaction.deleteHoldSQL, [holdId])
                    continue
                }
                offer.id = offerId
                _ = try await tx.rows(PostgresTransaction.setEntryStatusSQL, [offer.entryId, WaitlistEntryStatus.offered.rawValue, rules.now])
                guard plan.context != nil else { return true }
                let phone = try await tx.rows(PostgresTransaction.phoneSQL, [offer.clientId]).first
                    .map { try StoredPhone(row: try PostgresTransaction.row($0)) }
                guard let notice = rules.notice(plan, offer: offer, phone: phone) else { return true }
                let messageId = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.postMessageSQL, [
                    offer.clientId, MessageKind.waitlist.rawValue, notice.subject, notice.body, rules.now, notice.emailConfirmed,
                    offer.clinicId, Int64?.none, Int64?.none]))
                if let text = notice.text {
                    _ = try await tx.rows(PostgresTransaction.setOfferLinkSQL, [text.linkHash, offerId])
                    try await Self.enqueue(text.ask, messageId: messageId, at: rules.now, tx, key: key, keyCheck: facts.personalDataKeyCheck)
                }
                return true
            }
            return true
        }
    }

    /// The chosen offer's id: a link used up (nil: no such link unused).
    static func offerId(_ choice: OfferChoice, _ tx: AwaitedConnection) async throws -> Int64? {
        switch choice {
        case .id(let id): id
        case .link(let hash, let at): try tx.value(Int64.self, try await tx.rows(PostgresTransaction.useOfferLinkSQL, [hash, at]))
        }
    }

    /// BEGIN; the patient's lock with the facts it does not guard (the directory's rows and the
    /// settings: one statement); the appointment asked to come before, if any; the patient's
    /// entries with their facts, read under the lock; the entries that are over left; the new
    /// one inserted (none: the patient waits there already, and all is rolled back); COMMIT.
    public func joinWaitlist(_ ask: WaitlistJoinAsk, decide: @escaping @Sendable (WaitlistJoinFacts) throws -> WaitlistJoin) async throws
        -> WaitlistEntry {
        let sent = statementsSent
        return try await transaction { connection, logger in
            try await Self.join(ask, decide, AwaitedConnection(connection: connection, logger: logger, sent: sent))
        }
    }

    /// The join with its answer kept (`keeping`: the kept answer's look-up, then the join in a savepoint).
    public func joinWaitlist(_ ask: WaitlistJoinAsk, decide: @escaping @Sendable (WaitlistJoinFacts) throws -> WaitlistJoin,
                             keeping request: IdempotentRequest, answer: @escaping IdempotentRequest.Answer<WaitlistEntry>) async throws
        -> IdempotencyStore.Response {
        try await keeping(request, answer) { tx in (try await Self.join(ask, decide, tx), false) }
    }

    /// A join on a transaction's connection: the patient's lock with the directory rows and the
    /// settings in one statement, the visit it comes before, the patient's entries, the
    /// decision, the entries it ends left and the new one inserted (none: `already_waiting`).
    static func join(_ ask: WaitlistJoinAsk, _ decide: @Sendable (WaitlistJoinFacts) throws -> WaitlistJoin,
                     _ tx: AwaitedConnection) async throws -> WaitlistEntry {
        guard let found = try await tx.rows("""
            SELECT pg_advisory_xact_lock(hashtextextended($1 || $2::text, 0))::text AS locked,
                   EXISTS (SELECT 1 FROM clients WHERE id = $2) AS client_exists,
                   (SELECT row_to_json(p)::text FROM departments p WHERE p.id = $3) AS department,
                   (SELECT row_to_json(c)::text FROM clinics c WHERE c.id = (SELECT clinic_id FROM departments WHERE id = $3)) AS clinic,
                   (SELECT coalesce(json_agg(x.id ORDER BY x.id), '[]')::text FROM doctors x
                    WHERE x.department_id = $3 AND x.is_active) AS doctors,
                   (SELECT row_to_json(v)::text FROM visit_types v WHERE v.id = $4::bigint) AS visit_type,
                   (\(PostgresTransaction.bookingSettingsJSON)) AS settings
            """, [PostgresTransaction.clientAdvisoryLockNamespace, ask.clientId, ask.departmentId, ask.visitTypeId]).first
        else { throw ClinicError(.storage, .storageFailure, "the waitlist's gather returned no row") }
        let row = try PostgresTransaction.row(found)
        func json(_ column: String) throws -> String? { try row.value(column, in: "waitlist facts") }
        var before: Appointment?
        if let id = ask.appointmentId {
            before = try await tx.rows("SELECT * FROM appointments WHERE id = $1", [id]).first.map { try Appointment(row: try PostgresTransaction.row($0)) }
        }
        let facts = WaitlistJoinFacts(
            clientExists: try row.value("client_exists", in: "clients"),
            department: try json("department").map { try Department(row: try JSONRows.row($0)) },
            clinic: try json("clinic").map { try Clinic(row: try JSONRows.row($0)) },
            doctorIds: try JSONRows.decode([Int64].self, try json("doctors") ?? "[]"),
            visitType: try json("visit_type").map { try VisitType(row: try JSONRows.row($0)) },
            bookingSettings: try JSONRows.decode([String: String].self, try json("settings") ?? "{}"), before: before,
            entries: try await Self.waitlistEntryFacts(ofClient: ask.clientId, tx))
        let join = try decide(facts)
        for id in join.ended {
            _ = try await tx.rows(PostgresTransaction.setEntryStatusSQL, [id, WaitlistEntryStatus.left.rawValue, join.entry.createdAt])
        }
        let entry = join.entry
        guard let id = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.insertEntrySQL, PostgresTransaction.insertEntryBinds(entry)))
        else { throw WaitlistJoin.alreadyWaiting }
        var stored = entry
        stored.id = id
        return stored
    }

    /// Each write one statement, in order (an offer no longer open refuses the change), then
    /// the audit row (`append`, as a staff transition's).
    static func write<T>(_ decision: WaitlistDecision<T>, _ tx: AwaitedConnection, ring: AuditKeyRing, key: PersonalDataKey) async throws {
        try await write(decision.writes, now: decision.now, tx, key: key)
        for audit in decision.audits { try await append(audit, tx, ring: ring) }
    }

    /// Each write one statement, in order (an offer no longer open refuses the change).
    static func write(_ writes: [WaitlistWrite], now: Date, _ tx: AwaitedConnection, key: PersonalDataKey) async throws {
        for write in writes {
            switch write {
            case let .closeOffer(id, status, appointmentId):
                guard try await !tx.rows(PostgresTransaction.closeOfferSQL, [id, status.rawValue, appointmentId, now]).isEmpty else {
                    throw ClinicError(.invalidTransition, .waitlistOfferClosed, status.rawValue)
                }
            case let .deleteHold(id): _ = try await tx.rows(PostgresTransaction.deleteHoldSQL, [id])
            case let .recordLapse(entryId): _ = try await tx.rows(PostgresTransaction.recordLapseSQL, [now, entryId])
            case let .setEntryStatus(id, status): _ = try await tx.rows(PostgresTransaction.setEntryStatusSQL, [id, status.rawValue, now])
            case let .resumeEntry(id): _ = try await tx.rows(PostgresTransaction.resumeEntrySQL, [now, id])
            case let .queueFreedTime(departmentId, doctorId, span):
                _ = try await tx.rows(PostgresTransaction.queueFreedSQL, [departmentId, doctorId, span.lowerBound, span.upperBound, now])
            case let .setPriority(id, priority): _ = try await tx.rows(PostgresTransaction.setEntryPrioritySQL, [id, priority, now])
            case let .setNote(entryId, note):
                var sealed: Data?
                if !note.isEmpty {
                    let check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL,
                                                                            [PostgresTransaction.clientsKeyCheckSetting]))
                    sealed = try StaffController.sealedNote(note, entryId: entryId, cipher: try await sealingCipher(key, stored: check, tx))
                }
                _ = try await tx.rows(PostgresTransaction.setNoteSQL, [sealed, entryId])
            }
        }
    }
}
