import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
@testable import ClinicKit
import ClinicTransports
import ClinicPDF
@testable import ClinicStoreSQLite
@testable import ClinicServer

/// The server's application in this process — the same `buildApplication`, router,
/// middleware, controllers and services as `clinic serve` — driven through HummingbirdTesting's
/// router client (`app.test(.router)`: no socket), on a private copy of the small database
/// `ServerHarness` uses. What needs a real process (TLS, signals, connection and protocol
/// limits, load) stays with `ServerHarness`.
struct InProcessServer: TestServer {
    let client: any TestClientProtocol
    let folder: URL
    let system: ClinicSystem
    let log: LogCapture
    var databasePath: String { folder.appendingPathComponent("clinic.sqlite").path }
    var serverLog: String { log.text }
    /// The address the server says it is at: the router client's requests come to `localhost`.
    let url = "http://localhost"

    /// Runs `body` with a fresh server on a fresh copy of the database; the server's services
    /// (committer, outbox, map cache) run for the length of `body` and shut down after it.
    /// - Parameter geocoderURL: an HTTP geocoder to ask last, as `CLINIC_GEOCODER_URL` gives `clinic serve`.
    static func run<T: Sendable>(authBurst: Int = 100_000, authPerMinute: Double = 100_000, geocoderURL: String? = nil,
                                 environment: [String: String] = [:], textSender: (any TextSender)? = nil,
                                 _ body: @Sendable (InProcessServer) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-inprocess-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in try FileManager.default.contentsOfDirectory(atPath: ServerHarness.template.path) where name.hasPrefix("clinic.sqlite") {
            try FileManager.default.copyItem(at: ServerHarness.template.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        let resources = try Resources.locate()
        let database = try SQLiteStore.open(path: folder.appendingPathComponent("clinic.sqlite").path,
                                                migrations: try Migration.load(from: resources.migrations),
                                                zones: LazyZones(data: resources.data))
        let path = folder.appendingPathComponent("clinic.sqlite").path
        let geocoder = try geocoderURL.map { text -> NominatimGeocoder in
            guard let url = URL(string: text) else { throw InProcessError.failed("not a URL: \(text)") }
            return NominatimGeocoder(baseURL: url, timeout: 5, rateFile: path + ".geocoder")
        }
        let system = ClinicSystem(store: database, resources: resources, remoteGeocoder: geocoder, pdfs: QPDFChecker())
        var settings = ServerSettings(host: "127.0.0.1", port: 0)
        settings.authBurst = authBurst
        settings.authPerMinute = authPerMinute
        try settings.apply(environment: environment)
        settings.textSender = textSender
        let log = LogCapture()
        let logger = Logger(label: "clinic.serve.test") { _ in log.handler }
        let app = try await ClinicServer.buildApplication(system: system, settings: settings, logger: logger) { _ in }
        return try await app.test(.router) { client in
            try await body(InProcessServer(client: client, folder: folder, system: system, log: log))
        }
    }

    // MARK: HTTP

    struct Reply: Sendable, TestReply {
        let status: Int
        let headers: Headers
        let body: Data
    }

    /// Response headers by name, every value of a name (as AsyncHTTPClient's `HTTPHeaders`).
    struct Headers: Sendable {
        let fields: HTTPFields
        subscript(_ name: String) -> [String] {
            guard let name = HTTPField.Name(name) else { return [] }
            return fields[values: name]
        }
        func first(name: String) -> String? { self[name].first }
    }

    func send(_ method: HTTPRequest.Method, _ path: String, json: Any? = nil, raw: Data? = nil, token: String? = nil,
              headers extra: [String: String] = [:]) async throws -> Reply {
        var fields: HTTPFields = [:]
        if let token { fields[.authorization] = "Bearer " + token }
        var body: ByteBuffer?
        if let json {
            fields[.contentType] = "application/json"
            body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
        } else if let raw {
            body = ByteBuffer(bytes: raw)
        }
        for (name, value) in extra {
            guard let name = HTTPField.Name(name) else { continue }
            fields[name] = value
        }
        let response = try await client.execute(uri: path, method: method, headers: fields, body: body)
        return Reply(status: Int(response.status.code), headers: Headers(fields: response.headers), body: Data(buffer: response.body))
    }

    /// A web page as a browser without JavaScript meets it: cookies kept by hand, redirects
    /// not followed.
    struct Page: Sendable {
        let status: Int
        let headers: Headers
        let text: String
        /// The forms' CSRF token on the page.
        var csrf: String? {
            text.firstMatch(of: #/name="csrf" value="([0-9a-f]{64})"/#).map { String($0.output.1) }
        }
        func cookie(_ name: String) -> String? {
            for header in headers["Set-Cookie"] where header.hasPrefix(name + "=") {
                return String(header.dropFirst(name.count + 1).prefix { $0 != ";" })
            }
            return nil
        }
    }

    func web(_ method: HTTPRequest.Method, _ path: String, cookies: [String: String], form: [String: String]? = nil) async throws -> Page {
        var fields: HTTPFields = [:]
        if !cookies.isEmpty {
            fields[.cookie] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        }
        var body: ByteBuffer?
        if let form {
            fields[.contentType] = "application/x-www-form-urlencoded"
            body = ByteBuffer(string: form.map { key, value in
                key + "=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            }.joined(separator: "&"))
        }
        let response = try await client.execute(uri: path, method: method, headers: fields, body: body)
        return Page(status: Int(response.status.code), headers: Headers(fields: response.headers), text: String(buffer: response.body))
    }

    /// A patient registered by the web's form as `login`, signed in: the browser's cookies
    /// (the session and the form nonce).
    func webPatient(_ login: String) async throws -> [String: String] {
        let form = try await web(.get, "/register", cookies: [:])
        guard let nonce = form.cookie("clinic_csrf"), let csrf = form.csrf else { throw TestServerFailure(description: "no form: \(form.text)") }
        var cookies = ["clinic_csrf": nonce]
        let registered = try await web(.post, "/register", cookies: cookies, form: [
            "csrf": csrf, "login": login, "password": Self.password, "passwordAgain": Self.password, "name": "Paula",
            "surname": "Page", "street": "Main St", "house": "5", "cityChoice": "Boston", "acceptPrivacy": "yes",
            "birthDate": "1984-05-06"])
        guard registered.status == 303, let session = registered.cookie("clinic_session") else {
            throw TestServerFailure(description: "not registered: \(registered.status) \(registered.text)")
        }
        cookies["clinic_session"] = session
        return cookies
    }

    func get(_ path: String) async throws -> Reply { try await send(.get, path) }
    func post(_ path: String, json: [String: Any]) async throws -> Reply { try await send(.post, path, json: json) }

    // MARK: The database and the CLI

    var sessionPath: String { folder.appendingPathComponent("session").path }

    /// Runs `clinic ARGS` on this server's database and session file (a process beside the
    /// server, as an operator's command is).
    func cli(_ arguments: [String], input: String = "") throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["CLINIC_DB"] = databasePath
        environment["CLINIC_SESSION"] = sessionPath
        environment["CLINIC_LANG"] = nil
        environment["LANG"] = "C.UTF-8"
        environment["LC_ALL"] = nil
        return try ServerHarness.run(arguments, input: input, environment: environment)
    }

    enum InProcessError: Error { case failed(String) }
}

/// The server's log lines, kept as text (`message key=value…`), for the tests that check
/// what the log does and does not say.
/// The server's log lines, kept for the tests to read (no token or password may be in them).
final class LogCapture: Sendable {
    private let lines = NIOLockedValueBox([String]())

    func append(_ line: String) { lines.withLockedValue { $0.append(line) } }

    var text: String { lines.withLockedValue { $0.joined(separator: "\n") } }

    /// A handler writing here. A value, as swift-log's handlers are: each `Logger` copy (the
    /// router client sets metadata on its own copy, from many tasks at once) has its own
    /// metadata, and only the lines are shared, behind their lock.
    var handler: CapturingLogHandler { CapturingLogHandler(capture: self) }
}

struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata extra: Logger.Metadata?, source: String, file: String,
             function: String, line: UInt) {
        let all = metadata.merging(extra ?? [:]) { $1 }
        capture.append(([message.description] + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " "))
    }
}

extension HTTPRequest.Method {
    // The harness's names, so that a test reads the same in process and against a process.
    static let GET = Self.get
    static let POST = Self.post
    static let PUT = Self.put
    static let PATCH = Self.patch
    static let DELETE = Self.delete
    static let HEAD = Self.head
    static func RAW(value: String) -> Self { Self(value) ?? .get }
}
