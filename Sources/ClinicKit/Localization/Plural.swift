import Foundation

/// Counted nouns: "1 appointment", "2 appointments"; "1 запись", "2 записи", "5 записей".
public enum Noun: Sendable, CaseIterable {
    case appointment, patient, clinic, freeSlot, hour, message

    /// English: one, other. Russian: one, few, many.
    var forms: (en: [String], ru: [String]) {
        switch self {
        case .appointment: return (["appointment", "appointments"], ["запись", "записи", "записей"])
        case .patient: return (["patient", "patients"], ["пациент", "пациента", "пациентов"])
        case .clinic: return (["clinic", "clinics"], ["клиника", "клиники", "клиник"])
        case .freeSlot: return (["free slot", "free slots"], ["свободное окно", "свободных окна", "свободных окон"])
        case .hour: return (["hour", "hours"], ["час", "часа", "часов"])
        case .message: return (["message", "messages"], ["сообщение", "сообщения", "сообщений"])
        }
    }

    /// "5 записей".
    public func count(_ n: Int, _ language: Language) -> String {
        "\(n) " + form(n, language)
    }

    public func form(_ n: Int, _ language: Language) -> String {
        switch language {
        case .en:
            return n == 1 ? forms.en[0] : forms.en[1]
        case .ru:
            let last = abs(n) % 10, lastTwo = abs(n) % 100
            if last == 1 && lastTwo != 11 { return forms.ru[0] }
            if (2...4).contains(last) && !(12...14).contains(lastTwo) { return forms.ru[1] }
            return forms.ru[2]
        }
    }
}
