import Foundation

// A staff account disabled awaited (issue 56): the store reads the account, ClinicKit decides
// whether the member may (`StaffController.disabling`), and the store disables it, ends its
// sessions and appends the audit row in the same transaction.

/// The awaited changes to staff accounts a `ClinicStore` offers.
public protocol StaffAccountsStore: Sendable {
    /// One transaction: the account (nil to `decide`: none, or a row this version cannot read),
    /// `decide`, the account disabled, its sessions ended, the audit row `decide` gave appended;
    /// the account as it is now.
    func disableStaff(id: Int64, decide: @escaping @Sendable (StaffMember?) throws -> AuditAsk) async throws -> StaffMember
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
