import Foundation

/// An appointment's files and conversation, as one page shows them to one reader.
public struct AppointmentFolder: Sendable, Equatable {
    public let appointmentId: Int64
    public let startsAt: Date
    public let doctorName: String
    /// The clinic's time zone, in which its pages show the times.
    public let zone: TimeZone
    /// What the patient wrote when booking (the reason for the visit), for the clinic's side.
    public let notes: String
    /// The patient's name, for the clinic's side (nil on the patient's own).
    public let patientName: String?
    public let files: [AttachmentInfo]
    /// nil where the reader may not read it: a doctor (conversations are the front desk's).
    public let conversation: Conversation?
    /// Whether the patient may still add a file (before the visit, under the limit) and remove
    /// their own; always false on the clinic's side, where adding is `attach(_:…)` at any time.
    public let patientMayChange: Bool
}

/// A look at an appointment's folder by one reader: its files and, for the patient and the front
/// desk, a page of its conversation, which the look reads (its side's unread count is cleared).
public struct FolderLook: Sendable {
    public let appointmentId: Int64
    /// The conversation's look; nil for a doctor (conversations are the front desk's).
    public let conversation: ConversationLook?
    let reader: ConversationLook.Reader
    let now: Date
    /// Only the files (the API's lists): no conversation, no patient, no time zone.
    public let filesOnly: Bool

    /// The conversation's page is the latest `ThreadLimits.pageDefault` messages, or those
    /// before `cursor` (checked first: `invalid_input`).
    init(_ reader: ConversationLook.Reader, appointmentId: Int64, cursor: String?, filesOnly: Bool = false, now: Date) throws {
        self.reader = reader; self.appointmentId = appointmentId; self.now = now; self.filesOnly = filesOnly
        var reads = !filesOnly
        if case .staff(let member, _) = reader { reads = reads && member.runsTheFrontDesk }
        conversation = reads
            ? try ConversationLook(reader, appointmentId: appointmentId, limit: ThreadLimits.pageDefault, cursor: cursor, now: now)
            : nil
    }

    /// The clinic's side reads the patient's name (not for a list of files).
    public var withPatient: Bool { clinics && !filesOnly }

    var clinics: Bool {
        if case .staff = reader { return true }
        return false
    }

    /// Decided on the appointment (nil: none) and its conversation: the patient's own appointment
    /// (another's is `forbidden`, a missing one `not_found`), or one the member may see (else
    /// `not_found`, as if none).
    public func decide(appointment: Appointment?, thread: StoredThread?) throws -> FolderDecision {
        switch reader {
        case .patient(let clientId): _ = try AppointmentController.owned(appointment, appointmentId, clientId)
        case .staff(let member, _): _ = try AttachmentController.visible(appointment, appointmentId, to: member)
        }
        let (save, threadRead) = try conversation?.decide(appointment: appointment, thread: thread) ?? (nil, nil)
        var list: (@Sendable (Int) -> AuditAsk)?
        if case .staff(let member, let requestId) = reader {
            let clientId = appointment?.clientId, id = appointmentId, now = now
            list = { files in
                AuditAsk(by: member.auditActor, action: .attachmentList, clientId: clientId, appointmentId: id,
                         requestId: requestId, detail: "\(files) files", now: now)
            }
        }
        return FolderDecision(save: save, list: list, threadRead: threadRead)
    }

    /// The folder of the look's facts, opened under the database's key.
    func folder(_ facts: FolderFacts, key: PersonalDataKey) throws -> AppointmentFolder {
        let cipher = key.lazyCipher(keyCheck: facts.personalDataKeyCheck)
        let appointment = try AppointmentNotes.opened(facts.appointment, cipher: cipher)
        let files = try facts.files.map { try AttachmentController.info($0, try cipher()) }
        let empty = ConversationFacts(thread: nil, messages: [], staffNames: [:], personalDataKeyCheck: nil)
        let conversation = try self.conversation.map { try $0.conversation(facts.conversation ?? empty, key: key) }
        let patient = try facts.patient.map { stored in stored.personal == nil ? stored.client : try stored.opened(with: try cipher()) }
        return AppointmentFolder(appointmentId: appointmentId, startsAt: appointment.startsAt, doctorName: appointment.doctorName,
                                 zone: Clinic.zone(named: facts.timeZone ?? "UTC"), notes: appointment.notes,
                                 patientName: patient.map { "\($0.name) \($0.surname)" }, files: files, conversation: conversation,
                                 patientMayChange: !clinics && appointment.status.isActive && appointment.startsAt > now)
    }

