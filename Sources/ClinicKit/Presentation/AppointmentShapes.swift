import Foundation

// Appointments' shapes: slots, appointments and their history, booking rules, exceptions, visit types.

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

public struct ExceptionJSON: Encodable, Sendable {
    public let id: Int64; public let doctorId: Int64; public let date: String; public let dayOff: Bool
    public let start: String?; public let end: String?; public let slotMinutes: Int?

    public init(_ exception: WorkingException) {
        id = exception.id ?? 0; doctorId = exception.doctorId; date = exception.day; dayOff = exception.isDayOff
        start = exception.startMinute.map(Shapes.minutesText); end = exception.endMinute.map(Shapes.minutesText)
        slotMinutes = exception.slotMinutes
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
