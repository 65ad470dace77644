import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// Group commit: writes queued at a moment share one transaction; a member's refusal undoes
/// only its own savepoint; an error that spoils the transaction fails every member and keeps
/// nothing; nobody hears "done" before the COMMIT.
@Suite(.sqliteOnly) struct GroupCommitTests {
    /// The SQLite store underneath (group commit is its own device).
    func sqliteStore(_ system: ClinicSystem) throws -> SQLiteStore {
        guard let store = system.database as? SQLiteStore else { throw ClinicError(.internalError, .internalError, "not SQLite") }
        return store
    }

    /// Monday 2026-11-23 in Los Angeles, `minute` minutes after 9:00.
    func monday(_ minute: Int) -> TimeInput.Parsed {
        .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9 + minute / 60, minute: minute % 60)!)
    }

    final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var all: [WriteBatchReport] = []
        func add(_ report: WriteBatchReport) { lock.withLock { all.append(report) } }
        var sizes: [Int] { lock.withLock { all.map(\.size) } }
        var reports: [WriteBatchReport] { lock.withLock { all } }
    }

    /// Holds the committer in a first batch until `release`, while `count` more writes queue.
    func batchAfterAHeldOne(_ committer: GroupCommitter, _ writes: [@Sendable () throws -> Any]) throws -> [Result<Any, Error>] {
        let held = DispatchSemaphore(value: 0), entered = DispatchSemaphore(value: 0)
        let first = Thread { _ = try? committer.performBlocking { entered.signal(); held.wait(); return 0 } }
        first.start()
        entered.wait() // the first batch is running
        let results = LockedResults(writes.count)
        let group = DispatchGroup()
        for (index, write) in writes.enumerated() {
            group.enter()
            Thread {
                do { results.set(index, .success(try committer.performBlocking(write))) } catch { results.set(index, .failure(error)) }
                group.leave()
            }.start()
        }
        let deadline = Date().addingTimeInterval(120)
        while committer.queued < writes.count {
            guard Date() < deadline else {
                Issue.record("only \(committer.queued) of \(writes.count) writes queued in two minutes")
                break
            }
            usleep(1000)
        }
        held.signal()
        group.wait()
        return results.values
    }

    final class LockedResults: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [Result<Any, Error>?]
        init(_ count: Int) { stored = Array(repeating: nil, count: count) }
        func set(_ index: Int, _ result: Result<Any, Error>) { lock.withLock { stored[index] = result } }
        var values: [Result<Any, Error>] { lock.withLock { stored.map { $0 ?? .failure(ClinicError(.internalError, .internalError, "none")) } } }
    }

    @Test func writesQueuedTogetherCommitInOneBatchAndARefusalUndoesOnlyItself() throws {
        let system = try makeSystem()
        let reports = Reports()
        let committer = GroupCommitter(store: try sqliteStore(system), report: reports.add)
        defer { committer.drain() }
        let therapy = try department(system, "LA1", "therapy")
        let patients = try (0..<8).map { try register(system, "patient\($0)") }
        // Eight bookings of distinct slots, one of them twice (the second is refused).
        var writes: [@Sendable () throws -> Any] = patients.enumerated().map { index, patient in
            { try system.appointments.createAppointment(clientId: patient.id ?? 0, departmentId: therapy.id ?? 0,
                                                        at: self.monday(20 * index)) }
        }
        let late = try register(system, "late")
        writes.append { try system.appointments.createAppointment(clientId: late.id ?? 0, departmentId: therapy.id ?? 0,
                                                                  at: self.monday(0), doctorId: nil) }
        let doctors = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)
        let onlyDoctor = doctors.count == 1
        let results = try batchAfterAHeldOne(committer, writes)
        #expect(reports.sizes == [1, writes.count], "the held write alone, then everything that queued meanwhile")
        let successes = results.filter { if case .success = $0 { return true } else { return false } }.count
        let booked = try storedInt(system, "SELECT count(*) FROM appointments") ?? 0
        #expect(booked == successes, "exactly the answered writes are kept")
        #expect(successes >= 8)
        if onlyDoctor {
            #expect(successes == 8)
            if case .failure(let error as ClinicError) = results[8] { #expect(error.code == .slotTaken) } else { Issue.record("not refused") }
        }
        #expect(reports.reports.allSatisfy { $0.committed })
    }

    @Test func aWriteThatSpoilsTheTransactionFailsTheWholeBatchAndKeepsNothing() throws {
        let system = try makeSystem()
        let reports = Reports()
        let committer = GroupCommitter(store: try sqliteStore(system), report: reports.add)
        defer { committer.drain() }
        let therapy = try department(system, "LA1", "therapy")
        let patients = try (0..<3).map { try register(system, "patient\($0)") }
        let before = try fingerprint(system)
        var writes: [@Sendable () throws -> Any] = patients.enumerated().map { index, patient in
            { try system.appointments.createAppointment(clientId: patient.id ?? 0, departmentId: therapy.id ?? 0,
                                                        at: self.monday(20 * index)) }
        }
        writes.append { throw ClinicError(.storage, .storageFailure, "disk I/O error") }
        let results = try batchAfterAHeldOne(committer, writes)
        for result in results {
            guard case .failure(let error as ClinicError) = result else { Issue.record("a member was answered as done"); continue }
            #expect(error.code == .storage)
        }
        #expect(try fingerprint(system) == before)
        #expect(reports.reports.last?.committed == false)
        #expect(reports.reports.last?.failed == writes.count)
    }

    @Test func aLoneWriteIsNotKeptWaitingAndStopRefusesLaterOnes() async throws {
        let system = try makeSystem()
        let committer = GroupCommitter(store: try sqliteStore(system))
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try await committer.perform {
            try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: self.monday(0))
        }
        #expect(booked.id != nil)
        committer.drain()
        await #expect(throws: ClinicError.self) { try await committer.perform { 1 } }
    }
}
