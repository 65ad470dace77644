import ClinicKit
import Foundation
import PostgresNIO

// A patient's keys to their account awaited (issue 56: `AccountSecurityStore`): each change one
// transaction on a leased connection, each statement awaited. What is written is ClinicKit's
// decision (`SessionsEnding`, `PasswordChange`); the token is sealed here, under the stored key
// check (`CalendarAddress`). A change of sessions or of the password's hash forgets the
// signed-in look-ups this store keeps, before and after, as `noteSessionsChanged` does for the
// seam's writes; other servers hear the database's notice.

extension PostgresStore {
    /// BEGIN, whether the patient is, their token and the key check; the new token stored when
    /// due; COMMIT.
    public func calendarToken(ofClient clientId: Int64, issuing token: String, rotate: Bool, at now: Date) async throws -> String? {
        let sent = statementsSent, key = personalDataKey
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            guard let found = try await tx.rows("""
                SELECT EXISTS (SELECT 1 FROM clients WHERE id = $1) AS found,
                       (SELECT token_sealed FROM calendar_feeds WHERE client_id = $1) AS token_sealed,
                       (SELECT value FROM settings WHERE key = $2) AS key_check
                """, [clientId, PostgresTransaction.clientsKeyCheckSetting]).first.map(PostgresTransaction.row),
                  try found.value("found", in: "clients") as Bool else { return nil }
            let check: String? = try found.value("key_check", in: "settings", key: "key")
            if !rotate, let sealed = try found.value("token_sealed", in: "calendar_feeds", key: "client_id") as Data? {
                return try CalendarAddress.opened(sealed, clientId: clientId, cipher: try key.cipher(keyCheck: check))
            }
            try await Self.store(token, clientId: clientId, cipher: try await Self.sealingCipher(key, stored: check, tx), at: now, tx)
            return token
        }
    }

    /// One statement: the sealed token with the key check.
    public func existingCalendarToken(ofClient clientId: Int64) async throws -> String? {
        guard let row = try await awaitedRows("""
            SELECT f.token_sealed, (SELECT value FROM settings WHERE key = $2) AS key_check FROM calendar_feeds f WHERE f.client_id = $1
            """, [clientId, PostgresTransaction.clientsKeyCheckSetting]).first else { return nil }
        let sealed: Data = try row.value("token_sealed", in: "calendar_feeds", key: "client_id")
        return try CalendarAddress.opened(sealed, clientId: clientId,
                                          cipher: try personalDataKey.cipher(keyCheck: try row.value("key_check", in: "settings", key: "key")))
    }

    public func revokeCalendarToken(ofClient clientId: Int64) async throws {
        _ = try await awaitedRows(PostgresTransaction.deleteCalendarTokenSQL, [clientId])
    }

    /// BEGIN, the patient locked against deletion with what the ending needs, the sessions
    /// ended; for a patient with a calendar address the new one stored and the message posted
    /// (and queued for e-mail); COMMIT.
    public func endOtherSessions(_ ending: SessionsEnding) async throws -> Int? {
        let sent = statementsSent, key = personalDataKey
        keptLookups.forgetSessions()
        defer { keptLookups.forgetSessions() }
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            guard let patient = try await Self.lockForEnding(ending, tx) else { return nil }
            return try await Self.end(ending, patient, key: key, tx)
        }
    }

    /// BEGIN, the patient with the key check (none: nothing counted), the old windows forgotten,
    /// the attempt counted (its row locked until COMMIT), the decision; COMMIT.
    public func reservePasswordCheck(clientId: Int64, at now: Date, forgetBefore: Date,
                                     decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedPasswordCheck? {
        let sent = statementsSent
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            guard let row = try await tx.rows(PostgresTransaction.clientWithKeyCheckSQL, [clientId, PostgresTransaction.clientsKeyCheckSetting])
                .first.map(PostgresTransaction.row) else { return nil }
            let client = try PostgresTransaction.storedClientOfRow(row)
            _ = try await tx.rows(PostgresTransaction.forgetLoginAttemptsSQL, [forgetBefore])
            let counted = try await tx.rows(PostgresTransaction.countLoginAttemptSQL, [client.client.loginKey, now])
            let attempts = try PostgresTransaction.loginAttempts(try counted.first.map(PostgresTransaction.row))
            try decide(attempts)
            return ReservedPasswordCheck(client: client, personalDataKeyCheck: try row.value("personal_key_check", in: "settings"),
                                         window: attempts.windowStart)
        }
    }

    /// BEGIN, the patient locked (none: nothing written), the attempt given back, the hash set,
    /// then the ending's writes; COMMIT.
    public func completePasswordChange(_ change: PasswordChange) async throws {
        let sent = statementsSent, key = personalDataKey
        keptLookups.forgetSessions()
        defer { keptLookups.forgetSessions() }
        try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            guard let patient = try await Self.lockForEnding(change.ending, tx) else { return }
            try await Self.withdraw(loginKey: change.loginKey, window: change.window, tx)
            _ = try await tx.rows(PostgresTransaction.setPasswordHashSQL, [change.newHash, change.ending.clientId])
            _ = try await Self.end(change.ending, patient, key: key, tx)
        }
    }

    /// BEGIN; the patient's advisory lock (a booking of theirs in flight holds it, and is
    /// waited for); their appointments; each cancellation's one write (`ChangeAppointmentStatement`,
    /// no message); the appointments detached; the login's attempts deleted; the patient
    /// deleted; COMMIT. The sessions this store keeps are forgotten before and after.
    public func deleteAccount(_ deletion: AccountDeletion) async throws {
        let sent = statementsSent
        keptLookups.forgetSessions()
        defer { keptLookups.forgetSessions() }
        try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            _ = try await tx.rows("SELECT pg_advisory_xact_lock(hashtextextended($1 || $2::bigint::text, 0))::text",
                                  [PostgresTransaction.clientAdvisoryLockNamespace, deletion.clientId])
            let appointments = try await tx.rows("SELECT * FROM appointments WHERE client_id = $1 ORDER BY starts_at, id",
                                                 [deletion.clientId]).map { try Appointment(row: try PostgresTransaction.row($0)) }
            for cancellation in deletion.cancellations(appointments) {
                _ = try await tx.rows(ChangeAppointmentStatement(
                    PostgresTransaction.changeAppointmentBinds(cancellation.appointment, cancellation.event, nil)))
            }
            _ = try await tx.rows(PostgresTransaction.detachAppointmentsSQL, [deletion.clientId])
            _ = try await tx.rows(PostgresTransaction.clearLoginAttemptsSQL, [deletion.loginKey])
            _ = try await tx.rows(PostgresTransaction.deleteClientSQL, [deletion.clientId])
        }
    }

    /// One statement: the patient locked against deletion, their number deleted and their
    /// pending texts dropped (`deletePhone`, `dropPendingDeliveries` of the seam), whether they are.
    public func removePhone(ofClient clientId: Int64) async throws -> Bool {
        let rows = try await awaitedRows("""
            WITH c AS (SELECT id FROM clients WHERE id = $1 FOR SHARE),
                 p AS (DELETE FROM phones WHERE client_id IN (SELECT id FROM c)),
                 d AS (UPDATE deliveries SET state = 'dropped', payload = NULL
                       WHERE client_id IN (SELECT id FROM c) AND state = 'pending' AND purpose IN (\(DeliveryChannel.purposeList([.text]))))
            SELECT count(*) AS found FROM c
            """, [clientId])
        let found: Int64 = try rows.first?.value("found", in: "clients") ?? 0
        return found > 0
    }

    /// BEGIN, the phone locked (`FOR UPDATE`: guesses at once are decided one after the
    /// other, so no more than the allowed wrong ones are ever tried) with whether the patient is
    /// and the key check, the decision; for a confirmation the number's lock, its release by
    /// another patient and the phone saved, for a wrong guess its count; COMMIT.
    public func confirmPhoneCode(ofClient clientId: Int64, decide: @escaping @Sendable (StoredPhone?) throws -> PhoneCodeDecision)
        async throws -> (decision: PhoneCodeDecision, number: String?)? {
        let sent = statementsSent, key = personalDataKey
        return try await transaction { connection, logger -> (decision: PhoneCodeDecision, number: String?)? in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            guard let row = try await tx.rows("""
                WITH p AS (SELECT * FROM phones WHERE client_id = $1 FOR UPDATE)
                SELECT EXISTS (SELECT 1 FROM clients WHERE id = $1) AS client_exists,
                       (SELECT value FROM settings WHERE key = $2) AS key_check, p.*
                FROM (SELECT 1) AS one LEFT JOIN p ON true
                """, [clientId, PostgresTransaction.clientsKeyCheckSetting]).first.map(PostgresTransaction.row),
                  try row.value("client_exists", in: "clients") as Bool else { return nil }
            let owner: Int64? = try row.value("client_id", in: "phones", key: "client_id")
            let decision = try decide(owner == nil ? nil : try StoredPhone(row: row))
            switch decision {
            case .confirm(let phone, let now):
                _ = try await tx.rows(PostgresTransaction.numberLockSQL, [phone.numberKey])
                _ = try await tx.rows(PostgresTransaction.releaseNumberSQL, [phone.numberKey, clientId])
                _ = try await tx.rows(PostgresTransaction.savePhoneSQL, PostgresTransaction.savePhoneBinds(phone, at: now))
                let check: String? = try row.value("key_check", in: "settings", key: "key")
                return (decision, try phone.number(cipher: try key.cipher(keyCheck: check)))
            case .countWrong:
                _ = try await tx.rows(PostgresTransaction.countWrongPhoneCodeSQL, [clientId])
            case .none:
                break
            }
            return (decision, nil)
        }
    }

    /// One statement (a snapshot by itself); rows that cannot be read are left out, as the seam's.
    public func accessLog(ofClient clientId: Int64, limit: Int) async throws -> [AuditEntry] {
        try AuditEntry.read(try await awaitedRows(PostgresTransaction.accessLogSQL, [clientId, limitBind(limit)])).entries
    }

    /// What an ending is decided on: the patient's language, whether their e-mail is confirmed
    /// and whether they have a calendar address, with the key check.
    private struct EndingPatient {
        let language: Language
        let emailConfirmed: Bool
        let hasCalendar: Bool
        let keyCheck: String?
    }

    /// The patient locked against deletion (`FOR SHARE`) with what the ending needs; nil for none.
    private static func lockForEnding(_ ending: SessionsEnding, _ tx: AwaitedConnection) async throws -> EndingPatient? {
        guard let row = try await tx.rows("""
            SELECT c.preferred_language, c.email_confirmed,
                   EXISTS (SELECT 1 FROM calendar_feeds WHERE client_id = c.id) AS has_calendar,
                   (SELECT value FROM settings WHERE key = $2) AS key_check
            FROM clients c WHERE c.id = $1 FOR SHARE OF c
            """, [ending.clientId, PostgresTransaction.clientsKeyCheckSetting]).first.map(PostgresTransaction.row) else { return nil }
        let language: String = try row.value("preferred_language", in: "clients")
        return EndingPatient(language: Language(rawValue: language) ?? .en, emailConfirmed: try row.value("email_confirmed", in: "clients"),
                             hasCalendar: try row.value("has_calendar", in: "calendar_feeds"),
                             keyCheck: try row.value("key_check", in: "settings", key: "key"))
    }

    /// The ending's writes, as `SessionsEnding.apply` makes them: the sessions ended (how many),
    /// and for a patient with a calendar address the new one and the message.
    private static func end(_ ending: SessionsEnding, _ patient: EndingPatient, key: PersonalDataKey,
                            _ tx: AwaitedConnection) async throws -> Int {
        let ended = try await tx.rows("""
            WITH ended AS (DELETE FROM sessions WHERE client_id = $1 AND token_hash <> $2 RETURNING 1) SELECT count(*) AS ended FROM ended
            """, [ending.clientId, ending.keepingTokenHash ?? ""])
        guard patient.hasCalendar else { return Int(try tx.value(Int64.self, ended) ?? 0) }
        let cipher = try await sealingCipher(key, stored: patient.keyCheck, tx)
        try await store(ending.newCalendarToken, clientId: ending.clientId, cipher: cipher, at: ending.now, tx)
        let message = ending.renewalMessage(patient.language)
        _ = try await tx.rows(PostgresTransaction.postMessageSQL, [ending.clientId, MessageKind.account.rawValue, message.subject,
                                                                   message.body, ending.now, patient.emailConfirmed,
                                                                   Int64?.none, Int64?.none, Int64?.none])
        return Int(try tx.value(Int64.self, ended) ?? 0)
    }

    /// `token` as the patient's calendar token, in place of the one there was.
    private static func store(_ token: String, clientId: Int64, cipher: FieldCipher, at now: Date, _ tx: AwaitedConnection) async throws {
        _ = try await tx.rows(PostgresTransaction.replaceCalendarTokenSQL, [
            clientId, SessionManager.hash(token), try CalendarAddress.sealed(token, clientId: clientId, cipher: cipher), now])
    }

    /// One statement: the patient with the key check, opened.
    public func client(id: Int64) async throws -> Client? {
        let key = personalDataKey
        return try await awaitedRows(PostgresTransaction.clientWithKeyCheckSQL, [id, PostgresTransaction.clientsKeyCheckSetting]).first
            .map { try Self.openedClient($0, key: key).client }
    }

    /// One statement: the setting.
    public func textGatewaySeen() async throws -> Int64? {
        let value: String? = try await awaitedRows(PostgresTransaction.settingSQL, [Outbox.textGatewaySetting]).first
            .flatMap { try $0.value("value", in: "settings") }
        return value.flatMap { Int64($0) }
    }

    /// One read-only snapshot of 10–12 statements: the patient, the appointments, their history,
    /// the sessions, the inbox, the files' rows, the conversations, their messages (1 for all),
    /// the staff's names (1 for all, when any), the phone, the key check.
    public func exportFacts(clientId: Int64) async throws -> PersonalExportFacts {
        try await readAwaited { tx in
            func all<T>(_ sql: String, _ binds: [any PostgresBindable], _ make: (StoredRowValues) throws -> T) async throws -> [T] {
                try await tx.rows(sql, binds).map { try make(try PostgresTransaction.row($0)) }
            }
            let client = try await all("SELECT * FROM clients WHERE id = $1", [clientId], PostgresTransaction.storedClientOfRow).first
            let appointments = try await all("SELECT * FROM appointments WHERE client_id = $1 ORDER BY starts_at, id", [clientId],
                                             Appointment.init(row:))
            let ids = appointments.compactMap(\.id)
            let events = ids.isEmpty ? [] : try await all(PostgresTransaction.eventsOfAppointmentsSQL, [DirectoryIdArray(ids)],
                                                          AppointmentEvent.init(row:))
            let sessions = try await all(PostgresTransaction.sessionsOfClientSQL, [clientId, Date.distantPast], StoredSession.init(row:))
            let messages = try await all("SELECT * FROM messages WHERE client_id = $1 ORDER BY id DESC LIMIT $2",
                                         [clientId, Int64(PersonalExportFacts.messageLimit)], InboxMessage.init(row:))
            let attachments = try await all("SELECT * FROM attachments WHERE client_id = $1 ORDER BY appointment_id, id", [clientId],
                                            StoredAttachment.init(row:))
            let threads = try await all("SELECT * FROM threads WHERE client_id = $1 ORDER BY last_at DESC, appointment_id DESC",
                                        [clientId], StoredThread.init(row:))
            var threadMessages: [Int64: [StoredThreadMessage]] = [:]
            if !threads.isEmpty {
                let stored = try await all("SELECT * FROM thread_messages WHERE appointment_id = ANY($1) ORDER BY appointment_id, id",
                                           [DirectoryIdArray(threads.map(\.appointmentId))], StoredThreadMessage.init(row:))
                threadMessages = Dictionary(grouping: stored, by: \.appointmentId)
            }
            var names: [Int64: String] = [:]
            let staffIds = Set(threadMessages.values.joined().compactMap(\.staffId)).sorted()
            if !staffIds.isEmpty {
                for row in try await all("SELECT id, name, surname FROM staff_accounts WHERE id = ANY($1)", [DirectoryIdArray(staffIds)], { $0 }) {
                    let table = "staff_accounts"
                    let name: String = try row.value("name", in: table), surname: String = try row.value("surname", in: table)
                    names[try row.value("id", in: table)] = "\(name) \(surname)"
                }
            }
            let phone = try await all(PostgresTransaction.phoneSQL, [clientId], StoredPhone.init(row:)).first
            let check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL,
                                                                    [PostgresTransaction.clientsKeyCheckSetting]))
            return PersonalExportFacts(client: client, appointments: appointments, events: events, sessions: sessions,
                                       messages: messages, attachments: attachments, threads: threads, threadMessages: threadMessages,
                                       staffNames: names, phone: phone, personalDataKeyCheck: check)
        }
    }
}
