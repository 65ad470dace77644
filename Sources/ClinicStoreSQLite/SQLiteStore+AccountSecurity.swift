import ClinicKit
import Foundation

// A patient's keys to their account awaited (issue 56: `AccountSecurityStore`, and
// `ClientChangesStore`: their record's changes), on SQLite:
// reads on the reader queue, changes each one write of the next batch, the seam's statements
// inside and ClinicKit's writes (`SessionsEnding`, `PasswordChange`, `CalendarAddress`).

extension SQLiteStore {
    public func calendarToken(ofClient clientId: Int64, issuing token: String, rotate: Bool, at now: Date) async throws -> String? {
        try await commit {
            try self.writing { tx in
                guard try tx.clientExists(id: clientId) else { return nil }
                let cipher = try self.sealingCipher(tx)
                if !rotate, let sealed = try tx.sealedCalendarToken(ofClient: clientId) {
                    return try CalendarAddress.opened(sealed, clientId: clientId, cipher: cipher)
                }
                try CalendarAddress.store(tx, token, clientId: clientId, cipher: cipher, now: now)
                return token
            }
        }
    }

    public func existingCalendarToken(ofClient clientId: Int64) async throws -> String? {
        try await readAwaited { tx in
            guard let sealed = try tx.sealedCalendarToken(ofClient: clientId) else { return nil }
            return try CalendarAddress.opened(sealed, clientId: clientId, cipher: try self.cipher(tx))
        }
    }

    public func revokeCalendarToken(ofClient clientId: Int64) async throws {
        try await commit { try self.writing { tx in try tx.deleteCalendarToken(ofClient: clientId) } }
    }

    public func endOtherSessions(_ ending: SessionsEnding) async throws -> Int? {
        try await commit { try self.writing { tx in try ending.apply(tx, store: self) } }
    }

    public func reservePasswordCheck(clientId: Int64, at now: Date, forgetBefore: Date,
                                     decide: @escaping @Sendable (LoginAttempts) throws -> Void) async throws -> ReservedPasswordCheck? {
        try await commit {
            try self.writing { tx in
                guard let client = try tx.storedClient(id: clientId) else { return nil }
                try tx.forgetLoginAttempts(windowStartedBy: forgetBefore)
                let attempts = try tx.countLoginAttempt(loginKey: client.client.loginKey, at: now)
                try decide(attempts)
                return ReservedPasswordCheck(client: client, personalDataKeyCheck: try tx.personalDataKeyCheck(),
                                             window: attempts.windowStart)
            }
        }
    }

    public func completePasswordChange(_ change: PasswordChange) async throws {
        try await commit { try self.writing { tx in try change.apply(tx, store: self) } }
    }

    public func deleteAccount(_ deletion: AccountDeletion) async throws {
        try await commit { try self.writing { tx in try deletion.apply(tx) } }
        await truncateLogAwaited()
    }

    public func addFile(_ addition: FileAddition) async throws -> AttachmentInfo {
        try await commit { try self.writing { tx in try addition.apply(tx) } }
    }

    public func removeFile(_ removal: FileRemoval) async throws {
        try await commit { try self.writing { tx in try removal.apply(tx) } }
        await truncateLogAwaited()
    }

