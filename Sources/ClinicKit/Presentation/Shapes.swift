import Foundation

// The JSON shapes both fronts print: the CLI with `--json` and the HTTP API (docs/CLI.md,
// docs/API.md and openapi.yaml pin them). camelCase keys, integer ids, ISO 8601 UTC instants.
// They only copy what a controller returned; nothing here reads the database.

public enum Shapes {
    /// The encoder both fronts use: sorted keys, slashes as they are.
    public static func encoder(pretty: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
                                          : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// "08:30" for 510 minutes after midnight.
    public static func minutesText(_ minutes: Int) -> String {
        String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    /// "HH:MM" (24:00 allowed as an end) → minutes after midnight; nil for anything else.
    public static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              (parts[0] + parts[1]).allSatisfy({ $0.isASCII && $0.isNumber }),
              let hours = Int(parts[0]), let minutes = Int(parts[1]),
              (0...24).contains(hours), (0...59).contains(minutes), hours * 60 + minutes <= 1440 else { return nil }
        return hours * 60 + minutes
    }
}

public struct ClinicJSON: Encodable, Sendable {
    public let id: Int64
    public let name: String
    public let address: String
    public let city: String
    public let lat: Double
    public let lon: Double
    public let isPediatric: Bool
    public let isHospital: Bool
    public let timeZone: String

    public init(_ clinic: Clinic) {
        id = clinic.id ?? 0; name = clinic.name; address = clinic.address; city = clinic.city
        lat = clinic.lat; lon = clinic.lon; isPediatric = clinic.isPediatric; isHospital = clinic.isHospital
        timeZone = clinic.timeZone
    }
}

public struct ClinicDetailJSON: Encodable, Sendable {
    public let id: Int64
    public let externalId: String
    public let name: String
    public let address: String
    public let city: String
    public let state: String
    public let zip: String
    public let lat: Double
    public let lon: Double
    public let isPediatric: Bool
    public let isHospital: Bool
    public let timeZone: String
    public let category: String
    public let description: String
    public let phone: String
    public let website: String
    public let departments: [DepartmentJSON]

    public init(_ clinic: Clinic, departments: [Department], language: Language) {
        id = clinic.id ?? 0; externalId = clinic.externalId; name = clinic.name; address = clinic.address
        city = clinic.city; state = clinic.state; zip = clinic.zip; lat = clinic.lat; lon = clinic.lon
        isPediatric = clinic.isPediatric; isHospital = clinic.isHospital; timeZone = clinic.timeZone
        category = clinic.category; description = clinic.description; phone = clinic.phone; website = clinic.website
        self.departments = departments.map { DepartmentJSON($0, language: language) }
    }
}

public struct DepartmentJSON: Encodable, Sendable {
    public let id: Int64
    public let clinicId: Int64
    public let specialization: String
    public let displayName: String
    public let isDemo: Bool

    public init(_ department: Department, language: Language) {
        id = department.id ?? 0; clinicId = department.clinicId; specialization = department.specialization
        displayName = Specialization.displayName(department.specialization, language); isDemo = department.isDemo
    }
}

public struct DoctorJSON: Encodable, Sendable {
    public struct Hours: Encodable, Sendable {
        public let weekday: Int
        public let start: String
        public let end: String
        public let slotMinutes: Int

        public init(_ hours: WorkingHours) {
            weekday = hours.weekday; start = Shapes.minutesText(hours.startMinute); end = Shapes.minutesText(hours.endMinute)
            slotMinutes = hours.slotMinutes
        }
    }
    public let id: Int64
    public let departmentId: Int64
    public let name: String
    public let hours: [Hours]

    public init(_ doctor: Doctor, hours: [WorkingHours]) {
        id = doctor.id ?? 0; departmentId = doctor.departmentId; name = doctor.name
        self.hours = hours.map(Hours.init)
    }
}

public struct SlotJSON: Encodable, Sendable {
    public let doctorId: Int64
    public let doctorName: String
    public let start: String
    public let end: String
    public let isAvailable: Bool

    public init(_ slot: Slot) {
        doctorId = slot.doctorId; doctorName = slot.doctorName; start = DateText.iso8601(slot.start)
        end = DateText.iso8601(slot.end); isAvailable = slot.isAvailable
    }
}

public struct AppointmentJSON: Encodable, Sendable {
    public let id: Int64
    public let clinicId: Int64
    public let departmentId: Int64
    public let doctorId: Int64
    public let doctorName: String
    public let start: String
    public let end: String
    public let status: String
    public let notes: String
    /// Only when it was booked for a visit type (the key is absent otherwise).
    public let visitTypeId: Int64?

