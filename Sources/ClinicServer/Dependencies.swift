import ClinicKit
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// What the controllers share: the system, the threads and gates blocking work runs behind,
/// the per-address limit, the idempotency store, the group committer, the metrics and the
/// settings. Made once by `buildApplication`; each controller holds a copy (it is all
/// references and constants).
struct ServerDependencies: Sendable {
    let system: ClinicSystem
    let pool: BlockingPool
    /// Argon2 runs: at most `passwordWorkers` at once.
    let passwords: Gate
    /// Searches for a free slot (`/v1/find`, the web's `/find`): each has a budget
    /// (`SearchBudget`), and at most `searchWorkers` run at once, so a crowd of them uses at
    /// most those threads and cheap requests keep the others.
    let searches: Gate
    /// Uploaded files checked and photos decoded (`AttachmentsController`): two at once (a
    /// decode is CPU and memory), at most 32 waiting and none for more than 10 s, then `busy`
    /// with Retry-After.
    let images: Gate
    /// Upload bodies in flight, by bytes, over the whole server (`ByteBudget`): reserved before
    /// a body is read, so neither many connections nor many HTTP/2 streams fill the memory.
    let uploads: ByteBudget
    let authLimiter: RateLimiter
    /// Uploads per account (patient or staff member): `uploadBurst`, then `uploadsPerHour`. Counted
    /// per account, not per file, so deleting a file gives nothing back. Per server: what it
    /// protects is this server's decoding (two at a time), and each server has its own.
    let uploadLimiter: RateLimiter
    let idempotency: IdempotencyStore
    let metrics: ServerMetrics
    let settings: ServerSettings
    /// The web app's templates and static files (nil without the project's `Web/` folder).
    let assets: WebAssets?
    /// The key of the web forms' CSRF tokens (`WebRequest.csrf`), shared by every server of the database.
    let csrfKey: SymmetricKey
    /// The web map's clinics, encoded, with the version they were read at (a `Service`).
    let mapCache: MapCache
    /// When each session was last recorded as used.
    let touches: SessionTouches
    /// Wakes the outbox: a code someone waits for, an offer just made (`OutboxWakeup`).
    let outboxWakeup = OutboxWakeup()

    init(system: ClinicSystem, pool: BlockingPool, metrics: ServerMetrics, settings: ServerSettings,
         csrfKey: SymmetricKey) {
        self.system = system
        self.csrfKey = csrfKey
        self.pool = pool
        self.metrics = metrics
        self.settings = settings
        assets = system.resources.flatMap { try? WebAssets.load(root: $0.root) }
        passwords = Gate(limit: settings.passwordWorkers)
        searches = Gate(limit: settings.searchWorkers, maximumWaiting: 64)
        images = Gate(limit: 2, maximumWaiting: 32, maximumWait: .seconds(10))
        uploads = ByteBudget(capacity: settings.uploadBytesInFlight)
        authLimiter = RateLimiter(burst: settings.authBurst, perMinute: settings.authPerMinute)
        uploadLimiter = RateLimiter(burst: settings.uploadBurst, perMinute: settings.uploadsPerHour / 60)
        idempotency = system.makeIdempotencyStore()
        mapCache = MapCache(system: system, pool: pool)
        touches = SessionTouches()
    }

    // MARK: Where blocking work runs

