import ClinicKit
import ClinicTestPostgres
import Foundation
import Testing

/// The built `clinic` binary with `--db postgresql://…`: the schema's admin commands run on the
/// test server; nothing ever becomes a file or a folder named `postgresql:`.
@Suite struct CLIPostgresTests {
    static let binary: String = {
        if let explicit = ProcessInfo.processInfo.environment["CLINIC_BIN"] { return explicit }
        let runner = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("clinic")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            directory = directory.deletingLastPathComponent()
        }
        return TestPostgres.projectRoot.appendingPathComponent(".build/debug/clinic").path
    }()

    struct Run {
        let status: Int32, stdout: String, stderr: String
        var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
        }
        var errorCode: String? {
            let object = (try? JSONSerialization.jsonObject(with: Data(stderr.utf8))) as? [String: Any]
            return (object?["error"] as? [String: Any])?["code"] as? String
        }
    }

    /// `clinic ARGS` in `folder` (its working directory and HOME), with `environment` added.
    static func clinic(_ arguments: [String], in folder: String, environment: [String: String] = [:]) -> Run {
        var env = ["PATH": "/usr/bin:/bin", "HOME": folder, "LANG": "C.UTF-8",
                   "CLINIC_RESOURCES": TestPostgres.projectRoot.path, "CLINIC_SESSION": folder + "/session"]
        for (key, value) in environment { env[key] = value }
        let result = TestPostgres.runSplit(["/usr/bin/env", "-C", folder, binary] + arguments, environment: env,
                                           separateErrors: true)
        return Run(status: result.status, stdout: result.output, stderr: result.errors)
    }

    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clinic-pg-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Nothing but what the command line itself may write (no database file, no `postgresql:`).
    static func isEmpty(_ folder: String) throws -> Bool {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0 != "session" }.isEmpty
    }

    @Test func migrateAndCheckRunOnPostgreSQL() async throws {
        let (server, url) = try await TestPostgres.freshDatabase()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let migrate = Self.clinic(["admin", "migrate", "--db", url.redacted, "--json"], in: folder, environment: server.environment)
        #expect(migrate.status == 0, "\(migrate.stderr)")
        let latest = try TestPostgres.migrations().last?.version ?? 0
        #expect(migrate.json?["version"] as? Int == latest && migrate.json?["ran"] as? [Int] == Array(1...latest))
        let again = Self.clinic(["admin", "migrate", "--json"], in: folder,
                                environment: server.environment.merging(["CLINIC_DB": url.redacted]) { $1 })
        #expect(again.status == 0 && again.json?["ran"] as? [Int] == [], "\(again.stderr)")
        let check = Self.clinic(["admin", "check", "--db", url.redacted, "--json"], in: folder, environment: server.environment)
        #expect(check.status == 0 && check.json?["ok"] as? Bool == true, "\(check.stdout) \(check.stderr)")
        let down = Self.clinic(["admin", "migrate", "--to", "0", "--db", url.redacted, "--json"], in: folder,
                               environment: server.environment)
        #expect(down.json?["version"] as? Int == 0 && down.json?["ran"] as? [Int] == Array((1...latest).reversed()), "\(down.stderr)")
        let notMigrated = Self.clinic(["admin", "check", "--db", url.redacted, "--json"], in: folder, environment: server.environment)
        #expect(notMigrated.status == 6 && notMigrated.json?["ok"] as? Bool == false)
        // A SQLite file's own operations: a clear refusal, and no file anywhere.
        for arguments in [["admin", "backup", folder + "/copy.sqlite"], ["admin", "restore", folder + "/copy.sqlite"],
                          ["admin", "rotate-key"]] {
            let refused = Self.clinic(arguments + ["--db", url.redacted, "--json"], in: folder, environment: server.environment)
            #expect(refused.status == 2 && refused.errorCode == "store_unsupported", "\(arguments): \(refused.stderr)")
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        #expect(try Self.isEmpty(folder), "\(left)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/postgresql:"))
    }

    @Test func refusalsHaveTheirCodesAndNoPassword() async throws {
        let server = try TestPostgres.server()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let wrong = Self.clinic(["admin", "migrate", "--db", server.url.redacted, "--json"], in: folder,
                                environment: ["PGPASSWORD": "wrong-secret-123"])
        #expect(wrong.status == 6 && wrong.errorCode == "store_auth_failed", "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("wrong-secret-123") && !wrong.stdout.contains("wrong-secret-123"))
        let missing = Self.clinic(["admin", "migrate", "--db", server.url(database: "nowhere").redacted, "--json"], in: folder,
                                  environment: server.environment)
        #expect(missing.status == 6 && missing.errorCode == "store_database_missing", "\(missing.stderr)")
        let unreachable = Self.clinic(["admin", "migrate", "--db", "postgresql://u@127.0.0.1:1/x?connect_timeout=2", "--json"],
                                      in: folder)
        #expect(unreachable.status == 6 && unreachable.errorCode == "store_unreachable", "\(unreachable.stderr)")
        let password = Self.clinic(["admin", "migrate", "--db", "postgresql://u:hunter2-secret@h/x", "--json"], in: folder)
        #expect(password.status == 2 && password.errorCode == "store_url_invalid")
        #expect(!password.stderr.contains("hunter2-secret"))
        let bad = Self.clinic(["admin", "migrate", "--db", "postgresql://h/x?sslmode=maybe", "--json"], in: folder)
        #expect(bad.status == 2 && bad.errorCode == "store_url_invalid", "\(bad.stderr)")
        let russian = Self.clinic(["admin", "migrate", "--db", "mysql://h/x", "--lang", "ru"], in: folder)
        #expect(russian.status == 2 && russian.stderr.contains("хранилище"), "\(russian.stderr)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        #expect(try Self.isEmpty(folder), "\(left)")
    }
}
