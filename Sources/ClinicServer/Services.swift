import ClinicKit
import ClinicTransports
import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

// The server's long-lived pieces, run by the application's ServiceGroup beside the HTTP
// server. The group shuts its services down in the reverse of their order, the HTTP server
// first: the requests in flight finish, then the outbox's round ends (an e-mail being sent
// is marked sent), then the map cache is dropped, then the store's writers commit the last batch
// (`buildApplication` lists them committer, map cache, outbox).

/// The store's writers' lifetime (`ClinicStore.startWriters`: SQLite's group commit; PostgreSQL
/// has none): they run from the start; on shutdown, once the HTTP server and
/// the outbox have stopped, they are drained — what is queued commits before the process exits.
struct CommitterService: Service {
    let database: any ClinicStore
    let pool: BlockingPool

    func run() async {
        // Returns at graceful shutdown, throws when the group is cancelled: drain either way.
        try? await gracefulShutdown()
        let database = self.database, pool = self.pool
        // A task of its own, so that a cancelled group still drains (`runIfActive` does not
        // start work for a cancelled task).
        await Task { _ = try? await pool.run { database.drainWriters() } }.value
    }
}

/// Writes due reminders and sends due e-mail and texts every `interval`: the store awaited, each
/// sending on the pool (a slow mail server, 30 s an e-mail at most, must not hold a thread
/// requests run on).
struct OutboxService: Service {
    let system: ClinicSystem
    let smtp: SMTPSettings?
    let sms: SMSSettings?
    /// Sends the texts (nil: Kannel's `sendsms` when `sms` is set).
    let textSender: (any TextSender)?
    /// The site's address in texts' links.
    let site: String
    let interval: Duration
    let pool: BlockingPool
    let metrics: ServerMetrics
    let logger: Logger
    let wakeup: OutboxWakeup
    /// Set on shutdown: the round stops after the e-mail being sent.
    let stopping = NIOLockedValueBox(false)

    func run() async {
        let rounds = Task { await deliver() }
        let stop: @Sendable () -> Void = { [stopping] in
            stopping.withLockedValue { $0 = true }
            rounds.cancel()
        }
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler { await rounds.value } onCancel: { stop() }
        } onGracefulShutdown: { stop() }
    }

    private func deliver() async {
        let mailer = smtp.map(SMTPMailer.init)
        let texter: (any TextSender)? = textSender ?? sms.map(KannelGateway.init)
        let from = smtp?.from ?? ""
        while !Task.isCancelled {
            do {
                let report = try await system.outbox.run(mailer: mailer, from: from, texter: texter, site: site,
                                                         sending: PoolRunner(pool: pool),
                                                         shouldStop: { stopping.withLockedValue { $0 } })
                metrics.texts("sent", by: report.texts)
                if report != DeliveryReport() {
                    logger.info("outbox", metadata: ["reminders": "\(report.reminders)", "sent": "\(report.sent)",
                                                     "texts": "\(report.texts)", "retrying": "\(report.retrying)",
                                                     "failed": "\(report.failed)"])
                }
            } catch {
                logger.error("outbox failed", metadata: ["error": "\((error as? ClinicError)?.message(in: .en) ?? "\(error)")"])
            }
            await wakeup.wait(upTo: interval)
        }
    }
}

/// Wakes the outbox before its interval is over: the waitlist's worker has just written an
/// offer, whose text and e-mail should go within seconds, not at the next round (30 s by
/// default). At most one wake-up waits; more before the outbox runs are one.
final class OutboxWakeup: Sendable {
    private let signalled = NIOLockedValueBox(false)

    func signal() { signalled.withLockedValue { $0 = true } }

    /// Returns after `interval`, or within a tenth of a second of a signal. (A flag looked at
    /// every 100 ms: an `AsyncStream` whose waiting `next()` is cancelled ends for good, and
    /// the loop would then never wait again.)
    func wait(upTo interval: Duration) async {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: interval)
        while clock.now < deadline, !Task.isCancelled {
            if signalled.withLockedValue({ let was = $0; $0 = false; return was }) { return }
            try? await Task.sleep(for: min(.milliseconds(100), deadline - clock.now))
        }
    }
}

/// Offers freed times from the waitlist (`WaitlistController.work`) every `interval`: a time a
/// cancellation frees (through any front, the CLI or another server) is offered within about
/// that long. Idle, a round is one read. On a shared store every server runs one; each freed time
/// is taken by one of them (`WaitlistWorkStore.swift`). A round is awaited: no thread waits.
struct WaitlistService: Service {
    let system: ClinicSystem
    let interval: Duration
    let logger: Logger
    /// Told when a round offered or closed something: its messages go now.
    let outbox: OutboxWakeup

    func run() async {
        let rounds = Task {
            while !Task.isCancelled {
                do {
                    let handled = try await system.waitlist.work()
                    if handled > 0 {
                        logger.info("waitlist", metadata: ["handled": "\(handled)"])
                        outbox.signal()
                    }
                } catch {
                    logger.error("waitlist failed", metadata: ["error": "\((error as? ClinicError)?.message(in: .en) ?? "\(error)")"])
                }
                try? await Task.sleep(for: interval)
            }
        }
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler { await rounds.value } onCancel: { rounds.cancel() }
        } onGracefulShutdown: { rounds.cancel() }
    }
}

/// The web map's clinics (`/clinics/map.json`), encoded once per version of the directory
/// and its departments (550 KB for the default directory, asked by every map page). As a
/// service it is filled once the server starts, so the first map page does not pay for it,
/// and dropped at shutdown.
final class MapCache: Service, Sendable {
    let system: ClinicSystem
    let pool: BlockingPool
    private let cached = NIOLockedValueBox<(version: String, map: Encoded)?>(nil)

    /// The map's clinics encoded: JSON, its gzip, and its `ETag` (a hash of the JSON, the same
    /// on every server of a database).
    struct Encoded: Sendable {
        let body: ByteBuffer
        let gzipped: ByteBuffer?
        let etag: String
    }

    init(system: ClinicSystem, pool: BlockingPool) {
        self.system = system
        self.pool = pool
    }

    func run() async {
        // Best effort: a failure here is the first map page's to report.
        _ = try? await map(.en)
        try? await gracefulShutdown()
        cached.withLockedValue { $0 = nil }
    }

    /// The encoded map of the directory's current version; errors said in `language`.
    func map(_ language: Language) async throws -> Encoded {
        do {
            let version = try await system.clinics.mapVersion()
            if let map = cached.withLockedValue({ cached in cached.flatMap { $0.version == version ? $0.map : nil } }) {
                return map
            }
            // The rows awaited; their encoding (7,146 clinics, gzipped) on the pool.
            let (read, clinics) = try await system.clinics.mapClinics()
            return try await pool.run { [cached] in
                let json = try Shapes.encoder(pretty: false).encode(MapJSON(clinics))
                // The tag names the bytes, not only the directory's version: a new release that
                // words the specializations otherwise is a new tag too.
                let tag = SHA256.hash(data: json).prefix(12).map { String(format: "%02x", $0) }.joined()
                let map = Encoded(body: ByteBuffer(bytes: json), gzipped: Gzip.compress([UInt8](json)).map { ByteBuffer(bytes: $0) },
                                  etag: "\"map-\(tag)\"")
                cached.withLockedValue { $0 = (read, map) }
                return map
            }
        } catch let error as ClinicError {
            throw APIFailure.hidingOthers(error, language: language)
        }
    }
}
