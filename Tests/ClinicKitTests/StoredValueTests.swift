import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// Stored values of another type than their columns' (issue 23, item 6): every model reads
/// each column with a throwing decode. A column read through GRDB's subscript would trap and
/// take this test process down with it.
@Suite struct StoredValueTests {
    let monday0920 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)

    @Test(.sqliteOnly) func everyColumnOfEveryModelIsReportedNeverTrapped() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        _ = try system.appointments.cancelAppointment(booked.id ?? 0, clientId: anna.id ?? 0)

        let readers: [(table: String, read: (Row) throws -> Void)] = [
            ("clients", { _ = try Client(row: $0) }), ("clinics", { _ = try Clinic(row: $0) }),
            ("departments", { _ = try Department(row: $0) }), ("doctors", { _ = try Doctor(row: $0) }),
            ("working_hours", { _ = try WorkingHours(row: $0) }), ("appointments", { _ = try Appointment(row: $0) }),
            ("appointment_events", { _ = try AppointmentEvent(row: $0) }), ("messages", { _ = try InboxMessage(row: $0) }),
        ]
        let mustReport: [String: Set<String>] = [
            "clients": ["id", "login", "password_hash", "lat", "preferred_language", "privacy_accepted_at", "created_at"],
            "clinics": ["id", "name", "lat", "lon", "is_pediatric", "time_zone"],
            "departments": ["id", "clinic_id", "specialization", "is_demo"], "doctors": ["id", "department_id", "name", "is_active"],
            "working_hours": ["id", "doctor_id", "weekday", "start_minute", "end_minute", "slot_minutes"],
            "appointments": ["id", "client_id", "starts_at", "ends_at", "status", "created_at", "updated_at"],
            "appointment_events": ["id", "appointment_id", "event", "at", "starts_at"],
            "messages": ["id", "kind", "subject", "body", "created_at", "read_at"],
        ]
        // Text where a number belongs, a number where text belongs, bytes where neither.
        let wrong: [DatabaseValue] = ["x".databaseValue, 7.databaseValue, Data([1, 2]).databaseValue]
        for (table, read) in readers {
            let row = try #require(try system.sqliteFile.read { db in try Row.fetchOne(db, sql: "SELECT * FROM \(table) LIMIT 1") },
                                   "no row in \(table)")
            try read(row)
            let id = (row["id"] as DatabaseValue).description
            var reported: Set<String> = []
            for column in row.columnNames {
                for value in wrong {
                    let edited = Row(Dictionary(uniqueKeysWithValues: row.map { ($0.0, $0.0 == column ? value : $0.1) }))
                    do {
                        try read(edited)
                    } catch let error as ClinicError {
                        #expect(error.code == .storage, "\(table).\(column) = \(value): \(error)")
                        if error.key == .storedValueUnreadable {
                            let expectedId = column == "id" ? value.description : id
                            #expect(error.arguments == ["\(table).\(column)", "id \(expectedId)"], "\(error)")
                            reported.insert(column)
                        }
                    }
                }
            }
            // Columns a model does not read (`clients.personal`, opened elsewhere) take any value.
            #expect(mustReport[table, default: ["id"]].isSubset(of: reported), "\(table): \(reported.sorted())")
        }
    }

    @Test func theMessageNamesTheColumnAndTheRowInBothLanguages() {
        let error = ClinicError(.storage, .storedValueUnreadable, "clinics.lat", "id 3")
        #expect(error.message(in: .en).hasPrefix("A stored value cannot be read: clinics.lat in row id 3"))
        #expect(error.message(in: .ru).hasPrefix("Сохранённое значение не читается: clinics.lat в строке id 3"))
        #expect(error.code == .storage)
    }
}
