import Foundation

// The front desk and patients' holds (issue 42): a time held through FHIR's `$hold` shows on the
// calendar as held, until when, and the front desk may release it (the patient on the phone
// wants it now, or a crowd of accounts is holding the day).

extension StaffController {
    /// Releases a hold on one of the member's clinic's doctors (receptionists and clinic admins):
    /// the time is free again at once. The patient's access log says so (`hold.release`). A hold
    /// of another clinic, or one that is gone, is `not_found`.
    public func releaseHold(_ member: StaffMember, holdId: Int64, requestId: String? = nil) throws {
        try member.checkFrontDesk()
        let now = self.now()
        try database.writing { tx in
            guard let hold = try tx.slotHold(id: holdId), hold.clinicId == member.clinicId else {
                throw ClinicError(.notFound, .holdNotFound, String(holdId))
            }
            try tx.deleteSlotHold(id: holdId)
            try AuditLog.append(tx, by: member.auditActor, action: .holdRelease, clientId: hold.clientId,
                                clinicId: member.clinicId, requestId: requestId, detail: "doctor \(hold.doctorId) \(DateText.iso8601(hold.startsAt))", now: now)
        }
    }
}
