import ClinicKit
import Foundation
import PostgresNIO

// The front desk's day awaited (issue 56: `FrontDeskStore`): one transaction on a leased
// connection, each statement awaited, with the seam's own statements. The plan and the audit
// rows are ClinicKit's; the notes and the patients are opened here under the stored key check.

extension PostgresStore {
    /// BEGIN, the clinic, its departments, their active doctors (one statement), the doctor
    /// asked for's clinic, the plan, the day's appointments, the key check (when there are any), their patients (one
    /// statement), the audit rows; COMMIT.
    public func deskDay(clinicId: Int64, doctorAsked: Int64?, plan: @escaping @Sendable (DeskDayPlace) throws -> DeskDayPlan,
                        audit: @escaping @Sendable (DeskDayFacts) -> [AuditAsk]) async throws -> DeskDayFacts {
        let sent = statementsSent, key = personalDataKey, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let clinic = try await tx.rows(PostgresTransaction.clinicSQL, [clinicId]).first.map { try Clinic(row: PostgresTransaction.row($0)) }
            let departments = try await tx.rows(PostgresTransaction.departmentsOfClinicSQL, [clinicId])
                .map { try Department(row: PostgresTransaction.row($0)) }
            let doctors = departments.isEmpty ? [] : try await tx.rows(
                PostgresTransaction.activeDoctorsOfDepartmentsSQL, [DirectoryIdArray(departments.compactMap(\.id))])
                .map { try Doctor(row: PostgresTransaction.row($0)) }
            let byDepartment = Dictionary(grouping: doctors, by: \.departmentId)
            var askedClinic: Int64?
            if let doctorAsked {
                askedClinic = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.clinicOfDoctorSQL, [doctorAsked]))
            }
            let place = DeskDayPlace(clinic: clinic, departments: departments,
                                     doctors: departments.flatMap { department in (byDepartment[department.id ?? 0] ?? []).map { ($0, department) } },
                                     doctorAskedClinicId: askedClinic)
            let planned = try plan(place)
            let appointments = try await tx.rows(PostgresTransaction.appointmentsOfClinicDaySQL, [
                clinicId, planned.span.lowerBound, planned.span.upperBound, planned.departmentId, planned.doctorId,
            ]).map { try Appointment(row: PostgresTransaction.row($0)) }
            let clientIds = Array(Set(appointments.compactMap(\.clientId))).sorted()
            var patients: [Int64: Client] = [:]
            // The key check for the notes and the patients (a day with no appointment reads nothing more).
            var check: String?
            if !appointments.isEmpty {
                check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL, [PostgresTransaction.clientsKeyCheckSetting]))
            }
            if !clientIds.isEmpty {
                for row in try await tx.rows(PostgresTransaction.clientsOfIdsSQL, [DirectoryIdArray(clientIds)]) {
                    let stored = try PostgresTransaction.storedClientOfRow(PostgresTransaction.row(row))
                    let client = stored.personal == nil ? stored.client : try stored.opened(with: try key.cipher(keyCheck: check))
                    if let id = client.id { patients[id] = client }
                }
            }
            let facts = DeskDayFacts(place: place, plan: planned,
                                     appointments: try appointments.map { try Self.opened($0, key: key, check: check) }, patients: patients)
            for ask in audit(facts) { try await Self.append(ask, tx, ring: ring) }
            return facts
        }
    }
}

// The front desk's other reads awaited (`FrontDeskReadsStore`), with the seam's statements.
extension PostgresStore {
    /// Two statements in one snapshot (the appointment, its clinic), and a third with the
    /// patient and the key check when asked for.
    public func deskAppointment(id: Int64, withPatient: Bool) async throws -> DeskAppointment? {
        let key = personalDataKey
        return try await readAwaited { tx in
            guard let appointment = try await tx.rows(PostgresTransaction.storedAppointmentSQL, [id]).first
                .map({ try Appointment(row: PostgresTransaction.row($0)) }) else { return nil }
            let clinic = try await tx.rows(PostgresTransaction.clinicSQL, [appointment.clinicId]).first
                .map { try Clinic(row: PostgresTransaction.row($0)) }
            var patient: Client?
            if withPatient, let clientId = appointment.clientId,
               let row = try await tx.rows(PostgresTransaction.clientWithKeyCheckSQL, [clientId, PostgresTransaction.clientsKeyCheckSetting])
                .first.map(PostgresTransaction.row) {
                let stored = try PostgresTransaction.storedClientOfRow(row)
                patient = stored.personal == nil ? stored.client
                    : try stored.opened(with: try key.cipher(keyCheck: try row.value("personal_key_check", in: "settings")))
            }
            return DeskAppointment(appointment: appointment, clinic: clinic, patient: patient)
        }
    }

    /// One statement for all the doctors.
    public func liveHolds(doctorIds: [Int64], overlapping span: Range<Date>, at now: Date) async throws -> [SlotHold] {
        guard !doctorIds.isEmpty else { return [] }
        return try await readAwaited { tx in
            try await tx.rows("""
                SELECT * FROM slot_holds WHERE doctor_id = ANY($1) AND \(PostgresTransaction.overlapping("$3", "$2"))
                  AND expires_at > $4 ORDER BY starts_at, id
                """, [DirectoryIdArray(doctorIds), span.upperBound, span.lowerBound, now])
                .map { try SlotHold(row: PostgresTransaction.row($0)) }
        }
    }

    /// Four statements in one snapshot: the clinic, the month's visits, their history, the departments.
    public func monthFacts(clinicId: Int64, plan: @escaping @Sendable (Clinic) throws -> MonthPlan) async throws -> MonthFacts? {
        try await readAwaited { tx in
            guard let clinic = try await tx.rows(PostgresTransaction.clinicSQL, [clinicId]).first
                .map({ try Clinic(row: PostgresTransaction.row($0)) }) else { return nil }
            let planned = try plan(clinic)
            let visits = try await tx.rows(PostgresTransaction.appointmentsOfClinicDaySQL, [
                clinicId, planned.span.lowerBound, planned.span.upperBound, Int64?.none, Int64?.none,
            ]).map { try Appointment(row: PostgresTransaction.row($0)) }
            let events = visits.isEmpty ? [] : try await tx.rows(PostgresTransaction.eventsOfAppointmentsSQL,
                                                                 [DirectoryIdArray(visits.compactMap(\.id))])
                .map { try AppointmentEvent(row: PostgresTransaction.row($0)) }
            let departments = try await tx.rows(PostgresTransaction.departmentsOfClinicSQL, [clinicId])
                .map { try Department(row: PostgresTransaction.row($0)) }
            return MonthFacts(clinic: clinic, plan: planned, departments: departments, visits: visits,
                              events: Dictionary(grouping: events, by: \.appointmentId))
        }
    }
}

