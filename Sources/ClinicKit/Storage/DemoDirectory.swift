import Foundation

/// Deterministic demo departments, doctors and working hours for clinics that have none:
/// the departments follow the clinic's category (`Specialization.demo(forCategory:)`), the
/// doctors' names come from a hash of the clinic's external id, and everyone works Monday to
/// Friday 08:00–12:00 and 13:00–17:00 local time in 20-minute slots. All rows are marked
/// `is_demo = 1`.
public enum DemoDirectory {
    static let firstNames = ["Emily", "James", "Olivia", "Michael", "Sophia", "David", "Ava", "Daniel",
                             "Mia", "Robert", "Grace", "William", "Chloe", "Thomas", "Hannah", "Andrew",
                             "Natalie", "Joseph", "Elena", "Samuel", "Irina", "Alexei", "Maria", "Pavel"]
    /// The women's names of `firstNames`: a Russian surname agrees with them ("Elena Sokolova",
    /// "James Sokolov").
    static let feminine: Set<String> = ["Emily", "Olivia", "Sophia", "Ava", "Mia", "Grace", "Chloe", "Hannah", "Natalie",
                                        "Elena", "Irina", "Maria"]
    /// Each surname as a man's and as a woman's (the same but for the Russian ones).
    static let surnames: [(man: String, woman: String)] = [
        "Carter", "Nguyen", "Patel", "Johnson", "Garcia", "Kim", "Martinez", "Brown", "Davis", "Wilson", "Anderson", "Thompson",
        "Lee", "Walker", "Hall", "Young", "Lopez", "Hill", "Scott", "Green", "Adams", "Baker", "Novak",
    ].map { ($0, $0) } + [("Ivanov", "Ivanova"), ("Petrov", "Petrova"), ("Sokolov", "Sokolova")]
        + ["Rivera", "Campbell", "Mitchell", "Roberts"].map { ($0, $0) }
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
        return "\(first) \(feminine.contains(first) ? last.woman : last.man)"
    }

    /// The weekly hours every demo doctor works.
    static var demoHours: [WorkingHours] {
        weekdays.flatMap { weekday in
            intervals.map { start, end in
                WorkingHours(id: nil, doctorId: 0, weekday: weekday, startMinute: start, endMinute: end, slotMinutes: slotMinutes)
            }
        }
    }

    /// Adds demo data to every clinic without departments. Returns how many clinics got some.
    /// The rows go in by the kind, 500 clinics at a time (a store may write each kind of a
    /// chunk in one statement); their ids are those of inserting clinic by clinic.
    @discardableResult
    public static func fill(_ tx: any StoreWriting, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let clinics = try tx.clinicsWithoutDepartments()
        let hours = demoHours
        var done = 0
        for chunk in stride(from: 0, to: clinics.count, by: 500).map({ clinics[$0..<min($0 + 500, clinics.count)] }) {
            var departments: [Department] = [], doctorSeeds: [(department: Int, name: String)] = []
            for clinic in chunk {
                for specialization in Specialization.demo(forCategory: clinic.category) {
                    let doctorCount = (specialization == "therapy" || specialization == "pediatrics") ? 2 : 1
                    for index in 0..<doctorCount {
                        doctorSeeds.append((departments.count, doctorName(seed: "\(clinic.externalId)/\(specialization)/\(index)")))
                    }
                    departments.append(Department(id: nil, clinicId: clinic.id ?? 0, specialization: specialization, isDemo: true))
                }
            }
            let departmentIds = try tx.insertDepartments(departments)
            let doctorIds = try tx.insertDoctors(doctorSeeds.map { seed in
                Doctor(id: nil, departmentId: departmentIds[seed.department], name: seed.name, isDemo: true)
            })
            try tx.insertWorkingHours(hours, ofDoctors: doctorIds)
            done += chunk.count
            progress?(done, clinics.count)
        }
        return clinics.count
    }
}
