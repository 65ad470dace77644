import Foundation

/// Sessions, log-in throttling, the audit trail and idempotency keys (issue #25's seam).
public protocol SecurityReading {}

public protocol SecurityWriting: SecurityReading {}