    /// The log truncated, as `truncateLog` does, on the writer but outside the group commit.
    private func truncateLogAwaited() async {
        guard path != nil else { return }
        _ = try? await writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    public func removePhone(ofClient clientId: Int64) async throws -> Bool {
        try await commit { try self.writing { tx in try ClientController.removePhone(tx, clientId: clientId) } }
    }

    public func confirmPhoneCode(ofClient clientId: Int64, decide: @escaping @Sendable (StoredPhone?) throws -> PhoneCodeDecision)
        async throws -> (decision: PhoneCodeDecision, number: String?)? {
        try await commit {
            try self.writing { tx -> (decision: PhoneCodeDecision, number: String?)? in
                guard try tx.clientExists(id: clientId) else { return nil }
                let decision = try decide(try tx.phone(ofClient: clientId))
                try decision.apply(tx, clientId: clientId)
                guard case .confirm(let phone, _) = decision else { return (decision, nil) }
                return (decision, try phone.number(cipher: try self.cipher(tx)))
            }
        }
    }

    public func changeClient<T: Sendable>(id: Int64, phone: Bool, number: String?,
                                          decide: @escaping @Sendable (ClientChangeFacts?) throws -> ClientChange<T>) async throws -> T {
        try await commit { try self.writing { tx in try ClientChangeFacts.change(tx, store: self, id: id, phone: phone, number: number, decide) } }
    }

    public func loginTaken(loginKey: String) async throws -> Bool {
        try await readAwaited { tx in try tx.loginExists(loginKey: loginKey) }
    }

    public func addClient(_ ask: RegistrationFactsRequest, decide: @escaping @Sendable (RegistrationFacts) throws -> NewClient)
        async throws -> Client {
        try await commit { try self.writing { tx in try NewClient.add(tx, store: self, ask, decide) } }
    }

    public func deskPatient(id: Int64, clinicId: Int64, audit: @escaping @Sendable (Int64) -> AuditAsk) async throws -> DeskPatient? {
        try await commit { try self.writing { tx in try DeskPatient.read(tx, store: self, id: id, clinicId: clinicId, audit: audit) } }
    }

    public func deskBook(_ rules: DeskBookingRules) async throws -> Appointment {
        try await commit { try self.writing { tx in try rules.run(tx) } }
    }

    public func deskMessage(_ rules: DeskMessageRules) async throws -> Int {
        try await commit { try self.writing { tx in try rules.run(tx) } }
    }

    public func deskJoinWaitlist(_ rules: DeskWaitlistRules) async throws -> WaitlistEntry {
        try await commit { try self.writing { tx in try rules.run(tx) } }
    }

    public func deskClaimCode(_ rules: ClaimCodeRules) async throws -> ClaimCode {
        try await commit { try self.writing { tx in try rules.run(tx, store: self) } }
    }

    public func deskReleaseHold(id: Int64, decide: @escaping @Sendable (SlotHold?) throws -> AuditAsk) async throws {
        try await commit { try self.writing { tx in try HoldRelease.apply(tx, id: id, decide: decide) } }
    }

    public func deskThreads(_ ask: ThreadListAsk, audit: @escaping @Sendable (ThreadListFacts) -> [AuditAsk]) async throws -> ThreadListFacts {
        guard ask.named else { return try await readAwaited { tx in try ThreadListFacts.read(tx, ask) } }
        return try await commit {
            try self.writing { tx in
                let facts = try ThreadListFacts.read(tx, ask)
                for row in audit(facts) { try AuditLog.append(tx, row) }
                return facts
            }
        }
    }

    public func readConversation(_ look: ConversationLook) async throws -> ConversationFacts {
        try await commit { try self.writing { tx in try look.read(tx) } }
    }

    /// A snapshot first; the write transaction (which reads again) only when the look writes:
    /// an audit row, or answers to mark read.
    public func readFolder(_ look: FolderLook) async throws -> FolderFacts {
        let (facts, decision) = try await readAwaited { tx in try look.facts(tx) }
        guard decision.writes else { return facts }
        return try await commit { try self.writing { tx in try look.read(tx) } }
    }

    /// A snapshot for the patient; the clinic's opening is a write (its audit row).
    public func openFile(_ opening: FileOpening) async throws -> (file: StoredAttachment, keyCheck: String?) {
        guard opening.audited else {
            let (file, check, _) = try await readAwaited { tx in try opening.facts(tx) }
            return (file, check)
        }
        return try await commit { try self.writing { tx in try opening.read(tx) } }
    }

    public func fileChunk(attachmentId: Int64, part: AttachmentPart, index: Int, withKeys: Bool) async throws -> FileChunk? {
        try await readAwaited { tx in
            guard let sealed = try tx.attachmentChunk(attachmentId, part: part, index: index) else { return nil }
            guard withKeys else { return FileChunk(sealed: sealed, file: nil, keyCheck: nil) }
            return FileChunk(sealed: sealed, file: try tx.attachment(id: attachmentId), keyCheck: try tx.personalDataKeyCheck())
        }
    }

    public func deskCloseThread(_ closing: ThreadClosing) async throws {
        try await commit { try self.writing { tx in try closing.apply(tx) } }
    }

    public func postInThread(_ post: ThreadPost) async throws -> ThreadMessage {
        try await commit { try self.writing { tx in try post.apply(tx, key: self.personalDataKey) } }
    }

    public func clinicAnswers(clientId: Int64, appointmentIds: Set<Int64>) async throws
        -> (messages: [StoredThreadMessage], keyCheck: String?) {
        try await readAwaited { tx in try AttachmentController.latestMessages(tx, clientId: clientId, appointmentIds: appointmentIds) }
    }

    public func unreadAnswers(clientId: Int64) async throws -> Int {
        try await readAwaited { tx in try tx.threads(ofClient: clientId).reduce(0) { $0 + $1.patientUnread } }
    }

    public func disableStaff(id: Int64, decide: @escaping @Sendable (StaffMember?) throws -> AuditAsk) async throws -> StaffMember {
        try await commit { try self.writing { tx in try StaffDisabling.apply(tx, id: id, decide: decide) } }
    }

    public func addStaff(_ addition: StaffAddition) async throws -> StaffMember {
        try await commit { try self.writing { tx in try addition.apply(tx) } }
    }

    // MARK: The operator's settings (`OperatorStore`)

    public func settings(prefix: String) async throws -> [String: String] {
        try await readAwaited { tx in try tx.settings(prefix: prefix) }
    }

    public func purgeFolders(endedBefore: Date, limit: Int, audit: @escaping @Sendable (PurgedFolder) -> AuditAsk) async throws
        -> [PurgedFolder] {
        try await commit { try self.writing { tx in try PurgedFolder.purge(tx, endedBefore: endedBefore, limit: limit, audit: audit) } }
    }

    public func keepSetting(_ key: String, proposing value: String) async throws -> String {
        try await commit {
            try self.writing { tx in
                try tx.keepSharedSecret(named: key, value: value)
                guard let kept = try tx.sharedSecret(named: key) else { throw ClinicError(.storage, .storageFailure, key) }
                return kept
            }
        }
    }

    public func auditExport(since: Date) async throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        try await readAwaited { tx in try AuditLog.export(tx, since: since) }
    }

