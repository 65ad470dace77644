import Foundation

// A patient's own shapes: the account, messages, e-mail, the calendar feed, the access log, the export.

public struct ClientJSON: Encodable, Sendable {
    public let id: Int64
    public let login: String
    public let name: String
    public let surname: String
    public let street: String
    public let house: String
    public let city: String
    public let homeClinicId: Int64?
    public let language: String
    public let lat: Double?
    public let lon: Double?
    /// The confirmed e-mail address, and one waiting for its code (absent when none).
    public let email: String?
    public let pendingEmail: String?
    /// Unread messages in the inbox, where the answer shows the signed-in patient.
    public let unreadMessages: Int?
    /// The mobile number (E.164), whether it is confirmed, and what comes by text (absent where
    /// the answer does not show the signed-in patient's own profile).
    public let phone: String?
    public let phoneConfirmed: Bool?
    public let textReminders: Bool?
    public let textOffers: Bool?
    /// The patient replied STOP: nothing is texted until they reply START.
    public let textsStopped: Bool?
    /// Date of birth (YYYY-MM-DD), absent when not given.
    public let birthDate: String?

    public init(_ client: Client, unreadMessages: Int? = nil, phone status: PhoneStatus? = nil) {
        id = client.id ?? 0; login = client.login; name = client.name; surname = client.surname
        street = client.street; house = client.house; city = client.city; homeClinicId = client.homeClinicId
        language = client.preferredLanguage
        lat = client.lat
        lon = client.lon
        email = client.email
        pendingEmail = client.pendingEmail
        self.unreadMessages = unreadMessages
        phone = status?.number
        phoneConfirmed = status.map { $0.number != nil && $0.confirmed }
        textReminders = status?.textReminders
        textOffers = status?.textOffers
        textsStopped = status?.stopped
        birthDate = client.birthDate
    }
}

/// A profile's mobile number (`clinic profile phone`, `PUT /v1/me/phone`).
public struct PhoneJSON: Encodable, Sendable {
    public let phone: String?
    public let phoneConfirmed: Bool
    public let textReminders: Bool
    public let textOffers: Bool
    public let textsStopped: Bool
    public init(_ status: PhoneStatus) {
        phone = status.number; phoneConfirmed = status.number != nil && status.confirmed; textReminders = status.textReminders
        textOffers = status.textOffers; textsStopped = status.stopped
    }
}

/// A message in the inbox (`clinic messages`, `GET /v1/messages`).
public struct MessageJSON: Encodable, Sendable {
    public let id: Int64
    /// booked, rescheduled, cancelled, clinic_cancelled, clinic_changed, reminder or clinic.
    public let kind: String
    public let appointmentId: Int64?
    public let clinicId: Int64?
    public let subject: String
    public let body: String
    public let createdAt: String
    public let readAt: String?

    public init(_ message: InboxMessage) {
        id = message.id; kind = message.kind.rawValue; appointmentId = message.appointmentId; clinicId = message.clinicId
        subject = message.subject; body = message.body; createdAt = DateText.iso8601(message.createdAt)
        readAt = message.readAt.map(DateText.iso8601)
    }
}

/// The e-mail address of a profile (`clinic profile email`, `GET /v1/me/email`).
public struct EmailJSON: Encodable, Sendable {
    public let email: String?
    public let pendingEmail: String?
    public init(_ status: EmailStatus) { email = status.confirmed; pendingEmail = status.pending }
}

/// The private calendar address (`clinic profile calendar-url`, `/v1/me/calendar-token`).
public struct CalendarTokenJSON: Encodable, Sendable {
    public let token: String
    public let url: String
    public init(token: String, base: String) {
        self.token = token
        url = base + "/v1/me/calendar.ics?token=" + token
    }
}

/// One entry of a patient's access log (`profile access-log`, `GET /v1/me/access-log`): who
/// on the clinic side read or changed their data. No request ids or staff ids.
public struct AccessLogEntryJSON: Encodable, Sendable {
    public let at: String
    /// `operator` or `staff`.
    public let actor: String
    public let role: String
    public let clinicId: Int64?
    public let action: String
    public let appointmentId: Int64?
    public let detail: String

    public init(_ entry: AuditEntry) {
        at = DateText.iso8601(entry.at); actor = entry.actor; role = entry.role; clinicId = entry.clinicId
        action = entry.action; appointmentId = entry.appointmentId; detail = entry.detail
    }

    private enum Keys: String, CodingKey { case at, actor, role, clinicId, action, appointmentId, detail }

    /// Every key always, `null` where there is no value (the contract requires them).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(at, forKey: .at); try container.encode(actor, forKey: .actor)
        try container.encode(role, forKey: .role); try container.encode(clinicId, forKey: .clinicId)
        try container.encode(action, forKey: .action); try container.encode(appointmentId, forKey: .appointmentId)
        try container.encode(detail, forKey: .detail)
    }
}

/// Everything stored about a patient (`account export`, `GET /v1/me/export`).
public struct ExportJSON: Encodable, Sendable {
    public struct Session: Encodable, Sendable { public let createdAt: String; public let lastUsedAt: String }
    public struct Account: Encodable, Sendable {
        public let profile: ClientJSON; public let createdAt: String; public let privacyVersion: Int?
        public let privacyAcceptedAt: String?
    }
    public let account: Account
    public let appointments: [AppointmentHistoryJSON]
    public let sessions: [Session]
    public let messages: [MessageJSON]
    /// The files on the appointments: what they are and their SHA-256; the bytes are fetched
    /// one by one (`GET /v1/appointments/{id}/attachments/{aid}`, `clinic appointments attachment get`).
    public let attachments: [AttachmentJSON]
    public let conversations: [ConversationJSON]

    public init(_ data: PersonalExport) {
        account = Account(profile: ClientJSON(data.client, phone: data.phone ?? PhoneStatus.none), createdAt: DateText.iso8601(data.client.createdAt),
                          privacyVersion: data.client.privacyVersion,
                          privacyAcceptedAt: data.client.privacyAcceptedAt.map(DateText.iso8601))
        appointments = data.appointments.map(AppointmentHistoryJSON.init)
        sessions = data.sessions.map { Session(createdAt: DateText.iso8601($0.createdAt), lastUsedAt: DateText.iso8601($0.lastUsedAt)) }
        messages = data.messages.map(MessageJSON.init)
        attachments = data.attachments.map(AttachmentJSON.init)
        conversations = data.conversations.map(ConversationJSON.init)
    }
}
