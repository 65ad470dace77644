import ClinicKit
import Foundation

/// Orders the writers of one database file across processes: a `flock` on `<database>.lock`,
/// taken around every write transaction. Waiting writers sleep in the kernel and the next one
/// is woken as soon as the lock is released, instead of polling SQLite's lock (which, with 8
/// processes on 2 cores, left it idle between writers: docs/BENCHMARKS.md). The kernel drops
/// the lock of a process that dies, so a crash cannot wedge the others.
final class WriterLock: @unchecked Sendable {
    private let descriptor: Int32
    private let waiter = DispatchQueue(label: "clinic.writer-lock")

    init?(path: String) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Runs `body` holding the lock; `busy` if it cannot be had within `limit` seconds.
    func withLock<T>(limit: TimeInterval, _ body: () throws -> T) throws -> T {
        try acquire(limit: limit)
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    private func acquire(limit: TimeInterval) throws {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
        // Contended: wait in the kernel on another thread, so that the wait can be bounded.
        let acquired = DispatchSemaphore(value: 0)
        let state = LockedBox(State.waiting)
        let descriptor = self.descriptor
        waiter.async {
            while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
            let keep = state.withLock { current -> Bool in
                guard current == .waiting else { return false }
                current = .acquired
                return true
            }
            if keep { acquired.signal() } else { flock(descriptor, LOCK_UN) } // the caller gave up
        }
        if acquired.wait(timeout: .now() + limit) == .success { return }
        let gaveUp = state.withLock { current -> Bool in
            guard current == .waiting else { return false }
            current = .abandoned
            return true
        }
        if gaveUp { throw ClinicError(.busy, .databaseBusy) }
        acquired.wait() // it arrived just as the wait ended
    }

    private enum State { case waiting, acquired, abandoned }
}
