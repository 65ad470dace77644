import Foundation

/// The privacy policy a patient accepts when registering. Its version is stored with the
/// consent, so a new version can ask again.
public enum PrivacyPolicy {
    public static let version = 1

    public static func text(_ language: Language) -> String {
        Strings.text(.privacyPolicy, language, [String(version)])
    }
}
