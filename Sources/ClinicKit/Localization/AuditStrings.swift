/// What each audit action means to the patient whose access log shows it (the web's
/// `/profile/access-log` and `clinic profile access-log`; the API gives the codes), in every language.
extension AuditAction {
    public func text(in language: Language) -> String {
        let (en, ru) = words
        return language == .ru ? ru : en
    }

    /// The words of a stored action code; a code of a version no list knows is shown as it is.
    public static func text(of code: String, in language: Language) -> String {
        AuditAction(rawValue: code)?.text(in: language) ?? code
    }

    private var words: (en: String, ru: String) {
        switch self {
        case .appointmentStatus: ("Changed the appointment's status", "Изменил(а) статус записи")
        case .appointmentBook: ("Booked an appointment", "Записал(а) на приём")
        case .appointmentBookRefused: ("Tried to book (refused)", "Пытался(ась) записать (отказ)")
        case .appointmentCancel: ("Cancelled an appointment", "Отменил(а) запись")
        case .appointmentReschedule: ("Moved an appointment", "Перенёс(ла) запись")
        case .appointmentCheckIn: ("Checked you in", "Отметил(а) ваш приход")
        case .appointmentUndoCheckIn: ("Took back your check-in", "Отменил(а) отметку о вашем приходе")
        case .appointmentStart: ("Started the visit", "Начал(а) приём")
        case .appointmentComplete: ("Completed the visit", "Завершил(а) приём")
        case .appointmentNoShow: ("Marked a no-show", "Отметил(а) неявку")
        case .attachmentAdd: ("Attached a document", "Приложил(а) документ")
        case .attachmentList: ("Saw the list of files", "Видел(а) список файлов")
        case .attachmentOpen: ("Opened a file", "Открыл(а) файл")
        case .attachmentThumbnail: ("Saw a file's preview", "Видел(а) миниатюру файла")
        case .attachmentPurge: ("Deleted the appointment's files and messages after the retention period",
                                "Удалил(а) файлы и сообщения записи по истечении срока хранения")
        case .doctorAdd: ("Added a doctor", "Добавил(а) врача")
        case .doctorDeactivate: ("Deactivated a doctor", "Отключил(а) врача")
        case .exceptionAdd: ("Changed a doctor's hours for a day", "Изменил(а) часы врача на день")
        case .exceptionRemove: ("Took back a change of a doctor's hours", "Отменил(а) изменение часов врача")
        case .holdRelease: ("Released a time you were holding", "Снял(а) удержание выбранного вами времени")
        case .hoursSet: ("Set a doctor's working hours", "Задал(а) часы работы врача")
        case .messageSend: ("Sent you a message", "Отправил(а) вам сообщение")
        case .patientClaimCode: ("Made a code for you to set up your online account", "Выдал(а) код для входа в ваш личный кабинет")
        case .patientRead: ("Saw your name in the schedule", "Видел(а) ваше имя в расписании")
        case .patientRegister: ("Registered you at the front desk", "Зарегистрировал(а) вас в регистратуре")
        case .patientSearch: ("Found you in a search of patients", "Нашёл(ла) вас в поиске пациентов")
        case .staffAdd: ("Added a staff account", "Добавил(а) учётную запись сотрудника")
        case .staffDisable: ("Disabled a staff account", "Отключил(а) учётную запись сотрудника")
        case .threadAnswer: ("Answered a message", "Ответил(а) на сообщение")
        case .threadClose: ("Closed the conversation", "Закрыл(а) переписку")
        case .threadRead: ("Read the messages", "Прочитал(а) сообщения")
        case .visitTypeAdd: ("Added a visit type", "Добавил(а) вид приёма")
        case .visitTypeRemove: ("Removed a visit type", "Удалил(а) вид приёма")
        case .visitTypeUpdate: ("Changed a visit type", "Изменил(а) вид приёма")
        case .waitlistAdd: ("Put you on a waitlist", "Поставил(а) вас в лист ожидания")
        case .waitlistPriority: ("Changed your place on a waitlist", "Изменил(а) ваше место в листе ожидания")
        case .waitlistRemove: ("Took you off a waitlist", "Убрал(а) вас из листа ожидания")
        }
    }
}
