import ClinicKit
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Where blocking work runs: SQLite, Argon2 and the cross-process writer lock never run on an
/// event loop or on Swift's cooperative threads, but on this pool's own threads.
struct BlockingPool: Sendable {
    let pool: NIOThreadPool

    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(body)
    }
}

/// At most `limit` bodies at once; the others wait their turn (first come, first served).
/// Bounds the Argon2 work a flood of log-ins can start, so bookings keep their threads.
final class Gate: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var running = 0
        var nextId: UInt64 = 0
        var waiting: [Waiter] = []
    }
    private let limit: Int
    private let maximumWaiting: Int
    private let maximumWait: Duration?
    private let state = NIOLockedValueBox(State())

    /// - Parameter maximumWaiting: past this many waiting, `run` refuses at once with `busy`
    ///   (a flood from many addresses must not queue without end).
    /// - Parameter maximumWait: a body not let in within this time is refused with `busy` (a
    ///   few slow bodies — photos that take seconds to decode — must not make the next one
    ///   wait for minutes: it is told to come back, with Retry-After).
    init(limit: Int, maximumWaiting: Int = 256, maximumWait: Duration? = nil) {
        self.limit = max(1, limit)
        self.maximumWaiting = max(0, maximumWaiting)
        self.maximumWait = maximumWait
    }

    /// Bodies waiting for their turn.
    var waiting: Int { state.withLockedValue { $0.waiting.count } }

    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        guard waiting < maximumWaiting else { throw ClinicError(.busy, .databaseBusy) }
        guard await enter() else { throw ClinicError(.busy, .databaseBusy) }
        defer { leave() }
        return try await body()
    }

    /// True once let in; false when `maximumWait` passed first (the waiter is then gone from the
    /// queue, and holds no place).
    private func enter() async -> Bool {
        let id = state.withLockedValue { state -> UInt64 in state.nextId += 1; return state.nextId }
        let timeout: Task<Void, Never>? = maximumWait.map { wait in
            Task { [weak self] in
                try? await Task.sleep(for: wait)
                guard !Task.isCancelled else { return }
                self?.giveUp(id)
            }
        }
        defer { timeout?.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let admitted = state.withLockedValue { state -> Bool in
                if state.running < limit { state.running += 1; return true }
                state.waiting.append(Waiter(id: id, continuation: continuation))
                return false
            }
            if admitted { continuation.resume(returning: true) }
        }
    }

    private func giveUp(_ id: UInt64) {
        let gone = state.withLockedValue { state -> Waiter? in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiting.remove(at: index)
        }
        gone?.continuation.resume(returning: false)
    }

    private func leave() {
        let next = state.withLockedValue { state -> Waiter? in
            if state.waiting.isEmpty { state.running -= 1; return nil }
            return state.waiting.removeFirst() // its slot passes on: running stays the same
        }
        next?.continuation.resume(returning: true)
    }
}

/// Upload bodies in flight, server-wide, by bytes (issue 42): 60 connections each sending
/// 10 MiB took 1.24 GB, and HTTP/2 streams multiplied it, since each body was read into memory
/// as it came. Now an upload reserves its bytes (its declared length, or the upload limit when
/// it declares none) before a byte of it is read, and one that does not fit is refused at once
/// (`busy`, with Retry-After) rather than kept waiting: a connection kept waiting still holds
/// what the network stack has read of its body (about 3 MB under TLS, measured), so a crowd of
/// waiters would fill the memory the budget is there to keep.
final class ByteBudget: Sendable {
    private let capacity: Int
    private let used = NIOLockedValueBox(0)

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Runs `body` with `bytes` reserved (at most the capacity); `busy` if they are not free.
    func run<T: Sendable>(reserving bytes: Int, _ body: () async throws -> T) async throws -> T {
        let bytes = min(max(0, bytes), capacity)
        let admitted = used.withLockedValue { used -> Bool in
            guard used + bytes <= capacity else { return false }
            used += bytes
            return true
        }
        guard admitted else { throw ClinicError(.busy, .databaseBusy) }
        defer { used.withLockedValue { $0 -= bytes } }
        return try await body()
    }
}

/// Token buckets per client address: `burst` requests at once, refilled at `perMinute`.
/// Buckets that are full again are forgotten, so memory follows the addresses active now.
final class RateLimiter: Sendable {
    private struct Bucket { var tokens: Double; var updated: Double }
    private let burst: Double
    private let perSecond: Double
    private let buckets = NIOLockedValueBox([String: Bucket]())
    private let clock: @Sendable () -> Double

    init(burst: Int, perMinute: Double, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.burst = Double(burst)
        self.perSecond = perMinute / 60
        self.clock = clock
    }

    /// Takes one token for `address`; nil when allowed, else the seconds until one is free.
    func take(_ address: String) -> Int? {
        let now = clock()
        return buckets.withLockedValue { buckets -> Int? in
            if buckets.count > 10_000 { buckets = buckets.filter { now - $0.value.updated < burst / perSecond } }
            var bucket = buckets[address] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * perSecond)
            bucket.updated = now
            defer { buckets[address] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }
}
