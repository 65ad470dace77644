import AsyncHTTPClient
import ClinicServer
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a stranger can do to the server below HTTP's requests (issue 23): hold connections
/// open without finishing a TLS handshake, open more than their share, stream a body past the
/// limit, choose a cipher without forward secrecy, or pass a name for a loopback address.
/// Every wait is a bounded poll: "closed before a generous bound", never "closed in N s".
final class ProtocolLimitsTests: XCTestCase {
    static func port(_ server: ServerHarness) throws -> Int {
        guard let port = URL(string: server.url)?.port else { throw ServerHarness.HarnessError.failed("no port in \(server.url)") }
        return port
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
        process.waitUntilExit()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return process.terminationStatus == 0 && text.contains("Cipher is \(cipher)")
    }

    func testTLS12OffersOnlyForwardSecretAEADCiphers() throws {
        let authority = try TLSTests.Authority(rsa: true)
        defer { try? FileManager.default.removeItem(at: authority.folder) }
        let server = try ServerHarness(arguments: ["--tls-cert", authority.chain, "--tls-key", authority.key],
                                       tls: try authority.client(minimum: .tlsv12, maximum: .tlsv13))
        let port = try Self.port(server)
        for cipher in ["AES128-SHA", "AES256-SHA", "AES128-GCM-SHA256", "AES256-GCM-SHA384", "ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA"] {
            XCTAssertFalse(try handshake(port: port, cipher: cipher, authority: authority), "\(cipher) was accepted")
        }
        for cipher in ["ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-CHACHA20-POLY1305"] {
            XCTAssertTrue(try handshake(port: port, cipher: cipher, authority: authority), "\(cipher) was refused")
        }
    }

    func testLoopbackIsAnAddressNotAPrefix() {
        for host in ["127.0.0.1", "127.1.2.3", "127.255.255.254", "::1", "[::1]", "0:0:0:0:0:0:0:1", "localhost"] {
            XCTAssertTrue(ServerSettings(host: host).isLoopback, host)
        }
        for host in ["127.0.0.1.attacker.example", "127.attacker.example", "128.0.0.1", "126.0.0.1", "0.0.0.0", "::", "::2",
                     "[::1", "127.1", "localhost.attacker.example", "", "10.0.0.1"] {
            XCTAssertFalse(ServerSettings(host: host).isLoopback, host)
        }
    }

    func testServeRefusesANameThatLooksLikeLoopbackWithoutTLS() throws {
        let harness = try ServerHarness()
        let refused = try harness.cli(["serve", "--host", "127.0.0.1.attacker.example", "--port", "0", "--json"])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("\"code\":\"invalid_input\""), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("127.0.0.1.attacker.example") && refused.stderr.contains("--tls-cert"), refused.stderr)
        XCTAssertTrue(refused.stdout.isEmpty, "it did not start: \(refused.stdout)")
    }
}
