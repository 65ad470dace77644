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

extension AttachmentController {
    /// The patient's files and conversation of their own appointment, in one transaction; the
    /// clinic's answers are read now. The conversation is a page (`ThreadLimits.pageDefault`
    /// messages, the latest, or those before `cursor`).
    public func folder(clientId: Int64, appointmentId: Int64, cursor: String? = nil) throws -> AppointmentFolder {
        let now = self.now()
        // Read-only: a page view takes the writer only when there are answers to mark read.
        let folder = try database.reading { tx in
            let appointment = try Self.owned(tx, appointmentId, clientId)
            let cipher = try database.cipher(tx)
            let files = try tx.attachments(ofAppointment: appointmentId).map { try Self.info($0, cipher) }
            let conversation = try tx.thread(ofAppointment: appointmentId).map { thread in
                let page = try page(tx, thread, limit: ThreadLimits.pageDefault, cursor: cursor)
                return Conversation(appointmentId: appointmentId, state: thread.state, unread: thread.patientUnread,
                                    messages: page.messages, nextCursor: page.nextCursor)
            } ?? Conversation(appointmentId: appointmentId, state: .open, unread: 0, messages: [])
            let open = appointment.status.isActive && appointment.startsAt > now
            return AppointmentFolder(appointmentId: appointmentId, startsAt: appointment.startsAt, doctorName: appointment.doctorName,
                                     zone: try Self.zone(tx, appointment.clinicId), notes: appointment.notes, patientName: nil, files: files, conversation: conversation,
                                     patientMayChange: open)
        }
        if let seen = folder.conversation?.unread, seen > 0 {
            // Only what was shown is read: an answer written since stays unread.
            try database.writing { tx in
                guard var thread = try tx.thread(ofAppointment: appointmentId) else { return }
                thread.patientUnread = max(0, thread.patientUnread - seen)
                try tx.saveThread(thread)
            }
        }
        return folder
    }

    /// The clinic's look at an appointment's files and (for the front desk) its conversation,
    /// in one transaction: audit events (`attachment.list`, and `thread.read`) the patient sees.
    public func folder(_ member: StaffMember, appointmentId: Int64, requestId: String? = nil, cursor: String? = nil) throws
        -> AppointmentFolder {
        let now = self.now()
        return try database.writing { tx in
            let appointment = try Self.visible(tx, appointmentId, to: member)
            let files = try listed(tx, appointment, by: member, requestId: requestId, now: now)
            var conversation: Conversation?
            if member.runsTheFrontDesk {
                conversation = try read(tx, appointmentId, side: .staff, limit: ThreadLimits.pageDefault, cursor: cursor)
                try AuditLog.append(tx, by: member.auditActor, action: .threadRead, clientId: appointment.clientId,
                                    appointmentId: appointmentId, requestId: requestId, detail: "", now: now)
            }
            let patient = try appointment.clientId.flatMap { try database.client(tx, id: $0) }
            return AppointmentFolder(appointmentId: appointmentId, startsAt: appointment.startsAt, doctorName: appointment.doctorName,
                                     zone: try Self.zone(tx, appointment.clinicId), notes: appointment.notes, patientName: patient.map { "\($0.name) \($0.surname)" }, files: files,
                                     conversation: conversation, patientMayChange: false)
        }
    }

    static func zone(_ tx: any StoreReading, _ clinicId: Int64) throws -> TimeZone {
        try tx.clinic(id: clinicId).map(\.zone) ?? Clinic.zone(named: "UTC")
    }

    /// An appointment's conversation as one side reads it: that side's unread count is cleared.
    func read(_ tx: any StoreWriting, _ appointmentId: Int64, side: AttachmentAuthor, limit: Int?, cursor: String?) throws
        -> Conversation {
        guard let thread = try tx.thread(ofAppointment: appointmentId) else {
            return Conversation(appointmentId: appointmentId, state: .open, unread: 0, messages: [])
        }
        let unread = side == .patient ? thread.patientUnread : thread.staffUnread
        if let cleared = ConversationLook.cleared(thread, side: side) { try tx.saveThread(cleared) }
        let page = try page(tx, thread, limit: limit, cursor: cursor)
        return Conversation(appointmentId: appointmentId, state: thread.state, unread: unread, messages: page.messages,
                            nextCursor: page.nextCursor)
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
    /// than `days` days ago are deleted, a hundred appointments per transaction, each an audit
    /// event (`attachment.purge`, by the operator) the patient sees. Run by
    /// `clinic admin attachments purge` (daily from a timer; docs/DEPLOY.md).
    public func purge(afterDays days: Int) throws -> AttachmentPurge {
        guard (1...Self.maximumRetentionDays).contains(days) else {
            throw ClinicError.invalid(.settingRange, "--days", "1", String(Self.maximumRetentionDays))
        }
        let now = self.now()
        let cutoff = now.addingTimeInterval(-Double(days) * 86_400)
        var total = AttachmentPurge(appointments: 0, files: 0, messages: 0)
        while true {
            let batch = try database.writing { tx -> AttachmentPurge in
                let ids = try tx.appointmentsWithFolders(endedBefore: cutoff, limit: 100)
                var files = 0, messages = 0
                for id in ids {
                    let appointment = try tx.appointment(id: id)
                    let removed = try tx.deleteFolder(ofAppointment: id)
                    files += removed.files
                    messages += removed.messages
                    try AuditLog.append(tx, by: .operator, action: .attachmentPurge, clientId: appointment?.clientId,
                                        appointmentId: id, requestId: nil,
                                        detail: "\(removed.files) files, \(removed.messages) messages, \(days) days after the visit",
                                        now: now)
                }
                return AttachmentPurge(appointments: ids.count, files: files, messages: messages)
            }
            total = AttachmentPurge(appointments: total.appointments + batch.appointments, files: total.files + batch.files,
                                    messages: total.messages + batch.messages)
            if batch.appointments < 100 {
                if total.files + total.messages > 0 { database.truncateLog() }
                return total
            }
        }
    }
}
