import AsyncHTTPClient
import ClinicTestPostgres
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// `clinic serve --tls-cert --tls-key` with a CA made for the test: TLS 1.3 and 1.2 handshakes
/// verify the chain, TLS 1.1 is refused, HTTP/2 is chosen by ALPN, HSTS is sent.
@Suite(.serialized) struct TLSTests {
    /// A CA, and a server certificate for 127.0.0.1 signed by it, as PEM files (openssl); the
    /// server's key is P-256, or RSA (for the RSA key exchange suites a server must not offer).
    struct Authority {
        let folder: URL
        var caCertificate: String { folder.appendingPathComponent("ca.pem").path }
        var chain: String { folder.appendingPathComponent("chain.pem").path }
        var key: String { folder.appendingPathComponent("server.key").path }

        init(rsa: Bool = false) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let extensions = folder.appendingPathComponent("server.ext")
            try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
                .write(to: extensions, atomically: true, encoding: .utf8)
            let steps: [[String]] = [
                ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
                 "-days", "2", "-subj", "/CN=Clinic Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
                ["req", "-newkey"] + (rsa ? ["rsa:2048"] : ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"])
                    + ["-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
                ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
                 "-days", "2", "-extfile", "server.ext"],
            ]
            for step in steps {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
                process.arguments = step
                process.currentDirectoryURL = folder
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                guard process.reapedExitStatus() == 0 else { throw ServerHarness.HarnessError.failed("openssl \(step[0]) failed") }
            }
            // The chain as a server sends it: leaf first, then the CA.
            let leaf = try String(contentsOf: folder.appendingPathComponent("server.pem"), encoding: .utf8)
            let ca = try String(contentsOfFile: caCertificate, encoding: .utf8)
            try (leaf + ca).write(toFile: chain, atomically: true, encoding: .utf8)
        }

        func client(minimum: TLSVersion, maximum: TLSVersion) throws -> TLSConfiguration {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caCertificate))
            configuration.certificateVerification = .fullVerification
            configuration.minimumTLSVersion = minimum
            configuration.maximumTLSVersion = maximum
            return configuration
        }
    }

    @Test func handshakesVersionsAndHTTP2() async throws {
        let authority = try Authority()
        defer { try? FileManager.default.removeItem(at: authority.folder) }
        let server = try ServerHarness(arguments: ["--tls-cert", authority.chain, "--tls-key", authority.key],
                                       tls: try authority.client(minimum: .tlsv13, maximum: .tlsv13))
        #expect(server.url.hasPrefix("https://127.0.0.1:"), "\(server.url)")

        // TLS 1.3, the chain verified against the test CA; HTTP/2 chosen by ALPN.
        let health = try await server.send(.GET, "/healthz")
        #expect(health.status == 200)
        #expect(health.version == .http2)
        #expect(health.headers["Strict-Transport-Security"].first == "max-age=31536000")
        #expect(health.headers["X-Content-Type-Options"].first == "nosniff")

        // TLS 1.2 only, and HTTP/1.1 only: both still served.
        let twelve = HTTPClient(eventLoopGroupProvider: .singleton, configuration: {
            var configuration = HTTPClient.Configuration(tlsConfiguration: try? authority.client(minimum: .tlsv12, maximum: .tlsv12))
            configuration.httpVersion = .http1Only
            return configuration
        }())
        let reply = try await twelve.execute(HTTPClientRequest(url: server.url + "/v1/clinics?limit=1"), timeout: .seconds(30))
        #expect(reply.status == .ok)
        #expect(reply.version == .http1_1)
        try await twelve.shutdown()

        // TLS 1.1 is refused at the handshake.
        let eleven = HTTPClient(eventLoopGroupProvider: .singleton,
                                configuration: HTTPClient.Configuration(tlsConfiguration: try authority.client(minimum: .tlsv1, maximum: .tlsv11)))
        do {
            _ = try await eleven.execute(HTTPClientRequest(url: server.url + "/healthz"), timeout: .seconds(30))
            Issue.record("a TLS 1.1 client was served")
        } catch {
            #expect(String(describing: error).contains("SSL") || error is NIOSSLError || error is BoringSSLError, "refused at the handshake: \(error)")
        }
        try await eleven.shutdown()

        // A client that does not trust the test CA cannot verify the chain.
        let stranger = HTTPClient(eventLoopGroupProvider: .singleton,
                                  configuration: HTTPClient.Configuration(tlsConfiguration: .makeClientConfiguration()))
        do {
            _ = try await stranger.execute(HTTPClientRequest(url: server.url + "/healthz"), timeout: .seconds(30))
            Issue.record("an unknown CA was trusted")
        } catch {}
        try await stranger.shutdown()
    }

    @Test func plainHTTPOnlyOnLoopbackUnlessInsecure() throws {
        let harness = try ServerHarness()
        let refused = try harness.cli(["serve", "--host", "0.0.0.0", "--port", "0", "--json"])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("\"code\":\"invalid_input\""), "\(refused.stderr)")
        let unpaired = try harness.cli(["serve", "--tls-cert", "/nonexistent.pem", "--json"])
        #expect(unpaired.status == 2, "\(unpaired.stderr)")
        let badFile = try harness.cli(["serve", "--port", "0", "--tls-cert", "/nonexistent.pem", "--tls-key", "/nonexistent.key", "--json"])
        #expect(badFile.status != 0)
        #expect(badFile.stderr.contains("/nonexistent.pem"), "\(badFile.stderr)")
    }
}
