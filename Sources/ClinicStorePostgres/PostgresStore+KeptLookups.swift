import ClinicKit
import Foundation
import Logging
import NIOCore
import PostgresNIO

// Signed-in sessions and nearest searches' facts kept between requests (issue 44): a bearer
// token's look-up and a nearest search cost no round trip while what they read is kept, one when
// it is not. A server keeps them only while it listens on `clinic_changes`
// (Migrations/postgres/0011), where every change that ends or alters a session, and every move
// of the directory's or the schedule's version, is announced by the database's triggers,
// whoever made it:
//
// - A notice forgets what it names as soon as it arrives (within milliseconds of the commit).
// - The listening connection is asked `SELECT 1` every `heartbeat`; kept sessions are used only
//   while the last answer is at most `trusted` old. A listener that died or hangs therefore
//   stops the use of what is kept within `trusted` (well under the one second a revocation may
//   take), and nothing depends on a notice arriving: without the listener every look-up reads.
// - When the listener (re)connects, everything kept before is forgotten: notices sent while it
//   was away are lost.
// - A look-up that read while a notice (or a loss) arrived keeps nothing (`generation`): what
//   it read may be from before the change.
// - A change made through this store forgets the sessions kept here when it commits
//   (`PostgresTransaction.noteSessionsChanged`), so this server never answers from what it has
//   just changed, whatever the notice's timing.

/// The sessions and searches one store keeps (see above).
final class KeptLookups: Sendable {
    /// How often the listener's connection is asked whether it is there.
    static let heartbeat: TimeAmount = .milliseconds(200)
    /// How old the last answer may be for kept sessions to be used.
    static let trusted: TimeAmount = .milliseconds(600)
    /// How long a session is kept at most (a notice normally ends it sooner).
    static let lifetime: TimeAmount = .seconds(60)
    /// Past this many sessions, all are forgotten and kept again by use.
    static let limit = 100_000
    /// Past this many searches' facts (one per specialization asked for, and one without), all
    /// are forgotten: the key is what a user typed, folded.
    static let searchLimit = 256

    struct Patient { let facts: SignedInPatientFacts; let keptAt: NIODeadline }
    struct Staff { let session: StaffSessionLookup; let keptAt: NIODeadline }

    private struct State {
        var patients: [String: Patient] = [:]
        var staff: [String: Staff] = [:]
        /// A nearest search's facts by specialization key ("" without one).
        var searches: [String: NearestSearchFacts] = [:]
        /// Bumped by every forgetting: a look-up keeps what it read only if none happened meanwhile.
        var generation: UInt64 = 0
        /// The listener's last answer; nil while it is not listening.
        var heardAt: NIODeadline?
        /// The last echo heard (an `e` notice): notices arrive in the order they were sent.
        var lastEcho: String?
        /// How old that answer may be (`trusted`, unless a test on a loaded machine says otherwise).
        var trustedFor = KeptLookups.trusted
    }

    private let state = LockedBox(State())

    private static func usable(_ state: State, at now: NIODeadline) -> Bool {
        guard let heard = state.heardAt else { return false }
        return now - heard <= state.trustedFor
    }

    /// For tests of what is kept: an answer of the listener trusted for `length`, so that a
    /// machine too busy to run the heartbeat on time does not make every look-up read. What a
    /// lost listener stops is unchanged (`lost` forgets its answer).
    func trustAnswers(for length: TimeAmount) { state.withLock { $0.trustedFor = length } }

    /// The kept look-up of a patient's token, if it may be used now.
    func patient(_ tokenHash: String) -> SignedInPatientFacts? {
        let now = NIODeadline.now()
        return state.withLock { state in
            guard Self.usable(state, at: now), let kept = state.patients[tokenHash], now - kept.keptAt <= Self.lifetime else { return nil }
            return kept.facts
        }
    }

