import Foundation

/// A prepared file (`AttachmentController.prepare`) added to an appointment: by its patient,
/// before the visit, or by the clinic (a care plan after it) with an audit event
/// (`attachment.add`) the patient sees. The file is sealed under a key of its own, wrapped under
/// the personal-data key, in chunks of `AttachmentLimits.chunkSize` (issue 56: decided on the
/// locked appointment and the author's count, in one transaction).
public struct FileAddition: Sendable {
    public let appointmentId: Int64
    public let file: PreparedAttachment
    let adder: ConversationLook.Reader
    let now: Date

    init(_ adder: ConversationLook.Reader, appointmentId: Int64, file: PreparedAttachment, now: Date) {
        self.adder = adder; self.appointmentId = appointmentId; self.file = file; self.now = now
    }

    public var author: AttachmentAuthor {
        if case .patient = adder { return .patient }
        return .staff
    }

    /// Whether the appointment (nil: none) takes the adder's file, checked before the file is
    /// prepared and again under its lock: the patient's own (another's is `forbidden`), active and
    /// not yet begun (else `too_late`); or one the member may see (else `not_found`).
    public func check(_ appointment: Appointment?) throws -> Appointment {
        try Self.check(adder, appointmentId, appointment, now: now)
    }

    /// `check`, before there is a file.
    static func check(_ adder: ConversationLook.Reader, _ appointmentId: Int64, _ appointment: Appointment?, now: Date) throws
        -> Appointment {
        switch adder {
        case .patient(let clientId):
            let own = try AppointmentController.owned(appointment, appointmentId, clientId)
            guard own.status.isActive, own.startsAt > now else { throw ClinicError(.tooLate, .attachmentTooLate) }
            return own
        case .staff(let member, _):
            return try AttachmentController.visible(appointment, appointmentId, to: member)
        }
    }

    /// Decided on the appointment (its row locked) and how many files its author has on it: at
    /// most `AttachmentLimits.maximumFiles` (`limit_reached`). The row to insert.
    public func decide(appointment: Appointment?, authorsFiles count: Int) throws -> NewAttachment {
        let seen = try check(appointment)
        guard let clientId = seen.clientId else { throw ClinicError(.notFound, .appointmentNotFound, String(appointmentId)) }
        guard count < AttachmentLimits.maximumFiles else {
            throw ClinicError(.limitReached, .attachmentLimit, String(AttachmentLimits.maximumFiles))
        }
        var staffId: Int64?
        if case .staff(let member, _) = adder { staffId = member.id }
        return NewAttachment(appointmentId: appointmentId, clientId: clientId, author: author, staffId: staffId,
                             contentType: file.contentType, size: file.data.count, width: file.width, height: file.height,
                             thumbnailSize: file.thumbnail?.count ?? 0, chunkSize: AttachmentLimits.chunkSize, createdAt: now)
    }

    /// The file sealed as attachment `id`: its name and digest (`meta`) and its chunks under a new
    /// key of its own, which `dataCipher` wraps (`fileKey`).
    public func sealed(id: Int64, dataCipher: FieldCipher) throws
        -> (meta: Data, fileKey: Data?, chunks: [(part: AttachmentPart, index: Int, data: Data)]) {
        let (cipher, wrapped) = try dataCipher.newAttachmentKey(context: AttachmentController.keyContext(id))
        let meta = try JSONEncoder().encode(AttachmentMeta(name: file.name, sha256: file.sha256))
        var chunks: [(part: AttachmentPart, index: Int, data: Data)] = []
        for (part, data) in [(AttachmentPart.file, file.data), (.thumbnail, file.thumbnail ?? Data())] {
            var index = 0
            var offset = data.startIndex
            while offset < data.endIndex {
                let end = min(offset + AttachmentLimits.chunkSize, data.endIndex)
                chunks.append((part, index, try cipher.seal(bytes: data[offset..<end],
                                                            context: AttachmentController.chunkContext(id, part, index))))
                index += 1
                offset = end
            }
        }
        return (try cipher.seal(bytes: meta, context: AttachmentController.metaContext(id)), wrapped, chunks)
    }

    /// What was added, as attachment `id`.
    public func info(id: Int64) -> AttachmentInfo {
        AttachmentInfo(id: id, appointmentId: appointmentId, author: author, contentType: file.contentType, size: file.data.count,
                       name: file.name, sha256: file.sha256, width: file.width, height: file.height,
                       hasThumbnail: file.thumbnail != nil, createdAt: Date(seconds: now.seconds))
    }

