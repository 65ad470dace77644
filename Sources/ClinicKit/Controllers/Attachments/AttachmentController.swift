import Foundation

/// Files on appointments and the conversation of each appointment with its clinic (issue 28).
///
/// Who may do what:
/// - the patient adds (at most `AttachmentLimits.maximumFiles`), lists, downloads and removes
///   their own files until the visit starts, and writes to the clinic at any time;
/// - the clinic's staff list and open an appointment's files (a doctor only those of their own
///   visits), each opening an audit event the patient sees in the access log; they may attach a
///   document for the patient (a care plan);
/// - the front desk (receptionists, clinic admins) reads and answers conversations and closes
///   them; the patient is told of an answer in the inbox (and by e-mail) in their language.
///
/// A file is decided by its bytes (`AttachmentKind`); photos are decoded and written again
/// (`ImageProcessing`: upright, no EXIF or GPS, at most 3,000 px, a thumbnail); PDFs are kept as
/// sent unless they hold scripts or other active content (`PDFChecking`: ClinicPDF's libqpdf). Bytes
/// are sealed a chunk at a time under the file's own key, kept wrapped under the personal-data
/// key in the file's row (`FieldCipher.newAttachmentKey`: deleting the row leaves any copies of
/// the chunks unreadable), and stored in one transaction: a failure stores nothing.
public final class AttachmentController: Sendable {
    let database: any ClinicStore
    let images: (any ImageProcessing)?
    let pdfs: (any PDFChecking)?
    let now: @Sendable () -> Date

    init(database: any ClinicStore, images: (any ImageProcessing)?, pdfs: (any PDFChecking)?, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.images = images
        self.pdfs = pdfs
        self.now = now
    }

    // MARK: Checking a file

    /// Checks a file from outside and makes what is kept of it. Refused (nothing stored
    /// anywhere): empty, over 10 MiB, not a JPEG, PNG, HEIC/HEIF or PDF by its bytes, a declared
    /// type or a name that says otherwise, a photo that does not decode or claims too many
    /// pixels, a PDF with scripts or actions that run by themselves, or that cannot be checked.
    public func prepare(_ upload: AttachmentUpload) throws -> PreparedAttachment {
        guard !upload.data.isEmpty else { throw ClinicError.invalid(.attachmentEmpty) }
        guard upload.data.count <= AttachmentLimits.maximumBytes else {
            throw ClinicError(.fileTooLarge, .attachmentTooLarge, String(AttachmentLimits.maximumBytes / (1024 * 1024)))
        }
        guard let kind = AttachmentKind.detect(upload.data) else { throw ClinicError(.unsupportedType, .attachmentUnsupported) }
        if let declared = upload.declaredType, !AttachmentFile.acceptsDeclared(declared, for: kind) {
            throw ClinicError(.unsupportedType, .attachmentTypeMismatch, kind.contentType, String(declared.prefix(100)))
        }
        let name = try AttachmentFile.keptName(upload.name, kind: kind)
        if kind.isImage {
            guard let images else { throw ClinicError(.unsupportedType, .attachmentUnsupported) }
            let image = try images.process(upload.data, kind: kind)
            return PreparedAttachment(kind: kind, contentType: "image/jpeg", data: image.image, thumbnail: image.thumbnail,
                                      width: image.width, height: image.height, name: name,
                                      sha256: AttachmentFile.sha256(image.image))
        }
        // Without a check a PDF is refused as a photo is without a decoder: it cannot be known safe.
        guard let pdfs else { throw ClinicError(.unsupportedType, .attachmentUnsupported) }
        switch pdfs.check(upload.data) {
        case .active(let found): throw ClinicError.invalid(.attachmentPDFActive, found)
        case .unreadable: throw ClinicError.invalid(.attachmentUndecodable)
        case nil: break
        }
        return PreparedAttachment(kind: kind, contentType: kind.contentType, data: upload.data, thumbnail: nil, width: nil,
                                  height: nil, name: name, sha256: AttachmentFile.sha256(upload.data))
    }

