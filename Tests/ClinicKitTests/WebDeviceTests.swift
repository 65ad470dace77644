import Foundation
import Testing
@testable import ClinicKit

/// A web session's device is named by its browser and system (issue 30), from real
/// `User-Agent` strings; what is not recognised is "Web browser", and nothing else is kept.
@Suite(.storeFree) struct WebDeviceTests {
    @Test(arguments: [
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
         "Safari · iOS"),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
         "Chrome · Android"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
         "Edge · Windows"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox · macOS"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36",
         "Chrome · Linux"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1",
         "Chrome · iOS"),
        ("Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36",
         "Samsung Internet · Android"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 YaBrowser/24.12.0.0 Safari/537.36",
         "Yandex Browser · Windows"),
        ("curl/8.5.0", "Web browser"), ("", "Web browser"),
    ])
    func browsersAreNamed(agent: String, name: String) throws {
        let device = Device.webBrowser(userAgent: agent)
        #expect(device.name == name && device.platform == "web")
        #expect(try device.validated() == device)
    }

    @Test func noHeaderIsAWebBrowser() {
        #expect(Device.webBrowser(userAgent: nil).name == Device.unknownBrowser)
    }
}