    /// The look's facts and its decision, through the seam's reads in the caller's transaction.
    package func facts(_ tx: any StoreReading) throws -> (FolderFacts, FolderDecision) {
        let appointment = try tx.storedAppointment(id: appointmentId)
        let thread = conversation == nil ? nil : try tx.thread(ofAppointment: appointmentId)
        let decision = try decide(appointment: appointment, thread: thread)
        guard let appointment else { throw ClinicError(.notFound, .appointmentNotFound, String(appointmentId)) }
        let facts = FolderFacts(
            appointment: appointment, files: try tx.attachments(ofAppointment: appointmentId),
            conversation: try conversation?.stored(tx, thread: thread),
            patient: withPatient ? try appointment.clientId.flatMap { try tx.storedClient(id: $0) } : nil,
            timeZone: filesOnly ? nil : try tx.clinic(id: appointment.clinicId)?.timeZone, personalDataKeyCheck: try tx.personalDataKeyCheck())
        return (facts, decision)
    }

    /// The look in the caller's write transaction (SQLite's): its facts, the conversation saved
    /// and the audit rows appended.
    package func read(_ tx: any StoreWriting) throws -> FolderFacts {
        let (facts, decision) = try self.facts(tx)
        if let save = decision.save { try tx.saveThread(save) }
        for audit in decision.audits(files: facts.files.count) { try AuditLog.append(tx, audit) }
        return facts
    }
}

/// What a look at a folder writes: its conversation saved (nil: nothing to save) and its audit rows.
public struct FolderDecision: Sendable {
    public let save: StoredThread?
    let list: (@Sendable (Int) -> AuditAsk)?
    let threadRead: AuditAsk?

    /// The clinic's audit rows once the files are read: the list (`attachment.list`, how many
    /// files), then the front desk's read of the conversation (`thread.read`).
    public func audits(files: Int) -> [AuditAsk] { (list.map { [$0(files)] } ?? []) + (threadRead.map { [$0] } ?? []) }

    /// Whether the look writes anything.
    public var writes: Bool { save != nil || list != nil || threadRead != nil }
}

/// What a look at a folder read: the appointment as stored (its notes sealed), its files' rows,
/// its conversation's page (nil for a doctor), its patient (the clinic's side), its clinic's time
/// zone, and the key check.
public struct FolderFacts: Sendable {
    public var appointment: Appointment
    public var files: [StoredAttachment]
    public var conversation: ConversationFacts?
    public var patient: StoredClient?
    public var timeZone: String?
    public var personalDataKeyCheck: String?

    public init(appointment: Appointment, files: [StoredAttachment], conversation: ConversationFacts?, patient: StoredClient?,
                timeZone: String?, personalDataKeyCheck: String?) {
        self.appointment = appointment; self.files = files; self.conversation = conversation; self.patient = patient
        self.timeZone = timeZone; self.personalDataKeyCheck = personalDataKeyCheck
    }
}

extension AttachmentController {
    /// The patient's files and conversation of their own appointment, in one snapshot; the
    /// clinic's answers are read now. The conversation is a page (`ThreadLimits.pageDefault`
    /// messages, the latest, or those before `cursor`).
    public func folder(clientId: Int64, appointmentId: Int64, cursor: String? = nil) throws -> AppointmentFolder {
        let look = try FolderLook(.patient(clientId), appointmentId: appointmentId, cursor: cursor, now: now())
        // A page view takes the writer only when there are answers to mark read (then reads again
        // in the write transaction, which marks read what it shows).
        var (facts, decision) = try database.reading { tx in try look.facts(tx) }
        if decision.writes { facts = try database.writing { tx in try look.read(tx) } }
        return try look.folder(facts, key: database.personalDataKey)
    }

