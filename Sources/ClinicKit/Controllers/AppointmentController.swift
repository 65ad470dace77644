import Foundation
import GRDB

public enum AppointmentScope: String, Sendable, CaseIterable {
    case upcoming, past, all
}

/// The UML's `AppointmentController`: booking, rescheduling and cancelling, each one
/// IMMEDIATE transaction whose checks hold until it commits. Only the patient who owns an
/// appointment may see or change it.
public final class AppointmentController: Sendable {
    let database: DatabaseManager
    let now: @Sendable () -> Date

    public init(database: DatabaseManager, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.now = now
    }

    /// Books a slot in a department: with the chosen doctor, or the first doctor (by id) who
    /// works then and is free. The start must be in the future, inside working hours in the
    /// clinic's time zone, on a slot boundary, and free.
    public func createAppointment(clientId: Int64, departmentId: Int64, at time: TimeInput.Parsed,
                                  doctorId: Int64? = nil, notes: String = "") throws -> Appointment {
        let notes = try Self.checkedNotes(notes)
        let now = self.now()
        return try database.write { db in
            guard try database.getUserById(db, clientId) != nil else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
            let (department, clinic) = try departmentAndClinic(db, departmentId)
            let start = try Self.resolve(time, clinic)
            let choice = try chooseDoctor(db, department: department, clinic: clinic, start: start,
                                          preferred: doctorId, strict: doctorId != nil, now: now)
            try checkNoOverlap(db, clientId: clientId, start: start, end: choice.end, excluding: nil)
            let appointment = Appointment(
                id: nil, clientId: clientId, clinicId: clinic.id ?? 0, departmentId: departmentId,
                doctorId: choice.doctor.id ?? 0, doctorName: choice.doctor.name, startsAt: start,
                endsAt: choice.end, status: .scheduled, notes: notes, createdAt: now, updatedAt: now)
            return try insertOrReportRace { try database.addAppointment(db, appointment) }
        }
    }

    /// Moves an appointment to a new start in the same department, atomically: the old slot
    /// is given up only if the new one is taken. The same doctor is kept when free then,
    /// else the first free doctor of the department.
    public func rescheduleAppointment(_ id: Int64, clientId: Int64, to time: TimeInput.Parsed) throws -> Appointment {
        let now = self.now()
        return try database.write { db in
            var appointment = try owned(db, id, clientId)
            guard appointment.status.isActive else {
                throw ClinicError(.invalidTransition, .cannotReschedule, appointment.status.rawValue)
            }
            let (department, clinic) = try departmentAndClinic(db, appointment.departmentId)
            let start = try Self.resolve(time, clinic)
            guard start != appointment.startsAt else { return appointment }
            let choice = try chooseDoctor(db, department: department, clinic: clinic, start: start,
                                          preferred: appointment.doctorId, strict: false, now: now,
                                          ignoring: appointment.id)
            try checkNoOverlap(db, clientId: clientId, start: start, end: choice.end, excluding: appointment.id)
            appointment.doctorId = choice.doctor.id ?? 0
            appointment.doctorName = choice.doctor.name
            appointment.startsAt = start
            appointment.endsAt = choice.end
            appointment.updatedAt = now
            let updated = appointment
            return try insertOrReportRace {
                try database.updateAppointment(db, updated)
                return updated
            }
        }
    }

    /// Cancels an appointment: its status becomes `cancelled` (the row stays) and the slot is free.
    public func cancelAppointment(_ id: Int64, clientId: Int64) throws -> Appointment {
        let now = self.now()
        return try database.write { db in
            var appointment = try owned(db, id, clientId)
            guard appointment.status.isActive else {
                throw ClinicError(.invalidTransition, .cannotCancel, appointment.status.rawValue)
            }
            appointment.status = .cancelled
            appointment.updatedAt = now
            try database.updateAppointment(db, appointment)
            return appointment
        }
    }

    public func getAppointmentById(_ id: Int64, clientId: Int64) throws -> Appointment {
        try database.read { db in try owned(db, id, clientId) }
    }

    /// A patient's appointments, soonest first: `upcoming` are the active ones not yet
    /// started, `past` those that started already (any status), `all` everything.
    public func getAppointmentsByClientId(_ clientId: Int64, scope: AppointmentScope = .upcoming) throws -> [Appointment] {
        let now = self.now()
        let all = try database.read { db in try database.getAppointmentsByUserId(db, clientId) }
        switch scope {
        case .all: return all
        case .upcoming: return all.filter { $0.startsAt >= now && $0.status.isActive }
        case .past: return all.filter { $0.startsAt < now }
        }
    }