// A staff account disabled awaited (`StaffAccountsStore`), with the seam's statements.
extension PostgresStore {
    /// BEGIN, the account (its row locked), the decision, the account disabled, its sessions
    /// ended, the audit row, the account read back; COMMIT. The sessions kept by this process
    /// are forgotten before and after (other servers hear of it: Migrations/postgres/0011).
    public func disableStaff(id: Int64, decide: @escaping @Sendable (StaffMember?) throws -> AuditAsk) async throws -> StaffMember {
        let sent = statementsSent, ring = auditKeys
        keptLookups.forgetSessions()
        defer { keptLookups.forgetSessions() }
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            // An unreadable row (a role this version does not know) is no account to disable.
            let member = try await tx.rows(PostgresTransaction.staffOfIdSQL + " FOR UPDATE", [id]).first
                .flatMap { try? PostgresTransaction.staffMember(row: PostgresTransaction.row($0)) }
            let audit = try decide(member)
            _ = try await tx.rows(PostgresTransaction.deactivateStaffSQL, [id])
            _ = try await tx.rows(PostgresTransaction.deleteSessionsOfStaffSQL, [id])
            try await Self.append(audit, tx, ring: ring)
            guard let disabled = try await tx.rows(PostgresTransaction.staffOfIdSQL, [id]).first
                .map({ try PostgresTransaction.staffMember(row: PostgresTransaction.row($0)) }) else {
                throw ClinicError(.notFound, .staffNotFound, String(id))
            }
            return disabled
        }
    }

    /// BEGIN; the hold, its row locked; the decision; the hold deleted; the audit row; COMMIT.
    public func deskReleaseHold(id: Int64, decide: @escaping @Sendable (SlotHold?) throws -> AuditAsk) async throws {
        let sent = statementsSent, ring = auditKeys
        try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let audit = try decide(try await tx.rows(PostgresTransaction.slotHoldSQL + " FOR UPDATE", [id]).first
                .map { try SlotHold(row: PostgresTransaction.row($0)) })
            _ = try await tx.rows(PostgresTransaction.deleteHoldSQL, [id])
            try await Self.append(audit, tx, ring: ring)
        }
    }

    /// The conversations (1 statement), their appointments (1), for a named list their patients
    /// and latest messages (2), for a list of closed ones the open ones' unread counts (1), the
    /// clinic's zone with the key check (1): in one read-only snapshot, or for a named list in a
    /// transaction with its audit rows.
    public func deskThreads(_ ask: ThreadListAsk, audit: @escaping @Sendable (ThreadListFacts) -> [AuditAsk]) async throws -> ThreadListFacts {
        guard ask.named else { return try await readAwaited { tx in try await Self.threadListFacts(ask, tx) } }
        let sent = statementsSent, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let facts = try await Self.threadListFacts(ask, tx)
            for row in audit(facts) { try await Self.append(row, tx, ring: ring) }
            return facts
        }
    }

    static func threadListFacts(_ ask: ThreadListAsk, _ tx: AwaitedConnection) async throws -> ThreadListFacts {
        let threads = try await tx.rows(PostgresTransaction.clinicThreadsSQL, [ask.clinicId, ask.state.rawValue, ask.limit])
            .map { try StoredThread(row: PostgresTransaction.row($0)) }
        let ids = DirectoryIdArray(threads.map(\.appointmentId))
        var appointments: [Int64: Appointment] = [:]
        for raw in try await tx.rows("SELECT * FROM appointments WHERE id = ANY($1)", [ids]) {
            let appointment = try Appointment(row: PostgresTransaction.row(raw))
            appointments[appointment.id ?? 0] = appointment
        }
        var clients: [Int64: StoredClient] = [:], latest: [Int64: StoredThreadMessage] = [:]
        if ask.named {
            let patients = DirectoryIdArray(Array(Set(appointments.values.compactMap(\.clientId))).sorted())
            for raw in try await tx.rows("SELECT * FROM clients WHERE id = ANY($1)", [patients]) {
                let client = try PostgresTransaction.storedClientOfRow(PostgresTransaction.row(raw))
                clients[client.client.id ?? 0] = client
            }
            for raw in try await tx.rows("""
                SELECT DISTINCT ON (appointment_id) * FROM thread_messages WHERE appointment_id = ANY($1) ORDER BY appointment_id, id DESC
                """, [ids]) {
                let message = try StoredThreadMessage(row: PostgresTransaction.row(raw))
                latest[message.appointmentId] = message
            }
        }
        var openUnread: [Int] = []
        if ask.state != .open {
            openUnread = try await tx.rows(PostgresTransaction.clinicThreadsSQL, [ask.clinicId, StoredThread.State.open.rawValue, 500])
                .map { try StoredThread(row: PostgresTransaction.row($0)).staffUnread }
        }
        guard let found = try await tx.rows("""
            SELECT (SELECT time_zone FROM clinics WHERE id = $1) AS time_zone, (SELECT value FROM settings WHERE key = $2) AS key_check
            """, [ask.clinicId, PostgresTransaction.clientsKeyCheckSetting]).first.map(PostgresTransaction.row) else {
            throw ClinicError(.storage, .storageFailure, "the clinic's zone: no row")
        }
        let items = threads.map { thread in
            let appointment = appointments[thread.appointmentId]
            return ThreadListFacts.Item(thread: thread, appointment: appointment,
                                        client: ask.named ? appointment?.clientId.flatMap { clients[$0] } : nil,
                                        latest: ask.named && appointment != nil ? latest[thread.appointmentId] : nil)
        }
        return ThreadListFacts(items: items, openUnread: openUnread, timeZone: try found.value("time_zone", in: "clinics"),
                               personalDataKeyCheck: ask.named ? try found.value("key_check", in: "settings", key: "key") : nil)
    }

    /// How a use case locks the appointment it reads: `share` to read it as it stands (a look),
    /// `update` to change what hangs on it.
    enum RowLock: String {
        case share = "FOR SHARE", update = "FOR UPDATE"
    }

    /// The appointment `id` read with its row locked; nil for none.
    static func appointment(_ id: Int64, locked lock: RowLock, _ tx: AwaitedConnection) async throws -> Appointment? {
        try await tx.rows("SELECT * FROM appointments WHERE id = $1 \(lock.rawValue)", [id]).first
            .map { try Appointment(row: try PostgresTransaction.row($0)) }
    }

    /// A look clears its reader's unread count, and only that column: two looks hold the
    /// appointment for share together (the patient's and the desk's), and saving the whole row
    /// read before would put back the count the other one cleared.
    static func clearUnreadSQL(_ side: AttachmentAuthor) -> String {
        "UPDATE threads SET \(side == .patient ? "patient_unread" : "staff_unread") = 0 WHERE appointment_id = $1"
    }

    /// The appointment's conversation; nil for none yet.
    static func thread(ofAppointment id: Int64, _ tx: AwaitedConnection) async throws -> StoredThread? {
        try await tx.rows(PostgresTransaction.threadOfAppointmentSQL, [id]).first.map { try StoredThread(row: try PostgresTransaction.row($0)) }
    }

    /// BEGIN; the appointment read with its row locked for share (a patient's message or the
    /// desk's answer locks it for update, and is waited for); its conversation; the look's
    /// decision; the messages asked for; the names of the staff who wrote them (one statement,
    /// when any); the key check (when any message); the conversation saved when its reader's
    /// unread count is cleared; the audit row of the desk's read; COMMIT.
    public func readConversation(_ look: ConversationLook) async throws -> ConversationFacts {
        let sent = statementsSent, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let id = look.appointmentId
            let appointment = try await Self.appointment(id, locked: .share, tx)
            let thread = try await Self.thread(ofAppointment: id, tx)
            let (save, audit) = try look.decide(appointment: appointment, thread: thread)
            var facts = try await Self.stored(look, thread: thread, tx)
            if !facts.messages.isEmpty {
                facts.personalDataKeyCheck = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL,
                                                                                         [PostgresTransaction.clientsKeyCheckSetting]))
            }
            if save != nil { _ = try await tx.rows(Self.clearUnreadSQL(look.side), [id]) }
            if let audit { try await Self.append(audit, tx, ring: ring) }
            return facts
        }
    }

    /// The messages `look` asks for of `thread` (none when there is no conversation yet) and the
    /// names of the staff who wrote them (one statement, when any); no key check.
    static func stored(_ look: ConversationLook, thread: StoredThread?, _ tx: AwaitedConnection) async throws -> ConversationFacts {
        var messages: [StoredThreadMessage] = []
        let id = look.appointmentId
        if thread != nil {
            let rows = if let fetch = look.fetch {
                try await tx.rows(PostgresTransaction.threadPageSQL, [id, look.before ?? Int64.max, fetch])
            } else {
                try await tx.rows("SELECT * FROM thread_messages WHERE appointment_id = $1 ORDER BY id", [id])
            }
            messages = try rows.map { try StoredThreadMessage(row: try PostgresTransaction.row($0)) }
        }
        var names: [Int64: String] = [:]
        let staffIds = Set(messages.compactMap(\.staffId)).sorted()
        if !staffIds.isEmpty {
            for raw in try await tx.rows("SELECT id, name, surname FROM staff_accounts WHERE id = ANY($1)", [DirectoryIdArray(staffIds)]) {
                let row = try PostgresTransaction.row(raw), table = "staff_accounts"
                let name: String = try row.value("name", in: table), surname: String = try row.value("surname", in: table)
                names[try row.value("id", in: table)] = "\(name) \(surname)"
            }
        }
        return ConversationFacts(thread: thread, messages: messages, staffNames: names, personalDataKeyCheck: nil)
    }

    /// BEGIN; the appointment read with its row locked for share (as `readConversation`); its
    /// conversation when the look reads one; the look's decision; the files' rows; the
    /// conversation's page and its writers' names; the patient (the clinic's side); the clinic's
    /// time zone (not for a list of files); the key check (for a list, when there are files); the
    /// conversation saved when its reader's unread count is cleared;
    /// the audit rows; COMMIT.
    public func readFolder(_ look: FolderLook) async throws -> FolderFacts {
        let sent = statementsSent, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let id = look.appointmentId
            let stored = try await Self.appointment(id, locked: .share, tx)
            var thread: StoredThread?
            if look.conversation != nil {
                thread = try await Self.thread(ofAppointment: id, tx)
            }
            let decision = try look.decide(appointment: stored, thread: thread)
            guard let appointment = stored else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
            let files = try await tx.rows("SELECT * FROM attachments WHERE appointment_id = $1 ORDER BY id", [id])
                .map { try StoredAttachment(row: try PostgresTransaction.row($0)) }
            var conversation: ConversationFacts?
            if let page = look.conversation { conversation = try await Self.stored(page, thread: thread, tx) }
            var patient: StoredClient?
            if look.withPatient, let clientId = appointment.clientId {
                patient = try await tx.rows("SELECT * FROM clients WHERE id = $1", [clientId]).first
                    .map { try PostgresTransaction.storedClientOfRow(try PostgresTransaction.row($0)) }
            }
            var zone: String?, check: String?
            if !look.filesOnly {
                zone = try tx.value(String.self, try await tx.rows("SELECT time_zone FROM clinics WHERE id = $1", [appointment.clinicId]))
            }
            if !look.filesOnly || !files.isEmpty {
                check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL,
                                                                    [PostgresTransaction.clientsKeyCheckSetting]))
            }
            conversation?.personalDataKeyCheck = check
            if decision.save != nil, let side = look.conversation?.side { _ = try await tx.rows(Self.clearUnreadSQL(side), [id]) }
            for audit in decision.audits(files: files.count) { try await Self.append(audit, tx, ring: ring) }
            return FolderFacts(appointment: appointment, files: files, conversation: conversation, patient: patient, timeZone: zone,
                               personalDataKeyCheck: check)
        }
    }

    /// BEGIN; the appointment read with its row locked; the author's files counted; the
    /// addition's decision; the key check (stored when none); the file's row; its sealed name and
    /// digest; one statement per sealed chunk; the clinic's audit row; COMMIT.
    public func addFile(_ addition: FileAddition) async throws -> AttachmentInfo {
        let sent = statementsSent, ring = auditKeys, key = personalDataKey
        let (info, storedCheck) = try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let id = addition.appointmentId
            let appointment = try await Self.appointment(id, locked: .update, tx)
            let count = try tx.value(Int64.self, try await tx.rows(
                "SELECT count(*) FROM attachments WHERE appointment_id = $1 AND author = $2", [id, addition.author.rawValue])) ?? 0
            let row = try addition.decide(appointment: appointment, authorsFiles: Int(count))
            let check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL,
                                                                    [PostgresTransaction.clientsKeyCheckSetting]))
            let cipher = try await Self.sealingCipher(key, stored: check, tx)
            guard let fileId = try tx.value(Int64.self, try await tx.rows("""
                INSERT INTO attachments (appointment_id, client_id, author, staff_id, content_type, size, width, height, thumbnail_size,
                                         chunk_size, created_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id
                """, [row.appointmentId, row.clientId, row.author.rawValue, row.staffId, row.contentType, row.size, row.width, row.height,
                      row.thumbnailSize, row.chunkSize, row.createdAt])) else {
                throw ClinicError(.storage, .storageFailure, "attachments: no id returned")
            }
            let sealed = try addition.sealed(id: fileId, dataCipher: cipher)
            _ = try await tx.rows("UPDATE attachments SET meta = $1, file_key = $2 WHERE id = $3", [sealed.meta, sealed.fileKey, fileId])
            for chunk in sealed.chunks {
                _ = try await tx.rows("INSERT INTO attachment_chunks (attachment_id, part, idx, data) VALUES ($1, $2, $3, $4)",
                                      [fileId, chunk.part.rawValue, chunk.index, chunk.data])
            }
            let info = addition.info(id: fileId)
            if let audit = addition.audit(info, clientId: row.clientId) { try await Self.append(audit, tx, ring: ring) }
            return (info, check)
        }
        if storedCheck == nil { keptLookups.forgetSessions() }
        return info
    }

    /// BEGIN; the appointment read with its row locked; the file's row; the removal's decision;
    /// the file deleted (its chunks with it); COMMIT.
    public func removeFile(_ removal: FileRemoval) async throws {
        let sent = statementsSent
        try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let appointment = try await Self.appointment(removal.appointmentId, locked: .update, tx)
            let file = try await tx.rows("SELECT * FROM attachments WHERE id = $1", [removal.attachmentId]).first
                .map { try StoredAttachment(row: try PostgresTransaction.row($0)) }
            try removal.decide(appointment: appointment, file: file)
            _ = try await tx.rows("DELETE FROM attachments WHERE id = $1", [removal.attachmentId])
        }
    }

    /// BEGIN; the appointment; the file's row; the opening's decision; the key check; the
    /// clinic's audit row; COMMIT (4 statements for the patient, and 2 for the audit row).
    public func openFile(_ opening: FileOpening) async throws -> (file: StoredAttachment, keyCheck: String?) {
        let sent = statementsSent, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let appointment = try await tx.rows("SELECT * FROM appointments WHERE id = $1", [opening.appointmentId]).first
                .map { try Appointment(row: try PostgresTransaction.row($0)) }
            let file = try await tx.rows(PostgresTransaction.attachmentSQL, [opening.attachmentId]).first
                .map { try StoredAttachment(row: try PostgresTransaction.row($0)) }
            let audit = try opening.decide(appointment: appointment, file: file)
            guard let file else { throw ClinicError(.notFound, .attachmentNotFound, String(opening.attachmentId)) }
            let check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL,
                                                                    [PostgresTransaction.clientsKeyCheckSetting]))
            if let audit { try await Self.append(audit, tx, ring: ring) }
            return (file, check)
        }
    }

    /// One statement; with `withKeys`, three in one snapshot: the chunk, the file's row, the key check.
    public func fileChunk(attachmentId: Int64, part: AttachmentPart, index: Int, withKeys: Bool) async throws -> FileChunk? {
        let binds: [any PostgresBindable] = [attachmentId, part.rawValue, index]
        guard withKeys else {
            return try await awaitedRows(PostgresTransaction.attachmentChunkSQL, binds).first
                .map { FileChunk(sealed: try $0.value("data", in: "attachment_chunks"), file: nil, keyCheck: nil) }
        }
        return try await readAwaited { tx in
            guard let sealed = try tx.value(Data.self, try await tx.rows(PostgresTransaction.attachmentChunkSQL, binds)) else { return nil }
            let file = try await tx.rows(PostgresTransaction.attachmentSQL, [attachmentId]).first
                .map { try StoredAttachment(row: try PostgresTransaction.row($0)) }
            let check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL, [PostgresTransaction.clientsKeyCheckSetting]))
            return FileChunk(sealed: sealed, file: file, keyCheck: check)
        }
    }

    /// BEGIN; the appointment read with its row locked; its conversation; the closing's
    /// decision; the conversation saved; the audit row; COMMIT.
    public func deskCloseThread(_ closing: ThreadClosing) async throws {
        let sent = statementsSent, ring = auditKeys
        try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let appointment = try await Self.appointment(closing.appointmentId, locked: .update, tx)
            let thread = try await Self.thread(ofAppointment: closing.appointmentId, tx)
            let (closed, audit) = try closing.decide(appointment: appointment, thread: thread)
            _ = try await tx.rows(PostgresTransaction.saveThreadSQL, PostgresTransaction.saveThreadBinds(closed))
            try await Self.append(audit, tx, ring: ring)
        }
    }

    /// BEGIN; the appointment read with its row locked; its conversation; the file pointed at,
    /// the patient's counts (and for a cancelled appointment the `booking.` settings) or the
    /// answer's message context, one statement each; the decision; the conversation saved; the
    /// key check read (stored when none); the message sealed and inserted; an answer's inbox
    /// message with its e-mail (one statement) and audit row; COMMIT.
    public func postInThread(_ post: ThreadPost) async throws -> ThreadMessage {
        let sent = statementsSent, ring = auditKeys, key = personalDataKey
        let (message, storedCheck) = try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let id = post.appointmentId
            let appointment = try await Self.appointment(id, locked: .update, tx)
            let thread = try await Self.thread(ofAppointment: id, tx)
            var facts = ThreadPostFacts(appointment: appointment, thread: thread, attachmentAppointmentId: nil, counts: nil,
                                        bookingSettings: [:], messageContext: nil)
            if let attachmentId = post.attachmentId {
                facts.attachmentAppointmentId = try tx.value(Int64.self, try await tx.rows(
                    "SELECT appointment_id FROM attachments WHERE id = $1", [attachmentId]))
            }
            if post.isPatients {
                facts.counts = try await tx.rows(PostgresTransaction.threadMessageCountsSQL,
                                                 [id, AttachmentAuthor.patient.rawValue, post.windowStart]).first
                    .map { try ThreadMessageCounts(row: try PostgresTransaction.row($0)) }
                if appointment?.status == .cancelled { facts.bookingSettings = try await Self.bookingSettings(tx) }
            } else if let appointment, let clientId = appointment.clientId {
                facts.messageContext = try await tx.rows(PostgresTransaction.messageContextSQL,
                                                         [appointment.departmentId, clientId, appointment.clinicId]).first
                    .map { try PostgresTransaction.messageContext(try PostgresTransaction.row($0)) }
            }
            let decision = try post.decide(facts)
            _ = try await tx.rows(PostgresTransaction.saveThreadSQL, PostgresTransaction.saveThreadBinds(decision.thread))
            let check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL, [PostgresTransaction.clientsKeyCheckSetting]))
            let sealed = try post.sealed(try await Self.sealingCipher(key, stored: check, tx))
            guard let messageId = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.insertThreadMessageSQL, [
                id, decision.author.rawValue, decision.staff?.id, sealed, post.attachmentId, post.now]))
            else { throw ClinicError(.storage, .storageFailure, "thread_messages: no id returned") }
            if let message = decision.message {
                _ = try await tx.rows(PostgresTransaction.postMessageSQL, [
                    message.clientId, message.kind.rawValue, message.subject, message.body, post.now, message.emailed, message.clinicId,
                    message.staffId, id])
            }
            if let audit = decision.audit { try await Self.append(audit, tx, ring: ring) }
            return (post.message(id: messageId, decision), check == nil)
        }
        // A key check stored by this message: the sessions this store keeps were read without it.
        if storedCheck { keptLookups.forgetSessions() }
        return message
    }

    /// One statement.
    /// One read-only snapshot: the latest messages of each conversation (one statement, a window
    /// over the patient's conversations asked for), and the key check when there are any.
    public func clinicAnswers(clientId: Int64, appointmentIds: Set<Int64>) async throws
        -> (messages: [StoredThreadMessage], keyCheck: String?) {
        guard !appointmentIds.isEmpty else { return ([], nil) }
        return try await readAwaited { tx in
            let messages = try await tx.rows("""
                SELECT id, appointment_id, author, staff_id, body, attachment_id, created_at FROM (
                    SELECT m.*, row_number() OVER (PARTITION BY m.appointment_id ORDER BY m.id DESC) AS latest
                    FROM thread_messages m JOIN threads t ON t.appointment_id = m.appointment_id
                    WHERE t.client_id = $1 AND m.appointment_id = ANY($2)) page
                WHERE latest <= $3 ORDER BY appointment_id, id
                """, [clientId, DirectoryIdArray(appointmentIds.sorted()), Int64(ThreadLimits.pageDefault)])
                .map { try StoredThreadMessage(row: try PostgresTransaction.row($0)) }
            guard !messages.isEmpty else { return (messages, nil) }
            return (messages, try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL,
                                                                          [PostgresTransaction.clientsKeyCheckSetting])))
        }
    }

    public func unreadAnswers(clientId: Int64) async throws -> Int {
        let rows = try await awaitedRows("SELECT coalesce(sum(patient_unread), 0)::bigint AS unread FROM threads WHERE client_id = $1",
                                         [clientId])
        let unread: Int64 = try rows.first?.value("unread", in: "threads") ?? 0
        return Int(unread)
    }

    /// BEGIN; whether the clinic exists and the doctor's clinic (one statement); the addition's
    /// check; the account inserted (`ON CONFLICT` on the login key: `login_taken`); the audit
    /// row; COMMIT.
    public func addStaff(_ addition: StaffAddition) async throws -> StaffMember {
        let sent = statementsSent, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            guard let found = try await tx.rows("""
                SELECT EXISTS (SELECT 1 FROM clinics WHERE id = $1) AS clinic_exists,
                       (SELECT departments.clinic_id FROM doctors JOIN departments ON departments.id = doctors.department_id
                        WHERE doctors.id = $2) AS doctor_clinic
                """, [addition.clinicId, addition.doctorId ?? 0]).first
            else { throw ClinicError(.storage, .storageFailure, "the staff addition's check returned no row") }
            let row = try PostgresTransaction.row(found)
            let exists: Bool? = try row.value("clinic_exists", in: "clinics")
            let doctorsClinic: Int64? = try row.value("doctor_clinic", in: "doctors")
            try addition.check(clinicExists: exists ?? false, doctorsClinic: doctorsClinic)
            guard let inserted = try await tx.rows(PostgresTransaction.insertStaffSQL, PostgresTransaction.insertStaffBinds(addition)).first
            else { throw ClinicError(.loginTaken, .loginTaken, addition.login) }
            let member = try PostgresTransaction.staffMember(row: PostgresTransaction.row(inserted))
            try await Self.append(addition.audit(member), tx, ring: ring)
            return member
        }
    }
}