    /// Runs blocking library work on the pool, its errors said in `language`.
    func work<T: Sendable>(_ language: Language, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await pool.run(body)
        } catch let error as ClinicError {
            throw APIFailure.hidingOthers(error, language: language)
        }
    }

    /// Sends a confirmation code (a text or an e-mail; the library counts it against
    /// `CodeLimits`), then wakes the outbox, since the patient waits for it. The deployment's
    /// daily budget spent is the operator's to know: counted in `clinic_codes_refused_total`
    /// and logged, once a refusal. The use case is the store's one awaited transaction (issue
    /// 56): no hop to the pool.
    func codeSent<T: Sendable>(_ language: Language, _ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            outboxWakeup.signal()
            return result
        } catch let error as ClinicError {
            if error.code == .rateLimited { metrics.codeRefused(error.key) }
            if error.key == .textCodeBudgetSpent || error.key == .mailCodeBudgetSpent {
                Logger(label: "clinic.codes").warning("the daily budget of confirmation codes is spent: codes are refused until it renews",
                                                      metadata: ["budget": .string(error.key == .textCodeBudgetSpent ? "text" : "mail")])
            }
            throw APIFailure.hidingOthers(error, language: language)
        }
    }

    /// A use case the store runs as one awaited operation (issue 56), its errors said in
    /// `language`: awaited here, on the request's task, with no hop to the pool.
    func awaited<T: Sendable>(_ language: Language, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ClinicError {
            throw APIFailure.hidingOthers(error, language: language)
        }
    }

    /// Password work (Argon2) inside an awaited use case (`PasswordRunner`): at most
    /// `passwordWorkers` at once, on the pool; the use case's statements stay awaited.
    var passwordRunner: GatedPasswordRunner { GatedPasswordRunner(dependencies: self) }
    /// CPU work inside an awaited use case, on the pool: libvips' and qpdf's on an upload, the
    /// slots computed from facts gathered awaited.
    var poolRunner: PoolRunner { PoolRunner(pool: pool) }

    /// A search for free slots, on the request's task with no hop to the pool (issue 56): at
    /// most `searchWorkers` at once, the rest wait their turn (64 at most, then `busy`).
    func searchAwaited<T: Sendable>(_ language: Language, _ body: () async throws -> T) async throws -> T {
        do {
            return try await searches.run { try await awaited(language, body) }
        } catch let error as ClinicError {
            throw APIFailure(error, language: language, headers: [.retryAfter: "1"])
        }
    }

    /// An upload by `account` ("patient:7", "staff:3"): within the account's rate
    /// (`uploadLimiter`, `429 rate_limited`), its body's bytes reserved before anything of it is read (`uploads`): the
    /// declared length, or the upload limit for a body that declares none (chunked, HTTP/2).
    /// When they are not free, `503 busy` with Retry-After, and the connection closes (over
    /// HTTP/1.1 the unread body is drained for at most 2 s, `ConnectionCloseHandler`).
    func admittingUpload<T: Sendable>(_ request: Request, account: String, _ language: Language,
                                      _ body: () async throws -> T) async throws -> T {
        if let seconds = uploadLimiter.take(account) {
            throw APIFailure(ServerError(.rateLimited, .rateLimited, String(seconds)), language: language,
                             headers: [.retryAfter: String(seconds), .connection: "close"])
        }
        let declared = request.headers[.contentLength].flatMap { Int($0) } ?? AttachmentsController.uploadLimit
        do {
            return try await uploads.run(reserving: min(declared, AttachmentsController.uploadLimit), body)
        } catch let error as ClinicError where error.code == .busy {
            throw APIFailure(error, language: language, headers: [.retryAfter: "5", .connection: "close"])
        }
    }

    /// Log-ins and registrations: `rate_limited` past the per-address bucket.
    func checkAuthRate(_ context: APIContext, _ language: Language) throws {
        if let seconds = authLimiter.take(context.clientAddress) {
            throw APIFailure(ServerError(.rateLimited, .rateLimited, String(seconds)), language: language,
                             headers: [.retryAfter: String(seconds)])
        }
    }

    // MARK: Sessions

    /// The patient of the bearer token; `not_logged_in` without a live session.
    func patient(_ request: Request) async throws -> Patient {
        let asked = language(of: request)
        guard let token = request.bearerToken else { throw APIFailure(ServerError(.notLoggedIn, .notLoggedIn), language: asked) }
        let client: Client
        do {
            // Awaited (issue 56): no hop to the pool, no thread waiting for the store.
            client = try await system.clients.signedInPatient(token: token)
        } catch let error as ClinicError where error.code == .notLoggedIn {
            throw APIFailure(ServerError(.notLoggedIn, .notLoggedIn), language: asked)
        } catch let error as ClinicError {
            throw APIFailure(error, language: asked)
        }
        return Patient(client: client, token: token, language: language(of: request, fallback: client.language))
    }

    /// The staff member of the bearer token: `not_logged_in` (401) without a live staff
    /// session, a patient's token included.
    func staffMember(_ request: Request) async throws -> StaffIdentity {
        let asked = language(of: request)
        guard let token = request.bearerToken else { throw APIFailure(ClinicError(.notLoggedIn, .staffNotLoggedIn), language: asked) }
        let member = try await awaited(asked) { [system] in try await system.staff.signedIn(token: token) }
        return StaffIdentity(member: member, token: token)
    }

    /// Records a use of a patient's session once the request has succeeded, at most once a
    /// minute per session (a write per request would make every read a write).
    func touch(_ patient: Patient) async {
        await touch(token: patient.token) { [system] in try await system.clients.touchSession(token: patient.token) }
    }

    /// `touch` for a staff member's session.
    func touch(_ staff: StaffIdentity) async {
        await touch(token: staff.token) { [system] in try await system.staff.touch(token: staff.token) }
    }

    /// `touch` for any kind of session: `write` runs at most once a minute per token, awaited
    /// (issue 56: `SessionStore`), not on the blocking pool.
    func touch(token: String, _ write: () async throws -> Void) async {
        guard touches.due(token) else { return }
        // Best effort: failing to extend a session must not fail the request it served.
        try? await write()
    }

    // MARK: Idempotent changes

    /// A patient's change with the answer to its `Idempotency-Key` kept in the change's own
    /// transaction, awaited (issue 56: `ClinicStore.perform(_:keeping:answer:)`, no hop to the
    /// pool): `change` runs the use case with the keeping made here; `answer` says what it
    /// changed (the appointment, the waitlist's entry), and a refusal is kept as the API says it.
    func kept<Value: Sendable, Body: Encodable & Sendable>(_ request: Request, _ patient: Patient, body: Data, key: String,
                                                           answer: @escaping @Sendable (Value) throws -> (HTTPResponse.Status, Body),
                                                           _ change: (AnswerKeeping<Value>) async throws -> IdempotencyStore.Response)
        async throws -> Response {
        Self.answer(try await kept(request, patient, body: body, key: key, answer: { value in
            let (status, body) = try answer(value)
            return (status, try Self.encode(body))
        }, refusal: { failure, language in try Shapes.encoder(pretty: false).encode(failure.body(in: language)) }, change))
    }

    /// `kept` with the answer already encoded and the shape a refusal is kept in (the FHIR
    /// front keeps an OperationOutcome): the kept (or just made) answer as it was kept.
    func kept<Value: Sendable>(_ request: Request, _ patient: Patient, body: Data, key: String,
                               answer: @escaping @Sendable (Value) throws -> (HTTPResponse.Status, Data),
                               refusal: @escaping @Sendable (APIFailure, Language) throws -> Data,
                               _ change: (AnswerKeeping<Value>) async throws -> IdempotencyStore.Response)
        async throws -> IdempotencyStore.Response {
        let language = patient.language
        let fingerprint = IdempotencyStore.fingerprint([Data(request.method.rawValue.utf8), Data(request.uri.path.utf8),
                                                        Self.canonical(body)])
        let keeping = AnswerKeeping<Value>(store: idempotency, key: key, fingerprint: fingerprint) { outcome in
            switch outcome {
            case .success(let done):
                let (status, data) = try answer(done)
                return IdempotencyStore.Response(status: Int(status.code), body: data)
            case .failure(let error):
                // A refusal is the answer too: the same retry gets the same refusal.
                guard HTTPMapping.status(error.code).code < 500 else { return nil }
                let failure = APIFailure.hidingOthers(error, language: language)
                return IdempotencyStore.Response(status: Int(failure.status.code), body: try refusal(failure, language))
            }
        }
        return try await awaited(language) { try await change(keeping) }
    }

    /// A kept (or just made) answer as the response: `Idempotent-Replayed: true` when replayed.
    static func answer(_ response: IdempotencyStore.Response) -> Response {
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

    // MARK: Small pieces of requests

    /// A JSON body decoded, with its bytes (an idempotent request is known by them).
    func decodeKeeping<T: Decodable>(_ type: T.Type, _ request: Request, _ context: APIContext) async throws -> (T, Data) {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        let value = try await RequestBody.decode(type, from: request, context: context)
        return (value, Data(buffer: buffer))
    }

    /// A start as the CLI's TIME takes it (an instant with its offset, or a wall time read in
    /// the clinic's zone).
    func parsedTime(_ text: String, _ language: Language) throws -> TimeInput.Parsed {
        do { return try TimeInput.parse(text) } catch let error as ClinicError { throw APIFailure(error, language: language) }
    }

    /// The address calendar apps are given: `CLINIC_PUBLIC_URL`, else the Host the request came to.
    func publicBase(_ request: Request) -> String {
        if let base = settings.publicURL { return base }
        let scheme = settings.tls == nil ? "http" : "https"
        let host = request.head.authority ?? "\(settings.host):\(settings.port)"
        return "\(scheme)://\(host)"
    }

    static let calendarType = "text/calendar; charset=utf-8"

    static func calendar(_ text: String, filename: String) -> Response {
        Response(status: .ok, headers: [.contentType: calendarType, .contentDisposition: "inline; filename=\"\(filename)\"",
                                        .cacheControl: "private, no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// When each session was last recorded as used, by a hash of its token (no tokens kept).
final class SessionTouches: Sendable {
    private let touched = NIOLockedValueBox([Int: Date]())

    /// Whether the session of `token` is due a write now (then it is counted as written).
    func due(_ token: String) -> Bool {
        let now = Date()
        return touched.withLockedValue { seen -> Bool in
            let key = token.hashValue // a collision only skips one extension of a session
            if let last = seen[key], now.timeIntervalSince(last) < 60 { return false }
            if seen.count > 100_000 { seen.removeAll() }
            seen[key] = now
            return true
        }
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self("Idempotency-Key")!
    static let idempotentReplayed = Self("Idempotent-Replayed")!
    /// `false` when a search for free slots stopped at its budget (`SearchBudget`) before it had
    /// looked at every clinic it should have.
    static let searchComplete = HTTPField.Name("Search-Complete")!
}

/// `ServerDependencies.poolRunner`: CPU work of an awaited use case on the pool (libvips' and
/// qpdf's on an upload, whose route holds the `images` gate around it; slots computed).
struct PoolRunner: PasswordRunner {
    let pool: BlockingPool

    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.run(work)
    }
}

/// `ServerDependencies.passwordRunner`: Argon2 at most `passwordWorkers` at once, on the pool.
struct GatedPasswordRunner: PasswordRunner {
    let dependencies: ServerDependencies

    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let metrics = dependencies.metrics, gate = dependencies.passwords, pool = dependencies.pool
        metrics.passwordQueue(gate.waiting + 1)
        defer { metrics.passwordQueue(gate.waiting) }
        return try await gate.run { try await pool.run(work) }
    }
}