    // MARK: Rules

    static let maximumNotesLength = 1000

    static func checkedNotes(_ notes: String) throws -> String {
        let trimmed = notes.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= maximumNotesLength else {
            throw ClinicError.invalid(.notesTooLong, String(maximumNotesLength))
        }
        guard !trimmed.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) && $0 != "\n" })
        else { throw ClinicError.invalid(.notesControl) }
        return trimmed
    }

    static func resolve(_ time: TimeInput.Parsed, _ clinic: Clinic) throws -> Date {
        try TimeInput.resolve(time, in: clinic.zone)
    }

    func departmentAndClinic(_ db: Database, _ departmentId: Int64) throws -> (Department, Clinic) {
        guard let department = try database.getDepartmentById(db, departmentId) else {
            throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
        }
        guard let clinic = try database.getClinicById(db, department.clinicId) else {
            throw ClinicError(.notFound, .clinicNotFound, String(department.clinicId))
        }
        return (department, clinic)
    }

    /// The appointment, if it exists and belongs to the patient.
    func owned(_ db: Database, _ id: Int64, _ clientId: Int64) throws -> Appointment {
        guard let appointment = try database.getAppointmentById(db, id) else {
            throw ClinicError(.notFound, .appointmentNotFound, String(id))
        }
        guard appointment.clientId == clientId else { throw ClinicError(.forbidden, .notYourAppointment, String(id)) }
        return appointment
    }

    /// Picks the doctor for a start. `strict`: only `preferred` will do. Otherwise `preferred`
    /// first (if it is in the department), then the others by id.
    func chooseDoctor(_ db: Database, department: Department, clinic: Clinic, start: Date, preferred: Int64?,
                      strict: Bool, now: Date, ignoring: Int64? = nil) throws -> (doctor: Doctor, end: Date) {
        guard start > now else { throw ClinicError(.slotUnavailable, .slotInPast) }
        var doctors = try database.getDoctorsByDepartmentId(db, department.id ?? 0)
        if let preferred {
            if strict {
                doctors = doctors.filter { $0.id == preferred }
                guard !doctors.isEmpty else { throw ClinicError(.notFound, .doctorNotFound, String(preferred)) }
            } else if let index = doctors.firstIndex(where: { $0.id == preferred }) {
                doctors.insert(doctors.remove(at: index), at: 0)
            }
        }
        var someoneWorks = false
        for doctor in doctors {
            let hours = try database.getWorkingHours(db, doctorId: doctor.id ?? 0)
            guard let end = SlotRules.slotEnd(startingAt: start, hours: hours, zone: clinic.zone) else { continue }
            someoneWorks = true
            // Any active appointment of the doctor overlapping the slot takes it (hours may have
            // changed since it was booked); the unique index backs the common case of equal starts.
            let taken = try Appointment
                .filter(Column("doctor_id") == doctor.id)
                .filter(Column("starts_at") < Int64(end.timeIntervalSince1970)
                        && Column("ends_at") > Int64(start.timeIntervalSince1970))
                .filter(["scheduled", "confirmed"].contains(Column("status")))
                .filter(Column("id") != (ignoring ?? -1))
                .fetchCount(db) > 0
            if !taken { return (doctor, end) }
        }
        if someoneWorks { throw ClinicError(.slotTaken, .slotTaken) }
        throw ClinicError(.slotUnavailable, .slotOutsideHours,
                          LocalDateTime.of(start, in: clinic.zone).description, clinic.timeZone)
    }

    func checkNoOverlap(_ db: Database, clientId: Int64, start: Date, end: Date, excluding: Int64?) throws {
        let overlapping = try Appointment
            .filter(Column("client_id") == clientId)
            .filter(["scheduled", "confirmed"].contains(Column("status")))
            .filter(Column("starts_at") < Int64(end.timeIntervalSince1970)
                    && Column("ends_at") > Int64(start.timeIntervalSince1970))
            .filter(Column("id") != (excluding ?? -1))
            .fetchOne(db)
        if let overlapping {
            throw ClinicError(.overlappingAppointment, .overlapping, String(overlapping.id ?? 0))
        }
    }

    /// The database's unique indexes are the last word on a lost race.
    func insertOrReportRace<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch where DatabaseManager.isUniqueViolation(error, index: "doctor_id") {
            throw ClinicError(.slotTaken, .slotTaken)
        } catch where DatabaseManager.isUniqueViolation(error, index: "client_id") {
            throw ClinicError(.overlappingAppointment, .overlappingUnknown)
        }
    }
}
