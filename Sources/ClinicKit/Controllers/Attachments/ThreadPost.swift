import Foundation

/// A message in the conversation about an appointment (issue 56): the patient's, which opens
/// the conversation (again), or the front desk's answer, of which the patient is told in their
/// inbox (and by e-mail) in their language. Decided on `ThreadPostFacts`, read after the
/// appointment's row is locked, so that two servers cannot both let one more message through
/// the patient's limits (`ThreadLimits`).
public struct ThreadPost: Sendable {
    /// Who writes: the patient (by id), or a member of the front desk.
    public enum Writer: Sendable {
        case patient(Int64)
        case desk(StaffMember, requestId: String?)
    }

    public let appointmentId: Int64
    public let writer: Writer
    /// The file of the appointment the message points at, if any.
    public let attachmentId: Int64?
    let text: String
    public let now: Date

    /// Only the front desk answers (`forbidden`); the text is checked (`Inbox.checkedText`):
    /// both before anything is read.
    init(_ writer: Writer, appointmentId: Int64, text: String, attachmentId: Int64?, now: Date) throws {
        if case .desk(let member, _) = writer { try member.checkFrontDesk() }
        self.text = try Inbox.checkedText(text)
        self.writer = writer; self.appointmentId = appointmentId; self.attachmentId = attachmentId; self.now = now
    }

    public var isPatients: Bool {
        if case .patient = writer { return true }
        return false
    }

    /// The start of the window the patient's recent messages are counted in.
    public var windowStart: Date { now.addingTimeInterval(-ThreadLimits.window) }

    /// What is decided, and then written: the conversation saved, the message inserted (its
    /// author and staff account), the patient's inbox message of an answer (nil: the patient's
    /// own message, or a database without inboxes) and the audit row of an answer.
    public struct Decision: Sendable {
        public let thread: StoredThread
        public let author: AttachmentAuthor
        public let staff: StaffMember?
        public let message: NewInboxMessage?
        public let audit: AuditAsk?
    }

    /// The decision on the facts: the patient writes only about their own appointment (else
    /// `not_found` / `forbidden`), within `booking.thread_days_after_cancel` days of its
    /// cancellation (`too_late`) and `ThreadLimits` (`limit_reached`; `rate_limited` with the
    /// seconds to wait); the front desk only about an appointment it may see (else `not_found`,
    /// as none). A file pointed at must be the appointment's (`not_found`).
    public func decide(_ facts: ThreadPostFacts) throws -> Decision {
        let appointment: Appointment, clientId: Int64
        switch writer {
        case .patient(let patient):
            appointment = try AppointmentController.owned(facts.appointment, appointmentId, patient)
            clientId = patient
            try checkPatientMayWrite(appointment, facts)
        case .desk(let member, _):
            appointment = try AttachmentController.visible(facts.appointment, appointmentId, to: member)
            guard let patient = appointment.clientId else { throw ClinicError(.notFound, .appointmentNotFound, String(appointmentId)) }
            clientId = patient
        }
        if let attachmentId, facts.attachmentAppointmentId != appointmentId {
            throw ClinicError(.notFound, .attachmentNotFound, String(attachmentId))
        }
        var thread = facts.thread
            ?? StoredThread(appointmentId: appointmentId, clientId: clientId, clinicId: appointment.clinicId, state: .open,
                            patientUnread: 0, staffUnread: 0, lastAt: now)
        thread.lastAt = now
        switch writer {
        case .patient:
            thread.state = .open
            thread.staffUnread += 1
            return Decision(thread: thread, author: .patient, staff: nil, message: nil, audit: nil)
        case .desk(let member, let requestId):
            thread.patientUnread += 1
            thread.staffUnread = 0
            let message = facts.messageContext.map { context -> NewInboxMessage in
                let language = context.language ?? .en
                let when = DateText.dateTime(appointment.startsAt, timeZone: Clinic.zone(named: context.timeZone), language: language)
                return NewInboxMessage(clientId: clientId, kind: .clinic,
                                       subject: Strings.text(.threadAnswerSubject, language, [context.clinicName]),
                                       body: Strings.text(.threadAnswerBody, language,
                                                          [context.clinicName, when, String(appointmentId)]),
                                       clinicId: appointment.clinicId, staffId: member.id, emailed: context.emailConfirmed)
            }
            return Decision(thread: thread, author: .staff, staff: member, message: message,
                            audit: AuditAsk(by: member.auditActor, action: .threadAnswer, clientId: clientId, appointmentId: appointmentId,
                                            requestId: requestId, detail: "", now: now))
        }
    }

