import Foundation
import GRDB

extension CalendarEvent {
    /// An appointment with its clinic, department and sequence, read in the caller's transaction.
    static func load(_ db: Database, _ appointment: Appointment) throws -> CalendarEvent? {
        guard let clinicRow = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM clinics WHERE id = ?"),
                                               arguments: [appointment.clinicId]) else { return nil }
        let specialization = try String.fetchOne(db.cachedStatement(sql: "SELECT specialization FROM departments WHERE id = ?"),
                                                 arguments: [appointment.departmentId]) ?? ""
        let changes = try Int.fetchOne(db.cachedStatement(sql: """
            SELECT count(*) FROM appointment_events WHERE appointment_id = ? AND event IN ('rescheduled', 'cancelled')
            """), arguments: [appointment.id]) ?? 0
        return CalendarEvent(appointment: appointment, clinic: try Clinic(row: clinicRow), specialization: specialization,
                             sequence: changes)
    }
}

extension AppointmentController {
    /// One appointment of the patient as an iCalendar file.
    public func calendarFile(_ id: Int64, clientId: Int64) throws -> String {
        let now = self.now()
        return try database.read { db in
            let appointment = try owned(database.transaction(db), id, clientId)
            let language = try database.getUserById(db, clientId)?.language ?? .en
            guard let event = try CalendarEvent.load(db, appointment) else {
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
        return try database.write { db in
            guard try database.clientExists(db, clientId) else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            let cipher = try database.sealingCipher(db)
            if !rotate, let sealed = try Data.fetchOne(db, sql: "SELECT token_sealed FROM calendar_feeds WHERE client_id = ?",
                                                       arguments: [clientId]) {
                return String(decoding: try cipher.open(bytes: sealed, context: "calendar:\(clientId)"), as: UTF8.self)
            }
            return try Self.issueCalendarToken(db, cipher: cipher, clientId: clientId, now: now)
        }
    }

    /// A new calendar token for the patient, replacing the one there was, in the caller's transaction.
    static func issueCalendarToken(_ db: Database, cipher: FieldCipher, clientId: Int64, now: Date) throws -> String {
        let token = SessionManager.newToken()
        try db.execute(sql: """
            INSERT OR REPLACE INTO calendar_feeds (client_id, token_hash, token_sealed, created_at) VALUES (?, ?, ?, ?)
            """, arguments: [clientId, SessionManager.hash(token),
                             try cipher.seal(bytes: Data(token.utf8), context: "calendar:\(clientId)"), now.seconds])
        return token
    }

    /// After a password change or "sign out everywhere else": a calendar address handed out
    /// before is as much a key to the appointments as a session, so it is replaced too, and the
    /// patient is told (in their inbox, and by e-mail) that calendars subscribed to the old one
    /// must subscribe again. Nothing happens for a patient without a calendar address.
    func renewCalendarAddress(_ db: Database, clientId: Int64, language: Language, now: Date) throws {
        guard try db.tableExists("calendar_feeds"),
              try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM calendar_feeds WHERE client_id = ?)",
                                arguments: [clientId]) == true else { return }
        _ = try Self.issueCalendarToken(db, cipher: try database.sealingCipher(db), clientId: clientId, now: now)
        try Inbox.post(db, clientId: clientId, kind: .account, subject: Strings.text(.messageCalendarRenewedSubject, language),
                       body: Strings.text(.messageCalendarRenewedBody, language), now: now)
    }

    /// The patient's calendar token, nil when there is none.
    public func existingCalendarToken(clientId: Int64) throws -> String? {
        try database.read { db in
            guard let sealed = try Data.fetchOne(db, sql: "SELECT token_sealed FROM calendar_feeds WHERE client_id = ?",
                                                 arguments: [clientId]) else { return nil }
            return String(decoding: try database.cipher(db).open(bytes: sealed, context: "calendar:\(clientId)"), as: UTF8.self)
        }
    }

    /// Ends the calendar address: calendars subscribed to it get 404 from now on.
    public func revokeCalendarToken(clientId: Int64) throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM calendar_feeds WHERE client_id = ?", arguments: [clientId])
        }
    }

    /// Every appointment of the patient the token belongs to (cancelled ones too, so that
    /// calendars drop them), as one iCalendar document.
    public func calendarFeed(token: String) throws -> String {
        let now = self.now()
        return try database.read { db in
            guard token.utf8.count <= 200,
                  let clientId = try Int64.fetchOne(db, sql: "SELECT client_id FROM calendar_feeds WHERE token_hash = ?",
                                                    arguments: [SessionManager.hash(token)]),
                  let client = try database.getUserById(db, clientId) else {
                throw ClinicError(.notFound, .calendarTokenInvalid)
            }
            let events = try database.getAppointmentsByUserId(db, clientId).compactMap { try CalendarEvent.load(db, $0) }
            return ICalendar.document(events, language: client.language, now: now, name: "Clinic appointments")
        }
    }
}
