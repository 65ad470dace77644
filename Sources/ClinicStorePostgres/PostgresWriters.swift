import ClinicKit

// PostgreSQL has no writers of its own (issue 56): each use case's transaction is awaited on a
// connection leased from the pool (`transaction`), so the writers' lifetime a server drives
// (`ClinicStore.startWriters`, `drainWriters`) has nothing to start or to wait for here.

extension PostgresStore {
    public func startWriters(maximumBatch: Int, report: @escaping @Sendable (WriteBatchReport) -> Void) {}

    public var queuedWrites: Int { 0 }

    public func drainWriters() {}
}