// The operator's settings awaited (`OperatorStore`).
extension PostgresStore {
    /// One statement.
    public func settings(prefix: String) async throws -> [String: String] {
        try PostgresTransaction.settings(try await awaitedRows(PostgresTransaction.settingsSQL, [prefix]))
    }

    /// BEGIN; the appointments with folders ended (one statement); for each, the files, the
    /// messages and the conversation deleted and the audit row; COMMIT.
    public func purgeFolders(endedBefore: Date, limit: Int, audit: @escaping @Sendable (PurgedFolder) -> AuditAsk) async throws
        -> [PurgedFolder] {
        let sent = statementsSent, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            var purged: [PurgedFolder] = []
            for found in try await tx.rows(PostgresTransaction.foldersEndedSQL, [endedBefore, Int64(limit)]) {
                let row = try PostgresTransaction.row(found)
                let id: Int64 = try row.value("id", in: "appointments")
                let clientId: Int64? = try row.value("client_id", in: "appointments")
                let files = try await tx.rows(PostgresTransaction.deleteFilesSQL + " RETURNING 1", [id]).count
                let messages = try await tx.rows(PostgresTransaction.deleteThreadMessagesSQL + " RETURNING 1", [id]).count
                _ = try await tx.rows(PostgresTransaction.deleteThreadSQL, [id])
                let folder = PurgedFolder(appointmentId: id, clientId: clientId, files: files, messages: messages)
                try await Self.append(audit(folder), tx, ring: ring)
                purged.append(folder)
            }
            return purged
        }
    }

    /// One statement.
    public func auditExport(since: Date) async throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        try AuditEntry.read(try await awaitedRows(PostgresTransaction.auditSinceSQL, [since]))
    }

    /// BEGIN; the setting proposed (`ON CONFLICT DO NOTHING`: another server's stays); the
    /// setting read (a statement of its own: it sees one committed meanwhile); COMMIT.
    public func keepSetting(_ key: String, proposing value: String) async throws -> String {
        let sent = statementsSent
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            _ = try await tx.rows(PostgresTransaction.keepSettingSQL, [key, value])
            guard let kept = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL, [key])) else {
                throw ClinicError(.storage, .storageFailure, key)
            }
            return kept
        }
    }

    /// BEGIN; the setting written; the settings of the prefix; COMMIT.
    public func changeSetting(_ key: String, to value: String, prefix: String) async throws -> [String: String] {
        let sent = statementsSent
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            _ = try await tx.rows(PostgresTransaction.setSettingSQL, [key, value])
            return try PostgresTransaction.settings(try await tx.rows(PostgresTransaction.settingsSQL, [prefix]).map(PostgresTransaction.row))
        }
    }
}

