import Foundation

// The operator's shapes: the outbox's report and the audit trail.

/// What one round of the outbox did (`clinic admin deliver`).
public struct DeliveryReportJSON: Encodable, Sendable {
    public let reminders: Int, sent: Int, retrying: Int, failed: Int
    /// Of `sent`, the texts.
    public let texts: Int
    /// Freed times and lapsed offers the waitlist's worker handled first (`WaitlistController.work`).
    public let waitlist: Int
    public init(_ report: DeliveryReport, waitlist: Int = 0) {
        reminders = report.reminders; sent = report.sent; retrying = report.retrying; failed = report.failed
        texts = report.texts
        self.waitlist = waitlist
    }
}

/// One row of the operator's audit export (`admin audit export`), hash included, so that a
/// kept export anchors the chain.
public struct AuditEventJSON: Encodable, Sendable {
    public let id: Int64
    public let at: String
    public let actor: String
    public let staffId: Int64?
    public let role: String
    public let clinicId: Int64?
    public let action: String
    public let clientId: Int64?
    public let appointmentId: Int64?
    public let requestId: String?
    public let detail: String
    public let hash: String

    public init(_ entry: AuditEntry) {
        id = entry.id; at = DateText.iso8601(entry.at); actor = entry.actor; staffId = entry.staffId; role = entry.role
        clinicId = entry.clinicId; action = entry.action; clientId = entry.clientId; appointmentId = entry.appointmentId
        requestId = entry.requestId; detail = entry.detail; hash = entry.hash
    }

    private enum Keys: String, CodingKey {
        case id, at, actor, staffId, role, clinicId, action, clientId, appointmentId, requestId, detail, hash
    }

    /// Every key always, `null` where there is no value.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id); try container.encode(at, forKey: .at)
        try container.encode(actor, forKey: .actor); try container.encode(staffId, forKey: .staffId)
        try container.encode(role, forKey: .role); try container.encode(clinicId, forKey: .clinicId)
        try container.encode(action, forKey: .action); try container.encode(clientId, forKey: .clientId)
        try container.encode(appointmentId, forKey: .appointmentId); try container.encode(requestId, forKey: .requestId)
        try container.encode(detail, forKey: .detail); try container.encode(hash, forKey: .hash)
    }
}
