import Foundation

/// The privacy policy a patient accepts when registering. Its version is stored with the
/// consent, so a new version can ask again.
public enum PrivacyPolicy {
    /// 2: says how to export, correct and delete your data. 3: clinic staff see your name
    /// for your appointments at their clinic; every such read and change is logged, and you
    /// can read that log. 4: an e-mail address (optional, encrypted), what is e-mailed, the
    /// inbox, and the private calendar address. 5: a mobile number (optional, encrypted) and what
    /// is texted.
    public static let version = 5

    public static func text(_ language: Language) -> String {
        Strings.text(.privacyPolicy, language, [String(version)])
    }
}
