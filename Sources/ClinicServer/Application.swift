import ClinicKit
import Crypto
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

extension ClinicServer {
    /// The application: the router with its controllers, the HTTP/1.1 channel (and under TLS
    /// HTTP/2 by ALPN) behind the connection caps, and the services run beside the server —
    /// the group committer, the web map's cache and the outbox. Running it (`runService`)
    /// serves until SIGTERM or SIGINT, then lets the requests in flight finish, ends the
    /// outbox's round and commits the last batch (`Services.swift`).
    static func buildApplication(system: ClinicSystem, settings: ServerSettings, logger: Logger,
                                 onListening: @escaping @Sendable (String) async -> Void) async throws -> some ApplicationProtocol {
        try settings.validate()
        // A server with a gateway says so before it listens, so that no patient is told "texts
        // are not available" while its first outbox round is still to come (issue 55).
        if settings.sms != nil || settings.textSender != nil { try await system.outbox.noteTextGateway() }
        let dependencies = try await makeDependencies(system: system, settings: settings)
        let router = buildRouter(dependencies)

        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionCloseHandler(), MalformedRequestHandler()],
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
        // The outbox has a thread of its own: a slow mail server (30 s an e-mail at most) must
        // not hold one of the threads requests run on.
        let outboxThread = NIOThreadPool(numberOfThreads: 1)
        outboxThread.start()
        let wakeup = dependencies.outboxWakeup
        let outbox = OutboxService(system: system, smtp: settings.smtp, sms: settings.sms, textSender: settings.textSender,
                                   site: settings.publicURL ?? settings.sms?.callbackURL ?? "", interval: settings.deliveryInterval,
                                   pool: BlockingPool(pool: outboxThread), metrics: dependencies.metrics, logger: logger, wakeup: wakeup)
        let waitlist = WaitlistService(system: system, interval: settings.waitlistInterval, logger: logger,
                                       outbox: wakeup)
        let host = settings.host
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(host, port: settings.port), serverName: nil, reuseAddress: true),
            // Shut down in reverse: the HTTP server, the waitlist, the outbox, the map cache, the committer.
            services: [CommitterService(database: system.database, pool: dependencies.pool), dependencies.mapCache, outbox,
                       waitlist],
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.port
                let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
                await onListening("\(scheme)://\(shownHost):\(port)")
            },
            logger: logger)
    }

    /// The shared services: the blocking pool (its own `NIOThreadPool`, started here), the
    /// metrics (every appointment change of every front counted where it happens, in
    /// ClinicKit), the store's writers (group commit on SQLite), the gates and limits.
    static func makeDependencies(system: ClinicSystem, settings: ServerSettings) async throws -> ServerDependencies {
        let threads = NIOThreadPool(numberOfThreads: max(settings.blockingThreads, settings.passwordWorkers + 2))
        threads.start()
        let pool = BlockingPool(pool: threads)
        let metrics = ServerMetrics()
        system.appointments.changes.observe { operation, outcome in metrics.change(operation, outcome: outcome) }
        system.database.startWriters(maximumBatch: settings.maximumBatch, report: metrics.batch)
        return ServerDependencies(system: system, pool: pool, metrics: metrics, settings: settings,
                                  csrfKey: SymmetricKey(data: try await system.sharedSecret("web_csrf")))
    }

    /// The router: the middleware every request passes (request log and id, language, security
    /// headers, errors, the body limit), then each controller's routes in its group — public, patient
    /// (`PatientAuthenticator`), staff (`StaffAuthenticator`) — and the web pages
    /// (`WebPageMiddleware`). `HEAD` answers every `GET` route.
    static func buildRouter(_ dependencies: ServerDependencies) -> Router<APIContext> {
        let router = Router(context: APIContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestLogMiddleware(metrics: dependencies.metrics))
        router.add(middleware: LanguageMiddleware())
        router.add(middleware: SecurityHeadersMiddleware(tls: dependencies.settings.tls != nil))
        let routes = RouteTable(router: router)
        router.add(middleware: ErrorMiddleware(routes: routes) { request in await dependencies.notFoundPage(request) })
        router.add(middleware: LimitsMiddleware(maximumBody: ServerSettings.maximumBody))

        HealthController(dependencies: dependencies).addRoutes(to: routes.group())
        let v1 = routes.group("v1")
        AccountController(dependencies: dependencies).addRoutes(to: v1)
        ClinicsController(dependencies: dependencies).addRoutes(to: v1)
        DepartmentsController(dependencies: dependencies).addRoutes(to: v1)
        AppointmentsController(dependencies: dependencies).addRoutes(to: v1)
        WaitlistRoutes(dependencies: dependencies).addRoutes(to: v1)
        PhoneRoutes(dependencies: dependencies).addRoutes(to: v1)
        MessagesController(dependencies: dependencies).addRoutes(to: v1)
        let staff = v1.group("staff")
        StaffAccountsController(dependencies: dependencies).addRoutes(to: staff)
        FrontDeskController(dependencies: dependencies).addRoutes(to: staff)
        StaffWaitlistRoutes(dependencies: dependencies).addRoutes(to: staff)
        ClinicAdminController(dependencies: dependencies).addRoutes(to: staff)
        AttachmentsController(dependencies: dependencies).addRoutes(patient: v1, staff: staff)
        FHIRController(dependencies: dependencies).addRoutes(to: routes.group())

        WebAssetsController(dependencies: dependencies).addRoutes(to: routes.group())
        let pages = routes.group().add(middleware: WebPageMiddleware(dependencies: dependencies))
        WebAccountPages(dependencies: dependencies).addRoutes(to: pages)
        WebClinicPages(dependencies: dependencies).addRoutes(to: pages)
        WebAppointmentPages(dependencies: dependencies).addRoutes(to: pages)
        WebWaitlistPages(dependencies: dependencies).addRoutes(to: pages)
        WebStaffWaitlistPages(dependencies: dependencies).addRoutes(to: pages)
        WebProfilePages(dependencies: dependencies).addRoutes(to: pages)
        WebStaffPages(dependencies: dependencies).addRoutes(to: pages)
        WebWalkInPages(dependencies: dependencies).addRoutes(to: pages)
        WebCalendarPages(dependencies: dependencies).addRoutes(to: pages)
        return router
    }
}
