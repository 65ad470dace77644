import Foundation

/// An appointment's notes — the patient's reason for the visit, which the clinic reads — sealed
/// at rest (migration 18), like a patient's personal fields: the column holds "" or `mark`
/// followed by the base64 of a ChaCha20-Poly1305 box under the personal-data key, bound to the
/// appointment's id. A note a person typed never starts with `mark`
/// (`AppointmentController.checkedNotes` refuses control characters), so a value without it is
/// one from before the migration, in clear, and is read as it is.
package enum AppointmentNotes {
    static let mark = "\u{1}"

    static func context(_ appointmentId: Int64) -> String { "notes:\(appointmentId)" }

    static func isSealed(_ stored: String) -> Bool { stored.hasPrefix(mark) }

    /// The notes as stored: "" stays "", and a value sealed already is left as it is.
    static func seal(_ text: String, appointmentId: Int64, cipher: FieldCipher) throws -> String {
        guard !text.isEmpty, !isSealed(text) else { return text }
        return mark + (try cipher.seal(bytes: Data(text.utf8), context: context(appointmentId))).base64EncodedString()
    }

    /// The notes in clear (a value from before the migration is returned as it is).
    static func open(_ stored: String, appointmentId: Int64, cipher: FieldCipher) throws -> String {
        guard isSealed(stored) else { return stored }
        guard let box = Data(base64Encoded: String(stored.dropFirst(mark.count))),
              let text = String(data: try cipher.open(bytes: box, context: context(appointmentId)), encoding: .utf8)
        else { throw ClinicError(.keyError, .personalUnreadable, context(appointmentId)) }
        return text
    }

    /// The key's cipher for a transaction's notes.
    static func cipher(_ tx: any StoreReading) throws -> FieldCipher {
        guard let key = tx.personalDataKey else { throw ClinicError(.keyError, .keyMissing, "transaction") }
        return try key.cipher(tx)
    }

    static func sealingCipher(_ tx: any StoreWriting) throws -> FieldCipher {
        guard let key = tx.personalDataKey else { throw ClinicError(.keyError, .keyMissing, "transaction") }
        return try key.sealingCipher(tx)
    }

    /// The appointment with its notes opened, under the stored key check when the caller
    /// gathered it (read here otherwise, and only when the notes are sealed).
    static func opened(_ appointment: Appointment, _ tx: any StoreReading, keyCheck: String?) throws -> Appointment {
        try opened(appointment) {
            guard let key = tx.personalDataKey else { throw ClinicError(.keyError, .keyMissing, "transaction") }
            return try keyCheck.map { try key.cipher(keyCheck: $0) } ?? key.cipher(tx)
        }
    }

    /// The appointment with its notes opened under the cipher `cipher` gives, asked for only
    /// when the notes are sealed (a store's awaited use case, which has no seam transaction).
    package static func opened(_ appointment: Appointment, cipher: () throws -> FieldCipher) throws -> Appointment {
        guard let id = appointment.id, isSealed(appointment.notes) else { return appointment }
        var opened = appointment
        opened.notes = try open(appointment.notes, appointmentId: id, cipher: try cipher())
        return opened
    }

    /// `sealingCipher`, with the stored key check when the caller gathered it already.
    static func sealingCipher(_ tx: any StoreWriting, keyCheck: String?) throws -> FieldCipher {
        guard let keyCheck else { return try sealingCipher(tx) }
        guard let key = tx.personalDataKey else { throw ClinicError(.keyError, .keyMissing, "transaction") }
        return try key.cipher(keyCheck: keyCheck)
    }

    /// Seals the notes still in clear (migration 18's up part; run again by `rotate-key` and
    /// after a PostgreSQL migration, where it finds none). Returns how many it sealed.
    @discardableResult
    package static func sealPlain(_ tx: any StoreWriting) throws -> Int {
        let plain = try tx.storedAppointmentNotes(sealed: false)
        guard !plain.isEmpty else { return 0 }
        let cipher = try sealingCipher(tx)
        for (id, notes) in plain {
            try tx.setStoredNotes(try seal(notes, appointmentId: id, cipher: cipher), ofAppointment: id)
        }
        return plain.count
    }

    /// Puts every sealed note back in clear (migration 18's down part).
    package static func openAll(_ tx: any StoreWriting) throws {
        let sealed = try tx.storedAppointmentNotes(sealed: true)
        guard !sealed.isEmpty else { return }
        let cipher = try cipher(tx)
        for (id, notes) in sealed {
            try tx.setStoredNotes(try open(notes, appointmentId: id, cipher: cipher), ofAppointment: id)
        }
    }

    /// Seals every note again under the next key (`rotate-key`).
    package static func reseal(_ tx: any StoreWriting, old: FieldCipher, next: FieldCipher) throws {
        for (id, notes) in try tx.storedAppointmentNotes(sealed: true) + tx.storedAppointmentNotes(sealed: false) {
            let text = try open(notes, appointmentId: id, cipher: old)
            try tx.setStoredNotes(try seal(text, appointmentId: id, cipher: next), ofAppointment: id)
        }
    }
}

