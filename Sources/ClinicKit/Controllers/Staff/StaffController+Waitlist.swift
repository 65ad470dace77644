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

extension StaffController {
    /// The entries waiting (or offered a time) at the member's clinic, optionally at one of its
    /// departments, in the order they are offered times: department, priority (higher first),
    /// joining. Receptionists and clinic admins.
    public func waitlist(_ member: StaffMember, departmentId: Int64? = nil, requestId: String? = nil) throws -> [StaffWaitlistEntry] {
        try member.checkFrontDesk()
        let now = self.now()
        return try database.writing { tx in
            if let departmentId {
                guard let department = try tx.department(id: departmentId), department.clinicId == member.clinicId else {
                    throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
                }
            }
            let entries = try tx.waitlistEntries(ofClinic: member.clinicId, departmentId: departmentId)
            var names: [Int64: String] = [:]
            for clientId in Set(entries.map(\.clientId)).sorted() {
                guard let client = try database.client(tx, id: clientId) else { continue }
                names[clientId] = "\(client.name) \(client.surname)"
                try AuditLog.append(tx, by: member.auditActor, action: .patientRead, clientId: clientId, requestId: requestId,
                                    detail: "waitlist", now: now)
            }
            let sealed = try tx.waitlistNotes(entryIds: entries.compactMap(\.id))
            let cipher = sealed.isEmpty ? nil : try AppointmentNotes.cipher(tx)
            return try entries.map { entry in
                let note = try sealed[entry.id ?? 0].flatMap { data in
                    try cipher.map { String(decoding: try $0.open(bytes: data, context: Self.noteContext(entry.id ?? 0)), as: UTF8.self) }
                }
                return StaffWaitlistEntry(entry: entry, patientName: names[entry.clientId] ?? "", note: note)
            }
        }
    }

    static func noteContext(_ entryId: Int64) -> String { "waitlist-note:\(entryId)" }

    /// Seals and stores an entry's note (empty: none), checked as an appointment's notes are.
    func setNote(_ tx: any StoreWriting, entryId: Int64, _ note: String) throws {
        try WaitlistDecision<Void>.apply(.setNote(entryId: entryId, note: try AppointmentController.checkedNotes(note)), tx, now: now())
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
        try member.checkFrontDesk()
        if let note { _ = try AppointmentController.checkedNotes(note) }
        let now = self.now()
        return try writingJoined { tx in
            guard let department = try tx.department(id: request.departmentId), department.clinicId == member.clinicId else {
                throw ClinicError(.notFound, .departmentNotFound, String(request.departmentId))
            }
            let clientId = try frontDeskPatient(tx, member, login: patientLogin, id: patientId)
            let entry = try waitlist.join(clientId: clientId, request, staffId: member.id)
            if let note, let id = entry.id { try setNote(tx, entryId: id, note) }
            try AuditLog.append(tx, by: member.auditActor, action: .waitlistAdd, clientId: clientId, clinicId: member.clinicId,
                                requestId: requestId, detail: "department \(request.departmentId) priority \(entry.priority)", now: now)
            return entry
        }
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
