import Foundation
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import NIOTLS

/// Open connections per client address and in total. A connection over either cap is closed
/// as soon as it is accepted, before a byte of it is read: the connections already open keep
/// being served, and a client sees its connection closed (no HTTP answer is possible before
/// TLS). Without the caps, connections that never finish a request pile up until the process
/// runs out of file descriptors and refuses everyone.
final class ConnectionLimiter: Sendable {
    let perAddress: Int
    let total: Int
    private struct State {
        var open = 0
        var byAddress: [String: Int] = [:]
        /// Refusals since the last log line: one line every 10 s at most, however many.
        var refused = 0
        var lastLogged: ContinuousClock.Instant?
    }
    private let state = NIOLockedValueBox(State())
    private let logger: Logger

    init(perAddress: Int, total: Int, logger: Logger) {
        self.perAddress = perAddress
        self.total = total
        self.logger = logger
    }

    /// True when the connection from `address` may open (and is now counted).
    func open(_ address: String) -> Bool {
        let (admitted, report) = state.withLockedValue { state -> (Bool, (Int, String)?) in
            let fromAddress = state.byAddress[address, default: 0]
            let reason = state.open >= total ? "total" : fromAddress >= perAddress ? "per_address" : nil
            guard let reason else {
                state.open += 1
                state.byAddress[address] = fromAddress + 1
                return (true, nil)
            }
            state.refused += 1
            let now = ContinuousClock.now
            if let last = state.lastLogged, now - last < .seconds(10) { return (false, nil) }
            defer { state.refused = 0; state.lastLogged = now }
            return (false, (state.refused, reason))
        }
        // No address in the log: it names a person's network (docs/SECURITY.md, "Logs").
        if let (refused, reason) = report {
            logger.warning("connections refused", metadata: ["count": "\(refused)", "cap": .string(reason),
                                                             "per_address": "\(perAddress)", "total": "\(total)"])
        }
        return admitted
    }

    func close(_ address: String) {
        state.withLockedValue { state in
            state.open -= 1
            let left = state.byAddress[address, default: 1] - 1
            state.byAddress[address] = left > 0 ? left : nil
        }
    }
}

/// Hummingbird's child channel (HTTP/1.1, or TLS with HTTP/2 by ALPN) behind the connection
/// caps and, under TLS, the handshake's deadline.
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let limiter: ConnectionLimiter
    /// nil on plain HTTP: there is no handshake; the idle timeout closes a silent connection.
    let handshakeTimeout: Duration?

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        guard limiter.open(address) else {
            // A failed setup leaves the socket to us: close it, or the descriptor leaks.
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        let limiter = self.limiter
        channel.closeFuture.whenComplete { _ in limiter.close(address) }
        let timeout = handshakeTimeout
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            if let timeout {
                // After the TLS handler, where its handshakeCompleted event passes.
                let tls = try channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
                try channel.pipeline.syncOperations.addHandler(HandshakeTimeoutHandler(timeout: timeout), position: .after(tls))
            }
            return value
        }.flatMapErrorThrowing { error -> Value in
            channel.close(promise: nil)
            throw error
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Closes a TLS connection whose handshake has not completed `timeout` after it opened: a
/// client that sends nothing, or half a ClientHello, would otherwise hold its socket for as long
/// as it likes (nothing else times out before the handshake: the idle timeout starts with HTTP).
final class HandshakeTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var handshakeDone = false

    init(timeout: Duration) {
        let parts = timeout.components
        self.timeout = .nanoseconds(parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            handshakeDone = true
            cancel()
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard deadline == nil, !handshakeDone else { return }
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [weak self] in
            guard let self, !self.handshakeDone else { return }
            context.close(promise: nil)
        }
    }

    private func cancel() {
        deadline?.cancel()
        deadline = nil
    }
}
