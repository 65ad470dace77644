import ClinicKit
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// `clinic serve`: the patient API over HTTP/1.1 and, under TLS, HTTP/2 (ALPN), on the same
/// ClinicKit controllers and database as the CLI.
public enum ClinicServer {
    /// The server, built and not yet started: `run()` serves until SIGTERM or SIGINT, then
    /// finishes the requests in flight, ends the outbox's round, commits the last batch and
    /// returns (the application's services, `buildApplication`).
    public struct Server: Sendable {
        let application: any ApplicationProtocol

        public func run() async throws {
            try await application.runService()
        }
    }

    /// Builds the server (`buildApplication`). `onListening` gets the address once the socket
    /// is bound (with the port the system chose for port 0).
    public static func make(system: ClinicSystem, settings: ServerSettings, logger: Logger,
                            onListening: @escaping @Sendable (String) async -> Void) async throws -> Server {
        Server(application: try await buildApplication(system: system, settings: settings, logger: logger, onListening: onListening))
    }

    /// TLS 1.2's suites: Mozilla's "intermediate" list less DHE, which BoringSSL does not have.
    /// ECDHE key exchange only, so a key stolen later does not open recorded traffic, and AEAD
    /// ciphers only, so no CBC with SHA-1. TLS 1.3's suites are all of that already (and
    /// BoringSSL does not let them be chosen).
    static let tls12Ciphers: [NIOTLSCipher] = [
        .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ]

    /// TLS 1.2 and 1.3 only, with the certificate chain and key from PEM files; ALPN offers h2
    /// and http/1.1 (set by the HTTP/2 channel).
    static func tlsConfiguration(certificate: String, key: String) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        let privateKey: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw ServerSettingError(.tlsFileInvalid, certificate, "a PEM certificate")
        }
        // A private key other local users can read is no longer private: refused as the
        // personal-data key is (a missing file is NIOSSL's to report, below).
        try KeyFile.checkPrivate(key)
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw ServerSettingError(.tlsFileInvalid, key, "a PEM private key")
        }
        guard !chain.isEmpty else { throw ServerSettingError(.tlsFileInvalid, certificate, "a PEM certificate") }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                     privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        configuration.maximumTLSVersion = .tlsv13
        configuration.cipherSuiteValues = tls12Ciphers
        return configuration
    }
}
