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
}
