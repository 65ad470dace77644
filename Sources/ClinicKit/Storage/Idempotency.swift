import Crypto
import Foundation

/// The responses kept for requests a client may send again (`Idempotency-Key`): a booking whose
/// answer a phone lost must be safe to retry. The first response is kept with the request's
/// fingerprint, in the same transaction as the change it answers, so a retry either finds both
/// or neither; a retry with the same key and fingerprint gets the kept response and changes
/// nothing; the same key with another request is `idempotency_key_reused`. Keys are per
/// patient and live `lifetime`: forgotten at the first request at least `purgeInterval` after
/// the previous purge, so a key lives from `lifetime` to `lifetime + purgeInterval` (one
/// purge a minute per process instead of a DELETE per request: one round trip less per
/// booking on PostgreSQL).
public struct IdempotencyStore: Sendable {
    public static let lifetime: TimeInterval = 24 * 3600
    public static let purgeInterval: TimeInterval = 60

    /// A kept (or just made) response.
    public struct Response: Sendable, Equatable {
        public let status: Int
        public let body: Data
        /// True when this is a kept response sent again.
        public let replayed: Bool

        public init(status: Int, body: Data, replayed: Bool = false) {
            self.status = status; self.body = body; self.replayed = replayed
        }
    }

    let database: any ClinicStore
    let now: @Sendable () -> Date
    /// When this store last forgot expired keys (shared by its copies).
    private let lastPurge = LockedBox<Date?>(nil)

    public init(database: any ClinicStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.now = now
    }

    /// Whether expired keys are to be forgotten now; if so, `now` becomes the last purge. A
    /// clock that went back counts as due.
    func purgeIsDue(at now: Date) -> Bool {
        lastPurge.withLock { last in
            if let previous = last, now >= previous, now.timeIntervalSince(previous) < Self.purgeInterval { return false }
            last = now
            return true
        }
    }

    /// A key is 1 to 255 visible ASCII characters.
    public static func isValidKey(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.count <= 255 && key.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// SHA-256 of the parts that make a request what it is (method, route, body).
    public static func fingerprint(_ parts: [Data]) -> String {
        var hash = SHA256()
        for part in parts {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { hash.update(bufferPointer: $0) }
            hash.update(data: part)
        }
        return hash.finalize().hexString
    }

    /// What a request with `key` is kept under now (`key_invalid` for a key that is not 1 to
    /// 255 visible ASCII characters), with the purge of expired keys when one is due.
    public func request(clientId: Int64, key: String, fingerprint: String) throws -> IdempotentRequest {
        guard Self.isValidKey(key) else { throw ClinicError.invalid(.idempotencyKeyInvalid) }
        let now = self.now()
        return IdempotentRequest(clientId: clientId, key: key, fingerprint: fingerprint, now: now,
                                 forgetBefore: purgeIsDue(at: now) ? Date(seconds: now.seconds - Int64(Self.lifetime)) : nil)
    }

    /// Runs `work` once per key and keeps its response, in the transaction that the
    /// controllers' writes made by `work` join. An error `work` throws (an answer a retry may
    /// change, such as `busy`) keeps nothing: the transaction rolls back with it.
    public func perform(clientId: Int64, key: String, fingerprint: String,
                        _ work: () throws -> Response) throws -> Response {
        let request = try request(clientId: clientId, key: key, fingerprint: fingerprint)
        return try database.writingJoined { tx in try request.keep(tx, store: database, work) }
    }

    /// A patient's change with its answer kept, as the store's one awaited transaction (issue
    /// 56; `ClinicStore.perform(_:keeping:answer:)`).
    public func perform(_ change: AwaitedChange, clientId: Int64, key: String, fingerprint: String,
                        answer: @escaping IdempotentRequest.Answer<Appointment>) async throws -> Response {
        try await database.perform(change, keeping: try request(clientId: clientId, key: key, fingerprint: fingerprint), answer: answer)
    }

    /// A patient's hold with its answer kept, as the store's one awaited transaction
    /// (`ClinicStore.hold(_:decide:keeping:answer:)`).
    public func hold(_ ask: BookingFactsRequest, decide: @escaping @Sendable (HoldFacts) throws -> SlotHold, clientId: Int64,
                     key: String, fingerprint: String, answer: @escaping IdempotentRequest.Answer<SlotHold>) async throws -> Response {
        try await database.hold(ask, decide: decide, keeping: try request(clientId: clientId, key: key, fingerprint: fingerprint),
                                answer: answer)
    }

    // A kept response is sealed under the personal-data key, bound to its patient and key: it
    // is an appointment as the API answered it, the patient's reason for the visit included.
    // Sealed bodies start with 0x01 (a JSON body never does); one kept in clear before sealing
    // began is replayed as it is.
    package static let sealMark = Data([1])

    package static func isSealed(_ body: Data) -> Bool { body.first == 1 }

    package static func context(_ clientId: Int64, _ key: String) -> String { "idempotency:\(clientId):\(key)" }
}
