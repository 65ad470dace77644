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
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let limit: Int
    private let maximumWaiting: Int
    private let state = NIOLockedValueBox(State())

    /// - Parameter maximumWaiting: past this many waiting, `run` refuses at once with `busy`
    ///   (a flood from many addresses must not queue without end).
    init(limit: Int, maximumWaiting: Int = 256) {
        self.limit = max(1, limit)
        self.maximumWaiting = max(0, maximumWaiting)
    }

    /// Bodies waiting for their turn.
    var waiting: Int { state.withLockedValue { $0.waiting.count } }

    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        guard waiting < maximumWaiting else { throw ClinicError(.busy, .databaseBusy) }
        await enter()
        defer { leave() }
        return try await body()
    }

    private func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLockedValue { state -> Bool in
                if state.running < limit { state.running += 1; return true }
                state.waiting.append(continuation)
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    private func leave() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty { state.running -= 1; return nil }
            return state.waiting.removeFirst() // its slot passes on: running stays the same
        }
        next?.resume()
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
