import AsyncHTTPClient
import ClinicKit
import Foundation
import NIOCore
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 42's defects that need the real `clinic serve` process: a body cut short, a TLS key
/// others may read, a chunked upload over its limit. Each test failed before its fix; every
/// wait is a bounded poll.
@Suite(.serialized) struct HostileRun42Tests {
    // MARK: 11. A body cut short

    @Test func aBodyCutShortIsTheClientsFaultNotA500() async throws {
        let server = try ServerHarness()
        let connection = try ProtocolLimitsTests.RawConnection(port: try ProtocolLimitsTests.port(server))
        // 5,000 bytes declared, 10 sent, then the connection closed.
        connection.write("POST /v1/patients HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{\"login\":\"")
        #expect(shutdown(connection.descriptor, Int32(SHUT_RDWR)) == 0)

        // The request is counted once the server has seen the connection close: polled (Poll
        // says why its deadline is read before each scrape).
        let counted = try await Poll.until(seconds: 120) { () async throws -> [String]? in
            let scrape = try await server.get("/metrics")
            let lines = scrape.text.split(separator: "\n").map(String.init)
                .filter { $0.hasPrefix("http_requests_total{") && $0.contains("method=\"POST\"") }
            return lines.isEmpty ? nil : lines
        } ?? []
        #expect(counted.count == 1 && counted.allSatisfy { $0.contains("status=\"400\"") }, "\(counted)")
        #expect(!(counted.contains { $0.contains("status=\"5") }), "\(counted)")
        let log = server.serverLog
        #expect(!(log.contains("HTTPParserError")), "\(log)")
        #expect(!(log.split(separator: "\n").contains { $0.contains(" error ") }), "an error-level line: \(log)")
        #expect(log.contains("method=POST") && log.contains("status=400"), "\(log)")
    }

    // MARK: 12. The TLS private key's permissions

    @Test func aTLSKeyOthersCanReadIsRefusedAsTheDataKeyIs() async throws {
        let authority = try TLSTests.Authority()
        defer { try? FileManager.default.removeItem(at: authority.folder) }
        let harness = try ServerHarness()
        harness.stop()
        let tls = ["--tls-cert", authority.chain, "--tls-key", authority.key]

        #expect(chmod(authority.key, 0o644) == 0)
        let tlsRefused = try #require(try harness.refusedServe(tls), "clinic serve started with a TLS key at 0644")
        // The personal-data key at 0644 (read when personal data is first sealed, here by
        // `register`): the rule the TLS key now follows.
        #expect(chmod(authority.key, 0o600) == 0)
        let dataKey = harness.databasePath + ".key"
        #expect(chmod(dataKey, 0o644) == 0)
        let registered = try harness.cli(["register", "--login", "keys42", "--name", "Anna", "--surname", "Smith", "--street", "Main Street",
                                          "--house", "12", "--city", "Reno", "--accept-privacy", "--password-stdin", "--json"],
                                         input: ServerHarness.password)
        let dataRefused = (status: registered.status, stderr: registered.stderr.replacingOccurrences(of: "\\/", with: "/"))
        #expect(chmod(dataKey, 0o600) == 0)

        for (refused, path) in [(tlsRefused, authority.key), (dataRefused, dataKey)] {
            #expect(refused.status == 6, "\(refused.stderr)")
            #expect(refused.stderr.contains("\"code\":\"key_error\""), "\(refused.stderr)")
            #expect(refused.stderr.contains("chmod 600 \(path)"), "\(refused.stderr)")
        }
        #expect(tlsRefused.status == dataRefused.status)
        // Group-writable is refused too; a private key is served.
        #expect(chmod(authority.key, 0o620) == 0)
        #expect(try harness.refusedServe(tls)?.status == 6)
        #expect(chmod(authority.key, 0o400) == 0)
        let served = try ServerHarness(arguments: tls, tls: try authority.client(minimum: .tlsv12, maximum: .tlsv13))
        #expect(try await served.send(.GET, "/healthz").status == 200)
    }

    // MARK: 14. A chunked upload over its limit names the upload's limit

    @Test func aChunkedUploadOverTheLimitNamesTheUploadLimit() async throws {
        let server = try ServerHarness()
        let token = try await server.patient("chunked42")
        let (department, _) = try await server.department()
        let booked = try await server.send(.POST, "/v1/appointments",
                                           json: ["departmentId": department, "start": try await server.freeSlot(department)], token: token)
        #expect(booked.status == 201, "\(booked.text)")
        let appointment = try #require(booked.object["id"] as? Int)

        var request = HTTPClientRequest(url: server.url + "/v1/appointments/\(appointment)/attachments")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer " + token)
        request.headers.add(name: "Content-Type", value: "application/pdf")
        // 11 MiB without a declared length: past the upload's 10 MiB and its envelope.
        let body = AsyncStream<ByteBuffer> { continuation in
            continuation.yield(ByteBuffer(string: "%PDF-1.4\n"))
            for _ in 0..<11 { continuation.yield(ByteBuffer(repeating: 0x61, count: 1024 * 1024)) }
            continuation.finish()
        }
        request.body = .stream(body, length: .unknown)
        let response = try await server.client.execute(request, timeout: .seconds(60))
        let data = Data(buffer: try await response.body.collect(upTo: 1 << 20))
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        #expect(response.status.code == 413, "\(String(decoding: data, as: UTF8.self))")
        #expect(error?["code"] as? String == "too_large")
        let message = error?["message"] as? String ?? ""
        let limit = AttachmentLimits.maximumBytes + 64 * 1024
        #expect(message.contains(String(limit)) && !message.contains("65536"), "\(message)")
    }
}
