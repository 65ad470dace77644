import Foundation
import HTTPTypes
import Testing

/// The waitlist's pages (issue 45): a patient asks to be told of a freed time, sees the time
/// offered with how long it is held, and books it in one tap; the appointment page offers
/// "Tell me if an earlier time frees up".
@Suite struct WaitlistWebTestsInProcess {
    @Test func aPatientWaitsOnTheWebAndBooksTheOfferedTime() async throws {
        try await InProcessServer.run(environment: ["CLINIC_WAITLIST_INTERVAL": "100"]) { server in
            let cookies = try await server.webPatient("wl-web")
            let menu = try await server.web(.get, "/", cookies: cookies)
            #expect(menu.text.contains("href=\"/waitlist\""), "the menu links the waitlist")
            let csrf = try #require(menu.csrf)

            let (department, clinicId) = try await server.department()
            // A day with no free time offers to wait for one; a day with free times does not.
            let booking = try await server.web(.get, "/clinics/\(clinicId)/book?department=\(department)", cookies: cookies)
            #expect(!booking.text.contains("id=\"wait-free\""), "the first day shown has free times")
            let noFree = try #require(booking.text.firstMatch(of: #/<option value="([0-9-]+)"  class="no-free"/#)?.output.1,
                                      "\(booking.text)")
            let emptyDay = try await server.web(.get, "/clinics/\(clinicId)/book?department=\(department)&day=\(noFree)",
                                                cookies: cookies)
            #expect(emptyDay.text.contains("id=\"wait-free\"") && emptyDay.text.contains("Tell me when a time frees up"))
            // The same day sent by the form as shown for other choices (another doctor, a visit
            // type of another length) is chosen again: the first day with a free time.
            let carried = try await server.web(.get, "/clinics/\(clinicId)/book?department=\(department)&day=\(noFree)&dayFor=\(department)--1",
                                               cookies: cookies)
            #expect(!carried.text.contains("id=\"wait-free\"") && !carried.text.contains("value=\"\(noFree)\" selected"),
                    "\(carried.text)")
            #expect(carried.text.contains("name=\"dayFor\" value=\"\(department)--\""))
            let kept = try await server.web(.get, "/clinics/\(clinicId)/book?department=\(department)&day=\(noFree)&dayFor=\(department)--",
                                            cookies: cookies)
            #expect(kept.text.contains("value=\"\(noFree)\" selected"), "a day chosen for these choices is kept")
            let empty = try await server.web(.get, "/waitlist", cookies: cookies)
            #expect(empty.status == 200 && empty.text.contains("You are not waiting for a time."), "\(empty.text)")
            let joined = try await server.web(.post, "/waitlist", cookies: cookies, form: ["csrf": csrf, "departmentId": String(department)])
            #expect(joined.status == 303 && joined.headers["Location"].first == "/waitlist?joined=1", "\(joined.text)")
            let again = try await server.web(.post, "/waitlist", cookies: cookies, form: ["csrf": csrf, "departmentId": String(department)])
            #expect(again.status == 409, "joining twice is refused on a page: \(again.status)")

            // Another patient books a time and cancels it: it is offered to Paula.
            let anna = try await server.patient("wl-web-anna")
            let start = try await server.freeSlot(department)
            let booked = try await server.send(.post, "/v1/appointments", json: ["departmentId": department, "start": start], token: anna)
            #expect(booked.status == 201, "\(booked.text)")
            let appointment = try #require(booked.object["id"] as? Int)
            #expect(try await server.send(.post, "/v1/appointments/\(appointment)/cancel", token: anna).status == 200)
            var page = try await server.web(.get, "/waitlist", cookies: cookies)
            for _ in 0..<100 where !page.text.contains("/accept") {
                try await Task.sleep(for: .milliseconds(100))
                page = try await server.web(.get, "/waitlist", cookies: cookies)
            }
            let accept = try #require(page.text.firstMatch(of: #/action="(/waitlist/offers/\d+/accept)"/#)?.output.1)
            #expect(page.text.contains("Held for you until"), "\(page.text)")
            let taken = try await server.web(.post, String(accept), cookies: cookies, form: ["csrf": try #require(page.csrf)])
            #expect(taken.status == 303, "\(taken.text)")
            let location = try #require(taken.headers["Location"].first)
            #expect(location.hasSuffix("?booked=1"), "\(location)")
            let shown = try await server.web(.get, location, cookies: cookies)
            #expect(shown.text.contains("id=\"booked\"") && shown.text.contains("id=\"wait-earlier\""), "\(shown.text)")
        }
    }

