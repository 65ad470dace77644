import ClinicKit
import Foundation
import Prometheus

/// The server's metrics in Prometheus' text format (`GET /metrics`). Labels are route
/// templates, methods, statuses, outcomes and error codes: never ids, paths or personal data.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    private static let durationBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    func request(route: String, method: String, status: Int, duration: Duration) {
        registry.makeCounter(name: "http_requests_total", labels: [("route", route), ("method", method), ("status", String(status))])
            .increment()
        registry.makeDurationHistogram(name: "http_request_duration_seconds", labels: [("route", route), ("method", method)],
                                       buckets: Self.durationBuckets)
            .record(duration)
    }

    /// A booking, reschedule or cancellation: `ok`, or the error code that refused it.
    func change(_ operation: String, outcome: String) {
        registry.makeCounter(name: "clinic_appointment_changes_total", labels: [("operation", operation), ("outcome", outcome)])
            .increment()
    }

    func batch(_ report: WriteBatchReport) {
        registry.makeValueHistogram(name: "clinic_commit_batch_size", buckets: [1, 2, 4, 8, 16, 32, 64]).record(Double(report.size))
        registry.makeDurationHistogram(name: "clinic_commit_duration_seconds", buckets: Self.durationBuckets)
            .record(.nanoseconds(Int64(report.seconds * 1e9)))
        registry.makeCounter(name: "clinic_commit_batches_total", labels: [("committed", report.committed ? "true" : "false")])
            .increment()
    }

    /// A refused log-in: `invalid_credentials`, `account_locked` or `rate_limited`.
    func logInRefused(_ code: String) {
        registry.makeCounter(name: "clinic_login_failures_total", labels: [("code", code)]).increment()
    }

    /// Password work (Argon2) waiting for its turn.
    func passwordQueue(_ waiting: Int) {
        registry.makeGauge(name: "clinic_password_queue_length").set(to: Double(waiting))
    }

    /// Texts through the SMS gateway: `event` is sent (taken by the gateway), delivered and
    /// failed (the network's delivery reports: one per part of a long text), opted_out (a
    /// STOP), opted_in (a START), unknown_sender (a text from a number nobody confirmed).
    func texts(_ event: String, by count: Int = 1) {
        guard count > 0 else { return }
        registry.makeCounter(name: "clinic_texts_total", labels: [("event", event)]).increment(by: Int64(count))
    }

    /// A confirmation code refused by `CodeLimits`: `reason` is the limit (`budget_text`,
    /// `budget_mail`, `per_day`, `per_hour`, `too_soon`).
    func codeRefused(_ key: MessageKey) {
        let reason: String
        switch key {
        case .textCodeBudgetSpent: reason = "budget_text"
        case .mailCodeBudgetSpent: reason = "budget_mail"
        case .codesPerDaySpent: reason = "per_day"
        case .codesPerHourSpent: reason = "per_hour"
        default: reason = "too_soon"
        }
        registry.makeCounter(name: "clinic_codes_refused_total", labels: [("reason", reason)]).increment()
    }

    func text() -> String { registry.emitToString() }
}
