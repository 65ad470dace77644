import Foundation
import HTTPTypes
import Testing

/// `/metrics` scraped and parsed, and `X-Request-Id` kept or made, in the log and on the
/// response; no ids, tokens or personal data in the labels.
@Suite struct ObservabilityTests {
    @Test func metricsAndRequestIds() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("mira")
            let (department, _) = try await server.department()
            let start = try await server.freeSlot(department)
            let booked = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start], token: token,
                                               headers: ["X-Request-Id": "phone-42.retry_1"])
            #expect(booked.headers["X-Request-Id"].first == "phone-42.retry_1")
            _ = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start], token: token)
            _ = try await server.send(.POST, "/v1/sessions", json: ["login": "mira", "password": "wrong password here"])
            let bad = try await server.send(.GET, "/healthz", headers: ["X-Request-Id": "has spaces & more"])
            let made = try #require(bad.headers["X-Request-Id"].first)
            #expect(made != "has spaces & more")
            #expect(server.serverLog.contains("request_id=phone-42.retry_1"))
            // One request id per line (issue 46): not Hummingbird's own beside ours.
            let lines = server.serverLog.split(separator: "\n").filter { $0.hasPrefix("request ") }
            #expect(!lines.isEmpty && lines.allSatisfy { !$0.contains("hb.request.id") && $0.components(separatedBy: "request_id=").count == 2 },
                    "\(lines.prefix(3))")

            let scrape = try await server.send(.GET, "/metrics")
            #expect(scrape.status == 200)
            #expect(scrape.headers["Content-Type"].first?.hasPrefix("text/plain") ?? false)
            // Parse the exposition format: name{labels} value.
            var samples: [String: Double] = [:]
            for line in scrape.text.split(separator: "\n") where !line.hasPrefix("#") {
                let parts = line.split(separator: " ")
                guard parts.count >= 2, let value = Double(parts[parts.count - 1]) else {
                    Issue.record("unreadable metrics line: \(line)")
                    continue
                }
                samples[parts.dropLast().joined(separator: " ")] = value
            }
            func sample(_ prefix: String, _ contains: [String]) -> Double {
                samples.filter { $0.key.hasPrefix(prefix) && contains.allSatisfy($0.key.contains) }.values.reduce(0, +)
            }
            #expect(sample("http_requests_total", ["route=\"/v1/appointments\"", "status=\"201\""]) == 1)
            #expect(sample("clinic_appointment_changes_total", ["operation=\"book\"", "outcome=\"ok\""]) == 1)
            #expect(sample("clinic_appointment_changes_total", ["operation=\"book\"", "outcome=\"overlapping_appointment\""])
                           + sample("clinic_appointment_changes_total", ["operation=\"book\"", "outcome=\"slot_taken\""]) == 1)
            #expect(sample("clinic_login_failures_total", ["code=\"invalid_credentials\""]) == 1)
            #expect(sample("clinic_commit_batch_size_count", []) >= 2)
            #expect(sample("http_request_duration_seconds_count", ["route=\"/v1/appointments\""]) > 0)
            #expect((samples.keys.first { $0.hasPrefix("clinic_password_queue_length") }) != nil)
            // No ids, tokens or personal data in labels.
            #expect(!(scrape.text.contains("mira")))
            #expect(!(scrape.text.contains(token)))
            #expect((scrape.text.range(of: "route=\"/v1/appointments/[0-9]", options: .regularExpression)) == nil)
        }
    }
}
