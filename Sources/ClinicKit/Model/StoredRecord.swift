import Foundation

/// How the models are read from their tables, on every store: snake_case columns and instants as
/// whole UTC seconds since 1970, read from a row of ClinicKit's own (`StoredRow`). The mapping
/// is written out rather than derived through Codable: booking reads several records per
/// transaction, and derived decoding with key conversion was a third of its CPU time
/// (docs/BENCHMARKS.md). How each store writes a model is its own (the SQLite store's
/// `SQLiteRecords.swift`, the PostgreSQL store's statements).

/// A model that is a row of a table of its own, with an id the store gives it.
public protocol StoredModel {
    /// The model from a row of its table (ClinicKit's one mapping of it, for every store).
    init(row: some StoredRow) throws
    /// Nil until the store has inserted it.
    var id: Int64? { get set }
}

extension Client: StoredModel {}
extension Clinic: StoredModel {}
extension Department: StoredModel {}
extension Doctor: StoredModel {}
extension WorkingHours: StoredModel {}
extension Appointment: StoredModel {}
extension AppointmentEvent: StoredModel {}
extension WorkingException: StoredModel {}

extension Client {
    public init(row: some StoredRow) throws {
        let table = "clients"
        id = try row.value("id", in: table); login = try row.value("login", in: table)
        loginKey = try row.value("login_key", in: table); passwordHash = try row.value("password_hash", in: table)
        name = try row.value("name", in: table); surname = try row.value("surname", in: table)
        street = try row.value("street", in: table); house = try row.value("house", in: table)
        city = try row.value("city", in: table)
        lat = try row.value("lat", in: table); lon = try row.value("lon", in: table)
        homeClinicId = try row.value("home_clinic_id", in: table)
        preferredLanguage = try row.value("preferred_language", in: table)
        privacyAcceptedAt = try row.optionalInstant("privacy_accepted_at", in: table)
        privacyVersion = try row.value("privacy_version", in: table); createdAt = try row.instant("created_at", in: table)
    }
}

extension Clinic {
    public init(row: some StoredRow) throws {
        let table = "clinics"
        id = try row.value("id", in: table); externalId = try row.value("external_id", in: table)
        name = try row.value("name", in: table); address = try row.value("address", in: table)
        city = try row.value("city", in: table)
        cityKey = try row.value("city_key", in: table); state = try row.value("state", in: table)
        zip = try row.value("zip", in: table); description = try row.value("description", in: table)
        category = try row.value("category", in: table); lat = try row.value("lat", in: table)
        lon = try row.value("lon", in: table); isPediatric = try row.value("is_pediatric", in: table)
        isHospital = try row.value("is_hospital", in: table); timeZone = try row.value("time_zone", in: table)
        phone = try row.value("phone", in: table); website = try row.value("website", in: table)
    }
}

extension Department {
    public init(row: some StoredRow) throws {
        let table = "departments"
        id = try row.value("id", in: table); clinicId = try row.value("clinic_id", in: table)
        specialization = try row.value("specialization", in: table); isDemo = try row.value("is_demo", in: table)
    }
}

extension Doctor {
    public init(row: some StoredRow) throws {
        let table = "doctors"
        id = try row.value("id", in: table); departmentId = try row.value("department_id", in: table)
        name = try row.value("name", in: table); isDemo = try row.value("is_demo", in: table)
        isActive = try row.hasColumn("is_active") ? row.value("is_active", in: table) : true
    }
}

extension WorkingHours {
    public init(row: some StoredRow) throws {
        let table = "working_hours"
        id = try row.value("id", in: table); doctorId = try row.value("doctor_id", in: table)
        weekday = try row.value("weekday", in: table); startMinute = try row.value("start_minute", in: table)
        endMinute = try row.value("end_minute", in: table); slotMinutes = try row.value("slot_minutes", in: table)
    }
}

