import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// A failure on its way to the client: the library's error or the server's own, with the
/// language to say it in and the headers it needs (`Retry-After`, `WWW-Authenticate`).
struct APIFailure: Error {
    enum Problem: Sendable {
        case library(ClinicError)
        case server(ServerError)
    }
    let problem: Problem
    let language: Language?
    var headers: HTTPFields = [:]

    init(_ error: ClinicError, language: Language? = nil, headers: HTTPFields = [:]) {
        problem = .library(error)
        self.language = language
        self.headers = headers
    }

    init(_ error: ServerError, language: Language? = nil, headers: HTTPFields = [:]) {
        problem = .server(error)
        self.language = language
        self.headers = headers
    }

    /// The stable machine code (`slot_taken`, `invalid_input`…).
    var code: String {
        switch problem {
        case .library(let error): error.code.rawValue
        case .server(let error): error.code.rawValue
        }
    }

    var status: HTTPResponse.Status {
        switch problem {
        case .library(let error): HTTPMapping.status(error.code)
        case .server(let error): error.status
        }
    }

    func message(in language: Language) -> String {
        switch problem {
        case .library(let error): error.message(in: language)
        case .server(let error): error.message(in: language)
        }
    }

    /// The body: `{"error":{"code","message"}}` (with an import's problems, for the library's).
    func body(in language: Language) -> ErrorJSON {
        switch problem {
        case .library(let error): ErrorJSON(error, language: language)
        case .server(let error): ErrorJSON(code: error.code.rawValue, message: error.message(in: language))
        }
    }

    /// The library's error, for the operator's log.
    var libraryError: ClinicError? {
        if case .library(let error) = problem { return error }
        return nil
    }

    /// Another patient's appointment is `not_found`, as one that does not exist: a 403 would
    /// tell a stranger which ids are taken. A patient deleted while their request ran is no
    /// longer signed in (not `not_found`).
    static func hidingOthers(_ error: ClinicError, language: Language?, headers: HTTPFields = [:]) -> APIFailure {
        switch error.key {
        case .notYourAppointment:
            return APIFailure(ClinicError(.notFound, .appointmentNotFound, arguments: error.arguments), language: language, headers: headers)
        case .clientNotFound: return APIFailure(ServerError(.notLoggedIn, .notLoggedIn), language: language, headers: headers)
        default: return APIFailure(error, language: language, headers: headers)
        }
    }
}

enum HTTPMapping {
    /// The fixed HTTP status of every error code (docs/API.md).
    static func status(_ code: ClinicError.Code) -> HTTPResponse.Status {
        switch code {
        case .invalidInput: .badRequest
        case .notLoggedIn, .invalidCredentials: .unauthorized
        case .forbidden, .privacyNotAccepted, .insecureSessionFile: .forbidden
        case .notFound: .notFound
        case .slotTaken, .loginTaken, .overlappingAppointment, .patientUnavailable, .hoursConflict, .storeNotEmpty,
             .alreadyWaiting, .textsUnavailable, .tooClose: .conflict
        case .slotUnavailable, .weakPassword, .limitReached, .idempotencyKeyReused, .invalidTransition, .tooLate,
             .geocodeFailed: .unprocessableContent
        case .accountLocked, .rateLimited: .tooManyRequests
        case .busy, .storeUnreachable: .serviceUnavailable
        case .fileTooLarge: .contentTooLarge
        case .unsupportedType: .unsupportedMediaType
        case .migrationMismatch, .databaseTooNew, .storage, .keyError, .internalError, .storeURLInvalid, .storeAuthFailed,
             .storeDatabaseMissing, .storeUnsupported: .internalServerError
        }
    }

    static let jsonType = "application/json; charset=utf-8"

    /// A JSON response with the given status.
    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        let data = try Shapes.encoder(pretty: false).encode(value)
        return raw(data, status: status, headers: headers)
    }

    static func raw(_ data: Data, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = jsonType
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The response for an error: its code and message; for a 500, no detail at all.
    static func response(_ failure: APIFailure, language fallback: Language) -> Response {
        let language = failure.language ?? fallback
        let status = failure.status
        var headers = failure.headers
        var body = failure.body(in: language)
        switch failure.problem {
        case .library(let error):
            switch error.code {
            case .notLoggedIn, .invalidCredentials:
                headers[.wwwAuthenticate] = "Bearer"
            case .accountLocked where headers[.retryAfter] == nil:
                headers[.retryAfter] = String(lockedSeconds(error))
            case .busy where headers[.retryAfter] == nil:
                headers[.retryAfter] = "1"
            case .rateLimited where headers[.retryAfter] == nil:
                // A limit of the library's own (a new e-mail code at most once a minute).
                headers[.retryAfter] = error.arguments.first.flatMap { Int($0) }.map(String.init) ?? "60"
            default:
                break
            }
        case .server(let error):
            switch error.code {
            case .notLoggedIn: headers[.wwwAuthenticate] = "Bearer"
            case .rateLimited where headers[.retryAfter] == nil:
                headers[.retryAfter] = error.arguments.first.flatMap { Int($0) }.map(String.init) ?? "60"
            default: break
            }
        }
        if status == .internalServerError {
            body = ErrorJSON(code: ClinicError.Code.internalError.rawValue, message: Strings.text(.internalError, language, ["-"]))
        }
        let data = (try? Shapes.encoder(pretty: false).encode(body)) ?? Data()
        return raw(data, status: status, headers: headers)
    }

    /// The seconds until a locked login may try again, from the error's arguments (an ISO
    /// 8601 instant and minutes); 60 when they say nothing.
    static func lockedSeconds(_ error: ClinicError) -> Int {
        guard error.arguments.count > 1, let minutes = Int(error.arguments[1]) else { return 60 }
        return max(1, minutes * 60)
    }
}