// The front desk's booking for a patient awaited (`FrontDeskChangesStore`).
extension PostgresStore {
    /// BEGIN; the department, its clinic and the patient named (one statement); the rules' say;
    /// for a doctor's time, the open offers holding it locked with what their withdrawal is told
    /// from (one statement), their writes and messages; the booking's locks, gather and write
    /// (`run`, as a patient's); the audit row; COMMIT.
    public func deskBook(_ rules: DeskBookingRules) async throws -> Appointment {
        let sent = statementsSent, key = personalDataKey, ring = auditKeys
        let done = try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let facts = try await Self.deskFacts(rules.ask, tx)
            let clientId = try rules.patient(facts)
            if let (doctorId, span) = rules.holding(facts) {
                let offers = try await tx.rows("""
                    SELECT o.*, e.status AS entry_status, c.preferred_language AS client_language, row_to_json(k)::text AS offer_clinic
                    FROM slot_holds h JOIN waitlist_offers o ON o.hold_id = h.id AND o.client_id = h.client_id AND o.status = 'open'
                    LEFT JOIN waitlist_entries e ON e.id = o.entry_id LEFT JOIN clients c ON c.id = o.client_id
                    LEFT JOIN clinics k ON k.id = o.clinic_id
                    WHERE h.doctor_id = $1 AND \(PostgresTransaction.overlapping("$3", "$2", alias: "h.")) AND h.expires_at > $4
                    ORDER BY h.starts_at, h.id, o.id
                    FOR UPDATE OF o
                    """, [doctorId, span.upperBound, span.lowerBound, rules.now]).map { found in
                    let row = try PostgresTransaction.row(found)
                    let status: String?, language: String?, clinic: String?
                    status = try row.value("entry_status", in: "waitlist_entries")
                    language = try row.value("client_language", in: "clients")
                    clinic = try row.value("offer_clinic", in: "clinics")
                    return HoldingOffer(offer: try WaitlistOffer(row: row), entryStatus: status.flatMap(WaitlistEntryStatus.init(rawValue:)),
                                        language: language.flatMap(Language.init(rawValue:)),
                                        clinic: try clinic.map { try Clinic(row: try JSONRows.row($0)) })
                }
                let withdrawal = rules.withdrawing(offers)
                try await Self.write(withdrawal.writes, now: rules.now, tx, key: key)
                for message in withdrawal.messages {
                    _ = try await tx.rows(PostgresTransaction.postMessageSQL, [
                        message.clientId, MessageKind.waitlist.rawValue, message.subject, message.body, rules.now, Bool?.none,
                        message.clinicId, Int64?.none, Int64?.none])
                }
            }
            let done = try await Self.run(try rules.booking(clientId), tx, key: key, ring: ring)
            try await Self.append(rules.audit(done.appointment), tx, ring: ring)
            return done
        }
        if done.storedKeyCheck { keptLookups.forgetSessions() }
        return done.appointment
    }

    /// The department, its clinic and the patient named (one statement).
    static func deskFacts(_ ask: DeskPatientAsk, _ tx: AwaitedConnection) async throws -> DeskBookingFacts {
        guard let found = try await tx.rows("""
            SELECT (SELECT row_to_json(p)::text FROM departments p WHERE p.id = $1) AS department,
                   (SELECT row_to_json(c)::text FROM clinics c WHERE c.id = (SELECT clinic_id FROM departments WHERE id = $1)) AS clinic,
                   CASE WHEN $2::bigint > 0 THEN (SELECT $2::bigint WHERE \(PostgresTransaction.isPatientCondition("$2", "$3")))
                        ELSE (SELECT id FROM clients WHERE login_key = $4) END AS patient_id
            """, [ask.departmentId, ask.patientId ?? 0, ask.member.clinicId, ask.patientLoginKey ?? ""]).first
        else { throw ClinicError(.storage, .storageFailure, "the front desk's gather returned no row") }
        let row = try PostgresTransaction.row(found)
        let department: String? = try row.value("department", in: "departments")
        let clinic: String? = try row.value("clinic", in: "clinics")
        return DeskBookingFacts(
            department: try department.map { try Department(row: try JSONRows.row($0)) },
            clinic: try clinic.map { try Clinic(row: try JSONRows.row($0)) },
            patientId: ask.patientId == nil && ask.patientLoginKey == nil ? nil : try row.value("patient_id", in: "clients"))
    }

    /// BEGIN; the department, its clinic and the patient named (one statement); the rules' say;
    /// the join as a patient's (`join`: the patient's lock with the facts, the visit it comes
    /// before, their entries, the writes); the note; the audit row; COMMIT.
    public func deskJoinWaitlist(_ rules: DeskWaitlistRules) async throws -> WaitlistEntry {
        let sent = statementsSent, key = personalDataKey, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let clientId = try rules.ask.patient(try await Self.deskFacts(rules.ask, tx))
            let entry = try await Self.join(rules.joinAsk(clientId: clientId), { facts in try rules.joining(facts, clientId: clientId) }, tx)
            try await Self.write(rules.after(entry), tx, ring: ring, key: key)
            return entry
        }
    }

    /// BEGIN; the clinic, the department and the patient named if they are the clinic's (one
    /// statement); the rules' say; the recipients with their languages (one statement); each
    /// one's message (one statement) and audit row; COMMIT.
    public func deskMessage(_ rules: DeskMessageRules) async throws -> Int {
        let sent = statementsSent, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            guard let found = try await tx.rows("""
                SELECT (SELECT row_to_json(c)::text FROM clinics c WHERE c.id = $1) AS clinic,
                       (SELECT row_to_json(p)::text FROM departments p WHERE p.id = $2::bigint) AS department,
                       (SELECT x.id FROM clients x WHERE x.login_key = $3 AND \(PostgresTransaction.isPatientCondition("x.id", "$1"))) AS patient_id
                """, [rules.member.clinicId, rules.departmentId, rules.patientLoginKey ?? ""]).first
            else { throw ClinicError(.storage, .storageFailure, "the desk message's gather returned no row") }
            let row = try PostgresTransaction.row(found)
            let clinicJSON: String? = try row.value("clinic", in: "clinics"), department: String? = try row.value("department", in: "departments")
            let facts = DeskMessageFacts(clinic: try clinicJSON.map { try Clinic(row: try JSONRows.row($0)) },
                                         department: try department.map { try Department(row: try JSONRows.row($0)) },
                                         patientId: rules.patientLoginKey == nil ? nil : try row.value("patient_id", in: "clients"))
            let ids: [Int64]
            switch try rules.target(facts) {
            case .patient(let id): ids = [id]
            case .day(let span, let departmentId):
                ids = try await tx.rows(PostgresTransaction.activePatientsSQL, [rules.member.clinicId, span.lowerBound, span.upperBound,
                                                                                departmentId])
                    .map { try PostgresTransaction.row($0).decode(Int64.self, forColumn: "client_id") }
            }
            guard let clinic = facts.clinic, !ids.isEmpty else { return 0 }
            let languages = Dictionary(uniqueKeysWithValues: try await tx.rows(
                "SELECT id, preferred_language FROM clients WHERE id = ANY($1)", [DirectoryIdArray(ids)]).map { found in
                let row = try PostgresTransaction.row(found)
                let language: String? = try row.value("preferred_language", in: "clients")
                return (try row.decode(Int64.self, forColumn: "id"), language.flatMap(Language.init(rawValue:)))
            })
            let written = rules.messages(ids.map { ($0, languages[$0] ?? nil) }, clinic: clinic)
            for (message, audit) in written {
                _ = try await tx.rows(PostgresTransaction.postMessageSQL, [
                    message.clientId, MessageKind.clinic.rawValue, message.subject, message.body, rules.now, Bool?.none, message.clinicId,
                    rules.member.id, Int64?.none])
                try await Self.append(audit, tx, ring: ring)
            }
            return written.count
        }
    }
}

