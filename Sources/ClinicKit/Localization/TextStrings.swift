import Foundation

/// Text messages: the mobile number and its code, what is texted, and the answers to replies
/// (issue 45). A text's words are few and plain (GSM-7 in English, so one segment carries
/// 160 characters; Russian goes as UCS-2, 70 a segment): `TextMessage` counts them.
extension Strings {
    static let textEN: [MessageKey: String] = [
        .phoneInvalid: "A mobile number is written in international form: a + and the country code, 8 to 15 digits in all (+1 202 555 0143); got {0}.",
        .phoneNotMobile: "{0} cannot receive text messages (a toll-free, premium or fixed-line number): give a mobile number.",
        .phoneCodeWrong: "That code is wrong or has run out: ask for a new one.",
        .phoneCodeTooSoon: "A code was sent less than {0} seconds ago: wait for it, or ask again in a minute.",
        .phoneNoPending: "There is no mobile number waiting to be confirmed.",
        .phoneNone: "You have no mobile number.",
        .textUnknownNumber: "No patient has confirmed this number: the text was not taken.",
        .textKeyWrong: "The gateway's key is missing or wrong.",
        .textReportUnknown: "That delivery report does not name a text of this clinic's.",
        .smsSettingInvalid: "{0} is malformed: expected {1}.",
        .smsFailed: "The SMS gateway did not take the text: {0}",
        .offerLinkInvalid: "This link cannot be used: it was used already, has run out, or was never made. Sign in to see your offers.",
        .textCode: "Your code to confirm this number: {0}. It is valid for 30 minutes. If you did not ask for it, ignore this text.",
        .textReminder: "Reminder: {0}, {1}. Reply C to confirm or X to cancel.",
        .textOffer: "{0}: a time is free for you, {1}. Held for you until {2}: {3}",
        .textClinicCancelled: "{0} cancelled your appointment of {1}. The reason is in your inbox.",
        .textStopped: "You will get no more texts from us. Reply START to get them again.",
        .textStarted: "Texts are on again. Reply STOP to stop them.",
        .textConfirmed: "Thank you: your appointment of {0} is confirmed.",
        .textCancelled: "Your appointment of {0} is cancelled.",
        .textWhich: "You have {0} appointments soon: {1}. Reply C1 or X1 (C2, X2 ...) to say which.",
        .textNothingDue: "You have no appointment coming up to confirm or cancel.",
        .textNotUnderstood: "Reply C to confirm your next appointment, X to cancel it, or STOP to get no more texts.",
        .textCannotCancel: "Your appointment of {0} cannot be cancelled by text now: please call the clinic.",
        .cannotConfirm: "This appointment cannot be confirmed: it is {0f}.",
        .reminderCantCome: "Can't come? Cancel it here, and the time goes to someone waiting for one: {0}",
    ]

    static let textRU: [MessageKey: String] = [
        .phoneInvalid: "Номер мобильного пишется в международном виде: + и код страны, всего от 8 до 15 цифр (+7 912 345 67 89); получено {0}.",
        .phoneNotMobile: "На {0} нельзя отправить SMS (бесплатный, платный или городской номер): укажите номер мобильного.",
        .phoneCodeWrong: "Код неверен или истёк: запросите новый.",
        .phoneCodeTooSoon: "Код отправлен меньше {0} секунд назад: дождитесь его или запросите снова через минуту.",
        .phoneNoPending: "Номера мобильного, ждущего подтверждения, нет.",
        .phoneNone: "Номер мобильного не указан.",
        .textUnknownNumber: "Этот номер не подтверждён ни одним пациентом: сообщение не принято.",
        .textKeyWrong: "Ключ шлюза не указан или неверен.",
        .textReportUnknown: "Отчёт о доставке не относится ни к одному SMS этой клиники.",
        .smsSettingInvalid: "{0} задано неверно: ожидается {1}.",
        .smsFailed: "SMS-шлюз не принял сообщение: {0}",
        .offerLinkInvalid: "Ссылкой нельзя воспользоваться: она уже использована, истекла или не создавалась. Войдите, чтобы увидеть свои предложения.",
        .textCode: "Код для подтверждения номера: {0}. Действует 30 минут. Если вы его не запрашивали, не обращайте внимания.",
        .textReminder: "Напоминание: {0}, {1}. Ответьте C, чтобы подтвердить, или X, чтобы отменить.",
        .textOffer: "{0}: для вас освободилось время, {1}. Удержано до {2}: {3}",
        .textClinicCancelled: "{0} отменила вашу запись на {1}. Причина — во входящих.",
        .textStopped: "Больше SMS от нас не будет. Ответьте START, чтобы снова их получать.",
        .textStarted: "SMS снова включены. Ответьте STOP, чтобы их остановить.",
        .textConfirmed: "Спасибо: запись на {0} подтверждена.",
        .textCancelled: "Запись на {0} отменена.",
        .textWhich: "У вас скоро {0} записи: {1}. Ответьте C1 или X1 (C2, X2 ...), чтобы указать какую.",
        .textNothingDue: "Предстоящей записи, которую можно подтвердить или отменить, нет.",
        .textNotUnderstood: "Ответьте C, чтобы подтвердить ближайшую запись, X — чтобы отменить, STOP — чтобы больше не получать SMS.",
        .textCannotCancel: "Запись на {0} сейчас нельзя отменить по SMS: позвоните в клинику.",
        .cannotConfirm: "Эту запись нельзя подтвердить: её статус — {0f}.",
        .reminderCantCome: "Не сможете прийти? Отмените запись здесь — время достанется тому, кто его ждёт: {0}",
    ]
}