    /// The kept staff session of a staff token, if it may be used now.
    func staff(_ tokenHash: String) -> StaffSessionLookup? {
        let now = NIODeadline.now()
        return state.withLock { state in
            guard Self.usable(state, at: now), let kept = state.staff[tokenHash], now - kept.keptAt <= Self.lifetime else { return nil }
            return kept.session
        }
    }

    /// Whether a session last used at `lastUsedAt` may be kept: not when it is near its idle
    /// limit, where a use on another server may have renewed it and the kept last use would end
    /// it early. Near is the last day of a patient's 30 days (`standard`, a session without a
    /// limit of its own), and the last quarter of a web session's own limit (`idleSeconds`:
    /// minutes, against the `lifetime` of a kept look-up). A staff session without a limit of
    /// its own (`standard` nil: the staff API's 12 hours) is always kept.
    static func worthKeeping(lastUsedAt: Date, idleSeconds: Int?, standard: TimeInterval?) -> Bool {
        let idle = Date().timeIntervalSince(lastUsedAt)
        if let idleSeconds { return idle < TimeInterval(idleSeconds) * 0.75 }
        guard let standard else { return true }
        return idle < standard - 86_400
    }

    /// The kept facts of a nearest search, if they may be used now.
    func search(_ key: String?) -> NearestSearchFacts? {
        let now = NIODeadline.now()
        return state.withLock { Self.usable($0, at: now) ? $0.searches[Self.searchKey(key)] : nil }
    }

    /// "" without a specialization, else "k" and its key (which may itself be "").
    private static func searchKey(_ key: String?) -> String { key.map { "k" + $0 } ?? "" }

    func keep(_ facts: NearestSearchFacts, for key: String?, readIn generation: UInt64) {
        keep(facts, at: Self.searchKey(key), in: \.searches, limit: Self.searchLimit, readIn: generation)
    }

    /// The generation a look-up starts reading in; nil when nothing may be kept now.
    func generation() -> UInt64? {
        let now = NIODeadline.now()
        return state.withLock { Self.usable($0, at: now) ? $0.generation : nil }
    }

    func keep(_ facts: SignedInPatientFacts, tokenHash: String, readIn generation: UInt64) {
        keep(Patient(facts: facts, keptAt: .now()), at: tokenHash, in: \.patients, limit: Self.limit, readIn: generation)
    }

    func keep(_ session: StaffSessionLookup, tokenHash: String, readIn generation: UInt64) {
        keep(Staff(session: session, keptAt: .now()), at: tokenHash, in: \.staff, limit: Self.limit, readIn: generation)
    }

    /// Keeps `value` unless something was forgotten since `generation` (what was read may be
    /// older than that); past `limit` entries the whole table is forgotten first.
    private func keep<Value>(_ value: Value, at key: String, in table: WritableKeyPath<State, [String: Value]>, limit: Int,
                             readIn generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state[keyPath: table].count >= limit { state[keyPath: table].removeAll() }
            state[keyPath: table][key] = value
        }
    }

    /// A notice's payload (Migrations/postgres/0011), or "S" from this store's own writes
    /// (`forgetSessions`): forgets what it names; anything else, all.
    func heard(notice payload: String) {
        let kind = payload.first, rest = String(payload.dropFirst())
        state.withLock { state in
            // An echo changes nothing: it says every notice sent before it was heard (`caughtUp`).
            if kind == "e" {
                state.lastEcho = rest
                return
            }
            state.generation &+= 1
            switch (kind, Int64(rest)) {
            case ("p", _) where !rest.isEmpty: state.patients[rest] = nil
            case ("s", _) where !rest.isEmpty: state.staff[rest] = nil
            case ("c", let id?): state.patients = state.patients.filter { $0.value.facts.session.clientId != id }
            case ("a", let id?): state.staff = state.staff.filter { $0.value.session.member.id != id }
            case ("d", _) where rest.isEmpty: state.searches.removeAll()
            case ("S", _) where rest.isEmpty:
                state.patients.removeAll()
                state.staff.removeAll()
            default:
                state.patients.removeAll()
                state.staff.removeAll()
                state.searches.removeAll()
            }
        }
    }

    /// The last echo heard (`PostgresStore.echo`).
    var lastEcho: String? { state.withLock { $0.lastEcho } }

    /// Forgets everything (the listener (re)connected).
    func forgetAll() { heard(notice: "*") }

    /// Forgets every kept session, not the searches (a session or account changed here).
    func forgetSessions() { heard(notice: "S") }

    /// The listener answered: what is kept may be used for `trusted` from now.
    func answered() { state.withLock { $0.heardAt = .now() } }

    /// The listener is gone: nothing kept is used, and all is forgotten.
    func lost() {
        state.withLock { $0.heardAt = nil }
        forgetAll()
    }

    /// Whether kept sessions are used now (the listener answered lately).
    var isListening: Bool {
        let now = NIODeadline.now()
        return state.withLock { Self.usable($0, at: now) }
    }
}

