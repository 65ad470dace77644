import Foundation

/// A file of an appointment opened by its patient or by the clinic, to be read a chunk at a time
/// (`AttachmentController.chunk`). The clinic's opening is an audit event (`attachment.open`, or
/// `attachment.thumbnail`) the patient sees, committed before a byte is read.
public struct FileOpening: Sendable {
    public let appointmentId: Int64
    public let attachmentId: Int64
    public let part: AttachmentPart
    let reader: ConversationLook.Reader
    let now: Date

    init(_ reader: ConversationLook.Reader, appointmentId: Int64, attachmentId: Int64, part: AttachmentPart, now: Date) {
        self.reader = reader; self.appointmentId = appointmentId; self.attachmentId = attachmentId; self.part = part; self.now = now
    }

    /// Whether the opening writes its audit row (the clinic's).
    public var audited: Bool {
        if case .staff = reader { return true }
        return false
    }

    /// Decided on the appointment and the file's row (nil: none): the patient's own appointment
    /// (another's is `forbidden`), or one the member may see (else `not_found`); a file of
    /// another appointment, or a thumbnail the file has not, is `not_found`. The clinic's audit row.
    public func decide(appointment: Appointment?, file: StoredAttachment?) throws -> AuditAsk? {
        var audit: AuditAsk?
        switch reader {
        case .patient(let clientId):
            _ = try AppointmentController.owned(appointment, appointmentId, clientId)
        case .staff(let member, let requestId):
            let seen = try AttachmentController.visible(appointment, appointmentId, to: member)
            audit = AuditAsk(by: member.auditActor, action: part == .file ? .attachmentOpen : .attachmentThumbnail,
                             clientId: seen.clientId, appointmentId: appointmentId, requestId: requestId,
                             detail: "attachment \(attachmentId) (\(file?.contentType ?? ""), \(file?.size ?? 0) bytes)", now: now)
        }
        guard let file, file.appointmentId == appointmentId, part == .file || file.thumbnailSize > 0 else {
            throw ClinicError(.notFound, .attachmentNotFound, String(attachmentId))
        }
        return audit
    }

    /// The opened file: its name and digest unsealed with its own key, under the database's key.
    func content(_ file: StoredAttachment, keyCheck: String?, key: PersonalDataKey) throws -> AttachmentContent {
        let own = try AttachmentController.fileCipher(file, try key.cipher(keyCheck: keyCheck))
        let size = part == .file ? file.size : file.thumbnailSize
        return AttachmentContent(info: try AttachmentController.info(file, fileCipher: own), part: part, size: size,
                                 chunkCount: (size + file.chunkSize - 1) / file.chunkSize, fileCipher: file.fileKey == nil ? nil : own)
    }

    /// The opening through the seam's reads in the caller's transaction: the file's row, the key
    /// check, and the audit row to append (the clinic's).
    package func facts(_ tx: any StoreReading) throws -> (file: StoredAttachment, keyCheck: String?, audit: AuditAsk?) {
        let file = try tx.attachment(id: attachmentId)
        let audit = try decide(appointment: try tx.storedAppointment(id: appointmentId), file: file)
        guard let file else { throw ClinicError(.notFound, .attachmentNotFound, String(attachmentId)) }
        return (file, try tx.personalDataKeyCheck(), audit)
    }

    /// `facts` in the caller's write transaction (SQLite's), the audit row appended.
    package func read(_ tx: any StoreWriting) throws -> (file: StoredAttachment, keyCheck: String?) {
        let (file, check, audit) = try facts(tx)
        if let audit { try AuditLog.append(tx, audit) }
        return (file, check)
    }
}

/// One of the patient's own files removed, before the visit.
public struct FileRemoval: Sendable {
    public let clientId: Int64
    public let appointmentId: Int64
    public let attachmentId: Int64
    let now: Date

