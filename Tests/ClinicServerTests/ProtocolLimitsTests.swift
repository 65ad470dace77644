import AsyncHTTPClient
import ClinicServer
import ClinicTestPostgres
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a stranger can do to the server below HTTP's requests (issue 23): hold connections
/// open without finishing a TLS handshake, open more than their share, stream a body past the
/// limit, choose a cipher without forward secrecy, or pass a name for a loopback address.
/// Every wait is a bounded poll: "closed before a generous bound", never "closed in N s".
@Suite(.serialized) struct ProtocolLimitsTests {
    /// A plain TCP connection to the server's port, by POSIX calls: nothing above TCP is spoken
    /// unless the test writes it.
    final class RawConnection {
        let descriptor: Int32

        init(port: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw ServerHarness.HarnessError.failed("socket: \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(descriptor)
                throw ServerHarness.HarnessError.failed("connect: \(errno)")
            }
            // Reads wait at most 0.2 s, so that a poll can look at the clock.
            var wait = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(descriptor) }

        func write(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { return } // the server closed: what it answered is still read
                offset += sent
            }
        }

        func write(_ text: String) { write(Array(text.utf8)) }

        /// Reads one HTTP/1.1 response with a Content-Length, at most `within` seconds; its text.
        func readResponse(within seconds: Double = 30) -> String {
            let deadline = Date().addingTimeInterval(seconds)
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while Date() < deadline {
                let text = String(decoding: received, as: UTF8.self)
                if let end = text.range(of: "\r\n\r\n") {
                    let length = text[..<end.lowerBound].split(separator: "\r\n")
                        .first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if text[end.upperBound...].utf8.count >= length { return text }
                }
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received += buffer[0..<count]
                } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    break
                }
            }
            return String(decoding: received, as: UTF8.self)
        }

        /// Reads until the server closes the connection (end of stream or reset), at most
        /// `within` seconds; what arrived, and whether it closed.
        func readUntilClosed(within seconds: Double = 30) -> (bytes: [UInt8], closed: Bool) {
            let deadline = Date().addingTimeInterval(seconds)
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while Date() < deadline {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received += buffer[0..<count]
                } else if count == 0 {
                    return (received, true)
                } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    return (received, true) // ECONNRESET: closed too
                }
            }
            return (received, false)
        }
    }

    static func port(_ server: ServerHarness) throws -> Int {
        guard let port = URL(string: server.url)?.port else { throw ServerHarness.HarnessError.failed("no port in \(server.url)") }
        return port
    }

    // MARK: 8. Handshakes and connection caps

    @Test func aConnectionThatDoesNotFinishItsHandshakeIsClosed() async throws {
        let authority = try TLSTests.Authority()
        defer { try? FileManager.default.removeItem(at: authority.folder) }
        let server = try ServerHarness(arguments: ["--tls-cert", authority.chain, "--tls-key", authority.key],
                                       tls: try authority.client(minimum: .tlsv12, maximum: .tlsv13),
                                       environment: ["CLINIC_HANDSHAKE_TIMEOUT": "2"])
        let port = try Self.port(server)

        // Nothing sent at all.
        let silent = try RawConnection(port: port)
        // Half a ClientHello: a record header announcing 512 bytes, and the first 40 of them.
        let half = try RawConnection(port: port)
        half.write([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + [UInt8](repeating: 0x2A, count: 29))

        // The server's idle timeout (60 s) is far beyond the bound: only the handshake's
        // deadline closes these in time.
        #expect(silent.readUntilClosed(within: 30).closed, "a silent connection stays open")
        let answer = half.readUntilClosed(within: 30)
        #expect(answer.closed, "half a ClientHello keeps its connection open")

        // A real client still gets through.
        let reply = try await server.send(.GET, "/healthz")
        #expect(reply.status == 200)
    }

    @Test func connectionsOverACapAreClosedAndTheOthersServed() async throws {
        // The per-address cap and the total cap, each at 4 with the other far above: the
        // test's connections all come from 127.0.0.1.
        for (setting, cap) in [("CLINIC_MAX_CONNECTIONS_PER_ADDRESS", "per_address"), ("CLINIC_MAX_CONNECTIONS", "total")] {
            let server = try ServerHarness(environment: [setting: "4"])
            let port = try Self.port(server)
            let held = try (0..<4).map { _ in try RawConnection(port: port) }
            // Each served once, so that all four are counted before the fifth comes (connections
            // are set up on several event loops, not strictly in the order they came).
            for connection in held {
                connection.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                let reply = connection.readResponse()
                #expect(reply.hasPrefix("HTTP/1.1 200"), "\(setting): \(reply)")
            }

            // The fifth is closed at once, with no answer.
            let fifth = try RawConnection(port: port)
            fifth.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let refused = fifth.readUntilClosed(within: 30)
            #expect(refused.closed, "\(setting): a connection over the cap stays open")
            #expect(!(String(decoding: refused.bytes, as: UTF8.self).contains("200 OK")), "\(setting): a connection over the cap was served")

            // The connections already open are still served.
            held[0].write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let served = String(decoding: held[0].readUntilClosed(within: 30).bytes, as: UTF8.self)
            #expect(served.hasPrefix("HTTP/1.1 200"), "\(setting): \(served)")

            // Once they close, a new client is served again (polled: the server counts a closed
            // connection out when it sees it close).
            for connection in held { shutdown(connection.descriptor, Int32(SHUT_RDWR)) }
            let status = try await Poll.until(seconds: 30) { () async throws -> Int? in
                let status = (try? await server.send(.GET, "/healthz"))?.status ?? 0
                return status == 200 ? status : nil
            } ?? 0
            #expect(status == 200, "\(setting): no request was served after the held connections closed")
            #expect(server.serverLog.contains("connections refused") && server.serverLog.contains("cap=\(cap)"), "\(server.serverLog)")
        }
    }

    @Test func connectionSettingsAreChecked() throws {
        let harness = try ServerHarness()
        for (name, value) in [("CLINIC_HANDSHAKE_TIMEOUT", "0"), ("CLINIC_MAX_CONNECTIONS", "lots"),
                              ("CLINIC_MAX_CONNECTIONS_PER_ADDRESS", "-1"), ("CLINIC_STORE_CONNECTIONS", "1")] {
            // A server that ignored the setting would run: it is stopped after a generous bound.
            guard let (status, stderr) = try harness.refusedServe(environment: [name: value]) else {
                Issue.record("\(name)=\(value): the server started")
                continue
            }
            #expect(status == 2, "\(name)=\(value): \(stderr)")
            #expect(stderr.contains("\"code\":\"invalid_input\"") && stderr.contains(name), "\(stderr)")
        }
    }

    // MARK: 9. A streamed body over the limit

    /// 80 KiB in 8 KiB chunks, past the 64 KiB limit without a declared length.
    static let chunks = [String](repeating: String(repeating: "a", count: 8 * 1024), count: 10)

    /// An address over the head's 16 KiB limit is refused as every other bad request is (issue
    /// 55): JSON with its code and a request id, then the connection closes. And a request
    /// before it on the same connection is answered as usual.
    @Test func anAddressOverTheLimitIsAJSON400WithARequestId() throws {
        let server = try ServerHarness()
        let connection = try RawConnection(port: try Self.port(server))
        connection.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(connection.readResponse().hasPrefix("HTTP/1.1 200"))
        connection.write("GET /v1/clinics?q=" + String(repeating: "a", count: 20 * 1024) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let (bytes, closed) = connection.readUntilClosed(within: 30)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 400"), "\(text)")
        #expect(text.lowercased().contains("\r\nx-request-id: "), "\(text)")
        #expect(text.lowercased().contains("content-type: application/json"), "\(text)")
        #expect(text.contains("\"code\":\"invalid_input\"") && text.contains("16 KiB"), "\(text)")
        #expect(closed, "the connection stays open after a head it could not read")
    }

    @Test func aChunkedBodyOverTheLimitIs413AndClosesTheConnection() throws {
        let server = try ServerHarness()
        let connection = try RawConnection(port: try Self.port(server))
        var request = "POST /v1/patients HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        for chunk in Self.chunks { request += String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n" }
        request += "0\r\n\r\n"
        // Pipelined behind the refused body: must not be answered.
        request += "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        connection.write(request)
        let (bytes, closed) = connection.readUntilClosed(within: 30)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 413"), "\(text)")
        #expect(text.lowercased().contains("\r\nconnection: close\r\n"), "\(text)")
        #expect(text.contains("\"code\":\"too_large\""), "\(text)")
        #expect(closed, "the connection stays open after a refused body")
        #expect(text.components(separatedBy: "HTTP/1.1 ").count - 1 == 1, "a request pipelined after the refused body was answered: \(text)")
        #expect(!(server.serverLog.contains("NIOTooManyBytesError")), "\(server.serverLog)")
    }

    @Test func aStreamedBodyOverTheLimitIs413OverTLSAndHTTP2() async throws {
        let authority = try TLSTests.Authority()
        defer { try? FileManager.default.removeItem(at: authority.folder) }
        let server = try ServerHarness(arguments: ["--tls-cert", authority.chain, "--tls-key", authority.key],
                                       tls: try authority.client(minimum: .tlsv12, maximum: .tlsv13))
        for version in [HTTPClient.Configuration.HTTPVersion.http1Only, .automatic] {
            var configuration = HTTPClient.Configuration(tlsConfiguration: try authority.client(minimum: .tlsv12, maximum: .tlsv13))
            configuration.httpVersion = version
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            var request = HTTPClientRequest(url: server.url + "/v1/patients")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            let body = AsyncStream<ByteBuffer> { continuation in
                for chunk in Self.chunks { continuation.yield(ByteBuffer(string: chunk)) }
                continuation.finish()
            }
            request.body = .stream(body, length: .unknown)
            do {
                let response = try await client.execute(request, timeout: .seconds(30))
                let data = Data(buffer: try await response.body.collect(upTo: 1 << 20))
                let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                #expect(response.status.code == 413, "\(version): \(String(decoding: data, as: UTF8.self))")
                #expect((object?["error"] as? [String: Any])?["code"] as? String == "too_large", "\(version)")
                if response.version == .http2 {
                    #expect(version == .automatic)
                    #expect(response.headers["Connection"].isEmpty, "HTTP/2 has no Connection header")
                } else {
                    #expect(version == .http1Only, "ALPN chose HTTP/1.1")
                    #expect(response.headers["Connection"].first?.lowercased() == "close")
                }
                // The client goes on: over HTTP/2 on the same connection, whose other streams
                // a refused one does not end.
                let next = try await client.execute(HTTPClientRequest(url: server.url + "/healthz"), timeout: .seconds(30))
                #expect(next.status.code == 200, "\(version)")
                #expect(next.version == response.version)
            } catch {
                Issue.record("\(version): \(error)")
            }
            try await client.shutdown()
        }
        #expect(!(server.serverLog.contains("NIOTooManyBytesError")), "\(server.serverLog)")
    }

    // MARK: 21. TLS 1.2's ciphers and the loopback check

    /// `openssl s_client` offering one TLS 1.2 suite: true when the handshake chose it.
    func handshake(port: Int, cipher: String, authority: TLSTests.Authority) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        // SECLEVEL=0: the client offers what it is told to, so that only the server refuses.
        process.arguments = ["s_client", "-connect", "127.0.0.1:\(port)", "-tls1_2", "-cipher", cipher + ":@SECLEVEL=0",
                             "-CAfile", authority.caCertificate]
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("s_client-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
        let status = process.reapedExitStatus()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return status == 0 && text.contains("Cipher is \(cipher)")
    }

    @Test func tls12OffersOnlyForwardSecretAEADCiphers() throws {
        let authority = try TLSTests.Authority(rsa: true)
        defer { try? FileManager.default.removeItem(at: authority.folder) }
        let server = try ServerHarness(arguments: ["--tls-cert", authority.chain, "--tls-key", authority.key],
                                       tls: try authority.client(minimum: .tlsv12, maximum: .tlsv13))
        let port = try Self.port(server)
        for cipher in ["AES128-SHA", "AES256-SHA", "AES128-GCM-SHA256", "AES256-GCM-SHA384", "ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA"] {
            #expect(!(try handshake(port: port, cipher: cipher, authority: authority)), "\(cipher) was accepted")
        }
        for cipher in ["ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-CHACHA20-POLY1305"] {
            #expect(try handshake(port: port, cipher: cipher, authority: authority), "\(cipher) was refused")
        }
    }

    @Test func loopbackIsAnAddressNotAPrefix() {
        for host in ["127.0.0.1", "127.1.2.3", "127.255.255.254", "::1", "[::1]", "0:0:0:0:0:0:0:1", "localhost"] {
            #expect(ServerSettings(host: host).isLoopback, "\(host)")
        }
        for host in ["127.0.0.1.attacker.example", "127.attacker.example", "128.0.0.1", "126.0.0.1", "0.0.0.0", "::", "::2",
                     "[::1", "127.1", "localhost.attacker.example", "", "10.0.0.1"] {
            #expect(!(ServerSettings(host: host).isLoopback), "\(host)")
        }
    }

    @Test func serveRefusesANameThatLooksLikeLoopbackWithoutTLS() throws {
        let harness = try ServerHarness()
        let refused = try harness.cli(["serve", "--host", "127.0.0.1.attacker.example", "--port", "0", "--json"])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("\"code\":\"invalid_input\""), "\(refused.stderr)")
        #expect(refused.stderr.contains("127.0.0.1.attacker.example") && refused.stderr.contains("--tls-cert"), "\(refused.stderr)")
        #expect(refused.stdout.isEmpty, "it did not start: \(refused.stdout)")
    }
}