extension PostgresStore {
    /// Starts keeping signed-in sessions and nearest searches' facts: a connection of its own
    /// listens on `clinic_changes` until `shutdown` (`clinic serve` calls this; a command of the
    /// CLI, which looks a token up once, does not). Reconnects after a second when it is lost.
    public func keepLookups() {
        let probe = self.probe, logger = self.logger, kept = keptLookups
        let timeout = url.connectTimeout ?? Self.defaultConnectTimeout
        let task = Task(executorPreference: StoreTaskExecutor.shared) {
            while !Task.isCancelled {
                do {
                    let connection = try await Self.connect(probe, id: 1, seconds: timeout, logger: logger)
                    // Closed however listening ends: on cancellation (shutdown) it may return
                    // rather than throw, and a connection dropped unclosed traps in postgres-nio.
                    let ended: Error?
                    do {
                        try await Self.listen(connection, kept: kept, logger: logger)
                        ended = nil
                    } catch {
                        ended = error
                    }
                    kept.lost()
                    try? await connection.close()
                    if let ended { throw ended }
                } catch {
                    kept.lost()
                    if Task.isCancelled { return }
                    logger.debug("the listener stopped", metadata: ["error": "\(error)"])
                }
                try? await Self.sleep(seconds: 1)
            }
        }
        listener.withLock { $0?.cancel(); $0 = task }
    }

    /// Listens on `connection` until it fails: notices forget, the heartbeat keeps what is kept usable.
    static func listen(_ connection: PostgresConnection, kept: KeptLookups, logger: Logger) async throws {
        try await connection.listen(on: "clinic_changes") { notices in
            // LISTEN is in place: whatever was kept before may have missed notices.
            kept.forgetAll()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await notice in notices { kept.heard(notice: notice.payload) }
                    throw ClinicError(.busy, .storeConnectionLost)
                }
                group.addTask {
                    while !Task.isCancelled {
                        _ = try await withDeadline(seconds: 2) {
                            try await connection.query("SELECT 1", logger: logger).collect().count
                        }
                        kept.answered()
                        try await sleep(KeptLookups.heartbeat)
                    }
                }
                defer { group.cancelAll() }
                _ = try await group.next()
            }
        }
    }

    /// One statement, outside a transaction, unless kept.
    public func nearestSearchFacts(specialization key: String?) throws -> NearestSearchFacts {
        let joined = JoinedPostgresTransaction.current(self) != nil
        if !joined, let facts = keptLookups.search(key) { return facts }
        let generation = joined ? nil : keptLookups.generation()
        let facts = try oneStatement { tx in try tx.nearestSearchFacts(specialization: key) }
        if let generation { keptLookups.keep(facts, for: key, readIn: generation) }
        return facts
    }

    public func signedInPatient(tokenHash: String) throws -> SignedInPatientFacts? {
        let joined = JoinedPostgresTransaction.current(self) != nil
        if !joined, let facts = keptLookups.patient(tokenHash) { return facts }
        let generation = joined ? nil : keptLookups.generation()
        let facts = try oneStatement { tx in try tx.signedInPatient(tokenHash: tokenHash) }
        // A session near its idle limit is not kept: a use elsewhere may have renewed it.
        if let facts, let generation, KeptLookups.worthKeeping(lastUsedAt: facts.session.lastUsedAt,
                                                               idleSeconds: facts.session.idleSeconds, standard: SessionManager.idleLimit) {
            keptLookups.keep(facts, tokenHash: tokenHash, readIn: generation)
        }
        return facts
    }

    public func signedInStaff(tokenHash: String) throws -> StaffSessionLookup? {
        let joined = JoinedPostgresTransaction.current(self) != nil
        if !joined, let session = keptLookups.staff(tokenHash) { return session }
        let generation = joined ? nil : keptLookups.generation()
        guard let session = try oneStatement({ tx in try tx.activeStaffSession(tokenHash: tokenHash) }) else { return nil }
        if let generation, KeptLookups.worthKeeping(lastUsedAt: session.lastUsedAt, idleSeconds: session.idleSeconds,
                                                    standard: nil) {
            keptLookups.keep(session, tokenHash: tokenHash, readIn: generation)
        }
        return session
    }
}

