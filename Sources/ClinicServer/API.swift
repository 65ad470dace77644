import ClinicKit
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOConcurrencyHelpers

/// The patient API under /v1: each handler decodes, calls one controller method off the event
/// loop, and encodes. Authentication, languages, idempotency and limits are here; rules and
/// SQL are in ClinicKit.
struct API: Sendable {
    let system: ClinicSystem
    let pool: BlockingPool
    let passwords: Gate
    /// Searches for a free slot (`/v1/find`, the web's `/find`): each has a budget
    /// (`SearchBudget`), and at most `searchWorkers` run at once, so a crowd of them uses at
    /// most those threads and cheap requests keep the others.
    let searches: Gate
    let authLimiter: RateLimiter
    let idempotency: IdempotencyStore
    let committer: GroupCommitter
    let metrics: ServerMetrics
    let settings: ServerSettings
    /// The web app's templates and static files (nil without the project's `Web/` folder).
    let assets: WebAssets?
    /// The key of the web forms' CSRF tokens (`WebRequest.csrf`), shared by every server of the database.
    let csrfKey: SymmetricKey
    /// The web map's clinics, encoded, with the version they were read at.
    let mapCache = NIOLockedValueBox<(version: String, body: ByteBuffer)?>(nil)
    /// When each session was last recorded as used, by a hash of its token (no tokens kept).
    private let touched = NIOLockedValueBox([Int: Date]())

    init(system: ClinicSystem, pool: BlockingPool, committer: GroupCommitter, metrics: ServerMetrics, settings: ServerSettings,
         csrfKey: SymmetricKey) {
        self.system = system
        self.csrfKey = csrfKey
        self.pool = pool
        self.committer = committer
        self.metrics = metrics
        self.settings = settings
        assets = system.resources.flatMap { try? WebAssets.load(root: $0.root) }
        passwords = Gate(limit: settings.passwordWorkers)
        searches = Gate(limit: settings.searchWorkers, maximumWaiting: 64)
        authLimiter = RateLimiter(burst: settings.authBurst, perMinute: settings.authPerMinute)
        idempotency = IdempotencyStore(database: system.database)
    }

    /// The signed-in patient of a request.
    struct Patient: Sendable {
        let client: Client
        let token: String
        let language: Language
        var id: Int64 { client.id ?? 0 }
    }

    // MARK: Request plumbing

