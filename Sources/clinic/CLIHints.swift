import ClinicKit

/// What the command line adds to a refusal: the option or command that does what the message
/// asks. ClinicKit's messages name no option, since the API and the web app say them too; this
/// is the CLI's own wording, added where it reports an error (`Entry.report`).
enum CLIHints {
    static func hint(_ key: MessageKey, _ language: Language) -> String? {
        guard let pair = hints[key] else { return nil }
        return language == .ru ? pair.ru : pair.en
    }

    static let hints: [MessageKey: (en: String, ru: String)] = [
        .notLoggedIn: ("Run: clinic login --login LOGIN", "Выполните: clinic login --login ЛОГИН"),
        .staffNotLoggedIn: ("Log in with: clinic staff login", "Войдите: clinic staff login"),
        .privacyChanged: ("Read it with 'clinic privacy', then log in with --accept-privacy.",
                          "Прочитайте её ('clinic privacy') и войдите с --accept-privacy."),
        .privacyRequired: ("Add --accept-privacy; read it with: clinic privacy", "Добавьте --accept-privacy; прочитать: clinic privacy"),
        .staffDoctorRequired: ("Name it with --doctor.", "Укажите его в --doctor."),
        .staffReasonRequired: ("Give it with --reason.", "Укажите её в --reason."),
        .slotOutsideHours: ("See: clinic doctors DEPARTMENT_ID", "См.: clinic doctors ID_ОТДЕЛЕНИЯ"),
        .daysRange: ("(--days)", "(--days)"),
        .exceptionInvalid: ("Use --off, or --from and --to with --slot.", "Используйте --off или --from и --to с --slot."),
        .beforeInPast: ("(--before)", "(--before)"),
        .locationChoice: ("Use --lat and --lon, --at, --address or --me.", "Используйте --lat и --lon, --at, --address или --me."),
        .noHomeCoordinates: ("Use --address or --lat/--lon.", "Используйте --address или --lat/--lon."),
        .emailCodeWrong: ("Ask with 'clinic profile email set ADDRESS'.", "Запросите: 'clinic profile email set АДРЕС'."),
        .emailNoPending: ("Use 'clinic profile email set ADDRESS'.", "Используйте 'clinic profile email set АДРЕС'."),
        .auditKeyMismatch: ("Run: clinic admin check", "Запустите: clinic admin check"),
        .auditRowsUnreadable: ("Run: clinic admin check", "Запустите: clinic admin check"),
        .staffMessageTarget: ("Use --patient LOGIN or --date DAY.", "Используйте --patient ЛОГИН или --date ДЕНЬ."),
    ]
}
