import HTTPTypes
import NIOCore
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
