import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing

/// The server under load: group-committed bookings, nothing acknowledged ever lost (SIGKILL
/// mid-load), CLI processes booking beside it, graceful shutdown. (What needs no real process
/// is tested in process: `InProcess/`.)
struct LoadSlot: Sendable { let department: Int; let start: String }
struct LoadOutcome: Sendable { let booked: [Int]; let statuses: [Int] }

/// Patients with tokens, and every free slot of the small directory's departments as
/// (department, start) pairs, so that each booking can have its own slot.
func preparePatientsAndSlots(_ server: ServerHarness, patients: Int) async throws -> (tokens: [String], slots: [LoadSlot]) {
    let tokens = try await withThrowingTaskGroup(of: String.self) { group in
        for index in 0..<patients { group.addTask { try await server.patient("load\(index)") } }
        return try await group.reduce(into: []) { $0.append($1) }
    }
    var slots: [LoadSlot] = []
    let clinics = try await server.send(.GET, "/v1/clinics").object["items"] as? [[String: Any]] ?? []
    for clinic in clinics {
        for department in try await server.send(.GET, "/v1/clinics/\(clinic["id"] as? Int ?? 0)/departments").array {
            let id = department["id"] as? Int ?? 0
            let free = try await server.send(.GET, "/v1/departments/\(id)/slots?days=14").array
                .filter { $0["isAvailable"] as? Bool == true }.compactMap { $0["start"] as? String }
                .filter(isFarEnoughAhead) // the earliest would pass under the lead time while the test runs
            var seen = Set<String>()
            for start in free where seen.insert(start).inserted { slots.append(LoadSlot(department: id, start: start)) }
        }
    }
    return (tokens, slots)
}

/// Books `attempts` slots (round robin over the patients) from `clients` concurrent tasks;
/// the ids answered 201 and the other statuses.
func bookConcurrently(_ server: ServerHarness, tokens: [String], slots work: [LoadSlot], clients: Int,
                 stopOnError: Bool = false) async -> LoadOutcome {
    final class Results: @unchecked Sendable {
        let lock = NSLock(); var booked: [Int] = []; var statuses: [Int] = []; var next = 0
    }
    let results = Results()
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<clients {
            group.addTask {
                while true {
                    let index: Int? = results.lock.withLock {
                        guard results.next < work.count else { return nil }
                        defer { results.next += 1 }
                        return results.next
                    }
                    guard let index else { return }
                    let department = work[index].department, start = work[index].start
                    do {
                        let reply = try await server.send(.POST, "/v1/appointments", json: ["departmentId": department, "start": start],
                                                          token: tokens[index % tokens.count])
                        results.lock.withLock {
                            results.statuses.append(reply.status)
                            if reply.status == 201, let id = reply.object["id"] as? Int { results.booked.append(id) }
                        }
                    } catch {
                        if stopOnError { return } // the server went away
                    }
                }
            }
        }
    }
    return results.lock.withLock { LoadOutcome(booked: results.booked, statuses: results.statuses) }
}


@Suite(.serialized) struct LoadTests {

