import Foundation

/// A tiny HTTP/1.1 server on 127.0.0.1 for geocoder tests: answers every request with the
/// body its handler returns (after an optional delay) and records the requests it saw.
final class TestHTTPServer: @unchecked Sendable {
    struct Request { let path: String; let headers: [String: String]; let time: Date }

    let port: UInt16
    private let socket: Int32
    private let lock = NSLock()
    private var seen: [Request] = []
    private let handler: @Sendable (String) -> (delay: TimeInterval, body: String)

    var requests: [Request] { lock.withLock { seen } }
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    init(handler: @escaping @Sendable (String) -> (delay: TimeInterval, body: String)) throws {
        self.handler = handler
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        self.socket = socket
        var yes: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 16) == 0 else { close(socket); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in self.serve() }
    }

    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    private func serve() {
        while true {
            let client = accept(socket, nil, nil)
            if client < 0 { return }
            Thread.detachNewThread { [self] in self.answer(client) }
        }
    }

    private func answer(_ client: Int32) {
        defer { close(client) }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !data.ends(with: Array("\r\n\r\n".utf8)) {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { return }
            data += buffer.prefix(count)
        }
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        let path = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        lock.withLock { seen.append(Request(path: path, headers: headers, time: Date())) }
        let (delay, body) = handler(path)
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        let response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        _ = Array(response.utf8).withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