    public init(_ appointment: Appointment) {
        id = appointment.id ?? 0; clinicId = appointment.clinicId; departmentId = appointment.departmentId
        doctorId = appointment.doctorId; doctorName = appointment.doctorName
        start = DateText.iso8601(appointment.startsAt); end = DateText.iso8601(appointment.endsAt)
        status = appointment.status.rawValue; notes = appointment.notes; visitTypeId = appointment.visitTypeId
    }
}

/// An appointment as in `AppointmentJSON`, plus its `history`, in one flat object.
public struct AppointmentHistoryJSON: Encodable, Sendable {
    public struct Event: Encodable, Sendable {
        public let event: String; public let actor: String; public let at: String; public let start: String?
        public let reason: String?
    }
    public let appointment: AppointmentJSON
    public let history: [Event]

    public init(_ appointment: Appointment, _ events: [AppointmentEvent]) {
        self.appointment = AppointmentJSON(appointment)
        history = events.map { Event(event: $0.event, actor: $0.actor, at: DateText.iso8601($0.at), start: $0.startsAt.map(DateText.iso8601),
                                     reason: $0.reason) }
    }

    private enum Keys: String, CodingKey { case history }

    public func encode(to encoder: Encoder) throws {
        try appointment.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(history, forKey: .history)
    }
}

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

