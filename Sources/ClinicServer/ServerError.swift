import ClinicKit
import Foundation
import HTTPTypes

/// An error only the HTTP front has — a body that does not decode, a route that does not
/// exist, a method a path does not take, the per-address limit — with its stable code and
/// its words in English and Russian. ClinicKit's errors (`ClinicError`) say the domain; these
/// say HTTP. Both go out in the same shape, `{"error":{"code","message"}}` (openapi.yaml).
struct ServerError: Error, Sendable {
    enum Code: String, Sendable {
        case invalidInput = "invalid_input"
        case notLoggedIn = "not_logged_in"
        case notFound = "not_found"
        case methodNotAllowed = "method_not_allowed"
        case tooLarge = "too_large"
        case unsupportedMediaType = "unsupported_media_type"
        case rateLimited = "rate_limited"
        case forbidden = "forbidden"
        case preconditionFailed = "precondition_failed"

        /// The fixed HTTP status of each (docs/API.md).
        var status: HTTPResponse.Status {
            switch self {
            case .invalidInput: .badRequest
            case .notLoggedIn: .unauthorized
            case .notFound: .notFound
            case .methodNotAllowed: .methodNotAllowed
            case .tooLarge: .contentTooLarge
            case .unsupportedMediaType: .unsupportedMediaType
            case .rateLimited: .tooManyRequests
            case .forbidden: .forbidden
            case .preconditionFailed: .preconditionFailed
            }
        }
    }

    let code: Code
    let text: ServerText
    let arguments: [String]

    init(_ code: Code, _ text: ServerText, _ arguments: String...) {
        self.code = code
        self.text = text
        self.arguments = arguments
    }

    /// `invalid_input` with one of the bad-input messages.
    static func invalid(_ text: ServerText, _ arguments: String...) -> ServerError {
        ServerError(code: .invalidInput, text: text, arguments: arguments)
    }

    private init(code: Code, text: ServerText, arguments: [String]) {
        self.code = code
        self.text = text
        self.arguments = arguments
    }

    var status: HTTPResponse.Status { code.status }

    func message(in language: Language) -> String { text.render(language, arguments) }
}

/// The server's own words, each in English and Russian side by side. `{0}`, `{1}` are the
/// arguments, shown as data (control characters dropped), never read as a template.
enum ServerText: String, Sendable, CaseIterable {
    case fieldRequired, fieldWholeNumber, fieldBoolean, fieldChoice, fieldType
    case bodyNotJSON, duplicateKey, bodyInvalid, tooLarge, mediaType, rateLimited, routeNotFound, methodNotAllowed
    case notLoggedIn
    case badSetting, needsTLS, tlsFileInvalid
    case fhirFormat, fhirUnknownParameter, fhirCount, fhirReference, fhirCode, fhirDate, fhirNear, fhirMediaType
    case fhirParameters, fhirParameterMissing, fhirStatus, fhirPatch, fhirNotYours, fhirPreconditionFailed, fhirStaffDate