    /// The patient's limits (`ThreadLimits`, `BookingPolicy.threadDaysAfterCancel`; a cancelled
    /// appointment's `updatedAt` is when it was cancelled: nothing changes it after).
    func checkPatientMayWrite(_ appointment: Appointment, _ facts: ThreadPostFacts) throws {
        if appointment.status == .cancelled {
            let days = BookingPolicy(settings: facts.bookingSettings).threadDaysAfterCancel
            guard now < appointment.updatedAt.addingTimeInterval(TimeInterval(days) * 86_400) else {
                throw ClinicError(.tooLate, .threadClosedAfterCancel, String(days))
            }
        }
        let counts = facts.counts ?? ThreadMessageCounts(total: 0, recent: 0, oldestRecent: nil)
        guard counts.total < ThreadLimits.messagesPerThread else {
            throw ClinicError(.limitReached, .threadLimit, String(ThreadLimits.messagesPerThread))
        }
        if counts.recent >= ThreadLimits.messagesPerWindow {
            // The seconds until the oldest message of the window leaves it (`Retry-After`).
            let free = (counts.oldestRecent ?? now).addingTimeInterval(ThreadLimits.window)
            let seconds = max(1, Int(free.timeIntervalSince(now).rounded(.up)))
            throw ClinicError(.rateLimited, .threadTooFast, String(seconds), String(ThreadLimits.messagesPerWindow),
                              String(Int(ThreadLimits.window / 60)))
        }
    }

    /// The message's words sealed under the database's key, bound to its conversation.
    public func sealed(_ cipher: FieldCipher) throws -> Data {
        try cipher.seal(bytes: Data(text.utf8), context: AttachmentController.threadContext(appointmentId))
    }

    /// The message as its writer sees it, once inserted as `id`.
    public func message(id: Int64, _ decision: Decision) -> ThreadMessage {
        ThreadMessage(id: id, author: decision.author, staffName: decision.staff.map { "\($0.name) \($0.surname)" }, text: text,
                      attachmentId: attachmentId, createdAt: Date(seconds: now.seconds))
    }

    /// The post in the caller's write transaction (the blocking path, and SQLite's): the
    /// appointment locked, the facts, the decision, the writes.
    package func apply(_ tx: any StoreWriting, key: PersonalDataKey) throws -> ThreadMessage {
        try tx.lockAppointment(id: appointmentId)
        let decision = try decide(try ThreadPostFacts.read(tx, self))
        try tx.saveThread(decision.thread)
        let id = try tx.insertThreadMessage(appointmentId: appointmentId, author: decision.author, staffId: decision.staff?.id,
                                            body: try sealed(try key.sealingCipher(tx)), attachmentId: attachmentId, at: now)
        if let message = decision.message {
            try Inbox.post(tx, clientId: message.clientId, kind: message.kind, subject: message.subject, body: message.body,
                           appointmentId: appointmentId, clinicId: message.clinicId, staffId: message.staffId,
                           emailConfirmed: message.emailed, now: now)
        }
        if let audit = decision.audit { try AuditLog.append(tx, audit) }
        return message(id: id, decision)
    }
}

/// What a message in a conversation is decided on, read after the appointment's lock.
public struct ThreadPostFacts: Sendable {
    public var appointment: Appointment?
    public var thread: StoredThread?
    /// The appointment of the file the message points at (nil: none pointed at, or no such file).
    public var attachmentAppointmentId: Int64?
    /// The patient's messages in the conversation, all and in the window (a patient's post).
    public var counts: ThreadMessageCounts?
    /// The `booking.` settings (a patient's post about a cancelled appointment; else empty).
    public var bookingSettings: [String: String]
    /// What the patient is told of an answer in (the desk's answer on a database with inboxes).
    public var messageContext: AppointmentMessageContext?

    public init(appointment: Appointment?, thread: StoredThread?, attachmentAppointmentId: Int64?, counts: ThreadMessageCounts?,
                bookingSettings: [String: String], messageContext: AppointmentMessageContext?) {
        self.appointment = appointment; self.thread = thread; self.attachmentAppointmentId = attachmentAppointmentId
        self.counts = counts; self.bookingSettings = bookingSettings; self.messageContext = messageContext
    }

    /// The gather with the seam's reads, in the caller's transaction.
    package static func read(_ tx: any StoreWriting, _ post: ThreadPost) throws -> ThreadPostFacts {
        let appointment = try tx.appointment(id: post.appointmentId)
        let attachment = try post.attachmentId.flatMap { try tx.attachment(id: $0)?.appointmentId }
        var facts = ThreadPostFacts(appointment: appointment, thread: try tx.thread(ofAppointment: post.appointmentId),
                                    attachmentAppointmentId: attachment, counts: nil, bookingSettings: [:], messageContext: nil)
        if post.isPatients {
            facts.counts = try tx.threadMessageCounts(ofAppointment: post.appointmentId, author: .patient, since: post.windowStart)
            if appointment?.status == .cancelled { facts.bookingSettings = try tx.settings(prefix: "booking.") }
        } else if let appointment, let clientId = appointment.clientId, try tx.keepsInboxes() {
            facts.messageContext = try tx.messageContext(client: clientId, clinic: appointment.clinicId,
                                                         department: appointment.departmentId)
        }
        return facts
    }
}
