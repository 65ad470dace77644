import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The audit key (issue 23, item 5): a trail from before audit keys still verifies and is
/// keyed from its next row on; a trail rewritten without the key, or stripped of its key
/// marker, is neither adopted nor called sound.
@Suite(.sqliteOnly) struct AuditKeyTests {
    /// Two rows as the program before audit keys wrote them: plain SHA-256, the head in `audit_head`.
    func legacyTrail() throws -> ClinicSystem {
        let system = try makeSystem()
        try system.sqliteFile.writer.write { db in
            var previous = AuditLog.genesis
            for id in Int64(1)...2 {
                let hash = AuditLog.hash(previous: previous, fields: [
                    String(id), "1795000000", "operator", "", "operator", "", "exception.add", "", "", "", "old \(id)"])
                try db.execute(sql: """
                    INSERT INTO audit_events (id, at, actor, role, action, detail, hash)
                    VALUES (?, 1795000000, 'operator', 'operator', 'exception.add', ?, ?)
                    """, arguments: [id, "old \(id)", hash])
                previous = hash
            }
            try db.execute(sql: "INSERT INTO audit_head (id, last_id, hash) VALUES (1, 2, ?)", arguments: [previous])
        }
        return system
    }

    func rows(_ system: ClinicSystem) throws -> [AuditEntry] {
        try system.sqliteFile.read { db in try AuditLog.entries(db, since: Date(timeIntervalSince1970: 0)) }
    }

    func addException(_ system: ClinicSystem, day: Int = 1) async throws {
        let doctor = try #require(try system.sqliteFile.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM doctors ORDER BY id") })
        _ = try await system.departments.addException(doctorId: doctor, day: LocalDateTime(year: 2026, month: 12, day: day)!, hours: nil)
    }

    /// Rewrites `row`'s detail and recomputes plain SHA-256 for every row from `from` on, and the head.
    func rechain(_ system: ClinicSystem, row target: Int64, from: Int64, stripMarker: Bool = false) throws {
        let entries = try rows(system)
        var previous = entries.first { $0.id == from - 1 }?.hash ?? AuditLog.genesis
        var statements: [String] = []
        for entry in entries where entry.id >= from {
            let detail = entry.id == target ? "rewritten" : entry.detail
            var fields = AuditLog.fields(of: entry)
            fields[fields.count - 1] = detail
            let hash = AuditLog.hash(previous: previous, fields: fields)
            statements.append("UPDATE audit_events SET detail = '\(detail)', hash = '\(hash)' WHERE id = \(entry.id)")
            previous = hash
        }
        statements.append("UPDATE audit_head SET hash = '\(previous)' WHERE id = 1")
        if stripMarker { statements.append("DELETE FROM settings WHERE key = 'audit.key_check'") }
        try system.sqliteFile.writer.writeWithoutTransaction { db in
            try db.execute(sql: "DROP TRIGGER audit_events_no_update")
            for statement in statements { try db.execute(sql: statement) }
            try db.execute(sql: """
                CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
                BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END
                """)
        }
    }

    @Test func aTrailFromBeforeAuditKeysStillVerifiesAndIsKeyedFromThenOn() async throws {
        let system = try legacyTrail()
        let before = try system.sqliteFile.check()
        #expect(before.isSound && before.audit.isEmpty, "\(before)")
        #expect(before.auditNote?.key == .auditNotKeyed, "a plain trail is said to be one")
        let plainHashes = try rows(system).map(\.hash)

        try await addException(system)
        let entries = try rows(system)
        #expect(entries.map(\.id) == [1, 2, 3])
        #expect(Array(entries.prefix(2).map(\.hash)) == plainHashes, "the old rows keep their hashes")
        #expect(entries[2].hash != AuditLog.hash(of: entries[2], previous: entries[1].hash), "row 3 is keyed, not plain SHA-256")
        let after = try system.sqliteFile.check()
        #expect(after.isSound && after.auditNote == nil && after.auditKeyProblem == nil, "\(after)")
    }

    @Test func thePlainRowsArePinnedByTheKeysAnchor() async throws {
        let system = try legacyTrail()
        try await addException(system)
        try rechain(system, row: 1, from: 1)
        #expect(try system.sqliteFile.check().audit
                == ["the audit trail up to row 2 was rewritten: it no longer ends in the hash its audit key file recorded"])
    }

    @Test func keyedRowsRechainedPlainFailAtTheFirst() async throws {
        let system = try legacyTrail()
        try await addException(system)
        try await addException(system, day: 2)
        try rechain(system, row: 4, from: 3)
        #expect(try system.sqliteFile.check().audit == ["audit row 3 does not match its hash (edited, or a row before it changed)"])
    }

    /// Stripping the key marker and rechaining plain does not make the trail look never keyed:
    /// the key still exists, the check fails, and the next audited change is refused (changing
    /// nothing) rather than keying the rewritten trail afresh.
    @Test func aTrailStrippedOfItsMarkerIsNotAdopted() async throws {
        let system = try makeSystem()
        try await addException(system)
        try await addException(system, day: 2)
        try rechain(system, row: 1, from: 1, stripMarker: true)
        #expect(try system.sqliteFile.check().audit == ["audit row 1 does not match its hash (edited, or a row before it changed)"])
        let before = try fingerprint(system)
        let refused = await expectError(.keyError) { try await addException(system, day: 3) }
        #expect(refused?.key == .auditKeyMismatch, "\(String(describing: refused))")
        #expect(try fingerprint(system) == before)
    }

    @Test func theExportNamesTheUnreadableRows() async throws {
        let system = try legacyTrail()
        try await addException(system)
        try await system.sqliteFile.writer.writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP TRIGGER audit_events_no_update; UPDATE audit_events SET at = 'x', staff_id = 'y' WHERE id = 2;
                CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
                BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END
                """)
        }
        let export = try system.sqliteFile.read { db in try AuditLog.export(db, since: Date(timeIntervalSince1970: 0)) }
        #expect(export.entries.map(\.id) == [1, 3])
        #expect(export.unreadable == [UnreadableAuditRow(id: 2, column: "at", value: "\"x\"")])
        #expect(export.unreadable.first?.error.message(in: .ru) == "запись аудита 2 не читается: в поле at значение \"x\"")
    }
}

extension AuditKeyTests {
    /// Down past the audit migration and up again: the new, empty trail does not inherit the
    /// dropped trail's key (whose anchor it could never reach); its first row makes a new one.
    @Test func aTrailDroppedByADownMigrationStartsAfreshWhenMigratedUp() async throws {
        let system = try legacyTrail()
        try await addException(system)
        try system.sqliteFile.migrate(to: 9)
        try system.sqliteFile.migrate()
        try await addException(system, day: 2)
        let report = try system.sqliteFile.check()
        #expect(report.isSound && report.audit.isEmpty, "\(report)")
        #expect(try rows(system).map(\.id) == [1])
    }
}
