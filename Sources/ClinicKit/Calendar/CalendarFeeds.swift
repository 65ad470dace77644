import Foundation

extension CalendarEvent {
    /// An appointment with its clinic, department and sequence, read in the caller's transaction.
    static func load(_ tx: any StoreReading, _ appointment: Appointment) throws -> CalendarEvent? {
        guard let clinic = try tx.clinic(id: appointment.clinicId) else { return nil }
        let specialization = try tx.department(id: appointment.departmentId)?.specialization ?? ""
        let changes = try tx.appointmentEvents(of: [appointment.id ?? 0]).filter { ["rescheduled", "cancelled"].contains($0.event) }.count
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
    public func calendarToken(clientId: Int64, rotate: Bool = false) throws -> String {
        let now = self.now()
        return try database.writing { tx in
            guard try tx.clientExists(id: clientId) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            let cipher = try database.sealingCipher(tx)
            if !rotate, let sealed = try tx.sealedCalendarToken(ofClient: clientId) {
                return String(decoding: try cipher.open(bytes: sealed, context: "calendar:\(clientId)"), as: UTF8.self)
            }
            return try Self.issueCalendarToken(tx, cipher: cipher, clientId: clientId, now: now)
        }
    }

    /// A new calendar token for the patient, replacing the one there was, in the caller's transaction.
    static func issueCalendarToken(_ tx: any StoreWriting, cipher: FieldCipher, clientId: Int64, now: Date) throws -> String {
        let token = SessionManager.newToken()
        try tx.replaceCalendarToken(ofClient: clientId, tokenHash: SessionManager.hash(token),
                                    sealed: try cipher.seal(bytes: Data(token.utf8), context: "calendar:\(clientId)"), at: now)
        return token
    }

    /// After a password change or "sign out everywhere else": a calendar address handed out
    /// before is as much a key to the appointments as a session, so it is replaced too, and the
    /// patient is told (in their inbox, and by e-mail) that calendars subscribed to the old one
    /// must subscribe again. Nothing happens for a patient without a calendar address.
    func renewCalendarAddress(_ tx: any StoreWriting, clientId: Int64, language: Language, now: Date) throws {
        guard try tx.sealedCalendarToken(ofClient: clientId) != nil else { return }
        _ = try Self.issueCalendarToken(tx, cipher: try database.sealingCipher(tx), clientId: clientId, now: now)
        try Inbox.post(tx, clientId: clientId, kind: .account,
                       subject: Strings.text(.messageCalendarRenewedSubject, language),
                       body: Strings.text(.messageCalendarRenewedBody, language), now: now)
    }

    /// The patient's calendar token, nil when there is none.
    public func existingCalendarToken(clientId: Int64) throws -> String? {
        try database.reading { tx in
            guard let sealed = try tx.sealedCalendarToken(ofClient: clientId) else { return nil }
            return String(decoding: try database.cipher(tx).open(bytes: sealed, context: "calendar:\(clientId)"), as: UTF8.self)
        }
    }

    /// Ends the calendar address: calendars subscribed to it get 404 from now on.
    public func revokeCalendarToken(clientId: Int64) throws {
        try database.writing { tx in try tx.deleteCalendarToken(ofClient: clientId) }
    }

    /// Every appointment of the patient the token belongs to (cancelled ones too, so that
    /// calendars drop them), as one iCalendar document.
    public func calendarFeed(token: String) throws -> String {
        let now = self.now()
        return try database.reading { tx in
            guard token.utf8.count <= 200,
                  let clientId = try tx.calendarTokenOwner(tokenHash: SessionManager.hash(token)),
                  let client = try database.client(tx, id: clientId) else {
                throw ClinicError(.notFound, .calendarTokenInvalid)
            }
            let events = try tx.appointments(ofClient: clientId).compactMap { try CalendarEvent.load(tx, $0) }
            return ICalendar.document(events, language: client.language, now: now, name: "Clinic appointments")
        }
    }
}
