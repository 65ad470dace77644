import Foundation
import GRDB

/// Deterministic demo departments, doctors and working hours for clinics that have none:
/// the departments follow the clinic's category (`Specialization.demo(forCategory:)`), the
/// doctors' names come from a hash of the clinic's external id, and everyone works Monday to
/// Friday 08:00–12:00 and 13:00–17:00 local time in 20-minute slots. All rows are marked
/// `is_demo = 1`.
public enum DemoDirectory {
    static let firstNames = ["Emily", "James", "Olivia", "Michael", "Sophia", "David", "Ava", "Daniel",
                             "Mia", "Robert", "Grace", "William", "Chloe", "Thomas", "Hannah", "Andrew",
                             "Natalie", "Joseph", "Elena", "Samuel", "Irina", "Alexei", "Maria", "Pavel"]
    static let surnames = ["Carter", "Nguyen", "Patel", "Johnson", "Garcia", "Kim", "Martinez", "Brown",
                           "Davis", "Wilson", "Anderson", "Thompson", "Lee", "Walker", "Hall", "Young",
                           "Lopez", "Hill", "Scott", "Green", "Adams", "Baker", "Novak", "Ivanova",
                           "Petrov", "Sokolova", "Rivera", "Campbell", "Mitchell", "Roberts"]
    static let weekdays = 1...5
    static let intervals = [(8 * 60, 12 * 60), (13 * 60, 17 * 60)]
    public static let slotMinutes = 20

    /// FNV-1a, 64-bit: stable across runs and platforms (Swift's `Hasher` is seeded per process).
    static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    static func doctorName(seed: String) -> String {
        let hash = stableHash(seed)
        let first = firstNames[Int(hash % UInt64(firstNames.count))]
        let last = surnames[Int((hash / 7919) % UInt64(surnames.count))]
        return "\(first) \(last)"
    }

    /// Adds demo data to every clinic without departments. Returns how many clinics got some.
    @discardableResult
    public static func fill(_ db: Database, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let clinics = try Row.fetchAll(db, sql: """
            SELECT id, external_id, category FROM clinics
            WHERE NOT EXISTS (SELECT 1 FROM departments WHERE departments.clinic_id = clinics.id)
            ORDER BY id
            """)
        let insertDepartment = try db.makeStatement(
            sql: "INSERT INTO departments (clinic_id, specialization, is_demo) VALUES (?, ?, 1)")
        let insertDoctor = try db.makeStatement(
            sql: "INSERT INTO doctors (department_id, name, is_demo) VALUES (?, ?, 1)")
        let insertHours = try db.makeStatement(sql: """
            INSERT INTO working_hours (doctor_id, weekday, start_minute, end_minute, slot_minutes)
            VALUES (?, ?, ?, ?, ?)
            """)
        for (number, clinic) in clinics.enumerated() {
            let clinicId: Int64 = try clinic.value("id", in: "clinics")
            let externalId: String = try clinic.value("external_id", in: "clinics")
            let category: String = try clinic.value("category", in: "clinics")
            for specialization in Specialization.demo(forCategory: category) {
                try insertDepartment.execute(arguments: [clinicId, specialization])
                let departmentId = db.lastInsertedRowID
                let doctorCount = (specialization == "therapy" || specialization == "pediatrics") ? 2 : 1
                for index in 0..<doctorCount {
                    try insertDoctor.execute(arguments: [
                        departmentId, doctorName(seed: "\(externalId)/\(specialization)/\(index)")])
                    let doctorId = db.lastInsertedRowID
                    for weekday in weekdays {
                        for (start, end) in intervals {
                            try insertHours.execute(arguments: [doctorId, weekday, start, end, slotMinutes])
                        }
                    }
                }
            }
            if let progress, number % 500 == 0 { progress(number, clinics.count) }
        }
        return clinics.count
    }
}
