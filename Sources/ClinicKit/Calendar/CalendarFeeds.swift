import Foundation

extension CalendarEvent {
    /// An appointment with its clinic, department and sequence, read in the caller's transaction.
    static func load(_ tx: any StoreReading, _ appointment: Appointment) throws -> CalendarEvent? {
        guard let clinic = try tx.clinic(id: appointment.clinicId) else { return nil }
        let specialization = try tx.department(id: appointment.departmentId)?.specialization ?? ""
        let changes = try tx.appointmentEvents(of: [appointment.id ?? 0]).filter(\.changesTheEvent).count
        return CalendarEvent(appointment: appointment, clinic: clinic, specialization: specialization, sequence: changes)
    }

}

extension AppointmentController {
    /// One appointment of the patient as an iCalendar file.
    public func calendarFile(_ id: Int64, clientId: Int64) throws -> String {
        let now = self.now()
        return try database.reading { tx in
            let appointment = try Self.owned(tx, id, clientId)
            let language = try database.client(tx, id: clientId)?.language ?? .en
            guard let event = try CalendarEvent.load(tx, appointment) else {
                throw ClinicError(.notFound, .clinicNotFound, String(appointment.clinicId))
            }
            return ICalendar.document([event], language: language, now: now)
        }
    }
}

extension ClientController {
    /// The patient's private calendar address token: the one there is, or a new one (`rotate`
    /// replaces it, so the old address stops working).
    /// Awaited (issue 56: `AccountSecurityStore`).
    public func calendarToken(clientId: Int64, rotate: Bool = false) async throws -> String {
        guard let token = try await database.calendarToken(ofClient: clientId, issuing: SessionManager.newToken(), rotate: rotate,
                                                           at: now()) else {
            throw ClinicError(.notLoggedIn, .notLoggedIn)
        }
        return token
    }

    /// The patient's calendar token, nil when there is none.
    /// Awaited (issue 56: `AccountSecurityStore`).
    public func existingCalendarToken(clientId: Int64) async throws -> String? {
        try await database.existingCalendarToken(ofClient: clientId)
    }

    /// Ends the calendar address: calendars subscribed to it get 404 from now on.
    /// Awaited (issue 56: `AccountSecurityStore`).
    public func revokeCalendarToken(clientId: Int64) async throws {
        try await database.revokeCalendarToken(ofClient: clientId)
    }

    /// Every appointment of the patient the token belongs to (cancelled ones too, so that
    /// calendars drop them), as one iCalendar document.
    public func calendarFeed(token: String) throws -> String {
        let now = self.now()
        return try database.reading { tx in
            guard token.utf8.count <= 200, let facts = try CalendarFeedFacts.read(tx, tokenHash: SessionManager.hash(token)) else {
                throw ClinicError(.notFound, .calendarTokenInvalid)
            }
            let events = try facts.appointments.compactMap { item -> CalendarEvent? in
                guard let clinic = try tx.clinic(id: item.appointment.clinicId) else { return nil }
                let specialization = try tx.department(id: item.appointment.departmentId)?.specialization ?? ""
                return CalendarEvent(appointment: item.appointment, clinic: clinic, specialization: specialization, sequence: item.changes)
            }
            return ICalendar.document(events, language: facts.language, now: now, name: Self.feedName)
        }
    }

    /// The name a calendar app shows for the feed.
    static let feedName = "Clinic appointments"
}

extension ClinicSystem {
    /// `AppointmentController.calendarFile` awaited: the appointment with its history in one read
    /// (the patient's own only), then its clinic with its departments; in `patient`'s language.
    public func calendarFile(_ id: Int64, of patient: Client) async throws -> String {
        let (appointment, history) = try await appointments.appointmentWithHistory(id, clientId: patient.id ?? 0)
        guard let place = try await withPlaces([appointment]).first else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
        let event = CalendarEvent(appointment: appointment, clinic: place.clinic, specialization: place.department.specialization,
                                  sequence: history.filter(\.changesTheEvent).count)
        return ICalendar.document([event], language: patient.language, now: clients.now())
    }

    /// `ClientController.calendarFeed` awaited (issue 56: `PatientAppointmentsStore.calendarFeed`):
    /// the patient's appointments with their changes in one read, then each clinic they are at
    /// with its departments once (`withPlaces`). What a subscribed calendar polls.
    public func calendarFeed(token: String) async throws -> String {
        guard token.utf8.count <= 200, let facts = try await database.calendarFeed(tokenHash: SessionManager.hash(token)) else {
            throw ClinicError(.notFound, .calendarTokenInvalid)
        }
        let placed = try await withPlaces(facts.appointments.map(\.appointment))
        let events = zip(placed, facts.appointments).map { place, item in
            CalendarEvent(appointment: item.appointment, clinic: place.clinic, specialization: place.department.specialization,
                          sequence: item.changes)
        }
        return ICalendar.document(events, language: facts.language, now: clients.now(), name: ClientController.feedName)
    }
}