    @Test func everyAcknowledgedBookingSurvivesSIGKILL() async throws {
        let server = try ServerHarness()
        // A patient may hold at most 1000 upcoming appointments here (the default is 5).
        #expect(try server.cli(["admin", "settings", "set", "booking.max_active", "1000"]).status == 0)
        let (tokens, slots) = try await preparePatientsAndSlots(server, patients: 16)
        #expect(slots.count > 300, "enough distinct slots to book under load")
        var acknowledged: [Int] = []
        var offset = 0
        for killAfter in [0.15, 0.4, 0.8] {
            let chunk = Array(slots[offset..<min(offset + 120, slots.count)])
            offset += chunk.count
            let load = Task { [server, tokens, chunk] in await bookConcurrently(server, tokens: tokens, slots: chunk, clients: 16, stopOnError: true) }
            try await Task.sleep(for: .seconds(killAfter))
            server.kill()
            let outcome = await load.value
            acknowledged += outcome.booked
            try server.restart()
            // A client's HTTPClient may hold connections to the dead process.
        }
        #expect(!(acknowledged.isEmpty), "some bookings were acknowledged before each kill")
        let kept = try server.scalar("SELECT count(*) FROM appointments WHERE id IN (\(acknowledged.map(String.init).joined(separator: ",")))")
        #expect(kept == acknowledged.count, "every booking answered 201 is in the database")
        #expect(try server.text("PRAGMA integrity_check") == "ok")
        #expect(try server.scalar("""
            SELECT count(*) FROM (SELECT doctor_id, starts_at FROM appointments WHERE status IN ('scheduled', 'confirmed')
                                  GROUP BY doctor_id, starts_at HAVING count(*) > 1)
            """) == 0, "no slot booked twice")
    }

    @Test func cliProcessesBookBesideTheServer() async throws {
        let server = try ServerHarness()
        #expect(try server.cli(["admin", "settings", "set", "booking.max_active", "1000"]).status == 0)
        let (tokens, slots) = try await preparePatientsAndSlots(server, patients: 8)
        // The CLI's patients, logged in through their own session files.
        let cliPatients = 4
        var sessions: [String] = []
        for index in 0..<cliPatients {
            let session = server.folder.appendingPathComponent("cli-session-\(index)").path
            var environment = server.environment(["CLINIC_SESSION": session])
            let registered = try ServerHarness.run(["register", "--login", "cli\(index)", "--name", "Carl", "--surname", "Jones",
                                                    "--street", "Main St", "--house", "1", "--city", "Boston", "--accept-privacy",
                                                    "--password-stdin"], input: ServerHarness.password + "\n", environment: environment)
            #expect(registered.status == 0, "\(registered.stderr)")
            environment["CLINIC_SESSION"] = session
            let login = try ServerHarness.run(["login", "--login", "cli\(index)", "--password-stdin"], input: ServerHarness.password + "\n",
                                              environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            sessions.append(session)
        }
        // The same slots, wanted by both: the HTTP clients from the front, the CLI from the back.
        let contested = Array(slots.prefix(60))
        let http = Task { [server, tokens, contested] in await bookConcurrently(server, tokens: tokens, slots: contested, clients: 8) }
        let cliStatuses = try await withThrowingTaskGroup(of: [String?].self) { group in
            for index in 0..<cliPatients {
                let environment = server.environment(["CLINIC_SESSION": sessions[index]])
                let mine = contested.reversed().enumerated().filter { $0.offset % cliPatients == index }.map(\.element)
                group.addTask {
                    var codes: [String?] = []
                    for slot in mine {
                        let result = try ServerHarness.run(["book", "--department", String(slot.department), "--at", slot.start, "--json"],
                                                           environment: environment)
                        codes.append(result.status == 0 ? nil : Self.code(result.stderr))
                    }
                    return codes
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let httpOutcome = await http.value
        let httpErrors = Set(httpOutcome.statuses.filter { $0 != 201 })
        #expect(httpErrors.isSubset(of: [409, 503]), "HTTP answers other than 201, 409, 503: \(httpErrors)")
        let cliErrors = Set(cliStatuses.compactMap { $0 })
        #expect(cliErrors.isSubset(of: ["slot_taken", "busy", "overlapping_appointment"]), "CLI errors: \(cliErrors)")
        #expect(try server.scalar("""
            SELECT count(*) FROM (SELECT doctor_id, starts_at FROM appointments WHERE status IN ('scheduled', 'confirmed')
                                  GROUP BY doctor_id, starts_at HAVING count(*) > 1)
            """) == 0, "no slot booked twice")
        let successes = httpOutcome.booked.count + cliStatuses.filter { $0 == nil }.count
        #expect(try server.scalar("SELECT count(*) FROM appointments") == successes, "every success is one appointment")
    }

    static func code(_ stderr: String) -> String? {
        guard let data = stderr.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return "unreadable: " + stderr
        }
        return (object["error"] as? [String: Any])?["code"] as? String
    }

    @Test func sigtermFinishesTheRequestsInFlightAndExitsZero() async throws {
        let server = try ServerHarness()
        #expect(try server.cli(["admin", "settings", "set", "booking.max_active", "1000"]).status == 0)
        let (tokens, slots) = try await preparePatientsAndSlots(server, patients: 8)
        // Hold the writers' lock so that the bookings below are in flight when SIGTERM comes.
        let descriptor = open(server.databasePath + ".lock", O_RDWR | O_CREAT, 0o600)
        #expect(flock(descriptor, LOCK_EX) == 0)
        let first = Array(slots.prefix(8))
        let load = Task { [server, tokens, first] in await bookConcurrently(server, tokens: tokens, slots: first, clients: 8) }
        // Wait for the event, not for a time: the server's writer blocked on the lock held here
        // (a waiter on its inode in /proc/locks) means the bookings are in flight.
        let waitUntil = Date().addingTimeInterval(60)
        while !Self.someoneWaits(onLockAt: server.databasePath + ".lock") && Date() < waitUntil {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Self.someoneWaits(onLockAt: server.databasePath + ".lock"), "the server never waited for the writers' lock")
        // The first booking waits for the lock; the other seven, sent at the same moment, queue
        // behind it in the committer (given the time the test always gave them).
        try await Task.sleep(for: .milliseconds(500))
        let stopping = Task.detached { server.stop() }
        try await Task.sleep(for: .milliseconds(300))
        flock(descriptor, LOCK_UN)
        close(descriptor)
        let status = await stopping.value
        let outcome = await load.value
        #expect(status == 0, "exit status after SIGTERM: \(server.serverLog)")
        #expect(outcome.statuses.count == 8, "every request in flight was answered")
        #expect(outcome.booked.count == 8, "\(outcome.statuses)")
        #expect(try server.scalar("SELECT count(*) FROM appointments") == 8)
        #expect(try server.text("PRAGMA integrity_check") == "ok")
    }

    /// Whether another process waits for the `flock` on the file at `path`: a blocked request
    /// (`->`) on its inode in /proc/locks.
    static func someoneWaits(onLockAt path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return false }
        let inode = ":\(info.st_ino) "
        return table.split(separator: "\n").contains { $0.contains("->") && $0.contains("FLOCK") && $0.contains(inode) }
    }
}
