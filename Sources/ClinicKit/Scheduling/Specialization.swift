import Foundation

/// The specializations the demo directory uses, with their display names. A department's
/// `specialization` column holds the key; other keys (from an imported directory) are shown
/// as they are.
public struct Specialization: Sendable, Hashable {
    public let key: String
    public let english: String
    public let russian: String

    public static let all: [Specialization] = [
        .init(key: "therapy", english: "Therapy", russian: "Терапия"),
        .init(key: "cardiology", english: "Cardiology", russian: "Кардиология"),
        .init(key: "surgery", english: "Surgery", russian: "Хирургия"),
        .init(key: "neurology", english: "Neurology", russian: "Неврология"),
        .init(key: "ophthalmology", english: "Ophthalmology", russian: "Офтальмология"),
        .init(key: "pediatrics", english: "Pediatrics", russian: "Педиатрия"),
        .init(key: "pediatric surgery", english: "Pediatric surgery", russian: "Детская хирургия"),
        .init(key: "psychiatry", english: "Psychiatry", russian: "Психиатрия"),
        .init(key: "psychotherapy", english: "Psychotherapy", russian: "Психотерапия"),
        .init(key: "geriatrics", english: "Geriatrics", russian: "Гериатрия"),
        .init(key: "rehabilitation", english: "Rehabilitation", russian: "Реабилитация"),
        .init(key: "orthopedics", english: "Orthopedics", russian: "Ортопедия"),
        .init(key: "oncology", english: "Oncology", russian: "Онкология"),
        .init(key: "gynecology", english: "Gynecology", russian: "Гинекология"),
        .init(key: "obstetrics", english: "Obstetrics", russian: "Акушерство"),
        .init(key: "pulmonology", english: "Pulmonology", russian: "Пульмонология"),
        .init(key: "emergency medicine", english: "Emergency medicine", russian: "Неотложная медицина"),
    ]

    static let byFoldedName: [String: String] = {
        var map: [String: String] = [:]
        for item in all {
            map[Text.fold(item.key)] = item.key
            map[Text.fold(item.english)] = item.key
            map[Text.fold(item.russian)] = item.key
        }
        return map
    }()

    /// The key for a name typed in English or Russian, any case; other names are folded
    /// and kept (a directory may have its own specializations).
    public static func key(for name: String) -> String {
        let folded = Text.fold(name)
        return byFoldedName[folded] ?? folded
    }

    public static func displayName(_ key: String, _ language: Language) -> String {
        guard let item = all.first(where: { $0.key == key }) else { return key }
        return language == .ru ? item.russian : item.english
    }

    /// The demo departments of a clinic of a given directory category.
    public static func demo(forCategory category: String) -> [String] {
        switch category.uppercased() {
        case "GENERAL ACUTE CARE": return ["therapy", "cardiology", "surgery", "neurology", "ophthalmology"]
        case "CRITICAL ACCESS": return ["therapy", "surgery", "emergency medicine"]
        case "CHILDREN": return ["pediatrics", "pediatric surgery"]
        case "PSYCHIATRIC": return ["psychiatry", "psychotherapy"]
        case "LONG TERM CARE": return ["therapy", "geriatrics"]
        case "REHABILITATION": return ["rehabilitation", "neurology", "orthopedics"]
        case "MILITARY": return ["therapy", "surgery", "orthopedics"]
        case "SPECIAL": return ["therapy", "oncology"]
        case "WOMEN": return ["gynecology", "obstetrics"]
        case "CHRONIC DISEASE": return ["therapy", "pulmonology"]
        default: return ["therapy"]
        }
    }
}

extension Specialization {
    /// The key of a specialization some department of the directory has; `not_found` with the
    /// nearest names (in both languages) for one no department has. A search for a name nobody
    /// offers is a typing mistake far more often than a real absence, and an empty answer hides it.
    static func requireKnown(_ name: String, _ tx: any StoreReading) throws -> String {
        let key = key(for: name)
        if try tx.specializationExists(key) { return key }
        throw unknown(name, known: try tx.specializationKeys())
    }

    /// `not_found` for `name`, suggesting the known keys closest to it (at most three).
    static func unknown(_ name: String, known: [String]) -> ClinicError {
        let typed = Text.fold(name)
        func distance(_ key: String) -> Int {
            let item = all.first { $0.key == key }
            let names = [key, item.map { Text.fold($0.english) }, item.map { Text.fold($0.russian) }].compactMap { $0 }
            return names.map { candidate in
                candidate.hasPrefix(typed) || (!typed.isEmpty && candidate.contains(typed)) ? 0 : Text.editDistance(typed, candidate)
            }.min() ?? Int.max
        }
        let ranked = known.map { ($0, distance($0)) }.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
        let close = ranked.filter { $0.1 <= max(2, typed.count / 3) }
        let chosen = (close.isEmpty ? ranked : close).prefix(3).map(\.0)
        // The names are given as keys: the message names them in its reader's language (`{1s}`).
        return ClinicError(.notFound, .specializationUnknown, String(name.prefix(100)), chosen.joined(separator: ","))
    }
}
