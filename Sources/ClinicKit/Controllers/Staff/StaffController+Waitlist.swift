import Foundation

// The front desk's waitlist (issue 45): a patient on the phone says "put me on the list";
// receptionists and clinic admins see who waits at their clinic, put a patient on with a
// priority, move an entry up or down, and take one off. The rules of an entry are
// `WaitlistController`'s; each read of patients and each change is in the audit trail.

/// A waiting entry as the front desk sees it: with the patient's name.
public struct StaffWaitlistEntry: Sendable, Equatable {
    public let entry: WaitlistEntry
    public let patientName: String
    /// The front desk's note on the entry (sealed at rest), nil for none.
    public var note: String? = nil
}

/// What the front desk's waitlist is decided on (`WaitlistChangesStore.staffWaitlist`): the
/// department asked (nil when none was asked or there is no such department), the clinic's
/// entries waiting or offered a time in the order they are offered times, their patients'
/// names ("Name Surname", opened) and the entries' notes (opened).
public struct StaffWaitlistFacts: Sendable {
    public let department: Department?
    public let entries: [WaitlistEntry]
    public let names: [Int64: String]
    public let notes: [Int64: String]

    public init(department: Department?, entries: [WaitlistEntry], names: [Int64: String], notes: [Int64: String]) {
        self.department = department; self.entries = entries; self.names = names; self.notes = notes
    }

    /// The facts as the seam's reads, in the caller's transaction (what SQLite runs).
    public static func read(_ tx: any StoreReading, store: any ClinicStore, clinicId: Int64, departmentId: Int64?) throws
        -> StaffWaitlistFacts {
        let department = try departmentId.flatMap { try tx.department(id: $0) }
        let entries = try tx.waitlistEntries(ofClinic: clinicId, departmentId: departmentId)
        var names: [Int64: String] = [:]
        for clientId in Set(entries.map(\.clientId)) {
            guard let client = try store.client(tx, id: clientId) else { continue }
            names[clientId] = "\(client.name) \(client.surname)"
        }
        let sealed = try tx.waitlistNotes(entryIds: entries.compactMap(\.id))
        let cipher = sealed.isEmpty ? nil : try AppointmentNotes.cipher(tx)
        var notes: [Int64: String] = [:]
        for (id, data) in sealed {
            if let cipher { notes[id] = try StaffController.openedNote(data, entryId: id, cipher: cipher) }
        }
        return StaffWaitlistFacts(department: department, entries: entries, names: names, notes: notes)
    }
}

extension StaffController {
    /// The entries waiting (or offered a time) at the member's clinic, optionally at one of its
    /// departments, in the order they are offered times: department, priority (higher first),
    /// joining. Receptionists and clinic admins.
    public func waitlist(_ member: StaffMember, departmentId: Int64? = nil, requestId: String? = nil) throws -> [StaffWaitlistEntry] {
        try member.checkFrontDesk()
        let now = self.now(), store = database
        return try database.writing { tx in
            let decision = try Self.shownWaitlist(try StaffWaitlistFacts.read(tx, store: store, clinicId: member.clinicId,
                                                                               departmentId: departmentId),
                                                  member, departmentId: departmentId, requestId: requestId, now: now)
            try decision.apply(tx)
            return decision.result
        }
    }

    /// `waitlist` awaited: one transaction of the store (`WaitlistChangesStore.staffWaitlist`),
    /// its audit rows in it.
    public func waitlist(_ member: StaffMember, departmentId: Int64? = nil, requestId: String? = nil) async throws
        -> [StaffWaitlistEntry] {
        try member.checkFrontDesk()
        let now = self.now()
        return try await database.staffWaitlist(clinicId: member.clinicId, departmentId: departmentId) { facts in
            try Self.shownWaitlist(facts, member, departmentId: departmentId, requestId: requestId, now: now)
        }
    }