    public init(_ client: Client, unreadMessages: Int? = nil) {
        id = client.id ?? 0; login = client.login; name = client.name; surname = client.surname
        street = client.street; house = client.house; city = client.city; homeClinicId = client.homeClinicId
        language = client.preferredLanguage
        lat = client.lat
        lon = client.lon
        email = client.email
        pendingEmail = client.pendingEmail
        self.unreadMessages = unreadMessages
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

/// What one round of the outbox did (`clinic admin deliver`).
public struct DeliveryReportJSON: Encodable, Sendable {
    public let reminders: Int, sent: Int, retrying: Int, failed: Int
    public init(_ report: DeliveryReport) {
        reminders = report.reminders; sent = report.sent; retrying = report.retrying; failed = report.failed
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

/// One row of the operator's audit export (`admin audit export`), hash included, so that a
/// kept export anchors the chain.
public struct AuditEventJSON: Encodable, Sendable {
    public let id: Int64
    public let at: String
    public let actor: String
    public let staffId: Int64?
    public let role: String
    public let clinicId: Int64?
    public let action: String
    public let clientId: Int64?
    public let appointmentId: Int64?
    public let requestId: String?
    public let detail: String
    public let hash: String

    public init(_ entry: AuditEntry) {
        id = entry.id; at = DateText.iso8601(entry.at); actor = entry.actor; staffId = entry.staffId; role = entry.role
        clinicId = entry.clinicId; action = entry.action; clientId = entry.clientId; appointmentId = entry.appointmentId
        requestId = entry.requestId; detail = entry.detail; hash = entry.hash
    }

    private enum Keys: String, CodingKey {
        case id, at, actor, staffId, role, clinicId, action, clientId, appointmentId, requestId, detail, hash
    }

    /// Every key always, `null` where there is no value.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id); try container.encode(at, forKey: .at)
        try container.encode(actor, forKey: .actor); try container.encode(staffId, forKey: .staffId)
        try container.encode(role, forKey: .role); try container.encode(clinicId, forKey: .clinicId)
        try container.encode(action, forKey: .action); try container.encode(clientId, forKey: .clientId)
        try container.encode(appointmentId, forKey: .appointmentId); try container.encode(requestId, forKey: .requestId)
        try container.encode(detail, forKey: .detail); try container.encode(hash, forKey: .hash)
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

    public init(_ data: PersonalExport) {
        account = Account(profile: ClientJSON(data.client), createdAt: DateText.iso8601(data.client.createdAt),
                          privacyVersion: data.client.privacyVersion,
                          privacyAcceptedAt: data.client.privacyAcceptedAt.map(DateText.iso8601))
        appointments = data.appointments.map(AppointmentHistoryJSON.init)
        sessions = data.sessions.map { Session(createdAt: DateText.iso8601($0.createdAt), lastUsedAt: DateText.iso8601($0.lastUsedAt)) }
        messages = data.messages.map(MessageJSON.init)
    }
}

/// `geocode --json`: where the query is, and what else it may mean. Unknown fields are null.
public struct GeocodeJSON: Encodable, Sendable {
    public let result: GeocodeResult

    public init(_ result: GeocodeResult) { self.result = result }

    struct Alternative: Encodable {
        let candidate: GeocodeCandidate
        enum Keys: String, CodingKey { case name, admin1, country, timeZone, lat, lon, precision, hint }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(candidate.name, forKey: .name)
            try container.encode(candidate.admin1, forKey: .admin1)
            try container.encode(candidate.country, forKey: .country)
            try container.encode(candidate.timeZone, forKey: .timeZone)
            try container.encode(candidate.coordinate.latitude, forKey: .lat)
            try container.encode(candidate.coordinate.longitude, forKey: .lon)
            try container.encode(candidate.precision, forKey: .precision)
            try container.encode(candidate.hint, forKey: .hint)
        }
    }

    enum Keys: String, CodingKey {
        case query, lat, lon, precision, source, cached, name, admin1, country, timeZone, hint, alternatives
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(result.query, forKey: .query)
        try container.encode(result.coordinate.latitude, forKey: .lat)
        try container.encode(result.coordinate.longitude, forKey: .lon)
        try container.encode(result.precision, forKey: .precision)
        try container.encode(result.source, forKey: .source)
        try container.encode(result.cached, forKey: .cached)
        try container.encode(result.placeName, forKey: .name)
        try container.encode(result.admin1, forKey: .admin1)
        try container.encode(result.country, forKey: .country)
        try container.encode(result.timeZone, forKey: .timeZone)
        try container.encode(result.hint, forKey: .hint)
        try container.encode(result.alternatives.map(Alternative.init), forKey: .alternatives)
    }
}

/// A clinic as in `ClinicJSON`, plus `distanceMeters` (to 0.1 m), in one flat object.
public struct NearbyClinicJSON: Encodable, Sendable {
    public let clinic: ClinicJSON
    public let distanceMeters: Double

    public init(_ nearby: NearbyClinic) {
        clinic = ClinicJSON(nearby.clinic)
        distanceMeters = (nearby.distance * 10).rounded() / 10
    }

    private enum Keys: String, CodingKey { case distanceMeters }

    public func encode(to encoder: Encoder) throws {
        try clinic.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(distanceMeters, forKey: .distanceMeters)
    }
}

/// A clinic near the patient with its earliest free slot for a specialization.
public struct FreeSlotJSON: Encodable, Sendable {
    public let clinic: NearbyClinicJSON
    public let departmentId: Int64
    public let doctorId: Int64
    public let doctorName: String
    public let start: String
    public let end: String

    public init(_ found: FreeSlotNearby) {
        clinic = NearbyClinicJSON(found.clinic); departmentId = found.departmentId; doctorId = found.slot.doctorId
        doctorName = found.slot.doctorName; start = DateText.iso8601(found.slot.start); end = DateText.iso8601(found.slot.end)
    }
}

/// An upcoming appointment whose clinic's time zone changed after it was booked.
public struct ZoneChangeJSON: Encodable, Sendable {
    public let appointmentId: Int64; public let clinicId: Int64; public let start: String; public let oldZone: String
    public let newZone: String

    public init(_ change: ZoneChangedAppointment) {
        appointmentId = change.appointmentId; clinicId = change.clinicId; start = DateText.iso8601(change.start)
        oldZone = change.oldZone; newZone = change.newZone
    }
}

public struct ExceptionJSON: Encodable, Sendable {
    public let id: Int64; public let doctorId: Int64; public let date: String; public let dayOff: Bool
    public let start: String?; public let end: String?; public let slotMinutes: Int?

    public init(_ exception: WorkingException) {
        id = exception.id ?? 0; doctorId = exception.doctorId; date = exception.day; dayOff = exception.isDayOff
        start = exception.startMinute.map(Shapes.minutesText); end = exception.endMinute.map(Shapes.minutesText)
        slotMinutes = exception.slotMinutes
    }
}

/// `{"error":{"code","message"}}`, with the refused rows of an import as `problems`.
public struct ErrorJSON: Encodable, Sendable {
    public struct Body: Encodable, Sendable {
        public struct Problem: Encodable, Sendable {
            public let line: Int; public let reason: String
            public init(line: Int, reason: String) { self.line = line; self.reason = reason }
        }
        public let code: String
        public let message: String
        public let problems: [Problem]?
    }
    public let error: Body

    public init(code: String, message: String, problems: [Body.Problem]? = nil) {
        error = Body(code: code, message: message, problems: problems)
    }

    public init(_ error: ClinicError, language: Language) {
        self.init(code: error.code.rawValue, message: error.message(in: language), problems: error.problems.isEmpty ? nil : error.problems.map {
            Body.Problem(line: $0.line, reason: Strings.text($0.key, language, $0.arguments))
        })
    }
}

/// `{"changed": true}` (a password change).
public struct ChangedJSON: Encodable, Sendable {
    public let changed: Bool
    public init(changed: Bool) { self.changed = changed }
}

/// `{"deleted": "login"}` (an account deleted).
public struct DeletedJSON: Encodable, Sendable {
    public let deleted: String
    public init(deleted: String) { self.deleted = deleted }
}

/// The privacy policy in a language, with its version.
public struct PolicyJSON: Encodable, Sendable {
    public let version: Int
    public let language: String
    public let text: String

    public init(_ language: Language) {
        version = PrivacyPolicy.version
        self.language = language.rawValue
        text = PrivacyPolicy.text(language)
    }
}

/// A staff account (`clinic staff … --json`, `/v1/staff/…`); every key always, `null` where absent.
public struct StaffJSON: Encodable, Sendable {
    public let id: Int64; public let login: String; public let name: String; public let surname: String
    public let role: String; public let clinicId: Int64; public let doctorId: Int64?; public let isActive: Bool

    public init(_ member: StaffMember) {
        id = member.id; login = member.login; name = member.name; surname = member.surname; role = member.role.rawValue
        clinicId = member.clinicId; doctorId = member.doctorId; isActive = member.isActive
    }

    private enum Keys: String, CodingKey { case id, login, name, surname, role, clinicId, doctorId, isActive }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id); try container.encode(login, forKey: .login)
        try container.encode(name, forKey: .name); try container.encode(surname, forKey: .surname)
        try container.encode(role, forKey: .role); try container.encode(clinicId, forKey: .clinicId)
        try container.encode(doctorId, forKey: .doctorId); try container.encode(isActive, forKey: .isActive)
    }
}

/// One appointment of a clinic's day as staff see it: the appointment with the patient's name
/// and login (`null` for a deleted account).
public struct DayEntryJSON: Encodable, Sendable {
    public let appointment: AppointmentJSON
    public let patientName: String?
    public let patientLogin: String?

