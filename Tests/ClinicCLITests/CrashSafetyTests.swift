import Foundation
@testable import ClinicStoreSQLite
import GRDB
import Testing

/// Bookings and imports in a loop of `clinic` processes, killed with SIGKILL at random moments,
/// many times: afterwards the database is sound, every booking a process reported done is
/// there, and every import is there whole or not at all.
@Suite struct CrashSafetyTests {
    @Test(.sqliteOnly) func killedAtRandomMomentsTheDatabaseStaysWhole() throws {
        let cli = try CLIHarness()
        try cli.setUpDirectory()
        #expect(try cli.run(["admin", "settings", "set", "booking.max_active", "1000"]).status == 0)
        let registered = try cli.run(["register", "--login", "crash", "--name", "Cat", "--surname", "Crash", "--street", "Main Street",
                                      "--house", "1", "--city", "Reno", "--accept-privacy", "--password-stdin"], input: "correct-horse-42\n")
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(try cli.run(["login", "--login", "crash", "--password-stdin"], input: "correct-horse-42\n").status == 0)
        let clinics = try #require(try cli.run(["clinics", "list", "--city", "Reno", "--json"]).json() as? [[String: Any]])
        let reno = try #require(clinics.first?["id"] as? Int)
        let departments = try #require(try cli.run(["departments", String(reno), "--json"]).json() as? [[String: Any]])
        let surgery = try #require(departments.first { $0["specialization"] as? String == "surgery" }?["id"] as? Int)
        let slots = try #require(try cli.run(["slots", "--department", String(surgery), "--from", nextMonday(), "--days", "14", "--json"])
            .json() as? [[String: Any]]).compactMap { $0["start"] as? String }
        #expect(slots.count >= 200)

        // Import files with 20 clinics each, ids unique per file.
        let rounds = 8, perRound = 12
        for file in 0..<(rounds * perRound) {
            var csv = "external_id,name,city,state,lat,lon\n"
            for row in 0..<20 { csv += "K\(file)-\(row),Crash Clinic \(file)-\(row),Reno,NV,39.\(row),-119.\(file % 10)\n" }
            try csv.write(to: cli.folder.appendingPathComponent("import-\(file).csv"), atomically: true, encoding: .utf8)
        }
        let log = cli.folder.appendingPathComponent("done.log").path
        FileManager.default.createFile(atPath: log, contents: nil)
        var random = SystemRandomNumberGenerator()
        var slot = 0
        for round in 0..<rounds {
            var script = "set -u\n"
            for step in 0..<perRound {
                let file = round * perRound + step
                script += """
                    out=$("$CLINIC" book --department \(surgery) --at '\(slots[slot % slots.count])' --json) && \
                    echo "booked $(printf '%s' "$out" | sed -n 's/.*"id" : \\([0-9]*\\).*/\\1/p')" >> '\(log)'
                    "$CLINIC" admin import-clinics '\(cli.folder.appendingPathComponent("import-\(file).csv").path)' > /dev/null && \
                    echo "imported \(file)" >> '\(log)'

                    """
                slot += 1
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", script]
            var environment = ProcessInfo.processInfo.environment
            environment["CLINIC"] = CLIHarness.binary.path
            environment["CLINIC_DB"] = cli.databasePath
            environment["CLINIC_SESSION"] = cli.sessionPath
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: Double.random(in: 0.15...1.5, using: &random))
            // Stop the shell so it starts nothing new, kill whatever clinic it is running, then it.
            let shell = process.processIdentifier
            kill(shell, SIGSTOP)
            let children = Process()
            children.executableURL = URL(fileURLWithPath: "/usr/bin/pkill")
            children.arguments = ["-KILL", "-P", String(shell)]
            try children.run()
            children.waitUntilExit()
            kill(shell, SIGKILL)
            process.waitUntilExit()
        }

        let reported = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let booked = reported.filter { $0.hasPrefix("booked ") }.compactMap { Int64($0.dropFirst(7)) }
        let imported = Set(reported.filter { $0.hasPrefix("imported ") }.compactMap { Int($0.dropFirst(9)) })
        let queue = try DatabaseQueue(path: cli.databasePath)
        defer { try? queue.close() }
        try queue.read { db in
            #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
            #expect(try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").isEmpty)
            for id in booked {
                #expect(try String.fetchOne(db, sql: "SELECT status FROM appointments WHERE id = ?", arguments: [id]) == "scheduled",
                        "booking \(id) was reported done")
            }
            for file in 0..<(rounds * perRound) {
                let present = try Int.fetchOne(db, sql: "SELECT count(*) FROM clinics WHERE external_id LIKE ?", arguments: ["K\(file)-%"]) ?? -1
                #expect(present == 0 || present == 20, "import \(file) is half there: \(present)")
                if imported.contains(file) { #expect(present == 20, "import \(file) was reported done") }
            }
            let perSlot = try Int.fetchAll(db, sql: """
                SELECT count(*) FROM appointments WHERE status IN ('scheduled', 'confirmed') GROUP BY doctor_id, starts_at HAVING count(*) > 1
                """)
            #expect(perSlot.isEmpty)
        }
        #expect(booked.count + imported.count > 0, "the loop got somewhere before the kills")
        let finished = (0..<rounds).filter { imported.contains($0 * perRound + perRound - 1) }.count
        #expect(finished < rounds, "the kills cut rounds short (\(finished) of \(rounds) ran to the end)")
    }
}
