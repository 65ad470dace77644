import Foundation

// The staff's transitions as a decision on plain facts (issue 56), as `BookingRules` are the
// patient's: the store gathers the appointment with its clinic's zone
// (`AppointmentChangeFacts`), `StaffRules.act` decides, the store writes the change and the
// audit trail's row in one transaction.

public enum StaffRules {
    /// A staff action on appointment `id`: refused as `StaffAction.refusal` says (an unknown
    /// appointment is `not_found`, as one of another clinic is), else the appointment in its
    /// new status, its history entry (a cancellation's with its reason), the audit trail's
    /// row, and for a cancellation the patient's message and its text (sent where they take
    /// reminders by text).
    public static func act(_ facts: AppointmentChangeFacts?, id: Int64, member: StaffMember, action: StaffAction,
                           reason: String?, requestId: String?, now: Date) throws -> BookingDecision {
        guard let facts else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
        let appointment = facts.appointment
        guard let zone = facts.clinicTimeZone else { throw ClinicError(.notFound, .clinicNotFound, String(appointment.clinicId)) }
        if let refusal = action.refusal(by: member, on: appointment, now: now, zone: Clinic.zone(named: zone)) { throw refusal }
        let status = action.status, cancel = action == .cancel
        var moved = appointment
        moved.status = status
        moved.updatedAt = now
        let detail = "\(appointment.status.rawValue) -> \(status.rawValue)" + (cancel ? ": \(reason ?? "")" : "")
        let (message, text) = cancel ? BookingDecision.clinicCancellation(moved, context: facts.messageContext, reason: reason,
                                                                           staffId: member.id) : (nil, nil)
        return BookingDecision(
            appointment: moved,
            event: BookingRules.event(moved, status.rawValue, .staff, now, reason: cancel ? reason : nil, staffId: member.id),
            message: message,
            audit: AuditAsk(by: member.auditActor, action: .appointment(action), clientId: appointment.clientId, appointmentId: id,
                            requestId: requestId, detail: detail, now: now),
            text: text)
    }

    /// What a staff member's move of appointment `id` to `time` (with `doctorId`, to that
    /// doctor) is decided on: refused as `StaffMember.rescheduleRefusal` says, else the
    /// booking's facts for the new time, the appointment itself set aside.
    public static func reschedulePlan(_ facts: AppointmentChangeFacts?, id: Int64, member: StaffMember, time: TimeInput.Parsed,
                                      doctorId: Int64?, now: Date) throws -> BookingFactsRequest {
        guard let appointment = facts?.appointment else { throw ClinicError(.notFound, .appointmentNotFound, String(id)) }
        if let refusal = member.rescheduleRefusal(on: appointment) { throw refusal }
        return AppointmentController.factsRequest(clientId: appointment.clientId, departmentId: appointment.departmentId,
                                                  visitTypeId: appointment.visitTypeId, onlyDoctorId: doctorId, at: time,
                                                  exceptAppointment: appointment.id, exceptHold: nil, now: now)
    }

    /// The move itself: the slot's rules and the patient's other visits as for the patient's
    /// own move (`BookingRules.move`), not the patient's cutoff (the clinic moves it); the
    /// history names the staff account and the reason, the patient's message carries it, and
    /// the audit trail has the move. Nil: the same time with the same doctor.
    public static func reschedule(_ change: AppointmentChangeFacts, _ facts: BookingFacts, member: StaffMember,
                                  time: TimeInput.Parsed, doctorId: Int64?, reason: String?, requestId: String?,
                                  now: Date) throws -> BookingDecision? {
        let before = change.appointment
        guard var decision = try BookingRules.move(facts, MoveAsk(appointment: before, time: time, doctorId: doctorId,
                                                                  staffId: member.id, reason: reason),
                                                   policy: BookingPolicy(settings: change.bookingSettings), now: now) else { return nil }
        decision.audit = AuditAsk(by: member.auditActor, action: .appointmentReschedule, clientId: before.clientId,
                                  appointmentId: before.id, requestId: requestId,
                                  detail: "\(DateText.iso8601(before.startsAt)) -> \(DateText.iso8601(decision.appointment.startsAt))"
                                      + (reason.map { ": \($0)" } ?? ""), now: now)
        return decision
    }
}
