import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The audit trail as the `clinic` binary checks and exports it, after the file was edited
/// the way someone with `sqlite3` would (issue 23, items 5 and 6).
@Suite struct AuditEndToEndTests {
    /// A directory and three audit rows (the operator's exception add, remove, add).
    func audited() throws -> CLIHarness {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        for arguments in [["add", "--doctor", "1", "--date", "2027-01-05", "--off"], ["remove", "1"],
                          ["add", "--doctor", "1", "--date", "2027-01-06", "--off"]] {
            let result = try cli.run(["admin", "exception"] + arguments)
            #expect(result.status == 0, "\(arguments) \(result.stderr)")
        }
        let check = try cli.run(["admin", "check"])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        return cli
    }

    /// Runs SQL on the file with its triggers dropped and put back as they were.
    func tamper(_ path: String, _ statements: [String]) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "DROP TRIGGER audit_events_no_update")
            for statement in statements { try db.execute(sql: statement) }
            try db.execute(sql: """
                CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
                BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END
                """)
        }
    }

    /// Rewrites row 1's detail and recomputes every row's SHA-256 and the head, as someone who
    /// has the database file but not the audit key would.
    func rechain(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM audit_events ORDER BY id") }
        try queue.close()
        var previous = String(repeating: "0", count: 64)
        var statements: [String] = []
        for row in rows {
            let id: Int64 = try row.decode(Int64.self, forColumn: "id")
            let detail = id == 1 ? "doctor 1 2027-01-07 off" : try row.decode(String.self, forColumn: "detail")
            func text(_ column: String) -> String {
                switch (row[column] as DatabaseValue).storage {
                case .int64(let value): return String(value)
                case .string(let value): return value
                default: return ""
                }
            }
            let hash = AuditLog.hash(previous: previous, fields: [
                String(id), text("at"), text("actor"), text("staff_id"), text("role"), text("clinic_id"),
                text("action"), text("client_id"), text("appointment_id"), text("request_id"), detail])
            statements.append("UPDATE audit_events SET detail = '\(detail)', hash = '\(hash)' WHERE id = \(id)")
            previous = hash
        }
        statements.append("UPDATE audit_head SET hash = '\(previous)' WHERE id = 1")
        try tamper(path, statements)
    }

    @Test(.sqliteOnly) func checkFailsOnATrailRechainedWithoutTheKey() throws {
        let cli = try audited()
        try rechain(cli.databasePath)
        let check = try cli.run(["admin", "check", "--json"])
        #expect(check.status == 6, "\(check.stdout) \(check.stderr)")
        let report = try #require(check.json() as? [String: Any], "\(check.stdout) \(check.stderr)")
        #expect(report["ok"] as? Bool == false && report["schema"] as? [String] == [], "\(report)")
        #expect(report["audit"] as? [String] == ["audit row 1 does not match its hash (edited, or a row before it changed)"],
                "\(report)")
        let human = try cli.run(["admin", "check"])
        #expect(human.status == 6 && human.stdout.contains("audit: audit row 1 does not match its hash"), "\(human.stdout)")
    }

    /// A copy of the database without its audit key file (an operator copied only the file):
    /// the check says it cannot verify the trail, neither "sound" nor "broken". With the key
    /// file put beside it, the copy verifies.
    @Test(.sqliteOnly) func checkSaysItCannotVerifyWithoutTheAuditKey() throws {
        let cli = try audited()
        let other = try CLIHarness()
        let copy = other.databasePath
        let backup = try cli.run(["admin", "backup", copy])
        #expect(backup.status == 0, "\(backup.stderr)")
        // The data key goes with it (as the docs ask), the audit key does not.
        try FileManager.default.copyItem(atPath: cli.databasePath + ".key", toPath: copy + ".key")
        chmod(copy + ".key", 0o600)
        let check = try cli.run(["--db", copy, "admin", "check", "--json"])
        #expect(check.status == 6, "\(check.stdout) \(check.stderr)")
        let report = try #require(check.json() as? [String: Any], "\(check.stdout) \(check.stderr)")
        #expect(report["ok"] as? Bool == false && report["audit"] as? [String] == [], "\(report)")
        #expect((report["auditKey"] as? String)?.contains("is missing") == true, "\(report)")
        let human = try cli.run(["--db", copy, "admin", "check"])
        #expect(human.status == 6 && human.stdout.contains("could not be verified") && !human.stdout.contains("problems"),
                "\(human.stdout)")

        try FileManager.default.copyItem(atPath: cli.databasePath + ".audit-key", toPath: copy + ".audit-key")
        chmod(copy + ".audit-key", 0o600)
        let keyed = try cli.run(["--db", copy, "admin", "check"])
        #expect(keyed.status == 0, "\(keyed.stdout) \(keyed.stderr)")
    }

    /// A backup of the same trail restores under the same audit key. A backup whose trail was
    /// never keyed (made before audit keys) sends the key file aside with the replaced
    /// database, and the restored trail is keyed afresh at its next row.
    @Test(.sqliteOnly) func restoreKeepsOrSetsAsideTheAuditKey() throws {
        let cli = try audited()
        let keyPath = cli.databasePath + ".audit-key"
        let key = try Data(contentsOf: URL(fileURLWithPath: keyPath))
        let backup = cli.folder.appendingPathComponent("keyed.sqlite").path
        #expect(try cli.run(["admin", "backup", backup]).status == 0)
        #expect(try cli.run(["admin", "exception", "remove", "1"]).status == 0)
        let restored = try cli.run(["admin", "restore", backup, "--json"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: keyPath)) == key, "the same key")
        #expect(try cli.run(["admin", "check"]).status == 0)

        // The backup as the program before audit keys would have left it: no rows, no marker.
        let old = cli.folder.appendingPathComponent("old.sqlite").path
        #expect(try cli.run(["admin", "backup", old]).status == 0)
        let queue = try DatabaseQueue(path: old)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP TRIGGER audit_events_no_delete; DELETE FROM audit_events; DELETE FROM audit_head;
                DELETE FROM settings WHERE key = 'audit.key_check';
                CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
                BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;
                """)
        }
        try queue.close()
        let setAside = try cli.run(["admin", "restore", old, "--json"])
        #expect(setAside.status == 0, "\(setAside.stderr)")
        let aside = try #require((setAside.json() as? [String: Any])?["replacedKeptAt"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: aside + ".audit-key")) == key, "the key went with the replaced database")
        #expect(!FileManager.default.fileExists(atPath: keyPath))
        #expect(try cli.run(["admin", "check"]).status == 0)
        #expect(try cli.run(["admin", "exception", "add", "--doctor", "1", "--date", "2027-01-08", "--off"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: keyPath)) != key, "a new key for the restored trail")
        let check = try cli.run(["admin", "check"])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
    }

    @Test(.sqliteOnly) func exportNamesAnUnreadableRowAndGoesOn() throws {
        let cli = try audited()
        try tamper(cli.databasePath, ["UPDATE audit_events SET at = 'x' WHERE id = 2"])

        let export = try cli.run(["admin", "audit", "export"])
        #expect(export.status == 6, "\(export.stderr)")
        #expect(!export.stderr.contains("Fatal error"), "\(export.stderr)")
        #expect(export.stderr.contains("audit row 2 cannot be read: its at is \"x\""), "\(export.stderr)")
        let ids = export.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? Int
        }
        #expect(ids == [1, 3], "\(export.stdout)")

        let json = try cli.run(["admin", "audit", "export", "--json"])
        #expect(json.status == 6 && json.errorCode == "storage_error", "\(json.stderr)")
        #expect((json.json() as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [1, 3], "\(json.stdout)")

        let check = try cli.run(["admin", "check", "--json"])
        #expect(check.status == 6, "\(check.stderr)")
        #expect((check.json() as? [String: Any])?["audit"] as? [String] == ["audit row 2 cannot be read: its at is \"x\""],
                "\(check.stdout) \(check.stderr)")
    }
}
