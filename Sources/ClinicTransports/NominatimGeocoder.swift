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
        var components = URLComponents(url: baseURL.appendingPathComponent("search"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "format", value: "jsonv2"), URLQueryItem(name: "q", value: query),
                                  URLQueryItem(name: "limit", value: "1")]
        guard let url = components?.url else { throw ClinicError(.geocodeFailed, .geocoderUnavailable, baseURL.absoluteString) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        try waitForTurn()
        let data = try send(request)
        return try Self.parse(data)
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

    func send(_ request: URLRequest) throws -> Data {
        let outcome = LockedBox<Result<Data, ClinicError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let host = baseURL.host ?? baseURL.absoluteString
        let task = session.dataTask(with: request) { data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let result: Result<Data, ClinicError>
            if let data, error == nil, (200..<300).contains(status) {
                result = .success(data)
            } else {
                result = .failure(ClinicError(.geocodeFailed, .geocoderUnavailable, host))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout + 0.5) == .timedOut {
            task.cancel()
            throw ClinicError(.geocodeFailed, .geocoderTimeout, host, String(Int(timeout)))
        }
        guard let result = outcome.current else { throw ClinicError(.geocodeFailed, .geocoderUnavailable, host) }
        return try result.get()
    }

    private static let lastRequest = LockedBox<Date?>(nil)

    /// Sleeps until `interval` has passed since this machine's last request to the server.
    func waitForTurn() throws {
        guard let rateFile else {
            Self.lastRequest.withLock { last in
                if let last { Self.sleep(until: last.addingTimeInterval(interval)) }
                last = Date()
            }
            return
        }
        let descriptor = open(rateFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ClinicError(.geocodeFailed, .geocoderUnavailable, rateFile) }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw ClinicError(.geocodeFailed, .geocoderUnavailable, rateFile) }
        defer { flock(descriptor, LOCK_UN) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        if count > 0, let text = String(bytes: buffer.prefix(count), encoding: .utf8),
           let seconds = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), seconds.isFinite {
            // Never longer than one interval: a stamp in the future (the clock stepped back, a
            // damaged file) must not hold every geocoding process for hours.
            Self.sleep(until: min(Date(timeIntervalSince1970: seconds + interval), Date().addingTimeInterval(interval)))
        }
        let stamp = Array(String(format: "%.6f\n", Date().timeIntervalSince1970).utf8)
        _ = ftruncate(descriptor, 0)
        _ = stamp.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    static func sleep(until date: Date) {
        let delay = date.timeIntervalSinceNow
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
    }
}
