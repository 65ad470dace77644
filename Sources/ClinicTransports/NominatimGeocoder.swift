import ClinicKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP geocoder speaking Nominatim's `/search?format=jsonv2` protocol. Off unless a URL is
/// configured (`CLINIC_GEOCODER_URL`). It sends a User-Agent, waits at most `timeout`, and
/// keeps to one request per `interval` — across processes too, through a lock file.
public struct NominatimGeocoder: Geocoder {
    public let baseURL: URL
    public let userAgent: String
    public let timeout: TimeInterval
    public let interval: TimeInterval
    /// A file shared by every process using this server, holding the time of the last request.
    public let rateFile: String?

    public var source: String { "nominatim" }

    public init(baseURL: URL, userAgent: String = "clinic/0.1 (ClinicKit; offline-first clinic finder)",
                timeout: TimeInterval = 5, interval: TimeInterval = 1, rateFile: String? = nil) {
        self.baseURL = baseURL
        self.userAgent = userAgent
        self.timeout = timeout
        self.interval = interval
        self.rateFile = rateFile
    }

    public func geocode(_ query: String) throws -> (coordinate: Coordinate, precision: String, name: String?)? {
        let request = try searchRequest(query)
        Self.sleep(until: try claimTurn())
        return try Self.parse(try send(request))
    }

    /// `geocode` with the task suspended, not its thread, while it waits for its turn and the answer.
    public func lookUp(_ query: String) async throws -> (coordinate: Coordinate, precision: String, name: String?)? {
        let request = try searchRequest(query)
        let delay = try claimTurn().timeIntervalSinceNow
        if delay > 0 { try await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
        return try Self.parse(try await sending(request))
    }

    /// `/search?format=jsonv2&q=…&limit=1` with the User-Agent.
    func searchRequest(_ query: String) throws -> URLRequest {
        var components = URLComponents(url: baseURL.appendingPathComponent("search"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "format", value: "jsonv2"), URLQueryItem(name: "q", value: query),
                                  URLQueryItem(name: "limit", value: "1")]
        guard let url = components?.url else { throw ClinicError(.geocodeFailed, .geocoderUnavailable, baseURL.absoluteString) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        return request
    }

    /// The first result of a `format=jsonv2` answer: `lat` and `lon` are strings; the kind of
    /// place is in `addresstype` (or `type`), its rank in `place_rank`.
    static func parse(_ data: Data) throws -> (coordinate: Coordinate, precision: String, name: String?)? {
        guard let array = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw ClinicError(.geocodeFailed, .geocoderBadAnswer)
        }
        guard let first = array.first else { return nil }
        guard let latText = first["lat"] as? String, let lonText = first["lon"] as? String,
              let lat = Double(latText), let lon = Double(lonText),
              let coordinate = Coordinate(latitude: lat, longitude: lon) else {
            throw ClinicError(.geocodeFailed, .geocoderBadAnswer)
        }
        let rank = first["place_rank"] as? Int ?? 0
        let precision: String
        switch rank {
        case 30...: precision = "address"
        case 26..<30: precision = "street"
        case 13..<26: precision = "city"
        default: precision = "region"
        }
        return (coordinate, precision, first["display_name"] as? String)
    }

    /// The answer's body, the thread blocked until it comes or `timeout` has passed.
    func send(_ request: URLRequest) throws -> Data {
        let outcome = LockedBox<Result<Data, ClinicError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = start(request) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        if done.wait(timeout: .now() + timeout + 0.5) == .timedOut {
            task.cancel()
            throw ClinicError(.geocodeFailed, .geocoderTimeout, host, String(Int(timeout)))
        }
        guard let result = outcome.current else { throw ClinicError(.geocodeFailed, .geocoderUnavailable, host) }
        return try result.get()
    }

    /// The answer's body, awaited: the task resumes when it comes, or after `timeout` with
    /// `geocoder_timeout` (the request cancelled).
    func sending(_ request: URLRequest) async throws -> Data {
        let waiting = LockedBox<CheckedContinuation<Data, any Error>?>(nil)
        let host = self.host, timeout = self.timeout
        /// The continuation, the first time only: the answer and the timeout race for it.
        let claim: @Sendable () -> CheckedContinuation<Data, any Error>? = {
            waiting.withLock { continuation in defer { continuation = nil }; return continuation }
        }
        return try await withCheckedThrowingContinuation { continuation in
            waiting.withLock { $0 = continuation }
            let task = start(request) { result in claim()?.resume(with: result) }
            // A dispatch timer, not a task's sleep: it fires even while every thread of the
            // tasks' pool is busy.
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout + 0.5) {
                guard let continuation = claim() else { return }
                task.cancel()
                continuation.resume(throwing: ClinicError(.geocodeFailed, .geocoderTimeout, host, String(Int(timeout))))
            }
        }
    }

    var host: String { baseURL.host ?? baseURL.absoluteString }

    /// Sends the request on a session of its own; `done` hears the body of a 2xx answer, or
    /// `geocoder_unavailable`.
    func start(_ request: URLRequest, _ done: @escaping @Sendable (Result<Data, ClinicError>) -> Void) -> URLSessionDataTask {
        let session = URLSession(configuration: .ephemeral)
        let host = self.host
        let task = session.dataTask(with: request) { data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            if let data, error == nil, (200..<300).contains(status) {
                done(.success(data))
            } else {
                done(.failure(ClinicError(.geocodeFailed, .geocoderUnavailable, host)))
            }
            session.finishTasksAndInvalidate()
        }
        task.resume()
        return task
    }

    private static let lastRequest = LockedBox<Date?>(nil)

    /// A stamp this far ahead of the clock is damaged (or the clock stepped back): it is not waited for.
    static let trustedAhead: TimeInterval = 60

    /// When this request may go: `interval` after the last one this machine let go or booked,
    /// booked at once (the stamp is that time), so that requests waiting side by side each get
    /// a turn of their own without holding the lock while they wait.
    func claimTurn() throws -> Date {
        let now = Date()
        guard let rateFile else {
            return Self.lastRequest.withLock { last in
                let turn = last.map { max(now, $0.addingTimeInterval(interval)) } ?? now
                last = turn
                return turn
            }
        }
        let descriptor = open(rateFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ClinicError(.geocodeFailed, .geocoderUnavailable, rateFile) }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw ClinicError(.geocodeFailed, .geocoderUnavailable, rateFile) }
        defer { flock(descriptor, LOCK_UN) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        var turn = now
        if count > 0, let text = String(bytes: buffer.prefix(count), encoding: .utf8),
           let seconds = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), seconds.isFinite {
            let last = Date(timeIntervalSince1970: seconds)
            // A stamp in the future past the turns that could be booked (the clock stepped
            // back, a damaged file) must not hold every geocoding process for hours: one interval.
            turn = last.timeIntervalSince(now) > Self.trustedAhead ? now.addingTimeInterval(interval)
                : max(now, last.addingTimeInterval(interval))
        }
        let stamp = Array(String(format: "%.6f\n", turn.timeIntervalSince1970).utf8)
        _ = ftruncate(descriptor, 0)
        _ = stamp.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return turn
    }

    static func sleep(until date: Date) {
        let delay = date.timeIntervalSinceNow
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
    }
}