extension PostgresStore {
    /// BEGIN; whether they are the clinic's patient (not: nothing more), the patient with the key
    /// check, the clinic; the rules' say; the code's hash; its e-mail's delivery and sealed body;
    /// the audit row; COMMIT.
    public func deskClaimCode(_ rules: ClaimCodeRules) async throws -> ClaimCode {
        let sent = statementsSent, key = personalDataKey, ring = auditKeys
        let done = try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            var facts = ClaimCodeFacts(patient: nil, clinic: nil), check: String?
            if rules.patientId > 0,
               try tx.value(Bool.self, try await tx.rows(PostgresTransaction.isPatientSQL, [rules.patientId, rules.member.clinicId])) == true,
               let row = try await tx.rows(PostgresTransaction.clientWithKeyCheckSQL, [rules.patientId, PostgresTransaction.clientsKeyCheckSetting])
                .first.map(PostgresTransaction.row) {
                check = try row.value("personal_key_check", in: "settings")
                let stored = try PostgresTransaction.storedClientOfRow(row)
                facts.patient = stored.personal == nil ? stored.client : try stored.opened(with: try key.cipher(keyCheck: check))
                facts.clinic = try await tx.rows(PostgresTransaction.clinicSQL, [rules.member.clinicId]).first
                    .map { try Clinic(row: PostgresTransaction.row($0)) }
            }
            let write = try rules.decide(facts)
            _ = try await tx.rows(PostgresTransaction.replaceClaimCodeSQL, [rules.patientId, write.hash, rules.expiresAt])
            if let email = write.email {
                guard let id = try tx.value(Int64.self, try await tx.rows(PostgresTransaction.enqueueEmailCodeSQL, [rules.patientId, rules.now]))
                else { throw ClinicError(.storage, .storageFailure, "deliveries: no id returned") }
                let sealed = try ClaimCodeRules.sealed(email, deliveryId: id, cipher: try await Self.sealingCipher(key, stored: check, tx))
                _ = try await tx.rows(PostgresTransaction.deliveryPayloadSQL, [sealed, id])
            }
            try await Self.append(write.audit, tx, ring: ring)
            return (write.answer, write.email != nil && check == nil)
        }
        // A key check stored by this code's e-mail: the sessions this store keeps were read without it.
        if done.1 { keptLookups.forgetSessions() }
        return done.0
    }
}

