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
    /// finishes the requests in flight, commits the last batch and returns.
    public struct Server: Sendable {
        let application: Application<RouterResponder<APIContext>>
        let committer: GroupCommitter
        let pool: BlockingPool
        let outbox: OutboxWorker

        public func run() async throws {
            let worker = Task { await outbox.run() }
            do {
                try await application.runService()
            } catch {
                await finish(worker)
                throw error
            }
            await finish(worker)
        }

        /// The outbox's round in progress ends (an e-mail being sent is marked sent), then the
        /// last batch commits.
        private func finish(_ worker: Task<Void, Never>) async {
            outbox.stopping.withLockedValue { $0 = true }
            worker.cancel()
            await worker.value
            let committer = self.committer
            _ = try? await pool.run { committer.drain() }
        }
    }

    /// Writes due reminders and sends due e-mail every `interval`, on the blocking pool.
    struct OutboxWorker: Sendable {
        let system: ClinicSystem
        let smtp: SMTPSettings?
        let interval: Duration
        let pool: BlockingPool
        let logger: Logger
        /// Set on shutdown: the round stops after the e-mail being sent.
        let stopping = NIOLockedValueBox(false)

        func run() async {
            let mailer = smtp.map(SMTPMailer.init)
            let from = smtp?.from ?? ""
            while !Task.isCancelled {
                do {
                    let report = try await pool.run { [system, stopping] in
                        try system.outbox.run(mailer: mailer, from: from, shouldStop: { stopping.withLockedValue { $0 } })
                    }
                    if report != DeliveryReport() {
                        logger.info("outbox", metadata: ["reminders": "\(report.reminders)", "sent": "\(report.sent)",
                                                         "retrying": "\(report.retrying)", "failed": "\(report.failed)"])
                    }
                } catch {
                    logger.error("outbox failed", metadata: ["error": "\((error as? ClinicError)?.message(in: .en) ?? "\(error)")"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// Builds the server. `onListening` gets the address once the socket is bound (with the
    /// port the system chose for port 0).
    public static func make(system: ClinicSystem, settings: ServerSettings, logger: Logger,
                            onListening: @escaping @Sendable (String) async -> Void) throws -> Server {
        try settings.validate()
        let threads = NIOThreadPool(numberOfThreads: max(settings.blockingThreads, settings.passwordWorkers + 2))
        threads.start()
        let pool = BlockingPool(pool: threads)
        let metrics = ServerMetrics()
        // Every change from every front (API, web, staff) is counted where it happens: in ClinicKit.
        system.appointments.changes.observe { operation, outcome in metrics.change(operation, outcome: outcome) }
        let committer = GroupCommitter(database: system.database, maximumBatch: settings.maximumBatch, report: metrics.batch)
        let api = API(system: system, pool: pool, committer: committer, metrics: metrics, settings: settings,
                      csrfKey: SymmetricKey(data: try system.database.sharedSecret("web_csrf")))
        let router = Router(context: APIContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestLogMiddleware(metrics: metrics))
        router.add(middleware: SecurityHeadersMiddleware(tls: settings.tls != nil))
        let routes = RouteTable()
        router.add(middleware: ErrorMiddleware(routes: routes))
        router.add(middleware: LimitsMiddleware(maximumBody: ServerSettings.maximumBody))
        routes.attach(router)
        api.addRoutes(to: routes)

        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionCloseHandler()],
            idleTimeout: .seconds(settings.idleTimeout.components.seconds),
            httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100))
        // Every connection, plain or TLS, is counted against the caps first; a TLS one also has
        // its handshake's deadline (docs/SECURITY.md, "Guessing and flooding").
        let limiter = ConnectionLimiter(perAddress: settings.maximumConnectionsPerAddress, total: settings.connectionCap,
                                        logger: logger)
        let server: HTTPServerBuilder
        let scheme: String
        if let tls = settings.tls {
            let tlsConfiguration = try tlsConfiguration(certificate: tls.certificate, key: tls.key)
            let configuration = HTTP2UpgradeChannel.Configuration(idleTimeout: settings.idleTimeout, streamConfiguration: http1)
            let handshakeTimeout = settings.handshakeTimeout
            server = HTTPServerBuilder { responder in
                GuardedChannel(base: try HTTP2UpgradeChannel(tlsConfiguration: tlsConfiguration, configuration: configuration,
                                                             responder: responder),
                               limiter: limiter, handshakeTimeout: handshakeTimeout)
            }
            scheme = "https"
        } else {
            server = HTTPServerBuilder { responder in
                GuardedChannel(base: HTTP1Channel(responder: responder, configuration: http1), limiter: limiter, handshakeTimeout: nil)
            }
            scheme = "http"
        }
        let host = settings.host
        let application = Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(host, port: settings.port), serverName: nil, reuseAddress: true),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.port
                let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
                await onListening("\(scheme)://\(shownHost):\(port)")
            },
            logger: logger)
        // The outbox has a thread of its own: a slow mail server (30 s an e-mail at most) must
        // not hold one of the threads requests run on.
        let outboxThread = NIOThreadPool(numberOfThreads: 1)
        outboxThread.start()
        let outbox = OutboxWorker(system: system, smtp: settings.smtp, interval: settings.deliveryInterval,
                                  pool: BlockingPool(pool: outboxThread), logger: logger)
        return Server(application: application, committer: committer, pool: pool, outbox: outbox)
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
            throw ClinicError.invalid(.tlsFileInvalid, certificate, "a PEM certificate")
        }
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw ClinicError.invalid(.tlsFileInvalid, key, "a PEM private key")
        }
        guard !chain.isEmpty else { throw ClinicError.invalid(.tlsFileInvalid, certificate, "a PEM certificate") }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                     privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        configuration.maximumTLSVersion = .tlsv13
        configuration.cipherSuiteValues = tls12Ciphers
        return configuration
    }
}
