import Foundation

/// The privacy policy a patient accepts when registering. Its version is stored with the
/// consent, so a new version can ask again.
public enum PrivacyPolicy {
    /// 2: says how to export, correct and delete your data.
    public static let version = 2

    public static func text(_ language: Language) -> String {
        Strings.text(.privacyPolicy, language, [String(version)])
    }
}
