import Foundation

// The operator's settings awaited (issue 56): the booking rules (`clinic admin settings`) read
// in one snapshot, and one rule changed, its value checked by ClinicKit before the transaction
// (`BookingPolicy.checked`), with the rules as they then are read in the same transaction. The
// retention purge of files and conversations: a batch of appointments per transaction, each
// folder deleted with the audit row ClinicKit makes of what was deleted.

/// The operator's awaited reads and changes of settings a `ClinicStore` offers.
public protocol OperatorStore: Sendable {
    /// The settings whose keys start with `prefix` (`booking.`), in one snapshot.
    func settings(prefix: String) async throws -> [String: String]
    /// One transaction: `key` set to `value` (added or replaced), then the settings whose keys
    /// start with `prefix` as they are now.
    func changeSetting(_ key: String, to value: String, prefix: String) async throws -> [String: String]
    /// One transaction: `key` set to `value` unless it has a value already (another process's
    /// stays); the value it then has.
    func keepSetting(_ key: String, proposing value: String) async throws -> String
    /// One transaction: the first `limit` appointments (by id) that ended before `endedBefore`
    /// and have files or a conversation; each one's files, messages and conversation deleted,
    /// and the audit row `audit` makes of it appended. The folders deleted.
    func purgeFolders(endedBefore: Date, limit: Int, audit: @escaping @Sendable (PurgedFolder) -> AuditAsk) async throws
        -> [PurgedFolder]
    /// Every audit row from `since` on, oldest first, and the rows that cannot be read
    /// (`SecurityReading.auditEntries(since:)`), in one snapshot; none on a store without a trail.
    func auditExport(since: Date) async throws -> (entries: [AuditEntry], unreadable: [UnreadableAuditRow])
}

/// One appointment's folder deleted by the retention purge.
public struct PurgedFolder: Sendable, Equatable {
    public let appointmentId: Int64
    /// The appointment's patient (nil: a walk-in's visit without one, or none).
    public let clientId: Int64?
    public let files: Int
    public let messages: Int

    public init(appointmentId: Int64, clientId: Int64?, files: Int, messages: Int) {
        self.appointmentId = appointmentId; self.clientId = clientId; self.files = files; self.messages = messages
    }

    /// The batch in the caller's write transaction, through the seam's reads and writes (the
    /// blocking path, and SQLite's).
    package static func purge(_ tx: any StoreWriting, endedBefore: Date, limit: Int,
                              audit: (PurgedFolder) -> AuditAsk) throws -> [PurgedFolder] {
        try tx.appointmentsWithFolders(endedBefore: endedBefore, limit: limit).map { id in
            let clientId = try tx.appointment(id: id)?.clientId
            let removed = try tx.deleteFolder(ofAppointment: id)
            let purged = PurgedFolder(appointmentId: id, clientId: clientId, files: removed.files, messages: removed.messages)
            try AuditLog.append(tx, audit(purged))
            return purged
        }
    }
}
