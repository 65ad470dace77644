import Foundation

// A staff account disabled awaited (issue 56): the store reads the account, ClinicKit decides
// whether the member may (`StaffController.disabling`), and the store disables it, ends its
// sessions and appends the audit row in the same transaction. A staff account added awaited:
// ClinicKit checks the fields and hashes the password before any transaction
// (`StaffController.adding`), and the store checks the clinic and the doctor named, inserts the
// account and appends the audit row in one.

/// The awaited changes to staff accounts a `ClinicStore` offers.
public protocol StaffAccountsStore: Sendable {
    /// One transaction: the account (nil to `decide`: none, or a row this version cannot read),
    /// `decide`, the account disabled, its sessions ended, the audit row `decide` gave appended;
    /// the account as it is now.
    func disableStaff(id: Int64, decide: @escaping @Sendable (StaffMember?) throws -> AuditAsk) async throws -> StaffMember
    /// One transaction: whether the clinic exists and the doctor's clinic, `StaffAddition.check`,
    /// the account inserted (a login key taken, in any case, is `login_taken`, also when another
    /// server adds it at the same moment), the audit row (`StaffAddition.audit`); the account.
    func addStaff(_ addition: StaffAddition) async throws -> StaffMember
}

/// A staff account to add, its fields checked and its password hashed: what the store's one
/// transaction checks against the clinic and the doctor named, then writes.
public struct StaffAddition: Sendable {
    public let login: String
    public let loginKey: String
    public let passwordHash: String
    public let name: String
    public let surname: String
    public let role: StaffRole
    public let clinicId: Int64
    public let doctorId: Int64?
    let actor: AuditActor
    let requestId: String?
    public let now: Date

    init(_ input: StaffInput, login: String, passwordHash: String, actor: AuditActor, requestId: String?, now: Date) {
        self.login = login; loginKey = Client.key(forLogin: login); self.passwordHash = passwordHash
        name = input.name.trimmingCharacters(in: .whitespaces); surname = input.surname.trimmingCharacters(in: .whitespaces)
        role = input.role; clinicId = input.clinicId; doctorId = input.doctorId
        self.actor = actor; self.requestId = requestId; self.now = now
    }

    /// The clinic must exist and the doctor named (if any) be one of its own; else `not_found`.
    /// `doctorsClinic`: the named doctor's clinic, nil when there is no such doctor.
    public func check(clinicExists: Bool, doctorsClinic: Int64?) throws {
        guard clinicExists else { throw ClinicError(.notFound, .clinicNotFound, String(clinicId)) }
        if let doctorId, doctorsClinic != clinicId { throw ClinicError(.notFound, .doctorNotFound, String(doctorId)) }
    }

    /// The audit row of the account added.
    public func audit(_ member: StaffMember) -> AuditAsk {
        AuditAsk(by: actor, action: .staffAdd, clinicId: clinicId, requestId: requestId,
                 detail: "\(member.role.rawValue) \(member.login)", now: now)
    }

    /// The addition in the caller's write transaction (the blocking path, and SQLite's).
    package func apply(_ tx: any StoreWriting) throws -> StaffMember {
        try check(clinicExists: try tx.clinic(id: clinicId) != nil, doctorsClinic: try doctorId.flatMap { try tx.clinicId(ofDoctor: $0) })
        let member = try tx.insertStaffMember(login: login, loginKey: loginKey, passwordHash: passwordHash, name: name, surname: surname,
                                              role: role, clinicId: clinicId, doctorId: doctorId, createdAt: now)
        try AuditLog.append(tx, audit(member))
        return member
    }
}

/// The disabling in the caller's write transaction (the seam's path, and SQLite's).
package enum StaffDisabling {
    package static func apply(_ tx: any StoreWriting, id: Int64, decide: (StaffMember?) throws -> AuditAsk) throws -> StaffMember {
        // An unreadable row (a role this version does not know) is no account to disable.
        let audit = try decide(try? tx.staffMember(id: id))
        try tx.deactivateStaffMember(id: id)
        try tx.deleteStaffSessions(ofStaff: id)
        try AuditLog.append(tx, audit)
        guard let disabled = try tx.staffMember(id: id) else { throw ClinicError(.notFound, .staffNotFound, String(id)) }
        return disabled
    }
}
