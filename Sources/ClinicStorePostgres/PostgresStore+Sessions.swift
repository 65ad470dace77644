import ClinicKit
import Foundation
import Logging
import NIOCore
import PostgresNIO

// Signed-in sessions kept between requests (issue 44): a bearer token's look-up costs no round
// trip while its session is kept, one when it is not. A server keeps them only while it listens
// on `clinic_sessions` (Migrations/postgres/0011), where every change that ends or alters a
// session is announced by the database's triggers, whoever made it:
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
// - A change made through this store forgets everything kept here when it commits
//   (`PostgresTransaction.noteSessionsChanged`), so this server never answers from what it has
//   just changed, whatever the notice's timing.

/// The sessions one store keeps (see above).
final class KeptSessions: Sendable {
    /// How often the listener's connection is asked whether it is there.
    static let heartbeat: TimeAmount = .milliseconds(200)
    /// How old the last answer may be for kept sessions to be used.
    static let trusted: TimeAmount = .milliseconds(600)
    /// How long a session is kept at most (a notice normally ends it sooner).
    static let lifetime: TimeAmount = .seconds(60)
    /// Past this many sessions, all are forgotten and kept again by use.
    static let limit = 100_000

    struct Patient { let facts: SignedInPatientFacts; let keptAt: NIODeadline }
    struct Staff { let member: StaffMember; let lastUsedAt: Date; let keptAt: NIODeadline }

    private struct State {
        var patients: [String: Patient] = [:]
        var staff: [String: Staff] = [:]
        /// Bumped by every forgetting: a look-up keeps what it read only if none happened meanwhile.
        var generation: UInt64 = 0
        /// The listener's last answer; nil while it is not listening.
        var heardAt: NIODeadline?
    }

    private let state = LockedBox(State())

    private static func usable(_ state: State, at now: NIODeadline) -> Bool {
        guard let heard = state.heardAt else { return false }
        return now - heard <= trusted
    }

    /// The kept look-up of a patient's token, if it may be used now.
    func patient(_ tokenHash: String) -> SignedInPatientFacts? {
        let now = NIODeadline.now()
        return state.withLock { state in
            guard Self.usable(state, at: now), let kept = state.patients[tokenHash], now - kept.keptAt <= Self.lifetime else { return nil }
            return kept.facts
        }
    }

    /// The kept staff member of a staff token, if it may be used now and the session was last
    /// used at or after `lastUsedSince` (as the look-up it stands for requires).
    func staff(_ tokenHash: String, lastUsedSince: Date) -> StaffMember? {
        let now = NIODeadline.now()
        return state.withLock { state in
            guard Self.usable(state, at: now), let kept = state.staff[tokenHash], now - kept.keptAt <= Self.lifetime,
                  kept.lastUsedAt >= lastUsedSince else { return nil }
            return kept.member
        }
    }

    /// The generation a look-up starts reading in; nil when nothing may be kept now.
    func generation() -> UInt64? {
        let now = NIODeadline.now()
        return state.withLock { Self.usable($0, at: now) ? $0.generation : nil }
    }

    func keep(_ facts: SignedInPatientFacts, tokenHash: String, readIn generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.patients.count >= Self.limit { state.patients.removeAll() }
            state.patients[tokenHash] = Patient(facts: facts, keptAt: .now())
        }
    }

    func keep(_ member: StaffMember, lastUsedAt: Date, tokenHash: String, readIn generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.staff.count >= Self.limit { state.staff.removeAll() }
            state.staff[tokenHash] = Staff(member: member, lastUsedAt: lastUsedAt, keptAt: .now())
        }
    }

    /// A notice's payload (Migrations/postgres/0011): forgets what it names; anything else, all.
    func heard(notice payload: String) {
        let kind = payload.first, rest = String(payload.dropFirst())
        state.withLock { state in
            state.generation &+= 1
            switch (kind, Int64(rest)) {
            case ("p", _) where !rest.isEmpty: state.patients[rest] = nil
            case ("s", _) where !rest.isEmpty: state.staff[rest] = nil
            case ("c", let id?): state.patients = state.patients.filter { $0.value.facts.session.clientId != id }
            case ("a", let id?): state.staff = state.staff.filter { $0.value.member.id != id }
            default:
                state.patients.removeAll()
                state.staff.removeAll()
            }
        }
    }

    /// Forgets everything (a change committed here; the listener (re)connected).
    func forgetAll() { heard(notice: "*") }

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
    /// Starts keeping signed-in sessions: a connection of its own listens on `clinic_sessions`
    /// until `shutdown` (`clinic serve` calls this; a command of the CLI, which looks a token
    /// up once, does not). Reconnects after a second when the connection is lost.
    public func keepSessions() {
        let probe = self.probe, logger = self.logger, kept = keptSessions
        let timeout = url.connectTimeout ?? Self.defaultConnectTimeout
        let task = Task(executorPreference: StoreTaskExecutor.shared) {
            while !Task.isCancelled {
                do {
                    let connection = try await Self.withDeadline(seconds: timeout) {
                        try await PostgresConnection.connect(configuration: probe, id: 1, logger: logger)
                    }
                    do {
                        try await Self.listen(connection, kept: kept, logger: logger)
                    } catch {
                        kept.lost()
                        try? await connection.close()
                        throw error
                    }
                } catch {
                    kept.lost()
                    if Task.isCancelled { return }
                    logger.debug("the session listener stopped", metadata: ["error": "\(error)"])
                }
                try? await Self.sleep(seconds: 1)
            }
        }
        listener.withLock { $0?.cancel(); $0 = task }
    }

    /// Listens on `connection` until it fails: notices forget, the heartbeat keeps what is kept usable.
    static func listen(_ connection: PostgresConnection, kept: KeptSessions, logger: Logger) async throws {
        try await connection.listen(on: "clinic_sessions") { notices in
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
                        try await sleep(KeptSessions.heartbeat)
                    }
                }
                defer { group.cancelAll() }
                _ = try await group.next()
            }
        }
    }

    public func signedInPatient(tokenHash: String) throws -> SignedInPatientFacts? {
        let joined = JoinedPostgresTransaction.current(self) != nil
        if !joined, let facts = keptSessions.patient(tokenHash) { return facts }
        let generation = joined ? nil : keptSessions.generation()
        let facts = try oneStatement { tx in try tx.signedInPatient(tokenHash: tokenHash) }
        // A session near its idle limit is not kept: a use elsewhere may have renewed it.
        if let facts, let generation,
           Date().timeIntervalSince(facts.session.lastUsedAt) < SessionManager.idleLimit - 86_400 {
            keptSessions.keep(facts, tokenHash: tokenHash, readIn: generation)
        }
        return facts
    }

    public func signedInStaff(tokenHash: String, lastUsedSince: Date) throws -> StaffMember? {
        let joined = JoinedPostgresTransaction.current(self) != nil
        if !joined, let member = keptSessions.staff(tokenHash, lastUsedSince: lastUsedSince) { return member }
        let generation = joined ? nil : keptSessions.generation()
        guard let (member, lastUsedAt) = try oneStatement({ tx in try tx.activeStaffMemberAndLastUse(sessionTokenHash: tokenHash) }),
              lastUsedAt >= lastUsedSince
        else { return nil }
        if let generation { keptSessions.keep(member, lastUsedAt: lastUsedAt, tokenHash: tokenHash, readIn: generation) }
        return member
    }
}
