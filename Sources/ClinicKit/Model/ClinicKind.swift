import Foundation

/// What kind of hospital a clinic is, from the directory's category (HIFLD's `TYPE`), and
/// whom it serves (issue 55: the top results for an adult were a children's hospital and a
/// transplant service). An unknown category (an imported directory's own words) serves everyone.
public enum ClinicKind: String, Sendable, CaseIterable {
    case general = "GENERAL ACUTE CARE"
    case criticalAccess = "CRITICAL ACCESS"
    case women = "WOMEN"
    case children = "CHILDREN"
    case psychiatric = "PSYCHIATRIC"
    case longTermCare = "LONG TERM CARE"
    case rehabilitation = "REHABILITATION"
    case military = "MILITARY"
    case special = "SPECIAL"
    case chronicDisease = "CHRONIC DISEASE"

    public init?(category: String) {
        self.init(rawValue: category.trimmingCharacters(in: .whitespaces).uppercased())
    }

    /// Whether a patient walks in here for an everyday visit: a general, critical-access or
    /// women's hospital, and a children's one only for a child. The others serve the military
    /// (and veterans), people referred to a psychiatric, long-term, rehabilitation, chronic
    /// disease or specialty service (a transplant centre, a cancer hospital).
    public func servesEveryday(child: Bool) -> Bool {
        switch self {
        case .general, .criticalAccess, .women: true
        case .children: child
        case .psychiatric, .longTermCare, .rehabilitation, .military, .special, .chronicDisease: false
        }
    }

    /// Its name on the results, in the reader's language.
    public func text(_ language: Language) -> String {
        let key: MessageKey = switch self {
        case .general: .kindGeneral
        case .criticalAccess: .kindCriticalAccess
        case .women: .kindWomen
        case .children: .kindChildren
        case .psychiatric: .kindPsychiatric
        case .longTermCare: .kindLongTermCare
        case .rehabilitation: .kindRehabilitation
        case .military: .kindMilitary
        case .special: .kindSpecial
        case .chronicDisease: .kindChronicDisease
        }
        return Strings.text(key, language)
    }
}

extension Clinic {
    /// Its kind; nil for a category the directory's standard does not name.
    public var kind: ClinicKind? { ClinicKind(category: category) }

    /// Whether a patient (a child when `child`) walks in here for an everyday visit.
    public func servesEveryday(child: Bool) -> Bool { kind?.servesEveryday(child: child) ?? true }
}
