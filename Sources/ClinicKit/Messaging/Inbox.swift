import Foundation
import GRDB

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

    init(row: Row) throws {
        let table = "messages"
        id = try row.value("id", in: table); kind = MessageKind(rawValue: try row.value("kind", in: table)) ?? .clinic
        appointmentId = try row.value("appointment_id", in: table); clinicId = try row.value("clinic_id", in: table)
        subject = try row.value("subject", in: table); body = try row.value("body", in: table)
        createdAt = try row.instant("created_at", in: table); readAt = try row.optionalInstant("read_at", in: table)
    }
}

/// The patients' inboxes. Messages are written in the caller's transaction, in the patient's
/// language, with an outbox row when the patient has a confirmed e-mail address.
public enum Inbox {
    static let maximumTextLength = 2000

    /// Writes a message; nil when a message with the same `dedupeKey` exists already.
    @discardableResult
    static func post(_ db: Database, clientId: Int64, kind: MessageKind, subject: String, body: String,
                     appointmentId: Int64? = nil, clinicId: Int64? = nil, staffId: Int64? = nil,
                     dedupeKey: String? = nil, now: Date) throws -> Int64? {
        // Cached statements: both run in every booking's transaction.
        try db.cachedStatement(sql: """
            INSERT INTO messages (client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, dedupe_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
            """).execute(arguments: [clientId, kind.rawValue, appointmentId, clinicId, staffId, subject, body, now.seconds, dedupeKey])
        guard db.changesCount > 0 else { return nil }
        let id = db.lastInsertedRowID
        try db.cachedStatement(sql: """
            INSERT INTO deliveries (client_id, message_id, purpose, created_at, next_attempt_at)
            SELECT id, ?, 'message', ?, ? FROM clients WHERE id = ? AND email_confirmed = 1
            """).execute(arguments: [id, now.seconds, now.seconds, clientId])
        return id
    }

    /// Writes the message about a change to an appointment (nothing for an appointment whose
    /// patient deleted the account).
    @discardableResult
    static func about(_ db: Database, _ appointment: Appointment, kind: MessageKind, reason: String? = nil,
                      defaultReason: MessageKey? = nil,
                      hoursBefore: Int? = nil, zones: (old: String, new: String)? = nil, dedupeKey: String? = nil,
                      staffId: Int64? = nil, now: Date) throws -> Int64? {
        // A database still on an older schema (a test of a migration) has no inboxes yet.
        // One query, columns by position: this runs in every booking's transaction, and
        // `Clinic(row:)`'s look-ups by column name were most of its time.
        guard let clientId = appointment.clientId, try db.tableExists("messages"),
              let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT c.preferred_language, k.name, k.address, k.city, k.state, k.zip, k.time_zone,
                       (SELECT specialization FROM departments WHERE id = ?)
                FROM clients c, clinics k WHERE c.id = ? AND k.id = ?
                """), arguments: [appointment.departmentId, clientId, appointment.clinicId])
        else { return nil }
        // Read by position too; a value that cannot be read is named by its table and column
        // (the row is the appointment's client, clinic or department).
        let language = Language(rawValue: try row.value(atIndex: 0, "preferred_language", in: "clients")) ?? .en
        let clinicName: String = try row.value(atIndex: 1, "name", in: "clinics")
        let address: String = try row.value(atIndex: 2, "address", in: "clinics")
        let city: String = try row.value(atIndex: 3, "city", in: "clinics")
        let state: String = try row.value(atIndex: 4, "state", in: "clinics")
        let zip: String = try row.value(atIndex: 5, "zip", in: "clinics")
        let zoneName: String = try row.value(atIndex: 6, "time_zone", in: "clinics")
        let specialization: String = try row.value(atIndex: 7, "specialization", in: "departments") ?? ""
        let when = DateText.dateTime(appointment.startsAt, timeZone: Clinic.zone(named: zoneName), language: language)
        let details = Strings.text(.messageDetails, language, [
            when, zoneName, clinicName, [address, city, "\(state) \(zip)"].joined(separator: ", "),
            Specialization.displayName(specialization, language), appointment.doctorName, String(appointment.id ?? 0)])
        let (subjectKey, bodyKey): (MessageKey, MessageKey) = switch kind {
        case .booked: (.messageBookedSubject, .messageBookedBody)
        case .rescheduled: (.messageRescheduledSubject, .messageRescheduledBody)
        case .cancelled: (.messageCancelledSubject, .messageCancelledBody)
        case .clinicCancelled: (.messageClinicCancelledSubject, .messageClinicCancelledBody)
        case .clinicChanged: (.messageZoneSubject, .messageZoneBody)
        case .reminder: (.messageReminderSubject, .messageReminderBody)
        case .clinic, .account: (.messageClinicSubject, .messageBookedBody)
        }
        let subject = Strings.text(subjectKey, language, [when, clinicName])
        let lead = hoursBefore.map { Noun.hour.count($0, language) } ?? ""
        let body = Strings.text(bodyKey, language, [details, reason ?? defaultReason.map { Strings.text($0, language) } ?? "", zones?.old ?? "", zones?.new ?? "", lead])
        return try post(db, clientId: clientId, kind: kind, subject: subject, body: body, appointmentId: appointment.id,
                        clinicId: appointment.clinicId, staffId: staffId, dedupeKey: dedupeKey, now: now)
    }

    /// A patient's messages, newest first.
    public static func messages(_ db: Database, clientId: Int64, unreadOnly: Bool = false, limit: Int = 200) throws -> [InboxMessage] {
        try Row.fetchAll(db, sql: """
            SELECT * FROM messages WHERE client_id = ? \(unreadOnly ? "AND read_at IS NULL" : "") ORDER BY id DESC LIMIT ?
            """, arguments: [clientId, limit]).map(InboxMessage.init(row:))
    }

    public static func unreadCount(_ db: Database, clientId: Int64) throws -> Int {
        guard try db.tableExists("messages") else { return 0 }
        return try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM messages WHERE client_id = ? AND read_at IS NULL"),
                                arguments: [clientId]) ?? 0
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
