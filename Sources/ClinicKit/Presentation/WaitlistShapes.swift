import Foundation

/// A waitlist entry as the API and `clinic waitlist --json` show it (issue 45's pinned shape):
/// days in the clinic's time, hours "HH:MM", ISO weekdays.
public struct WaitlistEntryJSON: Encodable, Sendable {
    public let id: Int64
    public let status: String
    public let clinicId: Int64
    public let departmentId: Int64
    public let doctorId: Int64?
    public let visitTypeId: Int64?
    public let from: String
    public let to: String
    public let hoursFrom: String?
    public let hoursTo: String?
    public let weekdays: [Int]
    /// Waiting for a time earlier than this appointment.
    public let appointmentId: Int64?
    public let priority: Int
    public let createdAt: String
    /// Left out of the line after offers ran out unanswered, until the patient resumes it
    /// (`POST /v1/waitlist/{id}/resume`).
    public let paused: Bool

    public init(_ entry: WaitlistEntry) {
        id = entry.id ?? 0; status = entry.status.rawValue; clinicId = entry.clinicId; departmentId = entry.departmentId
        doctorId = entry.doctorId; visitTypeId = entry.visitTypeId; from = entry.firstDay; to = entry.lastDay
        hoursFrom = entry.fromMinute.map(Self.clock); hoursTo = entry.toMinute.map(Self.clock); weekdays = entry.weekdayList
        appointmentId = entry.beforeAppointmentId; priority = entry.priority; createdAt = DateText.iso8601(entry.createdAt)
        paused = entry.isPaused
    }

    /// Minutes of the day as "HH:MM" (1440 is "24:00").
    public static func clock(_ minutes: Int) -> String {
        let hours = minutes / 60, rest = minutes % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (rest < 10 ? "0" : "") + String(rest)
    }
}

/// An offer of a freed time, as the API and `clinic waitlist offers --json` show it.
public struct WaitlistOfferJSON: Encodable, Sendable {
    public let id: Int64
    public let entryId: Int64
    public let clinicId: Int64
    public let departmentId: Int64
    public let doctorId: Int64
    public let start: String
    public let end: String
    public let expiresAt: String
    public let status: String
    /// The appointment an accepted offer became.
    public let appointmentId: Int64?

    public init(_ offer: WaitlistOffer) {
        id = offer.id ?? 0; entryId = offer.entryId; clinicId = offer.clinicId; departmentId = offer.departmentId
        doctorId = offer.doctorId; start = DateText.iso8601(offer.startsAt); end = DateText.iso8601(offer.endsAt)
        expiresAt = DateText.iso8601(offer.expiresAt); status = offer.status.rawValue; appointmentId = offer.appointmentId
    }
}

/// A waiting entry as the front desk sees it (`GET /v1/staff/waitlist`, `clinic staff
/// waitlist`): the entry's fields, with `patientId` and `patientName`.
public struct StaffWaitlistEntryJSON: Encodable, Sendable {
    public let entry: WaitlistEntryJSON
    public let patientId: Int64
    public let patientName: String
    /// The front desk's note; absent when none.
    public let note: String?

    public init(_ entry: StaffWaitlistEntry) {
        self.entry = WaitlistEntryJSON(entry.entry); patientId = entry.entry.clientId; patientName = entry.patientName
        note = entry.note
    }

    private enum Keys: String, CodingKey { case patientId, patientName, note }

    public func encode(to encoder: Encoder) throws {
        try entry.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(patientId, forKey: .patientId); try container.encode(patientName, forKey: .patientName)
        try container.encodeIfPresent(note, forKey: .note)
    }
}
