import Foundation

/// Appointments, their history, and the directory rows that booking and slots read: the
/// operations of issue #25's seam for this area.
public protocol AppointmentReading {
    // The functions that give or take an `Appointment` are `stored…`: its notes as stored
    // (sealed). ClinicKit calls them through `AppointmentRecords.swift`, which seals and opens.
    func storedAppointment(id: Int64) throws -> Appointment?
    /// A patient's appointments, any status, in the order (start, id).
    func storedAppointments(ofClient clientId: Int64) throws -> [Appointment]
    /// The appointments whose notes are sealed (they start with U+0001, `AppointmentNotes.mark`),
    /// or else those with notes in clear, by id, with their notes as stored (migration 18's and
    /// `rotate-key`'s passes).
    func storedAppointmentNotes(sealed: Bool) throws -> [(id: Int64, notes: String)]
    /// The histories of some appointments, in the order they were written.
    func appointmentEvents(of appointmentIds: [Int64]) throws -> [AppointmentEvent]
    /// The start and end of every active appointment of a doctor overlapping `span`, by start.
    func activeAppointmentSpans(doctorId: Int64, overlapping span: Range<Date>) throws -> [Range<Date>]
    /// Whether an active appointment of the doctor other than `except` overlaps `span`.
    func doctorIsBooked(_ doctorId: Int64, overlapping span: Range<Date>, except: Int64?) throws -> Bool
    /// An active appointment of the patient other than `except` overlapping `span`, if any.
    func activeAppointment(ofClient clientId: Int64, overlapping span: Range<Date>, except: Int64?) throws -> Int64?
    /// How many active appointments of the patient start at or after `start`.
    func activeAppointmentCount(ofClient clientId: Int64, startingFrom start: Date) throws -> Int

    func clinic(id: Int64) throws -> Clinic?
    func department(id: Int64) throws -> Department?
    /// The department's doctors who may be booked (deactivated ones are left out), by id.
    func activeDoctors(inDepartment departmentId: Int64) throws -> [Doctor]
    /// Each clinic with a department of the specialization (a key), and that department
    /// (the first by id when a clinic has two).
    func departmentsByClinic(specialization key: String) throws -> [Int64: Int64]
    /// Whether some department has the specialization (a key).
    func specializationExists(_ key: String) throws -> Bool
    /// Every specialization key some department has, sorted.
    func specializationKeys() throws -> [String]
    /// The longest stretch of hours, in minutes, any doctor of the specialization works
    /// (weekly or on a given day); 0 when none.
    func longestWorkingStretch(specialization key: String) throws -> Int

    /// A doctor's weekly hours.
    func workingHours(ofDoctor doctorId: Int64) throws -> [WorkingHours]
    /// A doctor's exceptions on the local dates `first` through `last` (keys "YYYY-MM-DD").
    func workingExceptions(ofDoctor doctorId: Int64, from first: String, through last: String) throws -> [WorkingException]

    /// A visit type, active or not (nil on a database before visit types).
    func visitType(id: Int64) throws -> VisitType?
    /// A department's visit types by length then id.
    func visitTypes(ofDepartment departmentId: Int64, includingInactive: Bool) throws -> [VisitType]

    /// `activeAppointmentSpans` and the spans of the doctor's holds live at `now`, by start, in
    /// one query (what `slots` counts as taken), less the appointment `exceptAppointment` and
    /// the hold `exceptHold` (a move's own time, a booked hold's).
    func takenSpans(doctorId: Int64, overlapping span: Range<Date>, at now: Date, exceptAppointment: Int64?,
                    exceptHold: Int64?) throws -> [Range<Date>]
    /// The patient's active appointments overlapping `span`, by start; with `departmentId`,
    /// only those in that department.
    func activeAppointmentSpans(ofClient clientId: Int64, inDepartment departmentId: Int64?, overlapping span: Range<Date>) throws -> [PatientSpan]
    /// Whether the doctor is taken during `span`: an active appointment other than
    /// `exceptAppointment`, or a hold live at `now` other than `exceptHold` (one query: it is
    /// on every booking's path).
    func doctorIsTaken(_ doctorId: Int64, overlapping span: Range<Date>, exceptAppointment: Int64?, exceptHold: Int64?,
                       at now: Date) throws -> Bool
    /// A hold, live or expired.
    func slotHold(id: Int64) throws -> SlotHold?
    /// The doctor's holds live at `now` that overlap `span`, by start.
    func liveSlotHolds(doctorId: Int64, overlapping span: Range<Date>, at now: Date) throws -> [SlotHold]

    /// The settings whose keys start with `prefix`.
    func settings(prefix: String) throws -> [String: String]
    /// One setting, nil when it is not set.
    func setting(_ key: String) throws -> String?
}

public protocol AppointmentWriting: AppointmentReading {
    /// Stores a new appointment and returns it with its id. A store refuses one that would
    /// overlap an active appointment of the same doctor (`slot_taken`) or start with another
    /// of the same patient (`overlapping_appointment`) by its own constraints: the last line
    /// against a double booking, whatever the rules checked before.
    func insertStoredAppointment(_ appointment: Appointment) throws -> Appointment
    /// Rewrites an appointment (its slot, status, doctor), under the same constraints.
    func updateStoredAppointment(_ appointment: Appointment) throws
    /// Rewrites an appointment's notes as stored, and nothing else.
    func setStoredNotes(_ notes: String, ofAppointment id: Int64) throws
    func insertAppointmentEvent(_ event: AppointmentEvent) throws

    /// Adds a visit type and returns its id.
    func insertVisitType(departmentId: Int64, nameEn: String, nameRu: String, durationMinutes: Int, priceCents: Int?) throws -> Int64
    func updateVisitType(id: Int64, nameEn: String, nameRu: String, durationMinutes: Int, priceCents: Int?) throws
    /// Stops offering a visit type (its appointments keep it).
    func deactivateVisitType(id: Int64) throws

    func setSetting(_ key: String, to value: String) throws

    /// Stores a hold and returns it with its id. A store refuses one overlapping another hold
    /// of the doctor that is still stored (`slot_taken`): the caller deletes expired ones first.
    func insertSlotHold(_ hold: SlotHold) throws -> SlotHold
    /// Deletes a hold (nothing when it is gone).
    func deleteSlotHold(id: Int64) throws
    /// Deletes every hold of a patient.
    func deleteSlotHolds(ofClient clientId: Int64) throws
    /// Deletes every hold expired at `now`.
    func deleteExpiredSlotHolds(at now: Date) throws
}
