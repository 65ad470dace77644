import Foundation
import HTTPTypes
import Testing

/// The header's language link sets a signed-in patient's profile language (issue 42 item 19),
/// but only when the request comes from the site itself or an address typed: another site's
/// link to `?lang=ru` must not change a signed-in patient's account.
@Suite struct LanguageLinkTestsInProcess {
    @Test func theLanguageLinkWritesTheProfileOnlyFromTheSiteItself() async throws {
        try await InProcessServer.run { server in
            let token = try await server.patient("linguist")
            func language() async throws -> String? {
                try await server.send(.GET, "/v1/me", token: token).object["language"] as? String
            }
            #expect(try await language() == "en")
            for site in ["cross-site", "same-site", ""] {
                var headers = ["Cookie": "clinic_session=\(token)"]
                if !site.isEmpty { headers["Sec-Fetch-Site"] = site }
                let page = try await server.send(.GET, "/profile?lang=ru", headers: headers)
                #expect(page.status == 200 && page.text.contains("lang=\"ru\""), "\(site): the page itself is in Russian")
                #expect(try await language() == "en", "\(site.isEmpty ? "no Sec-Fetch-Site" : site): the profile is unchanged")
            }
            let own = try await server.send(.GET, "/profile?lang=ru", headers: ["Cookie": "clinic_session=\(token)",
                                                                                  "Sec-Fetch-Site": "same-origin"])
            #expect(own.status == 200)
            #expect(try await language() == "ru", "the site's own link sets it")
        }
    }
}