// The same look-ups awaited (issue 56): the kept answer, else the one statement sent and
// awaited on a connection the calling task leases, no thread waiting.
extension PostgresStore {
    public func lookUpPatientSession(tokenHash: String) async throws -> SignedInPatientFacts? {
        if let facts = keptLookups.patient(tokenHash) { return facts }
        let generation = keptLookups.generation()
        let facts = try await awaitedStatement(SignedInPatientStatement(PostgresTransaction.signedInPatientBinds(tokenHash)))
            .map(PostgresTransaction.signedInPatientFacts)
        if let facts, let generation, KeptLookups.worthKeeping(lastUsedAt: facts.session.lastUsedAt,
                                                               idleSeconds: facts.session.idleSeconds, standard: SessionManager.idleLimit) {
            keptLookups.keep(facts, tokenHash: tokenHash, readIn: generation)
        }
        return facts
    }

    public func lookUpStaffSession(tokenHash: String) async throws -> StaffSessionLookup? {
        if let session = keptLookups.staff(tokenHash) { return session }
        let generation = keptLookups.generation()
        guard let session = try await awaitedStatement(SignedInStaffStatement([tokenHash])).map(PostgresTransaction.staffSessionLookup)
        else { return nil }
        if let generation, KeptLookups.worthKeeping(lastUsedAt: session.lastUsedAt, idleSeconds: session.idleSeconds, standard: nil) {
            keptLookups.keep(session, tokenHash: tokenHash, readIn: generation)
        }
        return session
    }

    /// One hot statement's first row, outside a transaction (one statement is a snapshot by
    /// itself), awaited.
    /// `GET /v1/me`'s facts in one awaited statement (`AccountFactsStatement`).
    public func accountFacts(clientId: Int64) async throws -> AccountFacts {
        guard let row = try await awaitedStatement(AccountFactsStatement([clientId, PostgresTransaction.clientsKeyCheckSetting])) else {
            throw ClinicError(.storage, .storageFailure, "the account's look-up returned no row")
        }
        let phoneOwner: Int64? = try row.value("client_id", in: "phones", key: "client_id")
        return AccountFacts(clientExists: (try row.value("client_exists", in: "clients") as Int64) != 0,
                            unreadMessages: Int(try row.value("unread_count", in: "messages") as Int64),
                            phone: phoneOwner == nil ? nil : try StoredPhone(row: row),
                            personalDataKeyCheck: try row.value("key_check", in: "settings", key: "key"))
    }

    func awaitedStatement<Statement: HotStatement & Sendable>(_ statement: Statement) async throws -> StoredRowValues? {
        let sent = statementsSent
        let row = try await withConnection { connection in
            try await AwaitedConnection(connection: connection, logger: self.logger, sent: sent).rows(statement).first
                .map(PostgresTransaction.row)
        }
        return row
    }
}
