import Foundation

/// Why a message was written.
public enum MessageKind: String, Sendable, CaseIterable {
    case booked, rescheduled, cancelled
    /// Cancelled by the clinic (a receptionist, a forced hours change, the operator), with the reason.
    case clinicCancelled = "clinic_cancelled"
    /// The clinic's time zone changed under a booked appointment.
    case clinicChanged = "clinic_changed"
    case reminder
    /// Written by clinic staff.
    case clinic
    /// About the account itself: the calendar address was renewed (migration 14).
    case account
    /// A freed time offered from the waitlist (migration 21).
    case waitlist

    /// Messages about a booking carry the appointment's calendar event when e-mailed.
    public var carriesEvent: Bool { self == .booked || self == .rescheduled || self == .cancelled || self == .clinicCancelled }
}

/// A message in a patient's inbox.
public struct InboxMessage: Sendable, Equatable {
    public let id: Int64
    public let kind: MessageKind
    public let appointmentId: Int64?
    public let clinicId: Int64?
    public let subject: String
    public let body: String
    public let createdAt: Date
    public let readAt: Date?
}

/// The patients' inboxes. Messages are written in the caller's transaction, in the patient's
/// language, with an outbox row when the patient has a confirmed e-mail address.
public enum Inbox {
    static let maximumTextLength = 2000

    /// Writes a message; nil when a message with the same `dedupeKey` exists already.
    /// `emailConfirmed` says whether the patient has a confirmed address, when the caller read it
    /// already (nil: looked up here).
    @discardableResult
    package static func post(_ tx: any InboxWriting, clientId: Int64, kind: MessageKind, subject: String, body: String,
                     appointmentId: Int64? = nil, clinicId: Int64? = nil, staffId: Int64? = nil,
                     dedupeKey: String? = nil, emailConfirmed: Bool? = nil, now: Date) throws -> Int64? {
        guard let id = try tx.insertInboxMessage(toClient: clientId, kind: kind, subject: subject, body: body,
                                                 appointmentId: appointmentId, clinicId: clinicId, staffId: staffId,
                                                 dedupeKey: dedupeKey, at: now) else { return nil }
        // E-mailed too when the patient has a confirmed address.
        if try emailConfirmed ?? tx.hasConfirmedEmail(client: clientId) {
            try tx.enqueueDelivery(ofMessage: id, toClient: clientId, at: now)
        }
        return id
    }

    /// Writes the message about a change to an appointment (nothing for an appointment whose
    /// patient deleted the account). `context`: what the message is written from, when the
    /// caller gathered it already (`BookingFacts.messageContext`).
    @discardableResult
    static func about(_ tx: any InboxWriting, _ appointment: Appointment, kind: MessageKind, reason: String? = nil,
                      defaultReason: MessageKey? = nil,
                      hoursBefore: Int? = nil, zones: (old: String, new: String)? = nil, dedupeKey: String? = nil,
                      staffId: Int64? = nil, now: Date, context gathered: AppointmentMessageContext? = nil) throws -> Int64? {
        guard appointment.clientId != nil else { return nil }
        let context: AppointmentMessageContext
        if let gathered { context = gathered } else {
            // A database still on an older schema (a test of a migration) has no inboxes yet.
            guard let clientId = appointment.clientId, try tx.keepsInboxes(),
                  let read = try tx.messageContext(client: clientId, clinic: appointment.clinicId, department: appointment.departmentId)
            else { return nil }
            context = read
        }
        guard let message = message(about: appointment, kind: kind, context: context, reason: reason, defaultReason: defaultReason,
                                    hoursBefore: hoursBefore, zones: zones, staffId: staffId) else { return nil }
        guard let id = try post(tx, clientId: message.clientId, kind: kind, subject: message.subject, body: message.body,
                                appointmentId: appointment.id, clinicId: appointment.clinicId, staffId: staffId, dedupeKey: dedupeKey,
                                emailConfirmed: message.emailed, now: now) else { return nil }
        // A reminder and a clinic's cancellation go by text too, to whom takes them.
        try Texts.about(tx, appointment, kind: kind, context: context, messageId: id, now: now)
        return id
    }

    /// The message about a change to an appointment, in the patient's language (nil for an
    /// appointment without a patient).
    static func message(about appointment: Appointment, kind: MessageKind, context: AppointmentMessageContext, reason: String? = nil,
                        defaultReason: MessageKey? = nil, hoursBefore: Int? = nil, zones: (old: String, new: String)? = nil,
                        staffId: Int64? = nil) -> NewInboxMessage? {
        guard let clientId = appointment.clientId else { return nil }
        let language = context.language ?? .en
        let when = DateText.dateTime(appointment.startsAt, timeZone: Clinic.zone(named: context.timeZone), language: language)
        let details = Strings.text(.messageDetails, language, [
            when, context.timeZone, context.clinicName,
            [context.address, context.city, "\(context.state) \(context.zip)"].joined(separator: ", "),
            Specialization.displayName(context.specialization, language), appointment.doctorName, String(appointment.id ?? 0)])
        let (subjectKey, bodyKey): (MessageKey, MessageKey) = switch kind {
        case .booked: (.messageBookedSubject, .messageBookedBody)
        case .rescheduled: (.messageRescheduledSubject, reason == nil ? .messageRescheduledBody : .messageClinicRescheduledBody)
        case .cancelled: (.messageCancelledSubject, .messageCancelledBody)
        case .clinicCancelled: (.messageClinicCancelledSubject, .messageClinicCancelledBody)
        case .clinicChanged: (.messageZoneSubject, .messageZoneBody)
        case .reminder: (.messageReminderSubject, .messageReminderBody)
        case .clinic, .account, .waitlist: (.messageClinicSubject, .messageBookedBody)
        }
        let subject = Strings.text(subjectKey, language, [when, context.clinicName])
        let lead = hoursBefore.map { Noun.hour.count($0, language) } ?? ""
        let body = Strings.text(bodyKey, language, [details, reason ?? defaultReason.map { Strings.text($0, language) } ?? "", zones?.old ?? "", zones?.new ?? "", lead])
        return NewInboxMessage(clientId: clientId, kind: kind, subject: subject, body: body, clinicId: appointment.clinicId,
                               staffId: staffId, emailed: context.emailConfirmed)
    }

    /// A patient's messages, newest first.
    /// The most messages a list of the inbox shows.
    public static let pageLimit = 200

    public static func messages(_ tx: any InboxReading, clientId: Int64, unreadOnly: Bool = false, limit: Int = pageLimit) throws -> [InboxMessage] {
        try tx.inboxMessages(ofClient: clientId, unreadOnly: unreadOnly, limit: limit)
    }

    /// Marks every unread message of the patient read, in the caller's transaction; how many were.
    public static func markAllRead(_ tx: any InboxWriting, clientId: Int64, at now: Date) throws -> Int {
        let unread = try tx.inboxMessages(ofClient: clientId, unreadOnly: true, limit: Int(Int32.max))
        for message in unread { _ = try tx.markMessageRead(message.id, ofClient: clientId, at: now) }
        return unread.count
    }

    public static func unreadCount(_ tx: any InboxReading, clientId: Int64) throws -> Int {
        guard try tx.keepsInboxes() else { return 0 }
        return try tx.unreadCount(ofClient: clientId)
    }

    /// Checks the text clinic staff write to patients: trimmed, 1 to 2,000 characters, lines allowed.
    static func checkedText(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= maximumTextLength, !Text.hasForbiddenControl(trimmed, allowing: ["\n"]) else {
            throw ClinicError.invalid(.messageTextInvalid, String(maximumTextLength))
        }
        return trimmed
    }
}
