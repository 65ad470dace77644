/// What the audit trail records: the one list of actions. `AuditLog.append` takes only these,
/// so an action no list knows cannot be written, and each has words in every language
/// (`text(in:)`, in Localization/AuditStrings.swift) for the patient's access log.
public enum AuditAction: String, Sendable, CaseIterable {
    case appointmentStatus = "appointment.status"
    case appointmentBook = "appointment.book"
    case appointmentBookRefused = "appointment.book-refused"
    case appointmentCancel = "appointment.cancel"
    case appointmentReschedule = "appointment.reschedule"
    case appointmentCheckIn = "appointment.check-in"
    case appointmentUndoCheckIn = "appointment.undo-check-in"
    case appointmentStart = "appointment.start"
    case appointmentComplete = "appointment.complete"
    case appointmentNoShow = "appointment.no-show"
    case attachmentAdd = "attachment.add"
    case attachmentList = "attachment.list"
    case attachmentOpen = "attachment.open"
    case attachmentThumbnail = "attachment.thumbnail"
    case attachmentPurge = "attachment.purge"
    case doctorAdd = "doctor.add"
    case doctorDeactivate = "doctor.deactivate"
    case exceptionAdd = "exception.add"
    case exceptionRemove = "exception.remove"
    case holdRelease = "hold.release"
    case hoursSet = "hours.set"
    case messageSend = "message.send"
    case patientClaimCode = "patient.claim-code"
    case patientRead = "patient.read"
    case patientRegister = "patient.register"
    case patientSearch = "patient.search"
    case staffAdd = "staff.add"
    case staffDisable = "staff.disable"
    case threadAnswer = "thread.answer"
    case threadClose = "thread.close"
    case threadRead = "thread.read"
    case visitTypeAdd = "visit-type.add"
    case visitTypeRemove = "visit-type.remove"
    case visitTypeUpdate = "visit-type.update"
    case waitlistAdd = "waitlist.add"
    case waitlistPriority = "waitlist.priority"
    case waitlistRemove = "waitlist.remove"

    /// A staff member's step on an appointment (`StaffController.act`): `appointment.check-in`, ….
    public static func appointment(_ action: StaffAction) -> AuditAction {
        switch action {
        case .checkIn: .appointmentCheckIn
        case .undoCheckIn: .appointmentUndoCheckIn
        case .start: .appointmentStart
        case .complete: .appointmentComplete
        case .noShow: .appointmentNoShow
        case .cancel: .appointmentCancel
        }
    }
}