    /// `folder(clientId:…)` awaited (issue 56: `FrontDeskReadsStore.readFolder`).
    public func folder(clientId: Int64, appointmentId: Int64, cursor: String? = nil) async throws -> AppointmentFolder {
        let look = try FolderLook(.patient(clientId), appointmentId: appointmentId, cursor: cursor, now: now())
        return try look.folder(try await database.readFolder(look), key: database.personalDataKey)
    }

    /// The clinic's look at an appointment's files and (for the front desk) its conversation,
    /// in one transaction: audit events (`attachment.list`, and `thread.read`) the patient sees.
    public func folder(_ member: StaffMember, appointmentId: Int64, requestId: String? = nil, cursor: String? = nil) throws
        -> AppointmentFolder {
        let look = try FolderLook(.staff(member, requestId: requestId), appointmentId: appointmentId, cursor: cursor, now: now())
        return try look.folder(try database.writing { tx in try look.read(tx) }, key: database.personalDataKey)
    }

    /// `list(clientId:…)` awaited (issue 56: `FrontDeskReadsStore.readFolder`, files only).
    public func list(clientId: Int64, appointmentId: Int64) async throws -> [AttachmentInfo] {
        let look = try FolderLook(.patient(clientId), appointmentId: appointmentId, cursor: nil, filesOnly: true, now: now())
        return try look.folder(try await database.readFolder(look), key: database.personalDataKey).files
    }

    /// The clinic's `list` awaited (issue 56: `FrontDeskReadsStore.readFolder`, files only, with
    /// the list's audit row).
    public func list(_ member: StaffMember, appointmentId: Int64, requestId: String? = nil) async throws -> [AttachmentInfo] {
        let look = try FolderLook(.staff(member, requestId: requestId), appointmentId: appointmentId, cursor: nil, filesOnly: true,
                                  now: now())
        return try look.folder(try await database.readFolder(look), key: database.personalDataKey).files
    }

    /// The clinic's `folder` awaited (issue 56: `FrontDeskReadsStore.readFolder`).
    public func folder(_ member: StaffMember, appointmentId: Int64, requestId: String? = nil, cursor: String? = nil) async throws
        -> AppointmentFolder {
        let look = try FolderLook(.staff(member, requestId: requestId), appointmentId: appointmentId, cursor: cursor, now: now())
        return try look.folder(try await database.readFolder(look), key: database.personalDataKey)
    }
}

/// What a retention purge removed.
public struct AttachmentPurge: Sendable, Equatable {
    public let appointments: Int
    public let files: Int
    public let messages: Int
}

extension AttachmentController {
    /// The longest retention an operator may give, in days (100 years).
    public static let maximumRetentionDays = 36_500

    /// The retention rule: the files and conversation of every appointment that ended more
    /// than `days` days ago are deleted, a hundred appointments per transaction
    /// (`OperatorStore.purgeFolders`, awaited), each an audit event (`attachment.purge`, by the
    /// operator) the patient sees. Run by `clinic admin attachments purge` (daily from a timer;
    /// docs/DEPLOY.md).
    public func purge(afterDays days: Int) async throws -> AttachmentPurge {
        guard (1...Self.maximumRetentionDays).contains(days) else {
            throw ClinicError.invalid(.settingRange, "--days", "1", String(Self.maximumRetentionDays))
        }
        let now = self.now()
        let cutoff = now.addingTimeInterval(-Double(days) * 86_400)
        var total = AttachmentPurge(appointments: 0, files: 0, messages: 0)
        while true {
            let batch = try await database.purgeFolders(endedBefore: cutoff, limit: Self.purgeBatch) { purged in
                AuditAsk(by: .operator, action: .attachmentPurge, clientId: purged.clientId, appointmentId: purged.appointmentId,
                         detail: "\(purged.files) files, \(purged.messages) messages, \(days) days after the visit", now: now)
            }
            total = AttachmentPurge(appointments: total.appointments + batch.count,
                                    files: total.files + batch.reduce(0) { $0 + $1.files },
                                    messages: total.messages + batch.reduce(0) { $0 + $1.messages })
            if batch.count < Self.purgeBatch {
                if total.files + total.messages > 0 { database.truncateLog() }
                return total
            }
        }
    }

    /// Appointments per transaction of the purge.
    static let purgeBatch = 100
}
