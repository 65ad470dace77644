import Foundation
import HTTPTypes
import Testing

/// Issue 42: a patient's hold (FHIR's `$hold`) shows on the front desk's calendar as held, with
/// until when, and the receptionist releases it from there: the time is free to book at once.
@Suite struct HoldCalendarTestsInProcess {
    @Test func aHoldShowsOnTheCalendarAndTheDeskReleasesIt() async throws {
        try await InProcessServer.run { server in
            let s = try await StaffAPITestsInProcess.makeWorld(server)
            let holder = try await server.patient("holder")
            let slots = try await server.send(.GET, "/v1/departments/\(s.department)/slots?from=\(s.monday)&days=1&doctorId=\(s.otherDoctor)")
            let slot = try #require(slots.array.first { $0["isAvailable"] as? Bool == true })
            let start = try #require(slot["start"] as? String)
            let instant = try #require(ISO8601DateFormatter().date(from: start))
            let proposal = "p-\(s.department)-\(s.otherDoctor)-\(Int(instant.timeIntervalSince1970))"
            let held = try await server.send(.POST, "/fhir/r4/Appointment/$hold", json: [
                "resourceType": "Parameters",
                "parameter": [["name": "appointment-reference", "valueReference": ["reference": "Appointment/\(proposal)"]]],
            ], token: holder)
            #expect(held.status == 200, "\(held.text)")

            let loginPage = try await server.web(.GET, "/staff", cookies: [:])
            let nonce = try #require(loginPage.cookie("clinic_csrf"))
            let signedIn = try await server.web(.POST, "/staff/login", cookies: ["clinic_csrf": nonce],
                                                form: ["csrf": try #require(loginPage.csrf), "login": "desk-a",
                                                       "password": StaffAPITestsInProcess.staffPassword])
            let cookies = ["clinic_csrf": nonce, "clinic_staff": try #require(signedIn.cookie("clinic_staff"))]
            let calendar = try await server.web(.GET, "/staff/calendar?from=\(s.monday)&days=1", cookies: cookies)
            let release = try #require(calendar.text.firstMatch(of: #/action="/staff/holds/(\d+)/release"/#)?.output.1)
            #expect(calendar.text.contains("Held until"), "\(calendar.text)")
            // The held time is not offered as free on the calendar.
            #expect(!calendar.text.contains("doctor=\(s.otherDoctor)&amp;start=\(start)"), "the held time is not a free link")
            let released = try await server.web(.POST, "/staff/holds/\(release)/release", cookies: cookies,
                                                form: ["csrf": try #require(calendar.csrf), "back": "/staff/calendar?from=\(s.monday)&days=1"])
            #expect(released.status == 303, "\(released.text)")
            let after = try await server.web(.GET, "/staff/calendar?from=\(s.monday)&days=1", cookies: cookies)
            #expect(!after.text.contains("/staff/holds/\(release)/release"))
            #expect(after.text.contains("doctor=\(s.otherDoctor)&amp;start=\(start)"), "free again, offered to book")
            // Released once: a second release is not found.
            let again = try await server.web(.POST, "/staff/holds/\(release)/release", cookies: cookies,
                                             form: ["csrf": try #require(after.csrf)])
            #expect(again.status == 404, "\(again.status)")
        }
    }
}
