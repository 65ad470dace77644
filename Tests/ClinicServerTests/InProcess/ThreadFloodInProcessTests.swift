import Foundation
import HTTPTypes
import Testing

/// Issue 42, item 7, over HTTP in process: a patient sent 2,000 messages of 1,900 characters to
/// one appointment's conversation in 4.8 s, and each look at the thread returned all of them
/// (3.97 MB). Sent again: the flood is refused after `ThreadLimits.messagesPerWindow`
/// (`429 rate_limited` with `Retry-After`, nothing stored), and both sides' thread is paged
/// (`limit`, `cursor`, the latest page first).
@Suite struct ThreadFloodInProcessTests {
    static let password = "kettle-harbor-lantern"

    @Test func aFloodOfMessagesIsRefusedAndTheThreadIsPaged() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("flood42")
            let (department, clinicId) = try await server.department()
            let booked = try await server.send(.POST, "/v1/appointments",
                                               json: ["departmentId": department, "start": try await server.freeSlot(department)],
                                               token: token)
            #expect(booked.status == 201, "\(booked.text)")
            let appointment = try #require(booked.object["id"] as? Int)
            let path = "/v1/appointments/\(appointment)/messages"

            var statuses: [Int: Int] = [:]
            var retryAfter: [String] = []
            var fingerprint = ""
            for n in 1...40 {
                let text = String(repeating: "\(n % 10)", count: 1900)
                if n == 40 { fingerprint = try server.fingerprint() }
                let reply = try await server.send(.POST, path, json: ["text": text], token: token)
                statuses[reply.status, default: 0] += 1
                if reply.status == 429 {
                    #expect(reply.errorCode == "rate_limited", "\(reply.text)")
                    retryAfter.append(reply.headers.first(name: "Retry-After") ?? "")
                }
            }
            #expect(statuses == [201: 10, 429: 30], "\(statuses)")
            #expect(retryAfter.allSatisfy { (Int($0) ?? 0) > 0 && (Int($0) ?? 0) <= 600 }, "\(retryAfter)")
            #expect(try server.fingerprint() == fingerprint, "a refused message changed the database")
            let russian = try await server.send(.POST, path, json: ["text": "ещё"], token: token, headers: ["Accept-Language": "ru"])
            #expect(russian.status == 429 && russian.errorMessage?.contains("Слишком много сообщений") == true, "\(russian.text)")

            // The thread, paged: the latest first, each page in the order written.
            let whole = try await server.send(.GET, path, token: token)
            #expect(whole.status == 200 && (whole.object["items"] as? [Any])?.count == 10, "\(whole.text.prefix(200))")
            #expect(whole.object.keys.contains("nextCursor") && whole.object["nextCursor"] is NSNull)
            var texts: [String] = [], cursor: String?
            var pages = 0
            repeat {
                let page = try await server.send(.GET, path + "?limit=4" + (cursor.map { "&cursor=\($0)" } ?? ""), token: token)
                #expect(page.status == 200, "\(page.text.prefix(200))")
                let items = try #require(page.object["items"] as? [[String: Any]])
                #expect(items.count <= 4)
                texts = items.compactMap { ($0["text"] as? String)?.first.map(String.init) } + texts
                cursor = page.object["nextCursor"] as? String
                pages += 1
            } while cursor != nil && pages < 5
            #expect(pages == 3 && texts == (1...10).map { String($0 % 10) }, "\(pages) pages: \(texts)")
            for bad in ["?limit=0", "?limit=101", "?limit=many", "?cursor=nonsense"] {
                let refused = try await server.send(.GET, path + bad, token: token)
                #expect(refused.status == 400 && refused.errorCode == "invalid_input", "\(bad): \(refused.text)")
            }

