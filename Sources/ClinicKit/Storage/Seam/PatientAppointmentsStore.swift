import Foundation

// A patient's own appointments read awaited (issue 56): the list a phone app shows and one
// appointment with its history, each one statement on PostgreSQL with no thread waiting for it.
// Which of them the patient may see and how the list is paged are `AppointmentController`'s.

/// The awaited reads of appointments a `ClinicStore` offers.
public protocol PatientAppointmentsStore: Sendable {
    /// Every appointment of the patient in the order (start, id), their notes opened.
    func patientAppointments(clientId: Int64) async throws -> [Appointment]
    /// The appointment `id` with its history, oldest first, its notes opened; nil when there is
    /// no such appointment.
    func appointmentWithHistory(id: Int64) async throws -> (appointment: Appointment, history: [AppointmentEvent])?
    /// The patient whose calendar token has the hash `tokenHash`, with every appointment of
    /// theirs (cancelled ones too) and how often each changed; nil for no such token.
    func calendarFeed(tokenHash: String) async throws -> CalendarFeedFacts?
    /// The hold `id` (anyone's, live or not); nil when there is no such hold.
    func slotHold(id: Int64) async throws -> SlotHold?
}

/// What a patient's calendar feed is written from: their language and every appointment of
/// theirs in the order (start, id), each with its changes (reschedules and the cancellation: the
/// event's `SEQUENCE`, RFC 5545 3.8.7.4). Notes are left as stored (sealed): a feed does not show them.
public struct CalendarFeedFacts: Sendable {
    public let language: Language
    public let appointments: [(appointment: Appointment, changes: Int)]

    public init(language: Language, appointments: [(appointment: Appointment, changes: Int)]) {
        self.language = language; self.appointments = appointments
    }

    /// The gather as the seam's reads, in the caller's read transaction (what SQLite runs).
    package static func read(_ tx: any StoreReading, tokenHash: String) throws -> CalendarFeedFacts? {
        guard let clientId = try tx.calendarTokenOwner(tokenHash: tokenHash),
              let client = try tx.storedClient(id: clientId)?.client else { return nil }
        let list = try tx.storedAppointments(ofClient: clientId)
        let changes = Dictionary(grouping: try tx.appointmentEvents(of: list.compactMap(\.id)).filter(\.changesTheEvent),
                                 by: \.appointmentId).mapValues(\.count)
        return CalendarFeedFacts(language: client.language, appointments: list.map { ($0, changes[$0.id ?? 0] ?? 0) })
    }
}

extension AppointmentEvent {
    /// A reschedule or the cancellation: what raises an appointment's calendar event's `SEQUENCE`.
    package var changesTheEvent: Bool { ["rescheduled", "cancelled"].contains(event) }
}