    public init(_ entry: DayEntry) {
        appointment = AppointmentJSON(entry.appointment); patientName = entry.patientName; patientLogin = entry.patientLogin
    }

    private enum Keys: String, CodingKey { case patientName, patientLogin }

    public func encode(to encoder: Encoder) throws {
        try appointment.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(patientName, forKey: .patientName); try container.encode(patientLogin, forKey: .patientLogin)
    }
}

/// A department's visit type (`clinic visit-types`, `/v1/departments/{id}/visit-types`).
public struct VisitTypeJSON: Encodable, Sendable {
    public let id: Int64; public let departmentId: Int64; public let name: String; public let nameEn: String
    public let nameRu: String; public let durationMinutes: Int; public let priceCents: Int?; public let isActive: Bool

    public init(_ type: VisitType, language: Language) {
        id = type.id; departmentId = type.departmentId; name = type.name(language); nameEn = type.nameEn; nameRu = type.nameRu
        durationMinutes = type.durationMinutes; priceCents = type.priceCents; isActive = type.isActive
    }

    private enum Keys: String, CodingKey { case id, departmentId, name, nameEn, nameRu, durationMinutes, priceCents, isActive }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id); try container.encode(departmentId, forKey: .departmentId)
        try container.encode(name, forKey: .name); try container.encode(nameEn, forKey: .nameEn); try container.encode(nameRu, forKey: .nameRu)
        try container.encode(durationMinutes, forKey: .durationMinutes); try container.encode(priceCents, forKey: .priceCents)
        try container.encode(isActive, forKey: .isActive)
    }
}
