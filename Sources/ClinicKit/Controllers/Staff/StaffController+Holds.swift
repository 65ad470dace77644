import Foundation

// The front desk and patients' holds (issue 42): a time held through FHIR's `$hold` shows on the
// calendar as held, until when, and the front desk may release it (the patient on the phone
// wants it now, or a crowd of accounts is holding the day).

extension StaffController {
    /// Releases a hold on one of the member's clinic's doctors (receptionists and clinic admins):
    /// the time is free again at once. The patient's access log says so (`hold.release`). A hold
    /// of another clinic, or one that is gone, is `not_found`.
    public func releaseHold(_ member: StaffMember, holdId: Int64, requestId: String? = nil) throws {
        let decide = try releasing(member, holdId: holdId, requestId: requestId)
        try database.writing { tx in try HoldRelease.apply(tx, id: holdId, decide: decide) }
    }

    /// `releaseHold` awaited (issue 56: `FrontDeskChangesStore.deskReleaseHold`).
    public func releaseHold(_ member: StaffMember, holdId: Int64, requestId: String? = nil) async throws {
        try await database.deskReleaseHold(id: holdId, decide: try releasing(member, holdId: holdId, requestId: requestId))
    }

    /// Who may release (the front desk: `forbidden` otherwise, before anything is read), and
    /// whether the hold read may be: another clinic's, or none, is `not_found`. Its audit row.
    func releasing(_ member: StaffMember, holdId: Int64, requestId: String?) throws -> @Sendable (SlotHold?) throws -> AuditAsk {
        try member.checkFrontDesk()
        let now = self.now()
        return { hold in
            guard let hold, hold.clinicId == member.clinicId else { throw ClinicError(.notFound, .holdNotFound, String(holdId)) }
            return AuditAsk(by: member.auditActor, action: .holdRelease, clientId: hold.clientId, clinicId: member.clinicId,
                            requestId: requestId, detail: "doctor \(hold.doctorId) \(DateText.iso8601(hold.startsAt))", now: now)
        }
    }
}
