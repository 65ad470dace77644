import Foundation
import Testing
@testable import ClinicServer

/// The map's optional street tiles (issue 30): off by default, so the pages name no other host
/// and the map asks nothing of a third party; an operator's `CLINIC_TILE_URL` (with its
/// attribution) reaches the map and the CSP's `img-src`, and nothing else; a bad setting is
/// refused when the server starts.
@Suite struct WebTilesTests {
    @Test func offByDefault() async throws {
        try await InProcessServer.run { server in
            let page = try await server.web(.GET, "/clinics/nearest?address=Reno%2C%20NV", cookies: [:])
            #expect(page.status == 200)
            #expect(!page.text.contains("data-tiles"))
            let policy = try #require(page.headers["Content-Security-Policy"].first)
            #expect(policy.contains("img-src 'self' data:;"))
        }
    }

    @Test func anOperatorsTilesReachTheMapAndTheCSP() async throws {
        let environment = ["CLINIC_TILE_URL": "https://tiles.example.org:8443/osm/{z}/{x}/{y}.png",
                           "CLINIC_TILE_ATTRIBUTION": "© OpenStreetMap contributors"]
        try await InProcessServer.run(environment: environment) { server in
            let page = try await server.web(.GET, "/clinics/nearest?address=Reno%2C%20NV", cookies: [:])
            #expect(page.text.contains("data-tiles=\"https://tiles.example.org:8443/osm/{z}/{x}/{y}.png\""), "\(page.text)")
            #expect(page.text.contains("data-tiles-attribution=\"© OpenStreetMap contributors\""))
            let policy = try #require(page.headers["Content-Security-Policy"].first)
            #expect(policy.contains("img-src 'self' data: https://tiles.example.org:8443;"), "\(policy)")
            #expect(policy.contains("connect-src 'self';") && policy.contains("script-src 'self';"))
        }
    }

    @Test(arguments: [
        ["CLINIC_TILE_URL": "http://tiles.example.org/{z}/{x}/{y}.png", "CLINIC_TILE_ATTRIBUTION": "x"],
        ["CLINIC_TILE_URL": "https://tiles.example.org/{z}/{x}.png", "CLINIC_TILE_ATTRIBUTION": "x"],
        ["CLINIC_TILE_URL": "https://tiles.example.org/{z}/{x}/{y}.png"],
        ["CLINIC_TILE_URL": "https://tiles.example.org/{z}/{x}/{y}.png\" onerror=\"x", "CLINIC_TILE_ATTRIBUTION": "x"],
        ["CLINIC_TILE_URL": "https://user@tiles.example.org/{z}/{x}/{y}.png", "CLINIC_TILE_ATTRIBUTION": "x"],
        ["CLINIC_TILE_URL": "https://tiles.example.org/{z}/{x}/{y}.png", "CLINIC_TILE_ATTRIBUTION": "a\u{7}b"],
    ])
    func badTileSettingsAreRefused(environment: [String: String]) {
        var settings = ServerSettings()
        #expect(throws: ServerSettingError.self) { try settings.apply(environment: environment) }
        #expect(settings.tiles == nil)
    }
}