extension Appointment {
    public init(row: some StoredRow) throws {
        let table = "appointments"
        id = try row.value("id", in: table); clientId = try row.value("client_id", in: table)
        clinicId = try row.value("clinic_id", in: table); departmentId = try row.value("department_id", in: table)
        doctorId = try row.value("doctor_id", in: table); doctorName = try row.value("doctor_name", in: table)
        startsAt = try row.instant("starts_at", in: table)
        endsAt = try row.instant("ends_at", in: table); notes = try row.value("notes", in: table)
        createdAt = try row.instant("created_at", in: table); updatedAt = try row.instant("updated_at", in: table)
        visitTypeId = try row.hasColumn("visit_type_id") ? row.value("visit_type_id", in: table) : nil
        let text: String = try row.value("status", in: table)
        guard let status = AppointmentStatus(rawValue: text) else {
            throw ClinicError(.storage, .storageFailure, "unknown appointment status '\(text)'")
        }
        self.status = status
    }
}

extension AppointmentEvent {
    public init(row: some StoredRow) throws {
        let table = "appointment_events"
        id = try row.value("id", in: table); appointmentId = try row.value("appointment_id", in: table)
        event = try row.value("event", in: table); actor = try row.value("actor", in: table)
        at = try row.instant("at", in: table); startsAt = try row.optionalInstant("starts_at", in: table)
        doctorId = try row.value("doctor_id", in: table)
        reason = try row.value("reason", in: table)
        staffId = try row.hasColumn("staff_id") ? row.value("staff_id", in: table) : nil
    }
}

extension WorkingException {
    public init(row: some StoredRow) throws {
        let table = "working_exceptions"
        id = try row.value("id", in: table); doctorId = try row.value("doctor_id", in: table)
        day = try row.value("day", in: table); startMinute = try row.value("start_minute", in: table)
        endMinute = try row.value("end_minute", in: table); slotMinutes = try row.value("slot_minutes", in: table)
    }
}

extension InboxMessage {
    public init(row: some StoredRow) throws {
        let table = "messages"
        self.init(id: try row.value("id", in: table),
                  kind: MessageKind(rawValue: try row.value("kind", in: table)) ?? .clinic,
                  appointmentId: try row.value("appointment_id", in: table), clinicId: try row.value("clinic_id", in: table),
                  subject: try row.value("subject", in: table), body: try row.value("body", in: table),
                  createdAt: try row.instant("created_at", in: table), readAt: try row.optionalInstant("read_at", in: table))
    }
}

extension StoredSession {
    public init(row: some StoredRow) throws {
        let name: String? = try row.value("device_name", in: "sessions")
        let platform: String? = try row.value("device_platform", in: "sessions")
        let version: String? = try row.value("device_app_version", in: "sessions")
        self.init(id: try row.value("id", in: "sessions"), clientId: try row.value("client_id", in: "sessions"),
                  tokenHash: try row.value("token_hash", in: "sessions"),
                  createdAt: try row.instant("created_at", in: "sessions"),
                  lastUsedAt: try row.instant("last_used_at", in: "sessions"),
                  device: name.map { Device(name: $0, platform: platform ?? "", appVersion: version ?? "") },
                  idleSeconds: try row.value("idle_seconds", in: "sessions"))
    }
}

extension AuditEntry {
    /// Every column is decoded with a throwing read: a row edited in the file around the
    /// triggers (`at = 'x'`) is reported as `UnreadableAuditRow`, never a trap (which would take a
    /// whole server down with it).
    public init(row: some StoredRow) throws {
        let id: Int64 = try Self.column(row, "id", id: nil)
        self.init(id: id, at: Date(timeIntervalSince1970: TimeInterval(try Self.column(row, "at", id: id) as Int64)),
                  actor: try Self.column(row, "actor", id: id), staffId: try Self.column(row, "staff_id", id: id),
                  role: try Self.column(row, "role", id: id), clinicId: try Self.column(row, "clinic_id", id: id),
                  action: try Self.column(row, "action", id: id), clientId: try Self.column(row, "client_id", id: id),
                  appointmentId: try Self.column(row, "appointment_id", id: id),
                  requestId: try Self.column(row, "request_id", id: id), detail: try Self.column(row, "detail", id: id),
                  hash: try Self.column(row, "hash", id: id))
    }

    /// One column of an audit row (or of its chain's head): `UnreadableAuditRow` when it does not decode.
    public static func column<Value: StoredCellValue>(_ row: some StoredRow, _ name: String, id: Int64?) throws -> Value {
        guard let cell = row.cell(name) else {
            if let null = Value.nullValue { return null }
            throw UnreadableAuditRow(id: id, column: name, value: "missing")
        }
        if cell.isNull, let null = Value.nullValue { return null }
        guard let value = Value(storedCell: cell) else { throw UnreadableAuditRow(id: id, column: name, value: cell.description) }
        return value
    }

