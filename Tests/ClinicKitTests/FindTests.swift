import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

@Suite struct FindTests {
    /// A random directory of general and children's hospitals around the U.S. West, with some
    /// cardiology slots already booked, so that the nearest clinic is not always the answer.
    func randomSystem(seed: UInt64) throws -> ClinicSystem {
        var random = SeededGenerator(seed: seed)
        var csv = "external_id,name,city,state,lat,lon,category,is_pediatric,time_zone\n"
        for index in 0..<150 {
            let lat = Double.random(in: 32...42, using: &random), lon = Double.random(in: -124 ... -114, using: &random)
            let children = Int.random(in: 0..<5, using: &random) == 0
            csv += "R\(index),Clinic \(index),Town \(index),CA,\(lat),\(lon),\(children ? "CHILDREN" : "GENERAL ACUTE CARE"),"
                + "\(children ? 1 : 0),America/Los_Angeles\n"
        }
        let database = try SQLiteStore.inMemory(migrations: projectMigrations)
        let system = ClinicSystem(store: database, resources: nil, hasher: fastHasher, now: { testNow })
        _ = try system.clinics.importClinics(Data(csv.utf8), demo: true)
        // Fill every cardiology slot of a third of the clinics for the whole fortnight.
        let cardiology = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, clinic_id FROM departments WHERE specialization = 'cardiology' ORDER BY id")
        }
        for (number, row) in cardiology.enumerated() where number % 3 == 0 {
            let departmentId: Int64 = row["id"]
            let slots = try system.appointments.slots(departmentId: departmentId, from: try TimeInput.parseDay("2026-11-22"), days: 15)
            try database.write { db in
                for slot in slots where slot.isAvailable {
                    try db.execute(sql: """
                        INSERT INTO appointments (client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at, status, notes, created_at, updated_at)
                        VALUES (NULL, ?, ?, ?, ?, ?, ?, 'scheduled', '', 0, 0)
                        """, arguments: [row["clinic_id"] as Int64, departmentId, slot.doctorId, slot.doctorName,
                                         Int64(slot.start.timeIntervalSince1970), Int64(slot.end.timeIntervalSince1970)])
                }
            }
        }
        return system
    }

    /// The reference: every clinic with the specialization, by (distance, id), each asked for
    /// its earliest available slot through the public slots API; the first `limit` that have one.
    func reference(_ system: ClinicSystem, _ point: Coordinate, limit: Int, pediatricOnly: Bool, before: Date) throws -> [(Int64, Date)] {
        let departments = try system.sqliteFile.read { db in
            try Row.fetchAll(db, sql: """
                SELECT d.id, c.id AS clinic_id, c.lat, c.lon, c.is_pediatric FROM departments d JOIN clinics c ON c.id = d.clinic_id
                WHERE d.specialization = 'cardiology'
                """)
        }
        let ranked = departments.compactMap { row -> (Double, Int64, Int64)? in
            if pediatricOnly && !(row["is_pediatric"] as Bool) { return nil }
            guard let where_ = Coordinate(latitude: row["lat"], longitude: row["lon"]) else { return nil }
            return (Geodesy.distance(point, where_), row["clinic_id"], row["id"])
        }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        var result: [(Int64, Date)] = []
        for (_, clinicId, departmentId) in ranked {
            let slots = try system.appointments.slots(departmentId: departmentId, from: try TimeInput.parseDay("2026-11-22"), days: 31)
            if let slot = slots.first(where: { $0.isAvailable && $0.start < before }) {
                result.append((clinicId, slot.start))
                if result.count == limit { break }
            }
        }
        return result
    }

    /// Takes every weekly hour from the doctors of a specialization: they have no slots at all.
    func removeHours(_ system: ClinicSystem, of specialization: String) throws {
        try system.sqliteFile.write { db in
            try db.execute(sql: """
                DELETE FROM working_hours WHERE doctor_id IN (SELECT doctors.id FROM doctors
                JOIN departments ON departments.id = doctors.department_id WHERE specialization = ?)
                """, arguments: [specialization])
        }
    }

    @Test func findEqualsABruteForceReference() async throws {
        let system = try randomSystem(seed: 5)
        var random = SeededGenerator(seed: 6)
        for round in 0..<25 {
            let point = try #require(Coordinate(latitude: .random(in: 31...43, using: &random), longitude: .random(in: -125 ... -113, using: &random)))
            let limit = [1, 3, 5][round % 3]
            let pediatric = round % 4 == 3
            let before = round % 5 == 4 ? utc("2026-11-23T17:00:00Z") : testNow.addingTimeInterval(14 * 86_400)
            // Without the wall clock's budget (tested on its own below): a loaded machine must not
            // cut the walk that is compared here.
            let search = try await system.appointments.searchFreeSlots(specialization: "Кардиология", near: point, before: before,
                                                                       limit: limit, pediatricOnly: pediatric, clinics: system.clinics,
                                                                       budget: SearchBudget(clinics: 10_000, seconds: 600))
            #expect(search.complete, "round \(round)")
            let found = search.slots
            let expected = try reference(system, point, limit: limit, pediatricOnly: pediatric, before: before)
            #expect(found.map(\.clinic.clinic.id) == expected.map { Optional($0.0) }, "round \(round)")
            #expect(found.map(\.slot.start) == expected.map(\.1), "round \(round)")
            #expect(found.allSatisfy { $0.slot.isAvailable && $0.slot.start < before })
            #expect(zip(found, found.dropFirst()).allSatisfy { $0.clinic.distance <= $1.clinic.distance })
        }
    }

    @Test func findChecksItsInputs() async throws {
        let system = try randomSystem(seed: 9)
        let point = try #require(Coordinate(latitude: 36, longitude: -119))
        // A specialization no department has is a mistake to point out, with the nearest names.
        let unknown = await expectError(.notFound) {
            _ = try await system.appointments.findFreeSlots(specialization: "cardiolgy", near: point, clinics: system.clinics)
        }
        #expect(unknown?.key == .specializationUnknown && unknown?.arguments[1].contains("cardiology") == true)
        #expect(unknown?.message(in: .ru).contains("кардиология") == true)
        // A visit longer than any doctor's hours could never be found.
        #expect(await expectError(.invalidInput) {
            _ = try await system.appointments.findFreeSlots(specialization: "cardiology", near: point, minutes: 480, clinics: system.clinics)
        }?.key == .findVisitTooLong)
        #expect(await expectError(.invalidInput) {
            _ = try await system.appointments.findFreeSlots(specialization: "cardiology", near: point, limit: 0, clinics: system.clinics)
        } != nil)
        #expect(await expectError(.invalidInput) {
            _ = try await system.appointments.findFreeSlots(specialization: "cardiology", near: point, before: testNow - 1, clinics: system.clinics)
        } != nil)
    }

    @Test func aFarDeadlineIsCutToAYear() async throws {
        let system = try randomSystem(seed: 3)
        let point = try #require(Coordinate(latitude: 36, longitude: -119))
        // Therapy doctors with no hours at all: without the cut, year 9999 would be walked week by week.
        try removeHours(system, of: "therapy")
        // Clinics without a bound, seconds without one on a loaded machine: the year's cut is what ends the walk.
        let unbounded = SearchBudget(clinics: 10_000, seconds: 600)
        let none = try await system.appointments.searchFreeSlots(specialization: "therapy", near: point, before: .distantFuture,
                                                                 clinics: system.clinics, budget: unbounded)
        #expect(none.complete && none.slots.isEmpty)
        let far = try await system.appointments.searchFreeSlots(specialization: "cardiology", near: point, before: .distantFuture,
                                                                limit: 3, clinics: system.clinics, budget: unbounded).slots
        #expect(far.count == 3 && far.allSatisfy { $0.slot.start < testNow + AppointmentController.findMaximumWindow })
    }

    @Test func aSearchStopsAtItsBudgetAndSaysSo() async throws {
        let system = try randomSystem(seed: 4)
        let point = try #require(Coordinate(latitude: 36, longitude: -119))
        try removeHours(system, of: "therapy")
        let cut = try await system.appointments.searchFreeSlots(specialization: "therapy", near: point, before: .distantFuture,
                                                          clinics: system.clinics, budget: SearchBudget(clinics: 3, seconds: 600))
        #expect(cut.slots.isEmpty && !cut.complete && cut.clinicsExamined == 3)
        let timed = try await system.appointments.searchFreeSlots(specialization: "therapy", near: point, before: .distantFuture,
                                                            clinics: system.clinics, budget: SearchBudget(clinics: 1000, seconds: 0))
        #expect(!timed.complete && timed.clinicsExamined <= 1)
        let whole = try await system.appointments.searchFreeSlots(specialization: "therapy", near: point, clinics: system.clinics,
                                                            budget: SearchBudget(clinics: 1000, seconds: 600))
        #expect(whole.complete && whole.slots.isEmpty && whole.clinicsExamined > 3)
        // Within the standard budget's clinics, the answer is the unbudgeted one (its seconds lifted: a loaded
        // machine's clock is not what this checks).
        let found = try await system.appointments.searchFreeSlots(specialization: "cardiology", near: point, limit: 3, clinics: system.clinics,
                                                                  budget: SearchBudget(clinics: SearchBudget.standard.clinics, seconds: 600))
        #expect(found.complete && found.slots.count == 3)
    }
}
