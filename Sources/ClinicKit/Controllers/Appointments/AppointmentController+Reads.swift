import Foundation

// A patient's appointments read awaited (issue 56: `PatientAppointmentsStore`): what a server's
// request does, with no thread waiting for the store; the same rules as the synchronous reads.

extension AppointmentController {
    /// `appointmentsPage` awaited.
    public func appointmentsPage(_ clientId: Int64, scope: AppointmentScope, limit: Int, cursor: String?) async throws -> Page<Appointment> {
        try Page<Appointment>.checkLimit(limit)
        let after = try cursor.map(PagePosition.init(cursor:))
        let now = self.now()
        let all = try await database.patientAppointments(clientId: clientId)
        return Self.page(all.filter { scope.contains($0, now: now) }, limit: limit, after: after)
    }

    /// `appointmentWithHistory` awaited (owner only).
    public func appointmentWithHistory(_ id: Int64, clientId: Int64) async throws -> (appointment: Appointment, history: [AppointmentEvent]) {
        let found = try await database.appointmentWithHistory(id: id)
        return (try Self.owned(found?.appointment, id, clientId), found?.history ?? [])
    }
}