    /// Decided on the appointment (its row locked; nil: none) and the file's row (nil: none): the
    /// patient's own appointment (another's is `forbidden`); a file of another appointment is
    /// `not_found`, the clinic's `forbidden` (`attachment_not_yours`); once the visit has begun,
    /// `too_late`.
    public func decide(appointment: Appointment?, file: StoredAttachment?) throws {
        let appointment = try AppointmentController.owned(appointment, appointmentId, clientId)
        guard let file, file.appointmentId == appointmentId else {
            throw ClinicError(.notFound, .attachmentNotFound, String(attachmentId))
        }
        guard file.author == .patient else { throw ClinicError(.forbidden, .attachmentNotYours, String(attachmentId)) }
        guard appointment.startsAt > now else { throw ClinicError(.tooLate, .attachmentTooLate) }
    }

    /// The removal in the caller's write transaction (SQLite's, the CLI's).
    package func apply(_ tx: any StoreWriting) throws {
        try tx.lockAppointment(id: appointmentId)
        try decide(appointment: try tx.storedAppointment(id: appointmentId), file: try tx.attachment(id: attachmentId))
        try tx.deleteAttachment(id: attachmentId)
    }
}

extension AttachmentController {
    /// Removes one of the patient's own files, before the visit; the database's log is then
    /// truncated, so that no copy of the file is left in it.
    public func remove(clientId: Int64, appointmentId: Int64, attachmentId: Int64) throws {
        let removal = FileRemoval(clientId: clientId, appointmentId: appointmentId, attachmentId: attachmentId, now: now())
        try database.writing { tx in try removal.apply(tx) }
        database.truncateLog()
    }

    /// `remove` awaited (issue 56: `FrontDeskChangesStore.removeFile`).
    public func remove(clientId: Int64, appointmentId: Int64, attachmentId: Int64) async throws {
        try await database.removeFile(FileRemoval(clientId: clientId, appointmentId: appointmentId, attachmentId: attachmentId,
                                                  now: now()))
    }

    /// One file of the patient's own appointment, to read a chunk at a time (`chunk`).
    public func open(clientId: Int64, appointmentId: Int64, attachmentId: Int64, part: AttachmentPart = .file) throws
        -> AttachmentContent {
        let opening = FileOpening(.patient(clientId), appointmentId: appointmentId, attachmentId: attachmentId, part: part, now: now())
        let (file, check, _) = try database.reading { tx in try opening.facts(tx) }
        return try opening.content(file, keyCheck: check, key: database.personalDataKey)
    }

    /// The patient's `open` awaited (issue 56: `FrontDeskReadsStore.openFile`).
    public func open(clientId: Int64, appointmentId: Int64, attachmentId: Int64, part: AttachmentPart = .file) async throws
        -> AttachmentContent {
        let opening = FileOpening(.patient(clientId), appointmentId: appointmentId, attachmentId: attachmentId, part: part, now: now())
        let (file, check) = try await database.openFile(opening)
        return try opening.content(file, keyCheck: check, key: database.personalDataKey)
    }

    /// Opens a file of an appointment of the member's clinic: an audit event (`attachment.open`)
    /// the patient sees, committed before a byte is read.
    public func open(_ member: StaffMember, appointmentId: Int64, attachmentId: Int64, part: AttachmentPart = .file,
                     requestId: String? = nil) throws -> AttachmentContent {
        let opening = FileOpening(.staff(member, requestId: requestId), appointmentId: appointmentId, attachmentId: attachmentId,
                                  part: part, now: now())
        let (file, check) = try database.writing { tx in try opening.read(tx) }
        return try opening.content(file, keyCheck: check, key: database.personalDataKey)
    }

    /// The clinic's `open` awaited (issue 56: `FrontDeskReadsStore.openFile`, the audit row in
    /// its transaction).
    public func open(_ member: StaffMember, appointmentId: Int64, attachmentId: Int64, part: AttachmentPart = .file,
                     requestId: String? = nil) async throws -> AttachmentContent {
        let opening = FileOpening(.staff(member, requestId: requestId), appointmentId: appointmentId, attachmentId: attachmentId,
                                  part: part, now: now())
        let (file, check) = try await database.openFile(opening)
        return try opening.content(file, keyCheck: check, key: database.personalDataKey)
    }
}
