import Foundation

/// The inbox and the outbox (issue #25's seam).
public protocol MessageReading {}

public protocol MessageWriting: MessageReading {}