    // MARK: The patient's files

    /// The files of the patient's own appointment, oldest first.
    public func list(clientId: Int64, appointmentId: Int64) throws -> [AttachmentInfo] {
        try database.reading { tx in
            _ = try Self.owned(tx, appointmentId, clientId)
            let cipher = try database.cipher(tx)
            return try tx.attachments(ofAppointment: appointmentId).map { try Self.info($0, cipher) }
        }
    }


    // MARK: The clinic's side

    /// The files of an appointment of the member's clinic (a doctor: of their own visits).
    /// Listing names the files: an audit event (`attachment.list`) the patient sees.
    public func list(_ member: StaffMember, appointmentId: Int64, requestId: String? = nil) throws -> [AttachmentInfo] {
        let now = self.now()
        return try database.writing { tx in
            try listed(tx, try Self.visible(tx, appointmentId, to: member), by: member, requestId: requestId, now: now)
        }
    }

    /// The files of an appointment the member may see, listed: the audit row in the same transaction.
    func listed(_ tx: any StoreWriting, _ appointment: Appointment, by member: StaffMember, requestId: String?, now: Date) throws
        -> [AttachmentInfo] {
        let cipher = try database.cipher(tx)
        let list = try tx.attachments(ofAppointment: appointment.id ?? 0).map { try Self.info($0, cipher) }
        try AuditLog.append(tx, by: member.auditActor, action: .attachmentList, clientId: appointment.clientId,
                            appointmentId: appointment.id, requestId: requestId, detail: "\(list.count) files", now: now)
        return list
    }

    // MARK: Reading bytes

    /// Chunk `index` of an opened file, unsealed; `not_found` if the file was removed since.
    public func chunk(_ content: AttachmentContent, index: Int) throws -> Data {
        try Self.checkChunk(content, index)
        let read = try database.reading { tx -> FileChunk? in
            guard let sealed = try tx.attachmentChunk(content.info.id, part: content.part, index: index) else { return nil }
            guard content.fileCipher == nil else { return FileChunk(sealed: sealed, file: nil, keyCheck: nil) }
            return FileChunk(sealed: sealed, file: try tx.attachment(id: content.info.id), keyCheck: try tx.personalDataKeyCheck())
        }
        return try Self.opened(read, of: content, index: index, key: database.personalDataKey)
    }

    /// `chunk` awaited (issue 56: `FrontDeskReadsStore.fileChunk`, one statement for a file
    /// with its own key): what a download streams, with no thread waiting for the store.
    public func chunk(_ content: AttachmentContent, index: Int) async throws -> Data {
        try Self.checkChunk(content, index)
        let read = try await database.fileChunk(attachmentId: content.info.id, part: content.part, index: index,
                                                withKeys: content.fileCipher == nil)
        return try Self.opened(read, of: content, index: index, key: database.personalDataKey)
    }

    static func checkChunk(_ content: AttachmentContent, _ index: Int) throws {
        guard index >= 0, index < content.chunkCount else { throw ClinicError(.notFound, .attachmentNotFound, String(content.info.id)) }
    }

    /// A chunk as read (nil: the file was removed since it was opened), unsealed.
    static func opened(_ chunk: FileChunk?, of content: AttachmentContent, index: Int, key: PersonalDataKey) throws -> Data {
        let gone = ClinicError(.notFound, .attachmentNotFound, String(content.info.id))
        guard let chunk else { throw gone }
        // A file of the scheme before has no key of its own: its row says which key seals it
        // now (a key rotation since it was opened may have given it one).
        let cipher: FieldCipher
        if let own = content.fileCipher {
            cipher = own
        } else {
            guard let stored = chunk.file else { throw gone }
            cipher = try fileCipher(stored, try key.cipher(keyCheck: chunk.keyCheck))
        }
        return try cipher.open(bytes: chunk.sealed, context: chunkContext(content.info.id, content.part, index))
    }

