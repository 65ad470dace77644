import ClinicKit
import Foundation
import HTTPTypes
import Testing

/// The patient's pages as a browser without JavaScript meets them (cookies kept by hand,
/// redirects not followed), through every form: registration, the nearest clinics, a clinic,
/// booking, the appointments, moving and cancelling, the calendar file, the inbox, the profile
/// and the password, the export, log-out; and who may see what before signing in.
@Suite struct WebPagesTests {
    static let password = "correct horse battery staple"

    /// The values of the hidden or chosen inputs called `name` on a page.
    static func values(_ page: InProcessServer.Page, _ name: String) -> [String] {
        page.text.components(separatedBy: "name=\"\(name)\" value=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    @Test func aPatientsJourneyThroughThePages() async throws {
        try await InProcessServer.run { server in
            // Registration by form: signed in at once, on the menu.
            let form = try await server.web(.GET, "/register", cookies: [:])
            #expect(form.status == 200)
            #expect(form.headers["Content-Security-Policy"].first?.hasPrefix("default-src 'self'") == true)
            var cookies = ["clinic_csrf": try #require(form.cookie("clinic_csrf"))]
            let registered = try await server.web(.POST, "/register", cookies: cookies, form: [
                "csrf": try #require(form.csrf), "login": "pages", "password": Self.password, "passwordAgain": Self.password,
                "name": "Paula", "surname": "Page", "street": "Main St", "house": "5", "cityChoice": "Boston", "acceptPrivacy": "yes",
                "birthDate": "1984-05-06",
            ])
            #expect(registered.status == 303, "\(registered.text)")
            #expect(registered.headers["Location"].first == "/")
            cookies["clinic_session"] = try #require(registered.cookie("clinic_session"))
            let menu = try await server.web(.GET, "/", cookies: cookies)
            #expect(menu.status == 200)
            #expect(menu.text.contains("Paula"), "\(menu.text)")
            let csrf = try #require(menu.csrf)

            // The nearest clinics, a clinic, its booking page day by day, a booking.
            let nearest = try await server.web(.GET, "/clinics/nearest?address=Reno,+NV", cookies: cookies)
            #expect(nearest.status == 200)
            #expect(nearest.text.contains("Renown Regional"), "\(nearest.text)")
            let (department, clinicId) = try await server.department()
            let clinic = try await server.web(.GET, "/clinics/\(clinicId)", cookies: cookies)
            #expect(clinic.status == 200)
            #expect(clinic.text.contains("/clinics/\(clinicId)/book"), "\(clinic.text)")
            // A phone and a website are shown when the directory knows them, and no empty heading when not.
            let bare = try server.scalar("SELECT min(id) FROM clinics WHERE id <> \(clinicId)")
            try server.execute("UPDATE clinics SET phone = '', website = 'http://example.org/clinic' WHERE id = \(bare)")
            let bareClinic = try await server.web(.GET, "/clinics/\(bare)", cookies: cookies)
            #expect(!bareClinic.text.contains("clinic-phone") && !bareClinic.text.contains(">Phone<"), "\(bareClinic.text)")
            #expect(bareClinic.text.contains(#"<dd id="clinic-website"><a href="http"#), "\(bareClinic.text)")
            let phoned = try server.scalar("SELECT max(id) FROM clinics WHERE id <> \(clinicId)")
            try server.execute("UPDATE clinics SET phone = '(555) 010-2000' WHERE id = \(phoned)")
            let phonedClinic = try await server.web(.GET, "/clinics/\(phoned)", cookies: cookies)
            #expect(phonedClinic.text.contains(#"<dd id="clinic-phone"><a href="tel:"#), "\(phonedClinic.text)")
            let days = try await server.web(.GET, "/clinics/\(clinicId)/book?department=\(department)", cookies: cookies)
            #expect(days.status == 200)
            var starts: [String] = [], chosenDay = ""
            // From tomorrow (in the clinic's calendar): a time today may fall within the
            // booking rules' 2-hour cutoff, and the move and the cancellation below would be refused.
            // Each free time is a link to the booking's summary.
            for day in days.text.matches(of: #/<option value="(\d{4}-\d{2}-\d{2})"/#).map({ String($0.output.1) }).dropFirst() where starts.isEmpty {
                let page = try await server.web(.GET, "/clinics/\(clinicId)/book?department=\(department)&day=\(day)", cookies: cookies)
                #expect(page.status == 200)
                starts = page.text.matches(of: #/book/summary\?[^"]*start=([^"&]+)/#).map { String($0.output.1) }
                chosenDay = day
            }
            #expect(starts.count > 3, "free times on \(chosenDay)")
            let dayPage = try await server.web(.GET, "/clinics/\(clinicId)/book?department=\(department)&day=\(chosenDay)", cookies: cookies)
            let link = try #require(dayPage.text.firstMatch(of: #/href="(/clinics/\d+/book/summary\?[^"]+)"/#))
            let summaryPath = String(link.output.1).replacingOccurrences(of: "&amp;", with: "&")
            let summary = try await server.web(.GET, summaryPath, cookies: cookies)
            #expect(summary.status == 200 && summary.text.contains("name=\"reason\""), "\(summary.text)")
            #expect(Self.values(summary, "start").first == starts[0])
            let doctor = try #require(Self.values(summary, "doctor").first)
            let booked = try await server.web(.POST, "/appointments", cookies: cookies,
                                              form: ["csrf": csrf, "department": String(department), "visitType": "", "start": starts[0],
                                                     "doctor": doctor, "reason": "Headaches since Monday"])
            #expect(booked.status == 303, "\(booked.text)")
            let location = try #require(booked.headers["Location"].first)
            #expect(location.hasSuffix("?booked=1"))
            let id = try #require(Int(location.dropFirst("/appointments/".count).prefix { $0.isNumber }))
            let shown = try await server.web(.GET, location, cookies: cookies)
            #expect(shown.text.contains("Headaches since Monday") && shown.text.contains("id=\"booked\""))
            // A time taken meanwhile: the summary says so (409), with the way back.
            let gone = try await server.web(.GET, summaryPath, cookies: cookies)
            #expect(gone.status == 409 && gone.text.contains("no longer free"), "\(gone.status)")
            let list = try await server.web(.GET, "/appointments", cookies: cookies)
            #expect(list.text.contains("/appointments/\(id)"))
            // The time and its zone's name are two words ("2:20 PM EST", not "2:20 PMEST"), and the
            // department is named.
            #expect(list.text.contains(#/[AP]M <span class="zone"/#), "\(list.text)")
            let specialization = try server.text("SELECT specialization FROM departments WHERE id = \(department)")
            #expect(list.text.contains(Specialization.displayName(specialization, .en)), "\(list.text)")

            // Moving it: a day's free times on its page, each a link to the move's summary, which
            // posts the move.
            let moving = try await server.web(.GET, "/appointments/\(id)?day=\(chosenDay)", cookies: cookies)
            #expect(moving.status == 200)
            let links = moving.text.matches(of: #/href="(/appointments/\d+/move\?start=[^"]+)"/#).map { String($0.output.1) }
            let moveLink = try #require(links.first { !$0.hasSuffix(starts[0]) }, "\(moving.text)")
            let later = String(moveLink.split(separator: "=", maxSplits: 1)[1])
            let summaryOfMove = try await server.web(.GET, moveLink, cookies: cookies)
            #expect(summaryOfMove.status == 200 && summaryOfMove.text.contains("id=\"move-from\""), "\(summaryOfMove.text)")
            #expect(Self.values(summaryOfMove, "start") == [later])
            let moved = try await server.web(.POST, "/appointments/\(id)/reschedule", cookies: cookies, form: ["csrf": csrf, "start": later])
            #expect(moved.status == 303, "\(moved.text)")
            #expect(moved.headers["Location"].first == "/appointments/\(id)?moved=1")
            // The time it left is free again: its summary is a move, and a taken one says so.
            let taken = try await server.web(.GET, "/appointments/\(id)/move?start=\(later)", cookies: cookies)
            #expect(taken.status == 409, "the appointment's own time is no time to move to")
            #expect(try server.scalar("SELECT count(*) FROM appointment_events WHERE appointment_id = \(id) AND event = 'rescheduled'") == 1)
            let calendar = try await server.web(.GET, "/appointments/\(id).ics", cookies: cookies)
            #expect(calendar.status == 200)
            #expect(calendar.headers["Content-Type"].first == "text/calendar; charset=utf-8")
            #expect(calendar.text.hasPrefix("BEGIN:VCALENDAR"))

            // Cancelling asks first.
            let ask = try await server.web(.POST, "/appointments/\(id)/cancel", cookies: cookies, form: ["csrf": csrf])
            #expect(ask.status == 303)
            #expect(ask.headers["Location"].first == "/appointments/\(id)?cancel=1#cancel")
            #expect(try server.text("SELECT status FROM appointments WHERE id = \(id)") != "cancelled")
            let cancelled = try await server.web(.POST, "/appointments/\(id)/cancel", cookies: cookies, form: ["csrf": csrf, "confirm": "yes"])
            #expect(cancelled.status == 303)
            #expect(cancelled.headers["Location"].first == "/appointments/\(id)?cancelled=1")
            #expect(try server.text("SELECT status FROM appointments WHERE id = \(id)") == "cancelled")
            let forged = try await server.web(.POST, "/appointments", cookies: cookies,
                                              form: ["csrf": String(repeating: "0", count: 64), "department": String(department), "start": starts[1]])
            #expect(forged.status == 403, "a form without its token changes nothing")
            #expect(try server.scalar("SELECT count(*) FROM appointments") == 1)

            // The inbox: the booking, the move and the cancellation wrote to it.
            let inbox = try await server.web(.GET, "/messages", cookies: cookies)
            #expect(inbox.status == 200)
            let unread = inbox.text.matches(of: #/action="/messages/(\d+)/read"/#).map { String($0.output.1) }
            #expect(unread.count == 3, "\(inbox.text)")
            let read = try await server.web(.POST, "/messages/\(unread[0])/read", cookies: cookies, form: ["csrf": csrf])
            #expect(read.status == 303)
            #expect(read.headers["Location"].first == "/messages")

            // The profile: a change, a wrong and a right password, the export.
            let profile = try await server.web(.GET, "/profile", cookies: cookies)
            #expect(profile.status == 200)
            #expect(Self.values(profile, "name") == ["Paula"])
            // Issue 55 (B11): no server of this deployment has a gateway: no code is promised.
            #expect(profile.text.contains("id=\"texts-unavailable\"") && !profile.text.contains("id=\"phone-set\""))
            let renamed = try await server.web(.POST, "/profile", cookies: cookies,
                                               form: ["csrf": csrf, "name": "Paulina", "surname": "Page", "street": "Main St", "house": "5",
                                                      "city": Self.values(profile, "city").first ?? "", "language": "en"])
            #expect(renamed.status == 303, "\(renamed.text)")
            #expect(renamed.headers["Location"].first == "/profile?saved=1")
            #expect(Self.values(try await server.web(.GET, "/profile", cookies: cookies), "name") == ["Paulina"])
            let wrong = try await server.web(.POST, "/profile/password", cookies: cookies,
                                             form: ["csrf": csrf, "oldPassword": "not the password", "newPassword": "another long passphrase"])
            #expect(wrong.status == 400, "the profile again, with the refusal: \(wrong.status)")
            // The new password typed twice: two that differ change nothing (the old one still works below).
            let differ = try await server.web(.POST, "/profile/password", cookies: cookies,
                                              form: ["csrf": csrf, "oldPassword": Self.password, "newPassword": "another long passphrase",
                                                     "newPasswordAgain": "another long passphrasf"])
            #expect(differ.status == 400 && differ.text.contains("role=\"alert\""), "\(differ.status)")
            let changed = try await server.web(.POST, "/profile/password", cookies: cookies,
                                               form: ["csrf": csrf, "oldPassword": Self.password, "newPassword": "another long passphrase",
                                                      "newPasswordAgain": "another long passphrase"])
            #expect(changed.status == 200, "\(changed.text)")
            let export = try await server.web(.GET, "/profile/export.json", cookies: cookies)
            #expect(export.status == 200)
            #expect(export.headers["Content-Disposition"].first == "attachment; filename=\"my-clinic-data.json\"")
            #expect(export.text.contains("\"login\" : \"pages\""))

            // Log-out ends the session: the pages that need a patient send to the log-in page.
            let out = try await server.web(.POST, "/logout", cookies: cookies, form: ["csrf": csrf])
            #expect(out.status == 303)
            #expect(out.headers["Location"].first == "/")
            // The log-in page is told the page asked for, to come back to it.
            for path in ["/profile", "/appointments", "/messages", "/appointments/\(id)", "/clinics/\(clinicId)/book"] {
                let page = try await server.web(.GET, path, cookies: cookies)
                #expect(page.status == 303, "\(path)")
                #expect(page.headers["Location"].first == "/login?next=" + path.replacingOccurrences(of: "/", with: "%2F"), "\(path)")
            }
            // …except an address that cannot be an appointment or a clinic: not found first.
            for path in ["/appointments/abc", "/clinics/abc/book"] {
                let page = try await server.web(.GET, path, cookies: cookies)
                #expect(page.status == 404, "\(path): \(page.status)")
            }
            let russian = try await server.web(.GET, "/privacy?lang=ru", cookies: [:])
            #expect(russian.status == 200)
            #expect(russian.cookie("clinic_lang") == "ru")
            #expect(russian.text.range(of: "\\p{Cyrillic}", options: .regularExpression) != nil)
        }
    }

    /// A street address finds its city on the search pages; a place that cannot be found is
    /// said on the same page, with what to try, the text kept in the field to correct.
    @Test func aPlaceNotFoundKeepsWhatWasTyped() async throws {
        try await InProcessServer.run { server in
            let found = try await server.web(.GET, "/clinics/nearest?address=1600+Pennsylvania+Ave+NW,+Washington,+DC", cookies: [:])
            #expect(found.status == 200 && found.text.contains("id=\"nearest-list\""), "\(found.text)")
            #expect(!found.text.contains("id=\"other-places\""), "one place: no other to offer")
            // Issue 55 (B12): the page names the place searched from, and says when the street
            // itself was not found (the offline gazetteer knows cities and ZIP codes).
            #expect(found.text.contains("id=\"searched-from\"") && found.text.contains("The street itself was not found"),
                    "\(found.text)")
            let city = try await server.web(.GET, "/clinics/nearest?address=Reno,+NV", cookies: [:])
            #expect(city.text.contains("id=\"searched-from\"") && !city.text.contains("The street itself was not found"))
            // A name several places share: the one searched from is named, the others are links
            // to search from them (issue 46: "Paris" picked Paris, TX and said nothing).
            let paris = try await server.web(.GET, "/clinics/nearest?address=Paris&pediatric=1", cookies: [:])
            #expect(paris.status == 200 && paris.text.contains("id=\"other-places\""), "\(paris.text)")
            let list = try #require(paris.text.firstMatch(of: #/id="other-places"[\s\S]*?</ul>/#).map { String($0.output) })
            let others = list.matches(of: #/href="(/clinics/nearest\?address=Paris[^"]*)"/#).map { String($0.output.1) }
            #expect(others.count >= 3 && others.allSatisfy { $0.hasSuffix("&amp;pediatric=1") || $0.hasSuffix("&pediatric=1") }, "\(others)")
            let unknown = "address=1+Main+St,+Qwertyuiopville,+NV"
            for path in ["/clinics/nearest?" + unknown, "/find?specialization=therapy&" + unknown] {
                let page = try await server.web(.GET, path, cookies: [:])
                #expect(page.status == 422, "\(path): \(page.status)")
                #expect(page.text.contains("value=\"1 Main St, Qwertyuiopville, NV\""), "\(path): \(page.text)")
                #expect(page.text.contains("id=\"place-error\"") && page.text.contains("City, State"), "\(path): \(page.text)")
            }
        }
    }
}
