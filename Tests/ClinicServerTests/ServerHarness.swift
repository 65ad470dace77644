import AsyncHTTPClient
import ClinicTestPostgres
import Foundation
@testable import ClinicStoreSQLite
import GRDB
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL

/// A real `clinic serve` process on 127.0.0.1 with a port the system chose, on a private copy
/// of a small database, and a real HTTP client to talk to it.
final class ServerHarness: @unchecked Sendable, TestServer {
    let folder: URL
    var databasePath: String { folder.appendingPathComponent("clinic.sqlite").path }
    var sessionPath: String { folder.appendingPathComponent("session").path }
    private(set) var url = ""
    private var process: Process?
    private let outURL: URL, errURL: URL
    let client: HTTPClient

    /// - Parameters:
    ///   - authRate: CLINIC_AUTH_RATE ("BURST/PER_MINUTE"); high by default so that tests that
    ///     register many patients are not limited.
    ///   - arguments: more `serve` arguments (TLS).
    ///   - environment: more variables for the server (its limits).
    init(authRate: String = "100000/100000", arguments: [String] = [], tls: TLSConfiguration? = nil,
         environment extra: [String: String] = [:]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.template.path) where name.hasPrefix("clinic.sqlite") {
            try FileManager.default.copyItem(at: Self.template.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        outURL = folder.appendingPathComponent("serve.out")
        errURL = folder.appendingPathComponent("serve.err")
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        serverEnvironment = extra
        try start(authRate: authRate, arguments: arguments)
    }

    private var serverEnvironment: [String: String] = [:]

    deinit {
        stop()
        try? client.syncShutdown()
        try? FileManager.default.removeItem(at: folder)
    }

    var serverLog: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    private func start(authRate: String, arguments: [String]) throws {
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--port", "0"] + arguments
        process.environment = environment(serverEnvironment.merging(["CLINIC_AUTH_RATE": authRate]) { $1 })
        process.currentDirectoryURL = folder
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let text = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Listening on ") }) {
                url = String(line.dropFirst("Listening on ".count))
                return
            }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        throw HarnessError.failed("the server did not start: " + serverLog)
    }

    /// Stops the server as an operator would (SIGTERM) and waits for it; its exit status.
    @discardableResult
    func stop() -> Int32? {
        guard let process, process.isRunning else { return nil }
        process.terminate()
        return process.reapedExitStatus()
    }

    /// Kills the server at once (SIGKILL), as a power cut or the OOM killer would.
    func kill() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        _ = process.reapedExitStatus()
    }

    /// Starts the server again on the same database (after `stop` or `kill`).
    func restart(authRate: String = "100000/100000", arguments: [String] = []) throws {
        try start(authRate: authRate, arguments: arguments)
    }

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["CLINIC_DB"] = databasePath
        environment["CLINIC_SESSION"] = sessionPath
        environment["CLINIC_LANG"] = nil
        environment["LANG"] = "C.UTF-8"
        environment["LC_ALL"] = nil
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    // MARK: HTTP

    struct Reply: @unchecked Sendable, TestReply {
        let status: Int
        let headers: HTTPHeaders
        let body: Data
        let version: HTTPVersion
    }

    func send(_ method: HTTPMethod, _ path: String, json: Any? = nil, raw: Data? = nil, token: String? = nil,
              headers extra: [String: String] = [:]) async throws -> Reply {
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer " + token) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        } else if let raw {
            request.body = .bytes(ByteBuffer(bytes: raw))
        }
        for (name, value) in extra { request.headers.replaceOrAdd(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let buffer = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(buffer: buffer),
                     version: response.version)
    }

    func get(_ path: String) async throws -> Reply { try await send(.GET, path) }
    func post(_ path: String, json: [String: Any]) async throws -> Reply { try await send(.POST, path, json: json) }

    // MARK: The database and the CLI

    /// Runs `clinic ARGS` on this server's database and session file.
    func cli(_ arguments: [String], input: String = "") throws -> (status: Int32, stdout: String, stderr: String) {
        try Self.run(arguments, input: input, environment: environment())
    }

    static func run(_ arguments: [String], input: String = "", environment: [String: String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = environment
        let folder = FileManager.default.temporaryDirectory
        let out = folder.appendingPathComponent("cli-\(UUID().uuidString)"), err = folder.appendingPathComponent("cli-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: out); try? FileManager.default.removeItem(at: err) }
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let status = process.reapedExitStatus()
        return (status, String(decoding: try Data(contentsOf: out), as: UTF8.self),
                String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }

    // MARK: The template database

    /// A database with a small directory (two Los Angeles hospitals and one in Reno, with demo
    /// departments), made once per test run and copied for each server.
    static let template: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-serve-template-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let directory = folder.appendingPathComponent("directory.csv")
        try? """
            external_id,name,address,city,state,zip,lat,lon,category,is_pediatric,is_hospital
            LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,90001,34.05,-118.25,GENERAL ACUTE CARE,0,1
            LA2,Children's Hospital,"4650 Sunset Blvd, Suite 1",Los Angeles,CA,90027,34.10,-118.29,CHILDREN,1,1
            RN1,Renown Regional,1155 Mill Street,Reno,NV,89502,39.52,-119.80,CRITICAL ACCESS,0,1
            """.write(to: directory, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["CLINIC_DB"] = folder.appendingPathComponent("clinic.sqlite").path
        environment["CLINIC_SESSION"] = folder.appendingPathComponent("session").path
        _ = try? run(["admin", "import-clinics", directory.path, "--demo"], environment: environment)
        return folder
    }()

    static let binary: URL = {
        if let explicit = ProcessInfo.processInfo.environment["CLINIC_BIN"] { return URL(fileURLWithPath: explicit) }
        let runner = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("clinic")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root = root.deletingLastPathComponent() }
        return root.appendingPathComponent(".build/debug/clinic")
    }()

    enum HarnessError: Error { case failed(String) }
}

extension ServerHarness {
    /// `clinic serve ARGS` on this harness's database with `extra` in its environment, stopped
    /// after a generous bound if it starts (which a refused setting must not let it): its exit
    /// status and stderr (JSON's escaped '/' undone), nil if it ran.
    func refusedServe(_ arguments: [String] = [], environment extra: [String: String] = [:]) throws
        -> (status: Int32, stderr: String)? {
        let process = Process()
        process.executableURL = ServerHarness.binary
        process.arguments = ["serve", "--port", "0", "--json"] + arguments
        process.environment = environment(extra)
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errors) }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        guard let status = process.reapedExitStatus(waitingAtMost: 30) else {
            process.terminate()
            _ = process.reapedExitStatus()
            return nil
        }
        return (status, ((try? String(contentsOf: errors, encoding: .utf8)) ?? "").replacingOccurrences(of: "\\/", with: "/"))
    }
}