    /// A whole file, for a caller that keeps it whole anyway (the CLI writing it to a file reads
    /// chunk by chunk through `chunk` instead; this is for tests and small thumbnails).
    public func bytes(_ content: AttachmentContent) throws -> Data {
        var data = Data()
        for index in 0..<content.chunkCount { data.append(try chunk(content, index: index)) }
        return data
    }

    // MARK: Inside a transaction

    package static func metaContext(_ id: Int64) -> String { "attachment:\(id)" }

    /// The context an attachment's own key is wrapped with (`StoredAttachment.fileKey`).
    package static func keyContext(_ id: Int64) -> String { "attachment-key:\(id)" }

    /// The cipher an attachment's chunks and meta are sealed with: its own key, unwrapped with
    /// the data key's `cipher`; that cipher itself for a file of the scheme before (no key).
    static func fileCipher(_ stored: StoredAttachment, _ cipher: FieldCipher) throws -> FieldCipher {
        guard let wrapped = stored.fileKey else { return cipher }
        return try cipher.attachmentKey(wrapped: wrapped, context: keyContext(stored.id))
    }

    package static func chunkContext(_ id: Int64, _ part: AttachmentPart, _ index: Int) -> String {
        "attachment:\(id):\(part.rawValue):\(index)"
    }

    static func info(_ stored: StoredAttachment, _ cipher: FieldCipher) throws -> AttachmentInfo {
        try info(stored, fileCipher: fileCipher(stored, cipher))
    }

    /// `info` with the attachment's own cipher (`fileCipher`) at hand.
    static func info(_ stored: StoredAttachment, fileCipher: FieldCipher) throws -> AttachmentInfo {
        guard let sealed = stored.meta else { throw ClinicError(.keyError, .personalUnreadable, metaContext(stored.id)) }
        let plain = try fileCipher.open(bytes: sealed, context: metaContext(stored.id))
        guard let meta = try? JSONDecoder().decode(AttachmentMeta.self, from: plain) else {
            throw ClinicError(.keyError, .personalUnreadable, metaContext(stored.id))
        }
        return AttachmentInfo(id: stored.id, appointmentId: stored.appointmentId, author: stored.author,
                              contentType: stored.contentType, size: stored.size, name: meta.name, sha256: meta.sha256,
                              width: stored.width, height: stored.height, hasThumbnail: stored.thumbnailSize > 0,
                              createdAt: stored.createdAt)
    }

    /// The patient's own appointment: the booking rules' check (`AppointmentController.owned`).
    static func owned(_ tx: any StoreReading, _ id: Int64, _ clientId: Int64) throws -> Appointment {
        try AppointmentController.owned(tx, id, clientId)
    }

    /// An appointment of the member's clinic with a patient (a doctor: their own visits);
    /// `not_found` for any other, as if it did not exist.
    static func visible(_ tx: any StoreReading, _ id: Int64, to member: StaffMember) throws -> Appointment {
        try visible(try tx.appointment(id: id), id, to: member)
    }

    /// `visible` on the appointment read (nil: none).
    static func visible(_ appointment: Appointment?, _ id: Int64, to member: StaffMember) throws -> Appointment {
        guard let appointment, appointment.clinicId == member.clinicId, appointment.clientId != nil,
              member.role != .doctor || appointment.doctorId == member.doctorId else {
            throw ClinicError(.notFound, .appointmentNotFound, String(id))
        }
        return appointment
    }
}

/// A file opened for reading: what it is, and how many chunks to read (`AttachmentController.chunk`).
public struct AttachmentContent: Sendable {
    public let info: AttachmentInfo
    public let part: AttachmentPart
    /// The bytes of this part (the file, or its thumbnail).
    public let size: Int
    public let chunkCount: Int
    /// The file's own key, unwrapped when it was opened (nil: a file of the scheme before,
    /// opened with the data key). A key rotation re-wraps it and leaves it the same.
    let fileCipher: FieldCipher?
}
