import Foundation

// A patient's appointments read awaited (issue 56: `PatientAppointmentsStore`): what a server's
// request does, with no thread waiting for the store; the same rules as the synchronous reads.

extension AppointmentController {
    /// `appointmentsPage` awaited.
    public func appointmentsPage(_ clientId: Int64, scope: AppointmentScope, limit: Int, cursor: String?) async throws -> Page<Appointment> {
        try Page<Appointment>.checkLimit(limit)
        let after = try cursor.map(PagePosition.init(cursor:))
        return Self.page(try await getAppointmentsByClientId(clientId, scope: scope), limit: limit, after: after)
    }

    /// `getAppointmentsByClientId` awaited.
    public func getAppointmentsByClientId(_ clientId: Int64, scope: AppointmentScope = .upcoming) async throws -> [Appointment] {
        let now = self.now()
        return try await database.patientAppointments(clientId: clientId).filter { scope.contains($0, now: now) }
    }

    /// `appointmentWithHistory` awaited (owner only).
    public func appointmentWithHistory(_ id: Int64, clientId: Int64) async throws -> (appointment: Appointment, history: [AppointmentEvent]) {
        let found = try await database.appointmentWithHistory(id: id)
        return (try Self.owned(found?.appointment, id, clientId), found?.history ?? [])
    }
}
