import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The audit trail (migration 10): appended with what it records, append-only, hash-chained,
/// and what a patient reads of it.
@Suite struct AuditTests {
    let monday0920 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)

    /// A system with an operator's status change and exception add and remove: three rows.
    func audited() async throws -> (ClinicSystem, Client, Appointment) {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        _ = try await system.appointments.setStatus(booked.id ?? 0, to: .confirmed)
        let exception = try await system.departments.addException(doctorId: booked.doctorId, day: LocalDateTime(year: 2026, month: 12, day: 1)!,
                                                            hours: nil)
        try await system.departments.removeException(exception.exception.id ?? 0)
        return (system, anna, booked)
    }

    func problems(_ system: ClinicSystem) throws -> [String] { try system.auditCheck().broken }

    /// Runs SQL the way someone with `sqlite3` and the file would: around the triggers (put back
    /// as they were, so that only the chain can tell).
    func tamper(_ system: ClinicSystem, _ sql: String) throws {
        try system.sqliteFile.writer.writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete;
                \(sql);
                CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
                BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;
                CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
                BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;
                """)
        }
    }

    @Test func operatorChangesAreRecordedAndThePatientSeesThem() async throws {
        let (system, anna, booked) = try await audited()
        let rows = try system.database.reading { tx in try AuditLog.entries(tx, since: Date(timeIntervalSince1970: 0)) }
        #expect(rows.map(\.action) == ["appointment.status", "exception.add", "exception.remove"])
        #expect(rows.map(\.id) == [1, 2, 3])
        #expect(rows.allSatisfy { $0.actor == "operator" && $0.role == "operator" && $0.clinicId == booked.clinicId })
        #expect(rows[0].clientId == anna.id && rows[0].appointmentId == booked.id && rows[0].detail == "scheduled -> confirmed")
        let log = try await system.clients.accessLog(clientId: anna.id ?? 0)
        #expect(log.map(\.action) == ["appointment.status"], "the exception rows name no patient")
        #expect(try await system.clients.accessLog(clientId: (anna.id ?? 0) + 100).isEmpty)
        #expect(try problems(system).isEmpty)
        #expect(try auditIsSound(system))
        // Absent values are null, never missing keys (the API's contract requires every key).
        let exported = String(decoding: try Shapes.encoder(pretty: false).encode(AuditEventJSON(rows[1])), as: UTF8.self)
        #expect(exported.contains("\"clientId\":null") && exported.contains("\"requestId\":null"), "\(exported)")
    }

    @Test func aRefusedChangeLeavesNoRow() async throws {
        let (system, _, booked) = try await audited()
        #expect(await expectError(.invalidTransition) { _ = try await system.appointments.setStatus(booked.id ?? 0, to: .scheduled) } != nil)
        #expect(try auditRowCount(system) == 3)
    }

    @Test(.sqliteOnly) func theTableRefusesUpdatesAndDeletes() async throws {
        let (system, _, _) = try await audited()
        #expect(throws: (any Error).self) {
            try system.sqliteFile.writer.write { db in try db.execute(sql: "UPDATE audit_events SET detail = 'x' WHERE id = 1") }
        }
        #expect(throws: (any Error).self) {
            try system.sqliteFile.writer.write { db in try db.execute(sql: "DELETE FROM audit_events WHERE id = 3") }
        }
        #expect(try problems(system).isEmpty)
    }

    @Test(.sqliteOnly) func anEditedRowBreaksTheChain() async throws {
        let (system, _, _) = try await audited()
        try tamper(system, "UPDATE audit_events SET detail = 'scheduled -> cancelled' WHERE id = 1")
        #expect(try problems(system) == ["audit row 1 does not match its hash (edited, or a row before it changed)"])
        #expect(try !system.sqliteFile.check().isSound)
    }

    @Test(.sqliteOnly) func anEditWithARecomputedOwnHashBreaksTheRow() async throws {
        let (system, _, _) = try await audited()
        // The editor recomputes row 1's hash with SHA-256, as the chain was before audit keys;
        // row 1 is keyed, so it no longer matches itself (nor would row 2, chained on the old one).
        let original = try system.sqliteFile.read { db in try AuditLog.entries(db, since: Date(timeIntervalSince1970: 0)) }[0]
        let forged = AuditLog.hash(previous: AuditLog.genesis, fields: [
            "1", String(Int64(original.at.timeIntervalSince1970)), "operator", "", "operator",
            original.clinicId.map(String.init) ?? "", original.action, original.clientId.map(String.init) ?? "",
            original.appointmentId.map(String.init) ?? "", "", "scheduled -> cancelled"])
        try tamper(system, "UPDATE audit_events SET detail = 'scheduled -> cancelled', hash = '\(forged)' WHERE id = 1")
        #expect(try problems(system) == ["audit row 1 does not match its hash (edited, or a row before it changed)"])
    }

    @Test(.sqliteOnly) func aDeletedRowBreaksTheChain() async throws {
        let (system, _, _) = try await audited()
        try tamper(system, "DELETE FROM audit_events WHERE id = 2")
        #expect(try problems(system) == ["audit row 2 is missing (the next is 3)"])
    }

    @Test(.sqliteOnly) func reorderedRowsBreakTheChain() async throws {
        let (system, _, _) = try await audited()
        try tamper(system, "UPDATE audit_events SET id = -1 WHERE id = 1; UPDATE audit_events SET id = 1 WHERE id = 2; UPDATE audit_events SET id = 2 WHERE id = -1")
        #expect(try problems(system) == ["audit row 1 does not match its hash (edited, or a row before it changed)"])
    }

    @Test(.sqliteOnly) func aCutTailDoesNotMatchTheHead() async throws {
        let (system, _, _) = try await audited()
        try tamper(system, "DELETE FROM audit_events WHERE id = 3")
        #expect(try problems(system) == ["the audit trail ends at row 2 but its head says 3 (rows cut from the end)"])
    }

    /// What someone with the file but not the audit key does after rewriting row 1: drops the
    /// triggers, recomputes every row's SHA-256 from there on and the head, puts the triggers
    /// back. The schema is as it was and every hash is one SHA-256 would give.
    func rechain(_ system: ClinicSystem, rewritingRow1Detail detail: String) throws {
        let rows = try system.sqliteFile.read { db in try AuditLog.entries(db, since: Date(timeIntervalSince1970: 0)) }
        var previous = AuditLog.genesis
        var statements: [String] = []
        for row in rows {
            let text = row.id == 1 ? detail : row.detail
            let hash = AuditLog.hash(previous: previous, fields: [
                String(row.id), String(Int64(row.at.timeIntervalSince1970)), row.actor, row.staffId.map(String.init) ?? "",
                row.role, row.clinicId.map(String.init) ?? "", row.action, row.clientId.map(String.init) ?? "",
                row.appointmentId.map(String.init) ?? "", row.requestId ?? "", text])
            statements.append("UPDATE audit_events SET detail = '\(text)', hash = '\(hash)' WHERE id = \(row.id)")
            previous = hash
        }
        statements.append("UPDATE audit_head SET hash = '\(previous)' WHERE id = 1")
        try tamper(system, statements.joined(separator: "; "))
    }

    /// Issue 23, item 5: the chain is keyed, so a trail recomputed with plain SHA-256 (all of
    /// it, head included, triggers as they were) no longer passes.
    @Test(.sqliteOnly) func aTrailRechainedWithoutTheKeyFailsTheCheck() async throws {
        let (system, _, _) = try await audited()
        #expect(try problems(system).isEmpty)
        try rechain(system, rewritingRow1Detail: "scheduled -> cancelled")
        #expect(try system.sqliteFile.read { db in try AuditLog.entries(db, since: Date(timeIntervalSince1970: 0)) }[0].detail
                == "scheduled -> cancelled", "the rewrite took")
        #expect(try problems(system) == ["audit row 1 does not match its hash (edited, or a row before it changed)"])
        #expect(try !system.sqliteFile.check().isSound)
    }

    /// Issue 23, item 6: a row whose `at` was edited to text is skipped by the patient's log
    /// and the export, and named by the check, instead of trapping in GRDB's subscript.
    @Test(.sqliteOnly) func aRowEditedToAnUnreadableValueIsReportedNotATrap() async throws {
        let (system, anna, _) = try await audited()
        try tamper(system, "UPDATE audit_events SET at = 'x' WHERE id = 1")
        #expect(try await system.clients.accessLog(clientId: anna.id ?? 0).isEmpty, "anna's one row cannot be read")
        #expect(try system.sqliteFile.read { db in try AuditLog.entries(db, since: Date(timeIntervalSince1970: 0)) }.map(\.id) == [2, 3])
        #expect(try problems(system) == ["audit row 1 cannot be read: its at is \"x\""])
        #expect(try !system.sqliteFile.check().isSound)
    }

    /// After a verified chain, new rows keep chaining on (the head is read, not recounted).
    @Test func theChainGoesOnAfterManyRows() async throws {
        let (system, _, booked) = try await audited()
        _ = try await system.appointments.setStatus(booked.id ?? 0, to: .cancelled)
        let day = LocalDateTime(year: 2026, month: 12, day: 2)!
        for offset in 0..<20 {
            let exception = try await system.departments.addException(doctorId: booked.doctorId, day: day.adding(days: offset), hours: nil)
            if offset % 2 == 0 { try await system.departments.removeException(exception.exception.id ?? 0) }
        }
        #expect(try auditRowCount(system) == 34)
        #expect(try problems(system).isEmpty)
    }
}