    /// The clinic's audit row of the file added (nil: the patient's own).
    public func audit(_ info: AttachmentInfo, clientId: Int64) -> AuditAsk? {
        guard case .staff(let member, let requestId) = adder else { return nil }
        return AuditAsk(by: member.auditActor, action: .attachmentAdd, clientId: clientId, appointmentId: appointmentId,
                        requestId: requestId, detail: "attachment \(info.id) (\(info.contentType), \(info.size) bytes)", now: now)
    }

    /// The addition in the caller's write transaction (SQLite's, the CLI's).
    package func apply(_ tx: any StoreWriting) throws -> AttachmentInfo {
        try tx.lockAppointment(id: appointmentId)
        let row = try decide(appointment: try tx.storedAppointment(id: appointmentId),
                             authorsFiles: try tx.attachments(ofAppointment: appointmentId).filter { $0.author == author }.count)
        let id = try tx.insertAttachment(row)
        let sealed = try sealed(id: id, dataCipher: try AppointmentNotes.sealingCipher(tx))
        try tx.setAttachmentMeta(sealed.meta, fileKey: sealed.fileKey, ofAttachment: id)
        for chunk in sealed.chunks { try tx.insertAttachmentChunk(id, part: chunk.part, index: chunk.index, data: chunk.data) }
        let info = info(id: id)
        if let audit = audit(info, clientId: row.clientId) { try AuditLog.append(tx, audit) }
        return info
    }
}

extension AttachmentController {
    /// Checks, prepares and stores a file on the patient's own appointment: the appointment is
    /// looked at first, so a file for someone else's (or a visit that has started) is refused
    /// before any photo is decoded.
    public func attach(clientId: Int64, appointmentId: Int64, _ upload: AttachmentUpload) throws -> AttachmentInfo {
        let now = self.now()
        _ = try database.reading { tx in
            try FileAddition.check(.patient(clientId), appointmentId, try tx.storedAppointment(id: appointmentId), now: now)
        }
        return try add(clientId: clientId, appointmentId: appointmentId, try prepare(upload))
    }

    /// `attach(clientId:…)` awaited (issue 56): the appointment looked at first
    /// (`FrontDeskReadsStore.deskAppointment`), the file prepared on `images` (libvips' work off
    /// the caller's thread), then `FrontDeskChangesStore.addFile`.
    public func attach(clientId: Int64, appointmentId: Int64, _ upload: AttachmentUpload, images: some PasswordRunner) async throws
        -> AttachmentInfo {
        try await attach(.patient(clientId), appointmentId: appointmentId, upload, images: images)
    }

    /// Adds a file to the patient's own appointment before it starts.
    public func add(clientId: Int64, appointmentId: Int64, _ file: PreparedAttachment) throws -> AttachmentInfo {
        let addition = FileAddition(.patient(clientId), appointmentId: appointmentId, file: file, now: now())
        return try database.writing { tx in try addition.apply(tx) }
    }

    /// Checks, prepares and stores a document of the clinic's (the appointment is looked at first).
    public func attach(_ member: StaffMember, appointmentId: Int64, _ upload: AttachmentUpload, requestId: String? = nil) throws
        -> AttachmentInfo {
        let now = self.now()
        _ = try database.reading { tx in
            try FileAddition.check(.staff(member, requestId: requestId), appointmentId, try tx.storedAppointment(id: appointmentId), now: now)
        }
        return try add(member, appointmentId: appointmentId, try prepare(upload), requestId: requestId)
    }

    /// The clinic's `attach` awaited (issue 56), as the patient's.
    public func attach(_ member: StaffMember, appointmentId: Int64, _ upload: AttachmentUpload, requestId: String? = nil,
                       images: some PasswordRunner) async throws -> AttachmentInfo {
        try await attach(.staff(member, requestId: requestId), appointmentId: appointmentId, upload, images: images)
    }

    /// A document the clinic attaches for the patient (a care plan after the visit), at any
    /// time: staff of the clinic, a doctor for their own visits.
    public func add(_ member: StaffMember, appointmentId: Int64, _ file: PreparedAttachment, requestId: String? = nil) throws
        -> AttachmentInfo {
        let addition = FileAddition(.staff(member, requestId: requestId), appointmentId: appointmentId, file: file, now: now())
        return try database.writing { tx in try addition.apply(tx) }
    }

    private func attach(_ adder: ConversationLook.Reader, appointmentId: Int64, _ upload: AttachmentUpload,
                        images: some PasswordRunner) async throws -> AttachmentInfo {
        let now = self.now()
        _ = try FileAddition.check(adder, appointmentId, try await database.deskAppointment(id: appointmentId, withPatient: false)?.appointment,
                                   now: now)
        let file = try await images.run { [self] in try prepare(upload) }
        return try await database.addFile(FileAddition(adder, appointmentId: appointmentId, file: file, now: now))
    }
}