    /// What the front desk is shown, on the facts: a department asked must be of the member's
    /// clinic (another's is `department_not_found`, as one that does not exist); each entry with
    /// its patient's name and note; one audit row per patient shown (a patient whose record is
    /// gone is shown without a name and not audited).
    public static func shownWaitlist(_ facts: StaffWaitlistFacts, _ member: StaffMember, departmentId: Int64?, requestId: String?,
                                     now: Date) throws -> WaitlistDecision<[StaffWaitlistEntry]> {
        if let departmentId {
            guard let department = facts.department, department.id == departmentId, department.clinicId == member.clinicId else {
                throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
            }
        }
        let audits = Set(facts.entries.map(\.clientId)).sorted().filter { facts.names[$0] != nil }.map { clientId in
            AuditAsk(by: member.auditActor, action: .patientRead, clientId: clientId, requestId: requestId, detail: "waitlist", now: now)
        }
        let shown = facts.entries.map { entry in
            StaffWaitlistEntry(entry: entry, patientName: facts.names[entry.clientId] ?? "", note: facts.notes[entry.id ?? 0])
        }
        return WaitlistDecision(writes: [], now: now, result: shown, audits: audits)
    }

    static func noteContext(_ entryId: Int64) -> String { "waitlist-note:\(entryId)" }

    /// An entry's note as stored, opened with `cipher`.
    public static func openedNote(_ sealed: Data, entryId: Int64, cipher: FieldCipher) throws -> String {
        String(decoding: try cipher.open(bytes: sealed, context: noteContext(entryId)), as: UTF8.self)
    }

    /// An entry's note as stored: sealed under `cipher` to its entry.
    public static func sealedNote(_ note: String, entryId: Int64, cipher: FieldCipher) throws -> Data {
        try cipher.seal(bytes: Data(note.utf8), context: noteContext(entryId))
    }

    /// Puts a patient (by login, or by id for a patient of the clinic) on a waitlist of one of
    /// the member's clinic's departments, with a priority (higher is offered first). Every rule
    /// of a patient's own entry holds; the patient's access log says who did it.
    public func addToWaitlist(_ member: StaffMember, patientLogin: String? = nil, patientId: Int64? = nil,
                              _ request: WaitlistController.Request, note: String? = nil, requestId: String? = nil) throws -> WaitlistEntry {
        try database.writing { tx in try deskWaitlist(member, patientLogin: patientLogin, patientId: patientId, request, note: note,
                                                      requestId: requestId).run(tx) }
    }

    /// `addToWaitlist` awaited: the store's one transaction (`FrontDeskChangesStore.deskJoinWaitlist`).
    public func addToWaitlist(_ member: StaffMember, patientLogin: String? = nil, patientId: Int64? = nil,
                              _ request: WaitlistController.Request, note: String? = nil, requestId: String? = nil) async throws
        -> WaitlistEntry {
        try await database.deskJoinWaitlist(try deskWaitlist(member, patientLogin: patientLogin, patientId: patientId, request, note: note,
                                                             requestId: requestId))
    }

    /// The desk's join's rules: the front desk's, a patient by login or by id, the note checked.
    func deskWaitlist(_ member: StaffMember, patientLogin: String?, patientId: Int64?, _ request: WaitlistController.Request,
                      note: String?, requestId: String?) throws -> DeskWaitlistRules {
        try member.checkFrontDesk()
        guard (patientLogin == nil) != (patientId == nil) else { throw ClinicError.invalid(.staffPatientChoice) }
        return DeskWaitlistRules(ask: DeskPatientAsk(member: member, departmentId: request.departmentId, patientId: patientId,
                                                     patientLogin: patientLogin),
                                 request: request, note: try note.map(AppointmentController.checkedNotes), requestId: requestId, now: now())
    }

    /// Sets an entry's priority (the order in which times are offered); the member's clinic's only.
    public func prioritizeWaitlistEntry(_ member: StaffMember, entryId: Int64, priority: Int,
                                        requestId: String? = nil) throws -> WaitlistEntry {
        try changeWaitlistEntry(member, entryId: entryId, priority: priority, note: nil, requestId: requestId)
    }

    /// Changes an entry of the member's clinic in one transaction: its priority (nil: kept) and
    /// the front desk's note (nil: kept; empty: removed).
    public func changeWaitlistEntry(_ member: StaffMember, entryId: Int64, priority: Int?, note: String?,
                                    requestId: String? = nil) throws -> WaitlistEntry {
        let now = self.now()
        let checked = try Self.checkedChange(member, priority: priority, note: note)
        return try database.writing { tx in
            let decision = try Self.changing(try WaitlistEntryState.read(tx, id: entryId), member, entryId: entryId, priority: priority,
                                             note: checked, requestId: requestId, now: now)
            try decision.apply(tx)
            return decision.result
        }
    }