extension ClinicStore {
    /// Seals the notes still in clear, in one transaction (after a PostgreSQL migration; a
    /// SQLite one does it in migration 18's own). Returns how many it sealed.
    @discardableResult
    public func sealPlainNotes() throws -> Int { try writing { try AppointmentNotes.sealPlain($0) } }

    /// Puts every sealed note back in clear (before a PostgreSQL migration down past the one
    /// that sealed them).
    public func openAllNotes() throws { try writing { try AppointmentNotes.openAll($0) } }
}

// The appointment operations ClinicKit uses: the store's `stored…` ones with the notes opened
// after a store gives an appointment back and sealed before it sees one.
extension StoreReading {
    public func appointment(id: Int64) throws -> Appointment? {
        try storedAppointment(id: id).map { try openedNotes([$0])[0] }
    }

    public func appointments(ofClient clientId: Int64) throws -> [Appointment] {
        try openedNotes(try storedAppointments(ofClient: clientId))
    }

    public func remindableAppointments(startingAfter after: Date, through: Date) throws -> [Appointment] {
        try openedNotes(try storedRemindableAppointments(startingAfter: after, through: through))
    }

    public func upcomingPatientAppointments(atClinic clinicId: Int64, startingFrom start: Date) throws -> [Appointment] {
        try openedNotes(try storedUpcomingPatientAppointments(atClinic: clinicId, startingFrom: start))
    }

    public func appointments(ofClinic clinicId: Int64, startingIn span: Range<Date>, departmentId: Int64?,
                             doctorId: Int64?) throws -> [Appointment] {
        try openedNotes(try storedAppointments(ofClinic: clinicId, startingIn: span, departmentId: departmentId, doctorId: doctorId))
    }

    public func futureActiveAppointments(ofDoctor doctorId: Int64, from start: Date) throws -> [Appointment] {
        try openedNotes(try storedFutureActiveAppointments(ofDoctor: doctorId, from: start))
    }

    /// The appointments with their notes opened; the key is loaded only when one has notes.
    func openedNotes(_ appointments: [Appointment]) throws -> [Appointment] {
        guard appointments.contains(where: { AppointmentNotes.isSealed($0.notes) }) else { return appointments }
        let cipher = try AppointmentNotes.cipher(self)
        return try appointments.map { appointment in
            guard let id = appointment.id, AppointmentNotes.isSealed(appointment.notes) else { return appointment }
            var opened = appointment
            opened.notes = try AppointmentNotes.open(appointment.notes, appointmentId: id, cipher: cipher)
            return opened
        }
    }
}

extension StoreWriting {
    /// Stores a new appointment (`insertStoredAppointment`); notes are sealed once it has the
    /// id they are bound to.
    public func insertAppointment(_ appointment: Appointment) throws -> Appointment {
        guard !appointment.notes.isEmpty else { return try insertStoredAppointment(appointment) }
        var blank = appointment
        blank.notes = ""
        var inserted = try insertStoredAppointment(blank)
        guard let id = inserted.id else { return inserted }
        try setStoredNotes(try AppointmentNotes.seal(appointment.notes, appointmentId: id, cipher: try AppointmentNotes.sealingCipher(self)),
                           ofAppointment: id)
        inserted.notes = appointment.notes
        return inserted
    }

    /// Rewrites an appointment (`updateStoredAppointment`) with its notes sealed.
    public func updateAppointment(_ appointment: Appointment) throws {
        guard let id = appointment.id, !appointment.notes.isEmpty, !AppointmentNotes.isSealed(appointment.notes) else {
            return try updateStoredAppointment(appointment)
        }
        var sealed = appointment
        sealed.notes = try AppointmentNotes.seal(appointment.notes, appointmentId: id, cipher: try AppointmentNotes.sealingCipher(self))
        try updateStoredAppointment(sealed)
    }
}
