import Foundation

/// A bounded wait for something another process does, safe beside the suite's synchronous
/// tests. Those hold the two cooperative threads of this machine, so an await here (a sleep, an
/// HTTP answer) can resume minutes after it was due. A loop that read the clock after its
/// attempt could so end on an answer given long before the deadline (CI, stop 64: the cut-short
/// request was counted, yet the test saw the scrape taken before it). Here the deadline is read
/// before each attempt: the last attempt always starts after it, and sees all that happened
/// until then.
enum Poll {
    /// Tries `attempt` every `interval` until it gives a value or an attempt started at or after
    /// `seconds` from now has failed; that last attempt's answer (nil if none).
    static func until<T>(seconds: Double, interval: Duration = .milliseconds(100),
                         _ attempt: () async throws -> T?) async throws -> T? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let late = Date() >= deadline
            if let value = try await attempt() { return value }
            if late { return nil }
            try await Task.sleep(for: interval)
        }
    }
}
