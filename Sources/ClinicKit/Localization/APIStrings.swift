import Foundation

/// The HTTP API and its server.
extension Strings {
    static let apiEN: [MessageKey: String] = [
        .apiFieldRequired: "The field '{0}' is required.",
        .apiFieldWholeNumber: "The field '{0}' must be a whole number.",
        .apiFieldBoolean: "The field '{0}' must be true or false.",
        .apiFieldChoice: "The field '{0}' must be one of: {1}.",
        .apiFieldText: "The field '{0}' must be 1 to {1} characters without control characters.",
        .apiFieldType: "The field '{0}' must be of JSON type {1}.",
        .apiBodyNotJSON: "The request body is not valid JSON.",
        .apiDuplicateKey: "The request body gives '{0}' more than once.",
        .apiBodyInvalid: "The request body is not what this request takes: {0}.",
        .apiTooLarge: "The request body is larger than {0} bytes.",
        .apiMediaType: "Send the request body as application/json.",
        .apiRateLimited: "Too many requests from this address: try again in {0} seconds.",
        .apiRouteNotFound: "There is nothing at {0}.",
        .apiMethodNotAllowed: "{0} is not allowed here.",
        .apiKeyReused: "This Idempotency-Key was used for another request: use a new key for a new request.",
        .apiKeyInvalid: "The Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is best).",
        .apiCursorInvalid: "The cursor is not one this server gave out: start again without it.",
        .apiSessionNotFound: "You have no session {0}.",
        .serveBadSetting: "{0} must be {1}.",
        .serveNeedsTLS: "Without --tls-cert and --tls-key the server listens only on a loopback address (127.0.0.1, ::1), not on {0}: give a certificate, or --insecure-http if a proxy in front encrypts.",
        .tlsFileInvalid: "{0} is not {1}.",
        .apiNotLoggedIn: "Sign in first: send Authorization: Bearer with a token from POST /v1/sessions (a token ends after 30 days unused, at log-out, or when the password changes).",
    ]

    static let apiRU: [MessageKey: String] = [
        .apiFieldRequired: "Поле «{0}» обязательно.",
        .apiFieldWholeNumber: "Поле «{0}» должно быть целым числом.",
        .apiFieldBoolean: "Поле «{0}» должно быть true или false.",
        .apiFieldChoice: "Поле «{0}» должно быть одним из: {1}.",
        .apiFieldText: "Поле «{0}» — от 1 до {1} символов без управляющих.",
        .apiFieldType: "Поле «{0}» должно иметь JSON-тип {1}.",
        .apiBodyNotJSON: "Тело запроса — не правильный JSON.",
        .apiDuplicateKey: "В теле запроса «{0}» указано больше одного раза.",
        .apiBodyInvalid: "Тело запроса не подходит к этому запросу: {0}.",
        .apiTooLarge: "Тело запроса больше {0} байт.",
        .apiMediaType: "Пришлите тело запроса как application/json.",
        .apiRateLimited: "Слишком много запросов с этого адреса: попробуйте через {0} с.",
        .apiRouteNotFound: "По адресу {0} ничего нет.",
        .apiMethodNotAllowed: "Метод {0} здесь не разрешён.",
        .apiKeyReused: "Этот Idempotency-Key уже использован для другого запроса: для нового запроса нужен новый ключ.",
        .apiKeyInvalid: "Idempotency-Key — от 1 до 255 видимых символов ASCII (лучше всего UUID).",
        .apiCursorInvalid: "Этот курсор выдан не этим сервером: начните без него.",
        .apiSessionNotFound: "У вас нет сеанса {0}.",
        .serveBadSetting: "{0}: нужно {1}.",
        .serveNeedsTLS: "Без --tls-cert и --tls-key сервер слушает только локальный адрес (127.0.0.1, ::1), а не {0}: укажите сертификат или --insecure-http, если шифрует прокси перед сервером.",
        .tlsFileInvalid: "{0} — не {1}.",
        .apiNotLoggedIn: "Сначала войдите: пришлите Authorization: Bearer с токеном из POST /v1/sessions (токен кончается после 30 дней без использования, при выходе или смене пароля).",
    ]
}