// The front desk's page of a patient awaited (`FrontDeskReadsStore.deskPatient`).
extension PostgresStore {
    /// BEGIN, whether they are the clinic's patient (not: nothing more), the patient with the key
    /// check, the audit row, their visits at the clinic, their history, the clinic; COMMIT.
    public func deskPatient(id: Int64, clinicId: Int64, audit: @escaping @Sendable (Int64) -> AuditAsk) async throws -> DeskPatient? {
        guard id > 0 else { return nil }
        let sent = statementsSent, key = personalDataKey, ring = auditKeys
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            guard try tx.value(Bool.self, try await tx.rows(PostgresTransaction.isPatientSQL, [id, clinicId])) == true,
                  let row = try await tx.rows(PostgresTransaction.clientWithKeyCheckSQL, [id, PostgresTransaction.clientsKeyCheckSetting])
                    .first.map(PostgresTransaction.row) else { return nil }
            let check: String? = try row.value("personal_key_check", in: "settings")
            let stored = try PostgresTransaction.storedClientOfRow(row)
            let patient = stored.personal == nil ? stored.client : try stored.opened(with: try key.cipher(keyCheck: check))
            try await Self.append(audit(id), tx, ring: ring)
            let visits = try await tx.rows(PostgresTransaction.appointmentsOfPatientAtClinicSQL, [id, clinicId])
                .map { try Self.opened(try Appointment(row: PostgresTransaction.row($0)), key: key, check: check) }
            let events = visits.isEmpty ? [] : try await tx.rows(PostgresTransaction.eventsOfAppointmentsSQL,
                                                                 [DirectoryIdArray(visits.compactMap(\.id))])
                .map { try AppointmentEvent(row: PostgresTransaction.row($0)) }
            let history = Dictionary(grouping: events, by: \.appointmentId)
            let clinic = try await tx.rows(PostgresTransaction.clinicSQL, [clinicId]).first.map { try Clinic(row: PostgresTransaction.row($0)) }
            return DeskPatient(patient: patient, clinic: clinic, visits: visits.map { ($0, history[$0.id ?? 0] ?? []) })
        }
    }
}

