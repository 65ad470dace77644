import Foundation

/// The staff's refusals.
extension Strings {
    static let staffEN: [MessageKey: String] = [
        .staffRowInvalid: "Staff account {0} has a role this version does not know.",
        .staffForbidden: "A {0} may not do this.",
        .staffDoctorRequired: "A doctor's account needs the doctor (of that clinic) it is.",
        .staffDoctorOnlyForDoctors: "Only a doctor's account names a doctor.",
        .staffNotFound: "There is no staff account {0}.",
        .staffNotLoggedIn: "Not logged in as staff.",
        .staffReasonRequired: "Cancelling for the clinic needs a reason, which the patient is told.",
        .staffReasonInvalid: "The reason must be at most 500 characters, with no control characters.",
        .staffPatientNotFound: "There is no patient with the login {0}.",
        .staffPatientIdNotFound: "Patient {0} has no appointment at this clinic.",
        .staffPatientChoice: "Give the patient by login or by id, one of the two.",
        .staffPatientQuery: "Search by the start of a name, surname, e-mail address or login: 1 to {1} words of at least {0} letters or digits each.",
        .staffPatientUnavailable: "This patient cannot be booked at that time: another booking of theirs, or their limit of active appointments, stands in the way. The patient can see their own bookings.",
        .staffHoursConflict: "That leaves booked appointments outside the doctor's hours: {0}. Move them first, or force the change (they are cancelled for the clinic, with the reason).",
        .staffHoursChanged: "the doctor's hours changed",
        .staffMessageTarget: "Give one patient's login or one date (not both).",
        .staffNoReason: "not given",
        .walkInBirthDate: "The date of birth must be a past date, YYYY-MM-DD, from 1900 on.",
        .walkInPhone: "The phone number must have 7 to 15 digits (spaces, +, -, ( ) and dots may be between them).",
        .walkInNotWalkIn: "Patient {0} set up their own online account: there is nothing to claim.",
        .claimCodeWrong: "This code is not valid: it may be mistyped, used or expired. Ask the front desk for a new one.",
    ]

    static let staffRU: [MessageKey: String] = [
        .staffRowInvalid: "У учётной записи сотрудника {0} роль, неизвестная этой версии.",
        .staffForbidden: "Роли «{0}» это не разрешено.",
        .staffDoctorRequired: "Учётной записи врача нужно указать, какой это врач (этой клиники).",
        .staffDoctorOnlyForDoctors: "Врача указывает только учётная запись врача.",
        .staffNotFound: "Учётной записи сотрудника {0} нет.",
        .staffNotLoggedIn: "Вход сотрудника не выполнен.",
        .staffReasonRequired: "Для отмены клиникой нужна причина: её сообщат пациенту.",
        .staffReasonInvalid: "Причина — не длиннее 500 символов и без управляющих символов.",
        .staffPatientNotFound: "Пациента с логином {0} нет.",
        .staffPatientIdNotFound: "У пациента {0} нет записей в этой клинике.",
        .staffPatientChoice: "Укажите пациента по логину или по номеру — что-то одно.",
        .staffPatientQuery: "Ищите по началу имени, фамилии, адреса почты или логина: от 1 до {1} слов, в каждом не меньше {0} букв или цифр.",
        .staffPatientUnavailable: "Этого пациента нельзя записать на это время: мешает другая его запись или предел активных записей. Пациент видит свои записи сам.",
        .staffHoursConflict: "Тогда записи окажутся вне часов работы врача: {0}. Сначала перенесите их или примените изменение принудительно (их отменит клиника, с причиной).",
        .staffHoursChanged: "изменились часы работы врача",
        .staffMessageTarget: "Укажите логин одного пациента или одну дату (что-то одно).",
        .staffNoReason: "не указана",
        .walkInBirthDate: "Дата рождения — прошедшая дата в виде ГГГГ-ММ-ДД, не раньше 1900 года.",
        .walkInPhone: "В номере телефона должно быть от 7 до 15 цифр (между ними можно пробелы, +, -, скобки и точки).",
        .walkInNotWalkIn: "Пациент {0} сам завёл учётную запись: получать нечего.",
        .claimCodeWrong: "Код недействителен: возможно, он набран с ошибкой, уже использован или истёк. Попросите новый в регистратуре.",
    ]
}