/// Reading a JSON request body: `unsupported_media_type` for another type, `invalid_input`
/// naming the field for a body that does not decode.
enum RequestBody {
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, context: APIContext) async throws -> T {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json")) else {
            throw APIFailure(ServerError(.unsupportedMediaType, .mediaType))
        }
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        let data = Data(buffer: buffer)
        // A name given twice is refused: decoders disagree on which value wins (Foundation's
        // takes the first, the idempotency fingerprint the last), so a replay could answer for
        // a body other than the one it was sent with.
        if let key = JSONKeys.duplicate(in: [UInt8](data)) {
            throw APIFailure(ServerError.invalid(.duplicateKey, String(key.prefix(100))))
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw APIFailure(problem(error))
        } catch {
            throw APIFailure(ServerError.invalid(.bodyNotJSON))
        }
    }

    /// What was wrong with a body, naming the field by its path ("device.name").
    static func problem(_ error: DecodingError) -> ServerError {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "body" : text
        }
        switch error {
        case .keyNotFound(let key, let context): return .invalid(.fieldRequired, path(context.codingPath + [key]))
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return .invalid(.fieldType, path(context.codingPath), typeName(type))
        case .dataCorrupted(let context):
            guard let last = context.codingPath.last else { return .invalid(.bodyNotJSON) }
            // An enum (language) with a value it does not have.
            return last.stringValue == "language" ? .invalid(.fieldChoice, path(context.codingPath), "en, ru")
                : .invalid(.fieldType, path(context.codingPath), "string")
        @unknown default: return .invalid(.bodyNotJSON)
        }
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "string"
        case is Bool.Type: "boolean"
        case is Int.Type, is Int64.Type: "integer"
        case is Double.Type: "number"
        default: "object"
        }
    }
}

extension Request {
    /// A query parameter, nil when absent: decoded as a form is (`+` is a space, then
    /// percent-escapes), since browsers send a GET form's spaces as `+`. The only reader of
    /// query strings in the server.
    func query(_ name: String) -> String? { URLEncodedForm.parse(uri.query ?? "")[name] }

    /// A whole-number query parameter; `invalid_input` for anything else.
    func queryInt(_ name: String) throws -> Int? {
        guard let text = query(name) else { return nil }
        guard let value = Int(text) else { throw APIFailure(ServerError.invalid(.fieldWholeNumber, name)) }
        return value
    }

    func queryBool(_ name: String) throws -> Bool {
        guard let text = query(name)?.lowercased() else { return false }
        switch text {
        case "true", "1", "yes": return true
        case "false", "0", "no", "": return false
        default: throw APIFailure(ServerError.invalid(.fieldBoolean, name))
        }
    }

    /// The bearer token of `Authorization`, nil when there is none.
    var bearerToken: String? {
        guard let header = headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }
}

extension Parameters {
    /// A path id: a positive whole number, else `not_found` (there is nothing at that path).
    func id(_ name: String) throws -> Int64 {
        guard let text = get(name), let value = Int64(text), value > 0 else {
            throw APIFailure(ServerError(.notFound, .routeNotFound, get(name) ?? name))
        }
        return value
    }
}

/// `application/x-www-form-urlencoded`, the format of query strings and form bodies alike:
/// pairs split on `&`, `+` read as a space, then percent-escapes decoded. A name given twice
/// keeps its first value. One decoder for both, so a search typed into a form and the same
/// search in a link or an API call read alike.
enum URLEncodedForm {
    static func parse(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            guard let key = parts.first.map(decode), !key.isEmpty, result[key] == nil else { continue }
            result[key] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return result
    }

    /// A value percent-encoded for a query string (unreserved characters kept).
    static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// A page of this site to go back to (`next` of the log-in): a path of our own — one `/`,
    /// no scheme, no host, no backslash, no control character — else nil (no open redirect).
    static func localPath(_ value: String?) -> String? {
        guard let value, value.hasPrefix("/"), !value.hasPrefix("//"), value.count <= 2000,
              !value.contains("\\"), !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        return value
    }
}

/// Object keys of a JSON text, for the one thing the decoders do not check.
enum JSONKeys {
    private struct Level { var isObject: Bool; var keys: Set<String> = []; var expectsKey: Bool }

    /// The first key named twice in the same object (after unescaping: "a" and "\u0061" are
    /// one name), nil when there is none. Text that is not JSON gives nil: the decoder says
    /// what is wrong with it.
    static func duplicate(in bytes: [UInt8]) -> String? {
        var levels: [Level] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"): levels.append(Level(isObject: true, expectsKey: true))
            case UInt8(ascii: "["): levels.append(Level(isObject: false, expectsKey: false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !levels.isEmpty { levels.removeLast() }
            case UInt8(ascii: ","): if let last = levels.indices.last, levels[last].isObject { levels[last].expectsKey = true }
            case UInt8(ascii: "\""):
                let start = index
                var escaped = false
                index += 1
                while index < bytes.endIndex {
                    let current = bytes[index]
                    if current == UInt8(ascii: "\\") { escaped = true; index += 2; continue }
                    if current == UInt8(ascii: "\"") { break }
                    index += 1
                }
                guard index < bytes.endIndex else { return nil }
                if let last = levels.indices.last, levels[last].isObject, levels[last].expectsKey {
                    let token = Data(bytes[start...index])
                    let key = escaped ? (try? JSONDecoder().decode(String.self, from: token)) : String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
                    guard let key else { return nil }
                    if !levels[last].keys.insert(key).inserted { return key }
                    levels[last].expectsKey = false
                }
            default: break
            }
            index += 1
        }
        return nil
    }
}
