import Foundation

/// Accounts, sessions, passwords and privacy.
extension Strings {
    static let accountEN: [MessageKey: String] = [
        .sessionFileLink: "The session file {0} is a symbolic link; refused. Remove it and log in again.",
        .sessionFileUnwritable: "Cannot write the session file {0}.",
        .sessionFileInsecure: "The session file {0} can be read by other users. Fix it with: chmod 600 {0}",
        .notLoggedIn: "You are not logged in.",
        .invalidCredentials: "Wrong login or password.",
        .loginInvalid: "The login must be 3 to 64 letters, digits or the characters . _ - @.",
        .fieldEmpty: "The {0f} must not be empty.",
        .fieldLettersOnly: "The {0f} may contain only letters, spaces, hyphens and apostrophes (at most 100).",
        .streetInvalid: "The street must be 1 to 100 characters and contain a letter.",
        .houseInvalid: "The house number must start with a digit, like 12, 12A or 12/3.",
        .cityUnknown: "The city '{0}' is not known (neither the gazetteer nor the clinic directory has it). Check the spelling, or add the state or country: 'Portland, ME'.",
        .passwordsDiffer: "The two passwords differ.",
        .passwordTooShort: "The password is too weak: it must have at least {0} characters.",
        .passwordRules: "At least {0} characters, not one of the most common passwords, and without your login or name.",
        .passwordTooLong: "The password is too long: at most {1} characters.",
        .passwordContainsName: "The password is too weak: it must not contain your name or surname.",
        .passwordCommon: "The password is too weak: it is one of the most common passwords. A few unrelated words make a strong one.",
        .accountLocked: "Too many failed log-ins for this login: try again after {0} (in {1} min).",
        .privacyChanged: "The privacy policy has changed (version {0}) since you accepted it. Read it, and accept it to log in.",
        .passwordChanged: "Password changed; your other sessions have ended.",
        .accountDeleted: "Account {0} deleted. Your appointments stay in the clinic's records without your personal data.",
        .passwordContainsLogin: "The password is too weak: it must not contain the login.",
        .privacyRequired: "Registration needs your consent to the privacy policy.",
        .loginTaken: "The login '{0}' is taken.",
        .clientNotFound: "There is no patient {0}.",
        .privacyPolicy: """
            Privacy policy (version {0})

            What we store: your login; a salted Argon2id hash of your password (never the password);
            your name, surname and address (street, house, city) and the coordinates found for it;
            your home clinic, language and the time you accepted this policy; your appointments
            and sessions (only a SHA-256 of each session token); your messages from the clinics;
            an e-mail address and a mobile number, only if you give them.

            Why: to identify you, to find the clinics nearest to you and to book, reschedule and
            cancel your appointments, and to tell you about them. Your name, surname, street, house,
            coordinates and e-mail address are stored encrypted. Nothing is sent anywhere, except
            your city to a geocoding service if the operator has configured one, and e-mail: once
            you confirm an address (with a code sent to it), every message in your inbox (a booking,
            a change, a cancellation with the clinic's reason, a reminder 24 and 2 hours before, a
            note from clinic staff) is also e-mailed to it through the operator's mail server, with
            the appointment's calendar file attached; the mail servers on the way keep copies.
            A mobile number, only if you give one (stored encrypted): once you confirm it (with a
            code sent to it by text), reminders, a clinic's cancellations and times freed from the
            waitlist are also texted to it through the operator's SMS gateway and phone network,
            as you choose; a text says only the clinic's name, the time and a link. Reply STOP to
            any text to stop them.
            Your private calendar address lets anyone who has it read your appointments: rotate or
            revoke it with 'clinic profile calendar-url'. The operator's backups hold copies of the database.
            A login name typed at a failed log-in is kept for 15 minutes to stop password guessing.

            How long: as long as your account exists. Sessions end after 30 days without use.
            Cancelled and past appointments stay in the clinic's records.

            Who sees it: staff of a clinic where you have an appointment (receptionists, the
            clinic's administrators, and your doctor for their own appointments) see your name
            and login on that clinic's schedule. Every time staff read your data or change your
            appointments, who did it and when is recorded; read that record with
            'clinic profile access-log'. Staff of other clinics see nothing about you.

            Your control: see everything stored about you with 'clinic profile export' (JSON);
            correct it with 'clinic profile edit'; delete your account with 'clinic profile delete'
            (your personal data and sessions go at once; your appointments stay in the clinic's
            records without your name or notes, and your login becomes free). The interactive
            session ('clinic') offers the same under Profile.
            """,
    ]