    /// Runs blocking library work on the pool, its errors said in `language`.
    func work<T: Sendable>(_ language: Language, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await pool.run(body)
        } catch let error as ClinicError {
            throw APIFailure(Self.hidingOthers(error), language: language)
        }
    }

    /// Another patient's appointment is `not_found`, as one that does not exist: a 403 would
    /// tell a stranger which ids are taken.
    /// A patient deleted while their request ran is no longer signed in (not `not_found`).
    static func hidingOthers(_ error: ClinicError) -> ClinicError {
        switch error.key {
        case .notYourAppointment: return ClinicError(.notFound, .appointmentNotFound, arguments: error.arguments)
        case .clientNotFound: return ClinicError(.notLoggedIn, .apiNotLoggedIn)
        default: return error
        }
    }

    /// A change to appointments, in the next group-committed batch: answered once its batch
    /// committed (`GroupCommitter`).
    func commit<T: Sendable>(_ language: Language, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await committer.perform(body)
        } catch let error as ClinicError {
            throw APIFailure(Self.hidingOthers(error), language: language)
        }
    }

    /// Password work (Argon2): at most `passwordWorkers` at once.
    func passwordWork<T: Sendable>(_ language: Language, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        metrics.passwordQueue(passwords.waiting + 1)
        defer { metrics.passwordQueue(passwords.waiting) }
        return try await passwords.run { try await work(language, body) }
    }

    /// A search for free slots: at most `searchWorkers` at once, the rest wait their turn (64
    /// at most, then `busy`).
    func searchWork<T: Sendable>(_ language: Language, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await searches.run { try await work(language, body) }
        } catch let error as ClinicError {
            throw APIFailure(error, language: language, headers: [.retryAfter: "1"])
        }
    }

    /// Log-ins and registrations: `rate_limited` past the per-address bucket.
    func checkAuthRate(_ context: APIContext, _ language: Language) throws {
        if let seconds = authLimiter.take(context.clientAddress) {
            throw APIFailure(ClinicError(.rateLimited, .apiRateLimited, String(seconds)), language: language,
                             headers: [.retryAfter: String(seconds)])
        }
    }

    /// The patient of the bearer token; `not_logged_in` without a live session.
    func patient(_ request: Request) async throws -> Patient {
        let asked = language(of: request)
        guard let token = request.bearerToken else { throw APIFailure(ClinicError(.notLoggedIn, .apiNotLoggedIn), language: asked) }
        let client: Client
        do {
            client = try await pool.run { [system] in try system.clients.currentUser(token: token) }
        } catch let error as ClinicError where error.code == .notLoggedIn {
            throw APIFailure(ClinicError(.notLoggedIn, .apiNotLoggedIn), language: asked)
        } catch let error as ClinicError {
            throw APIFailure(error, language: asked)
        }
        return Patient(client: client, token: token, language: language(of: request, fallback: client.language))
    }

    /// Records a use of the session once the request has succeeded, at most once a minute per
    /// session (a write per request would make every read a write).
    func touch(_ patient: Patient) async {
        await touch(token: patient.token) { [system] in try system.clients.touchSession(token: patient.token) }
    }

    /// `touch` for any kind of session (patients', staff's): `write` runs at most once a minute
    /// per token, on the blocking pool.
    func touch(token: String, _ write: @escaping @Sendable () throws -> Void) async {
        let now = Date()
        let due = touched.withLockedValue { seen -> Bool in
            let key = token.hashValue // a collision only skips one extension of a session
            if let last = seen[key], now.timeIntervalSince(last) < 60 { return false }
            if seen.count > 100_000 { seen.removeAll() }
            seen[key] = now
            return true
        }
        guard due else { return }
        // Best effort: failing to extend a session must not fail the request it served.
        _ = try? await pool.run(write)
    }

    /// A handler for a signed-in patient.
    func signedIn(_ request: Request, _ body: (Patient) async throws -> Response) async throws -> Response {
        let patient = try await patient(request)
        let response = try await body(patient)
        await touch(patient)
        return response
    }

    /// Runs a change once per `Idempotency-Key`: a retry with the same key and body gets the
    /// first response (status and body, `Idempotent-Replayed: true`) and changes nothing.
    func idempotent<Body: Encodable & Sendable>(_ request: Request, _ context: APIContext, _ patient: Patient, body: Data,
                                                _ change: @escaping @Sendable () throws -> (HTTPResponse.Status, Body)) async throws -> Response {
        let language = patient.language
        guard let key = request.headers[.idempotencyKey] else {
            // Encoded after the commit, off the single writer.
            let (status, value) = try await commit(language, change)
            return HTTPMapping.raw(try API.encode(value), status: status)
        }
        let fingerprint = IdempotencyStore.fingerprint([Data(request.method.rawValue.utf8), Data(request.uri.path.utf8),
                                                        Self.canonical(body)])
        let store = idempotency
        let response = try await commit(language) {
            try store.perform(clientId: patient.id, key: key, fingerprint: fingerprint) {
                do {
                    let (status, value) = try change()
                    return IdempotencyStore.Response(status: Int(status.code), body: try API.encode(value))
                } catch let error as ClinicError where HTTPMapping.status(error.code).code < 500 {
                    let error = API.hidingOthers(error)
                    // A refusal is the answer too: the same retry gets the same refusal.
                    let status = HTTPMapping.status(error.code)
                    let data = try Shapes.encoder(pretty: false).encode(ErrorJSON(error, language: language))
                    return IdempotencyStore.Response(status: Int(status.code), body: data)
                }
            }
        }
        var headers: HTTPFields = [:]
        if response.replayed { headers[.idempotentReplayed] = "true" }
        if response.status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        return HTTPMapping.raw(response.body, status: HTTPResponse.Status(code: response.status), headers: headers)
    }

    static func encode<T: Encodable>(_ value: T) throws -> Data { try Shapes.encoder(pretty: false).encode(value) }

    /// A JSON body with its keys sorted and no insignificant white space, so that a retry
    /// that serialises the same body in another order is the same request.
    static func canonical(_ body: Data) -> Data {
        guard !body.isEmpty, let value = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else { return body }
        return data
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self("Idempotency-Key")!
    static let idempotentReplayed = Self("Idempotent-Replayed")!
}