    /// The rows that decode, and the ones that do not (either store's rows: PostgreSQL's come
    /// back in SQLite's form).
    public static func read(_ rows: [some StoredRow]) throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow]) {
        var entries: [AuditEntry] = [], unreadable: [UnreadableAuditRow] = []
        for row in rows {
            do {
                entries.append(try AuditEntry(row: row))
            } catch let error as UnreadableAuditRow {
                unreadable.append(error)
            }
        }
        return (entries, unreadable)
    }
}

extension StoredAttachment {
    public init(row: some StoredRow) throws {
        let table = "attachments"
        guard let author = AttachmentAuthor(rawValue: try row.value("author", in: table)) else {
            throw ClinicError(.storage, .storageFailure, "attachments.author holds a value this version does not know")
        }
        self.init(id: try row.value("id", in: table), appointmentId: try row.value("appointment_id", in: table),
                  clientId: try row.value("client_id", in: table), author: author, staffId: try row.value("staff_id", in: table),
                  contentType: try row.value("content_type", in: table), size: try row.value("size", in: table),
                  width: try row.value("width", in: table), height: try row.value("height", in: table),
                  thumbnailSize: try row.value("thumbnail_size", in: table), chunkSize: try row.value("chunk_size", in: table),
                  meta: try row.value("meta", in: table), createdAt: try row.instant("created_at", in: table),
                  fileKey: row.hasColumn("file_key") ? try row.value("file_key", in: table) : nil)
    }
}

extension StoredThread {
    public init(row: some StoredRow) throws {
        let table = "threads"
        guard let state = State(rawValue: try row.value("state", in: table, key: "appointment_id")) else {
            throw ClinicError(.storage, .storageFailure, "threads.state holds a value this version does not know")
        }
        self.init(appointmentId: try row.value("appointment_id", in: table, key: "appointment_id"),
                  clientId: try row.value("client_id", in: table, key: "appointment_id"),
                  clinicId: try row.value("clinic_id", in: table, key: "appointment_id"), state: state,
                  patientUnread: try row.value("patient_unread", in: table, key: "appointment_id"),
                  staffUnread: try row.value("staff_unread", in: table, key: "appointment_id"),
                  lastAt: try row.instant("last_at", in: table, key: "appointment_id"))
    }
}

extension StoredThreadMessage {
    public init(row: some StoredRow) throws {
        let table = "thread_messages"
        guard let author = AttachmentAuthor(rawValue: try row.value("author", in: table)) else {
            throw ClinicError(.storage, .storageFailure, "thread_messages.author holds a value this version does not know")
        }
        self.init(id: try row.value("id", in: table), appointmentId: try row.value("appointment_id", in: table), author: author,
                  staffId: try row.value("staff_id", in: table), body: try row.value("body", in: table),
                  attachmentId: try row.value("attachment_id", in: table), createdAt: try row.instant("created_at", in: table))
    }
}

extension ThreadMessageCounts {
    public init(row: some StoredRow) throws {
        let table = "thread_messages"
        self.init(total: try row.value("total", in: table, key: "total"), recent: try row.value("recent", in: table, key: "total"),
                  oldestRecent: try row.optionalInstant("oldest", in: table, key: "total"))
    }
}

extension StaffMember {
    /// A `staff_accounts` row; an unknown role is `staffRowInvalid` (a newer version's row).
    public init(row: some StoredRow) throws {
        let table = "staff_accounts"
        let id: Int64 = try row.value("id", in: table)
        guard let role = StaffRole(rawValue: try row.value("role", in: table)) else {
            throw ClinicError(.storage, .staffRowInvalid, String(id))
        }
        self.init(id: id, login: try row.value("login", in: table), name: try row.value("name", in: table),
                  surname: try row.value("surname", in: table), role: role, clinicId: try row.value("clinic_id", in: table),
                  doctorId: try row.value("doctor_id", in: table), isActive: try row.value("is_active", in: table),
                  createdAt: try row.instant("created_at", in: table))
    }
}