    static let accountRU: [MessageKey: String] = [
        .sessionFileLink: "Файл сеанса {0} — символическая ссылка; отказано. Удалите её и войдите снова.",
        .sessionFileUnwritable: "Не удаётся записать файл сеанса {0}.",
        .sessionFileInsecure: "Файл сеанса {0} доступен для чтения другим пользователям. Исправьте: chmod 600 {0}",
        .notLoggedIn: "Вы не вошли.",
        .invalidCredentials: "Неверный логин или пароль.",
        .loginInvalid: "Логин — от 3 до 64 букв, цифр или символов . _ - @.",
        .fieldEmpty: "Поле «{0f}» не может быть пустым.",
        .fieldLettersOnly: "Поле «{0f}» может содержать только буквы, пробелы, дефисы и апострофы (не более 100).",
        .streetInvalid: "Улица — от 1 до 100 символов, хотя бы одна буква.",
        .houseInvalid: "Номер дома должен начинаться с цифры: 12, 12А или 12/3.",
        .cityUnknown: "Город '{0}' неизвестен (его нет ни в справочнике мест, ни в справочнике клиник). Проверьте написание или добавьте штат или страну: 'Portland, ME'.",
        .passwordsDiffer: "Пароли не совпадают.",
        .passwordTooShort: "Слишком слабый пароль: нужно не меньше {0} символов.",
        .passwordRules: "Не короче {0} символов, не из самых распространённых и без вашего логина и имени.",
        .passwordTooLong: "Слишком длинный пароль: не больше {1} символов.",
        .passwordContainsName: "Слишком слабый пароль: он не должен содержать ваше имя или фамилию.",
        .passwordCommon: "Слишком слабый пароль: он из числа самых распространённых. Несколько не связанных слов — хороший пароль.",
        .accountLocked: "Слишком много неудачных входов под этим логином: попробуйте после {0} (через {1} мин).",
        .privacyChanged: "Политика конфиденциальности изменилась (версия {0}) с тех пор, как вы её приняли. Прочитайте её и примите, чтобы войти.",
        .passwordChanged: "Пароль изменён; другие ваши сеансы завершены.",
        .accountDeleted: "Учётная запись {0} удалена. Записи на приём остаются в архиве клиники без ваших личных данных.",
        .passwordContainsLogin: "Слишком слабый пароль: он не должен содержать логин.",
        .privacyRequired: "Для регистрации нужно согласие с политикой конфиденциальности.",
        .loginTaken: "Логин '{0}' занят.",
        .clientNotFound: "Пациента {0} нет.",
        .privacyPolicy: """
            Политика конфиденциальности (версия {0})

            Что мы храним: ваш логин; хеш пароля Argon2id с солью (но не сам пароль); имя, фамилию
            и адрес (улица, дом, город) и найденные для него координаты; вашу клинику, язык и время
            согласия с этой политикой; ваши записи и сеансы (только SHA-256 каждого токена);
            сообщения от клиник; адрес электронной почты и номер мобильного — только если вы их
            укажете.

            Зачем: чтобы узнавать вас, находить ближайшие клиники, записывать вас на приём,
            переносить и отменять записи и сообщать вам о них. Имя, фамилия, улица, дом, координаты
            и адрес почты хранятся зашифрованными. Данные никуда не передаются, кроме названия
            города — службе геокодирования, если оператор её подключил, и писем: когда вы подтвердите
            адрес (кодом, присланным на него), каждое сообщение во входящих (запись, перенос, отмена
            с причиной от клиники, напоминание за 24 и за 2 часа, сообщение от сотрудников клиники)
            отправляется и на него через почтовый сервер оператора, с файлом календаря записи;
            почтовые серверы по пути хранят копии. Номер мобильного (хранится зашифрованным): когда
            вы подтвердите его (кодом, присланным по SMS), напоминания, отмены клиникой и
            освободившееся время из листа ожидания приходят и по SMS через SMS-шлюз оператора и
            сеть связи — как вы выберете; в SMS только название клиники, время и ссылка. Ответьте
            STOP на любое SMS, чтобы их остановить. Ваш личный адрес календаря позволяет любому, у
            кого он есть, видеть ваши записи: замените или отключите его — 'clinic profile calendar-url'.
            Резервные копии оператора содержат копии базы.
            Логин, введённый при неудачном входе, хранится 15 минут, чтобы мешать подбору пароля.

            Как долго: пока существует ваша учётная запись. Сеанс завершается после 30 дней без
            использования. Отменённые и прошедшие записи остаются в архиве клиники.

            Кто это видит: сотрудники клиники, где у вас есть запись (регистраторы, администраторы
            клиники и ваш врач — по своим приёмам), видят ваше имя и логин в расписании этой
            клиники. Каждый раз, когда сотрудник читает ваши данные или меняет ваши записи,
            записывается, кто и когда это сделал; этот журнал — 'clinic profile access-log'.
            Сотрудники других клиник о вас ничего не видят.

            Ваш контроль: всё, что о вас хранится, — 'clinic profile export' (JSON); исправить —
            'clinic profile edit'; удалить учётную запись — 'clinic profile delete' (личные данные
            и сеансы удаляются сразу; записи на приём остаются в архиве клиники без вашего имени
            и заметок, логин освобождается). В диалоговом режиме ('clinic') то же — в разделе «Профиль».
            """,
    ]
}
