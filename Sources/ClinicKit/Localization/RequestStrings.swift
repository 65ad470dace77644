import Foundation

/// What the API's clients send that the library checks (idempotency keys, paging cursors, a
/// session by id, a device name).
extension Strings {
    static let requestEN: [MessageKey: String] = [
        .fieldTextInvalid: "The field '{0}' must be 1 to {1} characters without control characters.",
        .idempotencyKeyOtherRequest: "This Idempotency-Key was used for another request: use a new key for a new request.",
        .idempotencyKeyInvalid: "The Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is best).",
        .cursorInvalid: "The cursor is not one this server gave out: start again without it.",
        .sessionNotFound: "You have no session {0}.",
    ]

    static let requestRU: [MessageKey: String] = [
        .fieldTextInvalid: "Поле «{0}» — от 1 до {1} символов без управляющих.",
        .idempotencyKeyOtherRequest: "Этот Idempotency-Key уже использован для другого запроса: для нового запроса нужен новый ключ.",
        .idempotencyKeyInvalid: "Idempotency-Key — от 1 до 255 видимых символов ASCII (лучше всего UUID).",
        .cursorInvalid: "Этот курсор выдан не этим сервером: начните без него.",
        .sessionNotFound: "У вас нет сеанса {0}.",
    ]
}
