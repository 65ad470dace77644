import ClinicKit
@testable import ClinicStoreSQLite
import ClinicTestPostgres
import Foundation
import GRDB
import Testing

/// The store this run of the CLI tests is on: a SQLite file of its own per harness (the
/// default), or a database of its own on the tests' PostgreSQL when `CLINIC_TEST_STORE=postgres`
/// (scripts/test.sh runs the storage tests once each way).
enum CLIStore: String {
    case sqlite, postgres
    static let current: CLIStore = TestPostgres.isSelected ? .postgres : .sqlite
}

extension Trait where Self == ConditionTrait {
    /// For a test of the SQLite file itself (it reads or writes the file, backs it up, or
    /// crashes a writer): it runs in the SQLite pass only.
    static var sqliteOnly: Self {
        .enabled(if: CLIStore.current == .sqlite, "reads or writes the SQLite store's own file")
    }
}

/// Runs the built `clinic` binary against a private database and session file.
final class CLIHarness {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String

        /// The `code` of a JSON error on stderr.
        var errorCode: String? {
            guard let data = stderr.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let error = object["error"] as? [String: Any] else { return nil }
            return error["code"] as? String
        }

        func json() -> Any? {
            guard let data = stdout.data(using: .utf8) else { return nil }
            return try? JSONSerialization.jsonObject(with: data)
        }
    }

    let folder: URL
    /// The SQLite file (in the SQLite pass; tests that open it themselves are `.sqliteOnly`).
    var databasePath: String { folder.appendingPathComponent("clinic.sqlite").path }
    var sessionPath: String
    /// The PostgreSQL database of this harness (in the PostgreSQL pass).
    let postgres: (server: TestPostgres.Server, url: PostgresURL)?
    /// What `CLINIC_DB` names: the file, or the database's URL.
    var database: String { postgres?.url.redacted ?? databasePath }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        sessionPath = folder.appendingPathComponent("session").path
        postgres = CLIStore.current == .postgres ? try TestPostgres.makeDatabase() : nil
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    static let binary: URL = {
        if let explicit = ProcessInfo.processInfo.environment["CLINIC_BIN"] { return URL(fileURLWithPath: explicit) }
        // The test runner lives in the same build folder as the binary.
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

    /// A started `clinic` process.
    struct Running {
        let process: Process
        let stdout: FileHandle, stderr: FileHandle
        let outURL: URL, errURL: URL

        func wait() throws -> Result {
            let status = process.reapedExitStatus()
            try stdout.close()
            try stderr.close()
            defer {
                try? FileManager.default.removeItem(at: outURL)
                try? FileManager.default.removeItem(at: errURL)
            }
            let out = try Data(contentsOf: outURL), err = try Data(contentsOf: errURL)
            return Result(status: status, stdout: String(decoding: out, as: UTF8.self),
                          stderr: String(decoding: err, as: UTF8.self))
        }
    }

    /// The environment of a `clinic` run: this harness's database and session file, English.
    func environment(session: String? = nil, _ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["CLINIC_DB"] = database
        if let postgres {
            // The server's password, a HOME without a .pgpass, and key files of this harness.
            for (key, value) in postgres.server.environment { environment[key] = value }
            environment["HOME"] = folder.path
            environment["CLINIC_KEY_FILE"] = folder.appendingPathComponent("clinic.key").path
            environment["CLINIC_AUDIT_KEY_FILE"] = folder.appendingPathComponent("clinic.audit-key").path
        }
        environment["CLINIC_SESSION"] = session ?? sessionPath
        environment["CLINIC_LANG"] = nil
        environment["LANG"] = "C.UTF-8"
        environment["LC_ALL"] = nil
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Starts `clinic ARGS` with `input` on standard input (not a terminal) and returns at once.
    func start(_ arguments: [String], input: String = "", session: String? = nil,
               environment extra: [String: String] = [:], executable: URL? = nil) throws -> Running {
        let process = Process()
        process.executableURL = executable ?? Self.binary
        process.arguments = arguments
        // Any working directory will do: the binary finds Data/ and Migrations/ itself.
        process.currentDirectoryURL = folder
        process.environment = environment(session: session, extra)
        // Output goes to files, so a large output can never block the child on a full pipe.
        let run = UUID().uuidString
        let outURL = folder.appendingPathComponent("out-\(run)"), errURL = folder.appendingPathComponent("err-\(run)")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let stdout = try FileHandle(forWritingTo: outURL), stderr = try FileHandle(forWritingTo: errURL)
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        return Running(process: process, stdout: stdout, stderr: stderr, outURL: outURL, errURL: errURL)
    }

    /// Runs `clinic ARGS` with `input` on standard input (not a terminal).
    @discardableResult
    func run(_ arguments: [String], input: String = "", session: String? = nil,
             environment extra: [String: String] = [:], executable: URL? = nil) throws -> Result {
        try start(arguments, input: input, session: session, environment: extra, executable: executable).wait()
    }

    /// Every row of every table but `excluding`: equal fingerprints mean those tables did not change.
    func fingerprint(excluding: Set<String> = []) throws -> String {
        if let postgres { return try TestPostgres.dump(postgres.url, excluding: excluding) }
        let queue = try DatabaseQueue(path: databasePath)
        defer { try? queue.close() }
        return try queue.read { db in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .filter { !excluding.contains($0) }
            return try tables.map { table in
                table + ":" + (try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\" ORDER BY rowid").map(\.description).joined(separator: "\n"))
            }.joined(separator: "\n")
        }
    }

    /// The integers a query answers (its first column), on either store.
    func integers(_ sql: String) throws -> [Int] {
        if let postgres { return try TestPostgres.integers(postgres.url, sql) }
        let queue = try DatabaseQueue(path: databasePath)
        defer { try? queue.close() }
        return try queue.read { db in try Int.fetchAll(db, sql: sql) }
    }

    /// Runs a statement (`?` placeholders, text arguments) on either store, as a test that
    /// plants old or odd data does.
    func execute(_ sql: String, _ arguments: [String] = []) throws {
        if let postgres {
            var numbered = "", index = 0
            for character in sql {
                if character == "?" { index += 1; numbered += "$\(index)" } else { numbered.append(character) }
            }
            return try TestPostgres.execute(postgres.url, numbered, arguments)
        }
        let queue = try DatabaseQueue(path: databasePath)
        defer { try? queue.close() }
        try queue.write { db in try db.execute(sql: sql, arguments: StatementArguments(arguments)) }
    }

    /// A small directory: a general hospital and a children's hospital in Los Angeles, one in Reno.
    static let directory = """
        external_id,name,address,city,state,zip,lat,lon,category,is_pediatric,is_hospital
        LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,90001,34.05,-118.25,GENERAL ACUTE CARE,0,1
        LA2,Children's Hospital,"4650 Sunset Blvd, Suite 1",Los Angeles,CA,90027,34.10,-118.29,CHILDREN,1,1
        RN1,Renown Regional,1155 Mill Street,Reno,NV,89502,39.52,-119.80,CRITICAL ACCESS,0,1
        """

    /// A database with the small directory and its demo departments.
    func setUpDirectory() throws {
        let file = folder.appendingPathComponent("directory.csv")
        try Self.directory.write(to: file, atomically: true, encoding: .utf8)
        let result = try run(["admin", "import-clinics", file.path, "--demo"])
        guard result.status == 0 else { throw HarnessError.failed(result.stderr) }
    }

    enum HarnessError: Error { case failed(String) }
}

/// The next Monday after today (in UTC), at least 3 days away, plus `days`, as "YYYY-MM-DD".
func nextMonday(plus days: Int = 0) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
    var day = Date().addingTimeInterval(3 * 86_400)
    while calendar.component(.weekday, from: day) != 2 { day += 86_400 }
    day += TimeInterval(days * 86_400)
    let parts = calendar.dateComponents([.year, .month, .day], from: day)
    return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
}