    var words: (en: String, ru: String) {
        switch self {
        case .fieldRequired: ("The field '{0}' is required.", "Поле «{0}» обязательно.")
        case .fieldWholeNumber: ("The field '{0}' must be a whole number.", "Поле «{0}» должно быть целым числом.")
        case .fieldBoolean: ("The field '{0}' must be true or false.", "Поле «{0}» должно быть true или false.")
        case .fieldChoice: ("The field '{0}' must be one of: {1}.", "Поле «{0}» должно быть одним из: {1}.")
        case .fieldType: ("The field '{0}' must be of JSON type {1}.", "Поле «{0}» должно иметь JSON-тип {1}.")
        case .bodyNotJSON: ("The request body is not valid JSON.", "Тело запроса — не правильный JSON.")
        case .duplicateKey: ("The request body gives '{0}' more than once.", "В теле запроса «{0}» указано больше одного раза.")
        case .bodyInvalid: ("The request body is not what this request takes: {0}.", "Тело запроса не подходит к этому запросу: {0}.")
        case .tooLarge: ("The request body is larger than {0} bytes.", "Тело запроса больше {0} байт.")
        case .mediaType: ("Send the request body as application/json.", "Пришлите тело запроса как application/json.")
        case .rateLimited: ("Too many requests from this address: try again in {0} seconds.",
                            "Слишком много запросов с этого адреса: попробуйте через {0} с.")
        case .routeNotFound: ("There is nothing at {0}.", "По адресу {0} ничего нет.")
        case .methodNotAllowed: ("{0} is not allowed here.", "Метод {0} здесь не разрешён.")
        case .notLoggedIn:
            ("Sign in first: send Authorization: Bearer with a token from POST /v1/sessions (a token ends after 30 days unused, at log-out, or when the password changes).",
             "Сначала войдите: пришлите Authorization: Bearer с токеном из POST /v1/sessions (токен кончается после 30 дней без использования, при выходе или смене пароля).")
        case .badSetting: ("{0} must be {1}.", "{0}: нужно {1}.")
        case .needsTLS:
            ("Without --tls-cert and --tls-key the server listens only on a loopback address (127.0.0.1, ::1), not on {0}: give a certificate, or --insecure-http if a proxy in front encrypts.",
             "Без --tls-cert и --tls-key сервер слушает только локальный адрес (127.0.0.1, ::1), а не {0}: укажите сертификат или --insecure-http, если шифрует прокси перед сервером.")
        case .tlsFileInvalid: ("{0} is not {1}.", "{0} — не {1}.")
        case .fhirFormat: ("This server speaks FHIR JSON only (_format={0} is not JSON).",
                           "Этот сервер говорит только на FHIR JSON (_format={0} — не JSON).")
        case .fhirUnknownParameter: ("The parameter '{0}' is not known here; known: {1} (or send Prefer: handling=lenient).",
                                     "Параметр «{0}» здесь неизвестен; известны: {1} (или пришлите Prefer: handling=lenient).")
        case .fhirCount: ("_count must be a whole number from 1 to {1} (got {0}).", "_count должен быть целым числом от 1 до {1} (получено {0}).")
        case .fhirReference: ("The parameter '{0}' must name a {1} (Type/id or id).", "Параметр «{0}» должен указывать {1} (Тип/id или id).")
        case .fhirCode: ("The code '{0}' is not one this server knows.", "Код «{0}» этому серверу неизвестен.")
        case .fhirDate: ("The parameter '{0}' must be a FHIR date or dateTime (got '{1}').",
                         "Параметр «{0}» должен быть датой или dateTime FHIR (получено «{1}»).")
        case .fhirNear: ("near is latitude|longitude|distance|unit, a unit one of km, m, mi, [mi_i] (got '{0}').",
                         "near — это широта|долгота|расстояние|единица, единица — km, m, mi или [mi_i] (получено «{0}»).")
        case .fhirMediaType: ("Send the request body as application/fhir+json.", "Пришлите тело запроса как application/fhir+json.")
        case .fhirParameters: ("The body must be a FHIR {0} resource.", "Тело должно быть ресурсом FHIR {0}.")
        case .fhirParameterMissing: ("The parameter '{0}' is required.", "Параметр «{0}» обязателен.")
        case .fhirStatus: ("An appointment cannot be changed to the status '{0}' here.", "Запись нельзя перевести здесь в статус «{0}».")
        case .fhirPatch: ("A patch may only replace /status (with cancelled) or /start.",
                          "Патч может только заменить /status (на cancelled) или /start.")
        case .fhirNotYours: ("You may only see your own records.", "Вы можете видеть только свои записи.")
        case .fhirPreconditionFailed: ("If-None-Exist matches {0} appointments: make it more selective.",
                                       "If-None-Exist подходит к {0} записям: уточните условие.")
        case .fhirStaffDate: ("Staff search appointments by one day: date=YYYY-MM-DD.",
                              "Сотрудники ищут записи за один день: date=YYYY-MM-DD.")
        }
    }

    /// The words in `language` with the arguments in place, by ClinicKit's renderer (the same
    /// `{0}` placeholders as every other table; an argument is data, never a template).
    func render(_ language: Language, _ arguments: [String]) -> String {
        Strings.render(language == .ru ? words.ru : words.en, language, arguments)
    }
}

/// A setting of `clinic serve` that cannot work (a port out of range, plain HTTP off loopback,
/// a TLS file that is not PEM), refused before the server starts: `invalid_input`, in the
/// server's own words. The CLI reports it as it reports its own errors.
public struct ServerSettingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ClinicError.Code { .invalidInput }
    let text: ServerText
    let arguments: [String]

    init(_ text: ServerText, _ arguments: String...) {
        self.text = text
        self.arguments = arguments
    }

    public func message(in language: Language) -> String { text.render(language, arguments) }

    public var description: String { "\(code.rawValue): \(message(in: .en))" }
}
