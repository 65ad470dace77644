import ArgumentParser
import ClinicKit
import ClinicStorePostgres
import ClinicServer
import Dispatch
import Foundation
import Logging

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the HTTPS API (docs/API.md) on this database, beside any CLI use of it.",
        discussion: """
            Without --tls-cert and --tls-key the server speaks plain HTTP and listens only on a \
            loopback address, unless --insecure-http is given. It prints "Listening on URL" on \
            stdout once ready; SIGTERM or Ctrl-C stops it after the requests in progress.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Address to listen on (default 127.0.0.1).") var host = "127.0.0.1"
    @Option(help: "Port to listen on; 0 lets the system choose (default 8080).") var port = 8080
    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate (chain allowed, leaf first).", valueName: "file"))
    var tlsCert: String?
    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key of the certificate.", valueName: "file"))
    var tlsKey: String?
    @Flag(name: .customLong("insecure-http"), help: "Allow plain HTTP on a non-loopback address (behind a TLS proxy).")
    var insecureHTTP = false
    @Option(name: .customLong("log-format"), help: "Request log on stderr: text or json (default text).")
    var logFormat: ServerSettings.LogFormat = .text

    func run() throws {
        let context = Context(global)
        guard (tlsCert == nil) == (tlsKey == nil) else { throw TerminalError.invalid(.serveTLSPair) }
        var settings = ServerSettings(host: host, port: port, tls: tlsCert.flatMap { cert in tlsKey.map { (cert, $0) } },
                                      insecureHTTP: insecureHTTP, logFormat: logFormat)
        try settings.apply(environment: context.environment)
        try settings.validate() // before the database is opened
        // A PostgreSQL pool for the blocking threads and the appointment changes (a SQLite file ignores it).
        let system = try context.system(connections: settings.storePoolSize)
        // On PostgreSQL the server keeps signed-in sessions and nearest searches, listening for their changes.
        (system.database as? PostgresStore)?.keepLookups()
        let format = logFormat
        LoggingSystem.bootstrap { label in ServerLogHandler(label: label, format: format) }
        let logger = Logger(label: "clinic.serve")
        if settings.tls == nil && !settings.isLoopback {
            context.terminal.note(context.text(.serveInsecure, host))
        }
        let language = context.language
        // The main thread waits for the server to be built (the text gateway noted in the store),
        // then serves dispatch's main queue while the server's task runs.
        let server = try AsyncEdge.waitHere {
            try await ClinicServer.make(system: system, settings: settings, logger: logger) { address in
                FileHandle.standardOutput.write(Data((Strings.text(.serveListening, language, [address]) + "\n").utf8))
            }
        }
        let json = context.json
        Task {
            do {
                try await server.run()
                Foundation.exit(0)
            } catch {
                let reason = (error as? ClinicError)?.message(in: language) ?? String(describing: error)
                Entry.report(TerminalError(.storage, .serveFailed, "\(host):\(port)", reason), json: json, language: language)
            }
        }
        dispatchMain()
    }
}

extension ServerSettings.LogFormat: ExpressibleByArgument {}

/// swift-log's lines on stderr: `text` for people, `json` (one object a line) for collectors.
struct ServerLogHandler: LogHandler {
    let label: String
    let format: ServerSettings.LogFormat
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let time = DateText.iso8601(Date())
        let line: String
        switch format {
        case .text:
            let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            line = "\(time) \(event.level) \(event.message)" + (fields.isEmpty ? "" : " " + fields)
        case .json:
            var object: [String: String] = ["time": time, "level": event.level.rawValue, "message": event.message.description,
                                            "label": label]
            for (key, value) in merged { object[key] = value.description }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            line = String(decoding: data, as: UTF8.self)
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
