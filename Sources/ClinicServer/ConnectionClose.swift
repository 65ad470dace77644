import ClinicKit
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// A response with `Connection: close` ends its HTTP/1.1 connection: Hummingbird only looks at
/// the request's header, so without this the server went on reading the rest of a refused body
/// and answering the requests pipelined after it. The output closes after the response; what the
/// client still sends is read and dropped for `linger` (closing at once, with unread bytes, would
/// reset the connection and could lose the answer), then the connection closes.
///
/// On an HTTP/2 stream the header is forbidden (RFC 9113, 8.2.2) and is removed: the stream
/// ends with its response and the connection's other streams go on.
final class ConnectionCloseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    static let linger: TimeAmount = .seconds(2)
    private var isStream = false
    private var closeAfterResponse = false
    private var lingering = false
    private var lingerTimer: Scheduled<Void>?

    func handlerAdded(context: ChannelHandlerContext) {
        // An HTTP/2 stream's parent is its connection, whose parent is the listening socket; an
        // HTTP/1.1 connection's parent is the listening socket.
        isStream = context.channel.parent?.parent != nil
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        lingerTimer?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !lingering else { return }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if lingering, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.headerFields[.connection]?.lowercased() == "close":
            if isStream {
                head.headerFields[.connection] = nil
                context.write(wrapOutboundOut(.head(head)), promise: promise)
            } else {
                closeAfterResponse = true
                context.write(data, promise: promise)
            }
        case .end where closeAfterResponse && !lingering:
            lingering = true
            context.writeAndFlush(data, promise: promise)
            context.close(mode: .output, promise: nil)
            lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.linger) {
                context.close(promise: nil)
            }
        default:
            context.write(data, promise: promise)
        }
    }
}

/// A request whose head cannot be read (an address or a header over 16 KiB, bytes that are not
/// HTTP/1.1) is answered as every other refusal is: `400 invalid_input` in JSON with an
/// `X-Request-Id`, then the connection closes. Hummingbird's own answer was an empty 400.
/// Only between requests: a body cut short or malformed while a request runs is its handler's
/// to answer (`ErrorMiddleware`). Placed after `ConnectionCloseHandler`, whose close its
/// answer goes through.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A request's head has been read and its response has not ended.
    private var inRequest = false
    /// A request's head has been read and its body has not ended.
    private var bodyOpen = false
    private var answered = false
    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: inRequest = true; bodyOpen = true
        case .end: bodyOpen = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    /// The client closed with a request's body unfinished: the request fails now, as the
    /// decoder's own end-of-input error makes it fail. Should that error not reach the
    /// handler reading the body, it would wait for the idle timeout (issue 55: a cut-short
    /// request was counted 60 s late beside the test suite).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { failOpenBody(context) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failOpenBody(context)
        context.fireChannelInactive()
    }

    private func failOpenBody(_ context: ChannelHandlerContext) {
        guard bodyOpen, !failed else { return }
        failed = true
        context.fireErrorCaught(HTTPParserError.invalidEOFState)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { inRequest = false }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !inRequest, !answered else {
            if bodyOpen { failed = true }
            context.fireErrorCaught(error)
            return
        }
        answered = true
        let body = ByteBuffer(bytes: Self.body)
        let head = HTTPResponse(status: .badRequest, headerFields: [
            .contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes), .connection: "close",
            .xRequestId: UUID().uuidString.lowercased(), .cacheControl: "no-store",
        ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// The refusal's body, in English: nothing of the request was read, its language included.
    static let body: [UInt8] = {
        let failure = APIFailure(ServerError.invalid(.bodyInvalid, "its head (the address and headers) is over 16 KiB, or it is not HTTP/1.1"))
        return Array((try? Shapes.encoder(pretty: false).encode(failure.body(in: .en))) ?? Data())
    }()
}