    public func changeSetting(_ key: String, to value: String, prefix: String) async throws -> [String: String] {
        try await commit {
            try self.writing { tx in
                try tx.setSetting(key, to: value)
                return try tx.settings(prefix: prefix)
            }
        }
    }

    public func claimCodeOwner(codeHash: String, at: Date) async throws -> Client? {
        try await readAwaited { tx in try ClaimRules.owner(tx, store: self, codeHash: codeHash, at: at) }
    }

    public func claimAccount(_ rules: ClaimRules) async throws -> Client {
        try await commit { try self.writing { tx in try rules.run(tx, store: self) } }
    }

    public func changeVisitType(_ change: VisitTypeChange) async throws -> VisitType {
        try await commit { try self.writing { tx in try change.apply(tx) } }
    }

    public func addDoctor(_ addition: DoctorAddition) async throws -> Doctor {
        try await commit { try self.writing { tx in try addition.apply(tx) } }
    }

    public func changeSchedule(_ change: ScheduleChange) async throws -> ScheduleOutcome {
        try await commit { try self.writing { tx in try change.apply(tx) } }
    }

    public func deskDay(clinicId: Int64, doctorAsked: Int64?, plan: @escaping @Sendable (DeskDayPlace) throws -> DeskDayPlan,
                        audit: @escaping @Sendable (DeskDayFacts) -> [AuditAsk]) async throws -> DeskDayFacts {
        try await commit {
            try self.writing { tx in
                try DeskDayFacts.read(tx, store: self, clinicId: clinicId, doctorAsked: doctorAsked, plan: plan, audit: audit)
            }
        }
    }

    public func accessLog(ofClient clientId: Int64, limit: Int) async throws -> [AuditEntry] {
        try await readAwaited { tx in try AuditLog.entries(tx, clientId: clientId, limit: limit) }
    }
}
