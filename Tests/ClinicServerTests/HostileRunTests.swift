import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import XCTest

/// Issue 23's defect that needs the real `clinic serve`: its HTTP geocoder comes from the
/// environment (`CLINIC_GEOCODER_URL`). The others run in process (`HostileRunTestsInProcess`).
final class HostileRunTests: XCTestCase {
    func testAStreetAddressIsAskedOfTheGeocoderOnceAndFallsBackToTheZIPCode() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nominatim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("queries.log"), portFile = folder.appendingPathComponent("port")
        let geocoder = Process()
        geocoder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        geocoder.arguments = ["python3", URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/nominatim.py").path, log.path, portFile.path]
        try geocoder.run()
        defer { kill(geocoder.processIdentifier, SIGKILL) }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: portFile.path) && Date() < deadline && geocoder.isRunning { usleep(20_000) }
        let port = try String(contentsOf: portFile, encoding: .utf8)
        let server = try ServerHarness(environment: ["CLINIC_GEOCODER_URL": "http://127.0.0.1:\(port)"])

        let address = "4650 Sunset Blvd, Los Angeles, CA 90027".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let first = try await server.send(.GET, "/v1/geocode?q=\(address)")
        XCTAssertEqual(first.status, 200, first.text)
        XCTAssertEqual(first.object["precision"] as? String, "address", first.text)
        XCTAssertEqual(try XCTUnwrap(first.object["lat"] as? Double), 34.0976, accuracy: 1e-6)
        let again = try await server.send(.GET, "/v1/geocode?q=\(address)")
        XCTAssertEqual(again.object["precision"] as? String, "address")
        let nearest = try await server.send(.GET, "/v1/clinics/nearest?address=\(address)")
        XCTAssertEqual(nearest.array.first?["name"] as? String, "Children's Hospital", nearest.text)
        let asked = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(asked, ["4650 Sunset Blvd, Los Angeles, CA 90027"], "asked once, then answered from the cache")

        // An address the geocoder does not know: the ZIP code's centre, and the answer says so.
        let unknown = "1 Nowhere Lane, Los Angeles, CA 90027".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let fallback = try await server.send(.GET, "/v1/geocode?q=\(unknown)")
        XCTAssertEqual(fallback.status, 200, fallback.text)
        XCTAssertEqual(fallback.object["precision"] as? String, "postcode", fallback.text)
        // A city is no street: the geocoder is not asked.
        _ = try await server.send(.GET, "/v1/geocode?q=Reno,+NV")
        XCTAssertEqual(try String(contentsOf: log, encoding: .utf8).split(separator: "\n").count, 2)
    }
}