            // The front desk's look at the same thread: paged the same way.
            let added = try server.cli(["admin", "staff", "add", "--login", "desk-flood", "--name", "Sam", "--surname", "Lee",
                                        "--role", "receptionist", "--clinic", String(clinicId), "--password-stdin", "--json"],
                                       input: Self.password + "\n")
            #expect(added.status == 0, "\(added.stderr)")
            let session = try await server.send(.POST, "/v1/staff/sessions", json: ["login": "desk-flood", "password": Self.password])
            let desk = try #require(session.object["token"] as? String)
            let staffPath = "/v1/staff/appointments/\(appointment)/messages"
            let first = try await server.send(.GET, staffPath + "?limit=6", token: desk)
            #expect(first.status == 200 && (first.object["items"] as? [Any])?.count == 6, "\(first.text.prefix(200))")
            let next = try #require(first.object["nextCursor"] as? String)
            let second = try await server.send(.GET, staffPath + "?limit=6&cursor=\(next)", token: desk)
            #expect((second.object["items"] as? [Any])?.count == 4 && second.object["nextCursor"] is NSNull, "\(second.text.prefix(200))")
        }
    }

    /// Both sides' pages show the latest `ThreadLimits.pageDefault` messages and a link to the
    /// ones before (the flooded conversation's page was 4 MB).
    @Test func theConversationPagesShowTheLatestMessagesWithALinkToEarlierOnes() async throws {
        try await InProcessServer.run { server in
            _ = try await server.patient("webflood42")
            let (department, clinicId) = try await server.department()
            let token = try await server.logIn("webflood42")
            let booked = try await server.send(.POST, "/v1/appointments",
                                               json: ["departmentId": department, "start": try await server.freeSlot(department)],
                                               token: token)
            let appointment = try #require(booked.object["id"] as? Int)
            // 25 messages: the patient's first (under the rate), then the clinic's answers (not limited).
            for n in 1...5 {
                let sent = try await server.send(.POST, "/v1/appointments/\(appointment)/messages", json: ["text": "question \(n)"], token: token)
                #expect(sent.status == 201, "\(sent.text)")
            }
            let added = try server.cli(["admin", "staff", "add", "--login", "desk-web", "--name", "Sam", "--surname", "Lee",
                                        "--role", "receptionist", "--clinic", String(clinicId), "--password-stdin", "--json"],
                                       input: Self.password + "\n")
            #expect(added.status == 0, "\(added.stderr)")
            let session = try await server.send(.POST, "/v1/staff/sessions", json: ["login": "desk-web", "password": Self.password])
            let desk = try #require(session.object["token"] as? String)
            for n in 6...25 {
                let sent = try await server.send(.POST, "/v1/staff/appointments/\(appointment)/messages", json: ["text": "answer \(n)"],
                                                 token: desk)
                #expect(sent.status == 201, "\(sent.text)")
            }

            func shown(_ page: InProcessServer.Page) -> [String] {
                page.text.matches(of: #/<p class="text">(\w+ \d+)</p>/#).map { String($0.output.1) }
            }
            // The patient's appointment page.
            let loginPage = try await server.web(.GET, "/login", cookies: [:])
            let nonce = try #require(loginPage.cookie("clinic_csrf"))
            let signedIn = try await server.web(.POST, "/login", cookies: ["clinic_csrf": nonce],
                                                form: ["csrf": try #require(loginPage.csrf), "login": "webflood42",
                                                       "password": InProcessServer.password])
            let cookies = ["clinic_csrf": nonce, "clinic_session": try #require(signedIn.cookie("clinic_session"))]
            let latest = try await server.web(.GET, "/appointments/\(appointment)", cookies: cookies)
            #expect(latest.status == 200)
            #expect(shown(latest) == (6...25).map { "answer \($0)" }, "\(shown(latest))")
            let earlierLink = try #require(latest.text.firstMatch(of: #/href="([^"]+)" id="earlier-messages"/#)?.output.1)
            let earlier = try await server.web(.GET, String(earlierLink), cookies: cookies)
            #expect(shown(earlier) == (1...5).map { "question \($0)" }, "\(shown(earlier))")
            #expect(!earlier.text.contains("earlier-messages") && earlier.text.contains("latest-messages"))

            // The front desk's page of the same appointment.
            let staffLogin = try await server.web(.GET, "/staff", cookies: [:])
            let staffNonce = try #require(staffLogin.cookie("clinic_csrf"))
            let staffIn = try await server.web(.POST, "/staff/login", cookies: ["clinic_csrf": staffNonce],
                                               form: ["csrf": try #require(staffLogin.csrf), "login": "desk-web", "password": Self.password])
            let staffCookies = ["clinic_csrf": staffNonce, "clinic_staff": try #require(staffIn.cookie("clinic_staff"))]
            let staffPage = try await server.web(.GET, "/staff/appointments/\(appointment)", cookies: staffCookies)
            #expect(staffPage.status == 200)
            #expect(shown(staffPage) == (6...25).map { "answer \($0)" }, "\(shown(staffPage))")
            let staffLink = try #require(staffPage.text.firstMatch(of: #/href="([^"]+)" id="earlier-messages"/#)?.output.1)
            let staffEarlier = try await server.web(.GET, String(staffLink), cookies: staffCookies)
            #expect(shown(staffEarlier) == (1...5).map { "question \($0)" }, "\(shown(staffEarlier))")
        }
    }
}