    /// `changeWaitlistEntry` awaited: one transaction of the store (`changeWaitlistEntry`), its
    /// audit rows in it.
    public func changeWaitlistEntry(_ member: StaffMember, entryId: Int64, priority: Int?, note: String?,
                                    requestId: String? = nil) async throws -> WaitlistEntry {
        let now = self.now()
        let checked = try Self.checkedChange(member, priority: priority, note: note)
        return try await database.changeWaitlistEntry(id: entryId) { state in
            try Self.changing(state, member, entryId: entryId, priority: priority, note: checked, requestId: requestId, now: now)
        }
    }

    /// A change's input checked before any store is asked: the member at the front desk, the
    /// priority within `WaitlistController.priorities`, the note as an appointment's notes are
    /// (returned checked).
    static func checkedChange(_ member: StaffMember, priority: Int?, note: String?) throws -> String? {
        try member.checkFrontDesk()
        if let priority, !WaitlistController.priorities.contains(priority) {
            throw ClinicError.invalid(.waitlistPriorityInvalid, String(priority))
        }
        return try note.map { try AppointmentController.checkedNotes($0) }
    }

    /// The front desk's change of an entry decided: an entry of the member's clinic waiting or
    /// offered a time (any other is `not_found`); the priority set (the entry answered with it)
    /// and the note stored, each with its audit row.
    public static func changing(_ state: WaitlistEntryState?, _ member: StaffMember, entryId: Int64, priority: Int?, note: String?,
                                requestId: String?, now: Date) throws -> WaitlistDecision<WaitlistEntry> {
        guard var entry = state?.entry, entry.clinicId == member.clinicId, entry.status == .waiting || entry.status == .offered else {
            throw ClinicError(.notFound, .waitlistEntryNotFound, String(entryId))
        }
        var writes: [WaitlistWrite] = [], audits: [AuditAsk] = []
        func audit(_ detail: String) -> AuditAsk {
            AuditAsk(by: member.auditActor, action: .waitlistPriority, clientId: entry.clientId, clinicId: member.clinicId,
                     requestId: requestId, detail: detail, now: now)
        }
        if let priority {
            writes.append(.setPriority(id: entryId, priority: priority))
            audits.append(audit("entry \(entryId) priority \(priority)"))
            entry.priority = priority
            entry.updatedAt = now
        }
        if let note {
            writes.append(.setNote(entryId: entryId, note: note))
            audits.append(audit("entry \(entryId) note"))
        }
        return WaitlistDecision(writes: writes, now: now, result: entry, audits: audits)
    }

    /// Takes an entry of the member's clinic off the list; an open offer of it goes to the next in line.
    public func removeFromWaitlist(_ member: StaffMember, entryId: Int64, requestId: String? = nil) throws {
        try member.checkFrontDesk()
        let now = self.now()
        try database.writing { tx in
            try Self.removing(try WaitlistEntryState.read(tx, id: entryId), member, entryId: entryId, requestId: requestId, now: now).apply(tx)
        }
    }

    /// `removeFromWaitlist` awaited: one transaction of the store (`changeWaitlistEntry`), its
    /// audit row in it.
    public func removeFromWaitlist(_ member: StaffMember, entryId: Int64, requestId: String? = nil) async throws {
        try member.checkFrontDesk()
        let now = self.now()
        try await database.changeWaitlistEntry(id: entryId) { state in
            try Self.removing(state, member, entryId: entryId, requestId: requestId, now: now)
        }
    }

    /// The front desk's removal decided: the patient's leaving (`WaitlistController.leaving`)
    /// of an entry of the member's clinic (any other is `not_found`), with its audit row.
    public static func removing(_ state: WaitlistEntryState?, _ member: StaffMember, entryId: Int64, requestId: String?,
                                now: Date) throws -> WaitlistDecision<Void> {
        guard let state, state.entry.clinicId == member.clinicId else { throw ClinicError(.notFound, .waitlistEntryNotFound, String(entryId)) }
        let leaving = try WaitlistController.leaving(state, id: entryId, clientId: state.entry.clientId, now: now)
        return WaitlistDecision(writes: leaving.writes, now: now, result: (), audits: [AuditAsk(
            by: member.auditActor, action: .waitlistRemove, clientId: state.entry.clientId, clinicId: member.clinicId,
            requestId: requestId, detail: "entry \(entryId)", now: now)])
    }
}