    /// A text's one-tap link opens the offer with nobody signed in, books it for the patient it
    /// was made to, and works once; a forged link is refused.
    @Test func anOffersLinkOpensItWithoutSigningInAndBooksOnce() async throws {
        try await InProcessServer.run(environment: ["CLINIC_WAITLIST_INTERVAL": "100"]) { server in
            let anna = try await server.patient("wl-link-anna"), bob = try await server.patient("wl-link-bob")
            let (department, _) = try await server.department()
            // Bob's number, confirmed with the code the outbox texts.
            let recorder = TextRecorder()
            // This server has no gateway: the recorder below is one, and says so first.
            try await server.system.outbox.noteTextGateway()
            #expect(try await server.send(.put, "/v1/me/phone", json: ["phone": "+12025550199"], token: bob).status == 202)
            _ = try await server.system.outbox.run(mailer: nil, from: "", texter: recorder, site: "http://localhost")
            let code = try #require(recorder.sent.withLock { $0.last?.body }?.firstMatch(of: /\d{6}/)).output
            #expect(try await server.send(.post, "/v1/me/phone/confirm", json: ["code": String(code)], token: bob).status == 200)
            #expect(try await server.send(.post, "/v1/waitlist", json: ["departmentId": department], token: bob).status == 201)

            let start = try await server.freeSlot(department)
            let booked = try await server.send(.post, "/v1/appointments", json: ["departmentId": department, "start": start], token: anna)
            let appointment = try #require(booked.object["id"] as? Int)
            #expect(try await server.send(.post, "/v1/appointments/\(appointment)/cancel", token: anna).status == 200)
            var link: String?
            for _ in 0..<100 where link == nil {
                try await Task.sleep(for: .milliseconds(100))
                _ = try await server.system.outbox.run(mailer: nil, from: "", texter: recorder, site: "http://localhost")
                link = recorder.sent.withLock { $0.last?.body }?.firstMatch(of: #/http://localhost(/o/[0-9a-f]+)/#).map { String($0.output.1) }
            }
            let path = try #require(link, "the offer was texted with its link")

            let page = try await server.web(.get, path, cookies: [:])
            #expect(page.status == 200 && page.text.contains("A time is free for you") && page.text.contains("id=\"accept\""), "\(page.text)")
            let forged = try await server.web(.get, "/o/" + String(repeating: "a", count: 32), cookies: [:])
            #expect(forged.status == 404, "\(forged.status)")
            let cookies = ["clinic_csrf": try #require(page.cookie("clinic_csrf"))]
            let accepted = try await server.web(.post, path + "/accept", cookies: cookies, form: ["csrf": try #require(page.csrf)])
            #expect(accepted.status == 200 && accepted.text.contains("id=\"booked\""), "\(accepted.text)")
            let mine = try await server.send(.get, "/v1/appointments", token: bob)
            #expect(mine.text.contains(start), "Bob has the time: \(mine.text)")
            let again = try await server.web(.post, path + "/accept", cookies: cookies, form: ["csrf": try #require(page.csrf)])
            #expect(again.status == 404, "a link works once: \(again.status)")
            #expect(try await server.web(.get, path, cookies: [:]).status == 404)
        }
    }
}

/// The front desk's waitlist page beside the calendar (issue 45): a patient put on by login
/// with a priority and a note, the order shown, both changed in one form, the entry taken off;
/// a refused change (a priority out of range) changes nothing.
@Suite struct StaffWaitlistWebTestsInProcess {
    @Test func theDeskPutsAPatientOnChangesTheEntryAndTakesItOff() async throws {
        try await InProcessServer.run { server in
            let s = try await StaffAPITestsInProcess.makeWorld(server)
            let loginPage = try await server.web(.GET, "/staff", cookies: [:])
            let nonce = try #require(loginPage.cookie("clinic_csrf"))
            let signedIn = try await server.web(.POST, "/staff/login", cookies: ["clinic_csrf": nonce],
                                                form: ["csrf": try #require(loginPage.csrf), "login": "desk-a",
                                                       "password": StaffAPITestsInProcess.staffPassword])
            let cookies = ["clinic_csrf": nonce, "clinic_staff": try #require(signedIn.cookie("clinic_staff"))]
            let empty = try await server.web(.GET, "/staff/waitlist", cookies: cookies)
            #expect(empty.status == 200 && empty.text.contains("id=\"nobody\"") && empty.text.contains("href=\"/staff/waitlist\""),
                    "\(empty.text)")
            let csrf = try #require(empty.csrf)
            let added = try await server.web(.POST, "/staff/waitlist", cookies: cookies, form: [
                "csrf": csrf, "patient": "stafftest", "departmentId": String(s.department), "priority": "5",
                "note": "Mornings only"])
            #expect(added.status == 303 && added.headers["Location"].first == "/staff/waitlist?added=1", "\(added.text)")
            let listed = try await server.web(.GET, "/staff/waitlist?department=\(s.department)", cookies: cookies)
            let id = try #require(listed.text.firstMatch(of: #/id="entry-(\d+)"/#)?.output.1)
            #expect(listed.text.contains("value=\"Mornings only\"") && listed.text.contains("value=\"5\""), "\(listed.text)")

            let before = try server.fingerprint()
            let refused = try await server.web(.POST, "/staff/waitlist/\(id)", cookies: cookies,
                                               form: ["csrf": csrf, "priority": "5000", "note": "changed"])
            #expect(refused.status == 400, "\(refused.status)")
            #expect(try server.fingerprint() == before, "a refused change changes nothing")
            let changed = try await server.web(.POST, "/staff/waitlist/\(id)", cookies: cookies,
                                               form: ["csrf": csrf, "priority": "-3", "note": "Afternoons too"])
            #expect(changed.status == 303)
            let shown = try await server.web(.GET, "/staff/waitlist", cookies: cookies)
            #expect(shown.text.contains("value=\"Afternoons too\"") && shown.text.contains("value=\"-3\""), "\(shown.text)")
            let removed = try await server.web(.POST, "/staff/waitlist/\(id)/remove", cookies: cookies, form: ["csrf": csrf])
            #expect(removed.status == 303)
            #expect(try await server.web(.GET, "/staff/waitlist", cookies: cookies).text.contains("id=\"nobody\""))
            // The page is the front desk's: signed out, it is the staff's log-in.
            #expect(try await server.web(.GET, "/staff/waitlist", cookies: [:]).status == 303)
        }
    }
}
