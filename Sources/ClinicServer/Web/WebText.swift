import ClinicKit

/// The web app's labels, English and Russian, as the templates read them (`{{t.key}}`). The
/// messages of errors and of the library's results come from ClinicKit's `Strings`.
enum WebText {
    static func labels(_ language: Language) -> [String: String] { language == .ru ? ru : en }

    static let en: [String: String] = [
        "title": "Clinic appointments", "skip": "Skip to the content", "language": "Language",
        "start": "Find a clinic near you and book an appointment.", "login": "Log in", "register": "Register",
        "logout": "Log out", "loginField": "Login", "password": "Password", "passwordAgain": "Password again",
        "name": "First name", "surname": "Surname", "street": "Street", "house": "House", "city": "City",
        "cityHint": "A city, optionally with its state: Springfield, IL", "acceptPrivacy": "I accept the privacy policy",
        "privacy": "Privacy policy", "menu": "Menu", "nearest": "Nearest clinics", "nearestToMe": "Nearest to my address",
        "address": "Address, city or ZIP code", "clinicAddress": "Address", "search": "Search", "useLocation": "Use my location",
        "map": "Map of clinics", "list": "Clinics by distance", "distance": "Distance", "pediatric": "Pediatric only",
        "hospital": "Hospitals only", "specialization": "Specialization", "any": "Any", "filter": "Filter",
        "clinic": "Clinic", "phone": "Phone", "localTime": "Local time", "timeZone": "Time zone",
        "departments": "Departments", "doctors": "Doctors", "book": "Book", "bookHere": "Book here",
        "department": "Department", "visitType": "Visit type", "day": "Day", "time": "Time", "confirm": "Confirm",
        "next": "Next", "freeTimes": "Free times", "noFreeTimes": "No free time that day.", "appointments": "My appointments",
        "upcoming": "Upcoming", "past": "Past and cancelled", "none": "None.", "when": "When", "doctor": "Doctor",
        "status": "Status", "history": "History", "reschedule": "Reschedule", "cancel": "Cancel the appointment",
        "cancelConfirm": "Yes, cancel it", "cancelQuestion": "Cancel this appointment? The time becomes free for others.",
        "back": "Back", "messages": "Messages", "unread": "unread", "profile": "Profile", "find": "Earliest free slot",
        "findHint": "The nearest clinics with a free slot for a specialization.", "chooseCity": "Which one do you mean?",
        "staff": "Clinic staff", "staffDay": "The day at the clinic", "patient": "Patient", "checkIn": "Check in",
        "noShow": "No-show", "complete": "Complete", "reason": "Reason", "previousDay": "Previous day", "nextDay": "Next day",
        "addToCalendar": "Add to calendar", "nearestHighlighted": "Nearest", "downloadData": "Download my data",
        "sessions": "Signed-in devices", "show": "Show", "km": "km", "save": "Save", "oldPassword": "Current password",
        "newPassword": "New password", "changePassword": "Change the password", "deleteAccount": "Delete my account",
        "deleteWarning": "Your personal data and sessions are deleted at once; your appointments stay with the clinic without your name.",
        "signOut": "Sign out", "thisDevice": "this device", "email": "E-mail", "lastUsed": "Last used",
        "noResults": "No free slot found.", "csrf": "The form has expired: reload the page and try again."
    ]

    static let ru: [String: String] = [
        "title": "Запись к врачу", "skip": "К содержимому", "language": "Язык",
        "start": "Найдите клинику рядом и запишитесь на приём.", "login": "Войти", "register": "Регистрация",
        "logout": "Выйти", "loginField": "Логин", "password": "Пароль", "passwordAgain": "Пароль ещё раз",
        "name": "Имя", "surname": "Фамилия", "street": "Улица", "house": "Дом", "city": "Город",
        "cityHint": "Город, можно со штатом: Springfield, IL", "acceptPrivacy": "Я принимаю политику конфиденциальности",
        "privacy": "Политика конфиденциальности", "menu": "Меню", "nearest": "Ближайшие клиники",
        "nearestToMe": "Ближайшие к моему адресу", "address": "Адрес, город или индекс", "clinicAddress": "Адрес", "search": "Найти",
        "useLocation": "По моему местоположению", "map": "Карта клиник", "list": "Клиники по расстоянию",
        "distance": "Расстояние", "pediatric": "Только детские", "hospital": "Только больницы",
        "specialization": "Специализация", "any": "Любая", "filter": "Показать", "clinic": "Клиника", "phone": "Телефон",
        "localTime": "Местное время", "timeZone": "Часовой пояс", "departments": "Отделения", "doctors": "Врачи",
        "book": "Записаться", "bookHere": "Записаться сюда", "department": "Отделение", "visitType": "Вид приёма",
        "day": "День", "time": "Время", "confirm": "Подтвердить", "next": "Далее", "freeTimes": "Свободное время",
        "noFreeTimes": "В этот день свободного времени нет.", "appointments": "Мои записи", "upcoming": "Предстоящие",
        "past": "Прошедшие и отменённые", "none": "Нет.", "when": "Когда", "doctor": "Врач", "status": "Состояние",
        "history": "История", "reschedule": "Перенести", "cancel": "Отменить запись", "cancelConfirm": "Да, отменить",
        "cancelQuestion": "Отменить эту запись? Время станет свободным для других.", "back": "Назад",
        "messages": "Сообщения", "unread": "не прочитано", "profile": "Профиль", "find": "Ближайшее свободное время",
        "findHint": "Ближайшие клиники со свободным временем по специализации.", "chooseCity": "Какой из них?",
        "staff": "Сотрудникам клиники", "staffDay": "День в клинике", "patient": "Пациент", "checkIn": "Пациент пришёл",
        "noShow": "Неявка", "complete": "Приём окончен", "reason": "Причина", "previousDay": "Предыдущий день",
        "nextDay": "Следующий день", "addToCalendar": "Добавить в календарь", "nearestHighlighted": "Ближайшая",
        "downloadData": "Скачать мои данные", "sessions": "Устройства со входом", "show": "Показать", "km": "км",
        "save": "Сохранить", "oldPassword": "Текущий пароль", "newPassword": "Новый пароль", "changePassword": "Сменить пароль",
        "deleteAccount": "Удалить учётную запись",
        "deleteWarning": "Личные данные и сеансы удаляются сразу; записи остаются в архиве клиники без вашего имени.",
        "signOut": "Выйти", "thisDevice": "это устройство", "email": "Эл. почта", "lastUsed": "Последний вход",
        "noResults": "Свободного времени не найдено.", "csrf": "Форма устарела: обновите страницу и попробуйте снова."
    ]
}
