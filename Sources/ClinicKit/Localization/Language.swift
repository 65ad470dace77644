import Foundation

public enum Language: String, Sendable, CaseIterable, Codable {
    case en
    case ru

    /// The language from the environment when none was chosen explicitly:
    /// `CLINIC_LANG`, then `LC_ALL`, then `LANG`, then English.
    public static func fromEnvironment(_ environment: [String: String]) -> Language {
        for name in ["CLINIC_LANG", "LC_ALL", "LANG"] {
            guard let value = environment[name], !value.isEmpty else { continue }
            let prefix = value.lowercased().prefix(2)
            if let language = Language(rawValue: String(prefix)) { return language }
            if name == "CLINIC_LANG" { continue }
            // LC_ALL/LANG set to another language ("de_DE.UTF-8", "C"): English.
            return .en
        }
        return .en
    }

    public var locale: Locale {
        switch self {
        case .en: return Locale(identifier: "en_US")
        case .ru: return Locale(identifier: "ru_RU")
        }
    }
}