// The front desk's patient search awaited (`PatientSearchStore`), with the seam's statements.
extension PostgresStore {
    /// One statement: both settings.
    public func patientIndexChecks() async throws -> PatientIndexChecks {
        guard let row = try await awaitedRows(Self.indexChecksSQL, Self.indexChecksBinds).first else {
            return PatientIndexChecks(personalData: nil, index: nil)
        }
        return PatientIndexChecks(personalData: try row.value("personal_check", in: "settings"), index: try row.value("index_check", in: "settings"))
    }

    /// The personal-data key's check and the search index's, in one statement.
    static let indexChecksSQL = "SELECT (SELECT value FROM settings WHERE key = $1) AS personal_check, (SELECT value FROM settings WHERE key = $2) AS index_check"
    static let indexChecksBinds: [any PostgresBindable] = [PostgresTransaction.clientsKeyCheckSetting, PatientIndex.checkSetting]

    /// In one transaction: the two checks (one statement); when the index's is not the key's,
    /// the index and its check deleted, the patients read 500 at a time by id, each one's tokens
    /// inserted (one statement a patient), and the new check stored. Idempotent, as the
    /// seam's rebuild: two servers at once end with the same index.
    public func makePatientIndexCurrent() async throws -> FieldCipher {
        let sent = statementsSent, key = personalDataKey
        return try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            let row = try await tx.rows(Self.indexChecksSQL, Self.indexChecksBinds).first.map(PostgresTransaction.row)
            let keyCheck: String? = try row?.value("personal_check", in: "settings")
            let cipher = try key.cipher(keyCheck: keyCheck)
            let check = PatientIndex.check(cipher)
            guard try row?.value("index_check", in: "settings") as String? != check else { return cipher }
            _ = try await tx.rows(PostgresTransaction.clearSearchIndexSQL, [])
            _ = try await tx.rows(PostgresTransaction.deleteSettingSQL, [PatientIndex.checkSetting])
            var after: Int64 = 0
            while true {
                let page = try await tx.rows(PostgresTransaction.storedClientsPageSQL, [after, Int64(500)])
                    .map { try PostgresTransaction.storedClientOfRow(try PostgresTransaction.row($0)) }
                guard let last = page.last?.client.id else { break }
                for stored in page {
                    guard let (id, tokens) = try PatientIndex.rebuildTokens(stored, cipher: cipher), !tokens.isEmpty else { continue }
                    _ = try await tx.rows(PostgresTransaction.insertSearchTokensSQL(tokens.count), [id] + tokens)
                }
                after = last
            }
            _ = try await tx.rows(PostgresTransaction.setSearchIndexCheckSQL, [PatientIndex.checkSetting, check])
            return cipher
        }
    }

    /// In one snapshot: a statement per word until none is left, then the patients (one statement).
    public func searchedPatients(clinicId: Int64, wordTokens: [Data]) async throws -> [StoredClient] {
        try await readAwaited { tx in
            var candidates: Set<Int64>?
            for token in wordTokens {
                let found = Set(try await tx.rows(PostgresTransaction.patientsWithAnySearchTokenSQL(1), [clinicId, token])
                    .map { try PostgresTransaction.row($0).decode(Int64.self, forColumn: "client_id") })
                candidates = candidates.map { $0.intersection(found) } ?? found
                if candidates?.isEmpty == true { break }
            }
            guard let ids = candidates, !ids.isEmpty else { return [] }
            return try await tx.rows(PostgresTransaction.clientsOfIdsSQL, [DirectoryIdArray(ids.sorted())])
                .map { try PostgresTransaction.storedClientOfRow(PostgresTransaction.row($0)) }
        }
    }

    /// BEGIN, each row appended (the chain's head locked by the first); COMMIT.
    public func appendAudit(_ asks: [AuditAsk]) async throws {
        guard !asks.isEmpty else { return }
        let sent = statementsSent, ring = auditKeys
        try await transaction { connection, logger in
            let tx = AwaitedConnection(connection: connection, logger: logger, sent: sent)
            for ask in asks { try await Self.append(ask, tx, ring: ring) }
        }
    }
}
