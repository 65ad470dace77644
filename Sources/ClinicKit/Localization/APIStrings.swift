import Foundation

/// What the API's clients send that the library checks (idempotency keys, paging cursors, a
/// session by id, a device name).
extension Strings {
    static let apiEN: [MessageKey: String] = [
        .apiFieldText: "The field '{0}' must be 1 to {1} characters without control characters.",
        .apiKeyReused: "This Idempotency-Key was used for another request: use a new key for a new request.",
        .apiKeyInvalid: "The Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is best).",
        .apiCursorInvalid: "The cursor is not one this server gave out: start again without it.",
        .apiSessionNotFound: "You have no session {0}.",
    ]

    static let apiRU: [MessageKey: String] = [
        .apiFieldText: "Поле «{0}» — от 1 до {1} символов без управляющих.",
        .apiKeyReused: "Этот Idempotency-Key уже использован для другого запроса: для нового запроса нужен новый ключ.",
        .apiKeyInvalid: "Idempotency-Key — от 1 до 255 видимых символов ASCII (лучше всего UUID).",
        .apiCursorInvalid: "Этот курсор выдан не этим сервером: начните без него.",
        .apiSessionNotFound: "У вас нет сеанса {0}.",
    ]
}
