import Foundation

// The front desk's waitlist (issue 45): a patient on the phone says "put me on the list";
// receptionists and clinic admins see who waits at their clinic, put a patient on with a
// priority, move an entry up or down, and take one off. The rules of an entry are
// `WaitlistController`'s; each read of patients and each change is in the audit trail.

/// A waiting entry as the front desk sees it: with the patient's name.
public struct StaffWaitlistEntry: Sendable, Equatable {
    public let entry: WaitlistEntry
    public let patientName: String
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
            return entries.map { StaffWaitlistEntry(entry: $0, patientName: names[$0.clientId] ?? "") }
        }
    }

    /// Puts a patient (by login, or by id for a patient of the clinic) on a waitlist of one of
    /// the member's clinic's departments, with a priority (higher is offered first). Every rule
    /// of a patient's own entry holds; the patient's access log says who did it.
    public func addToWaitlist(_ member: StaffMember, patientLogin: String? = nil, patientId: Int64? = nil,
                              _ request: WaitlistController.Request, requestId: String? = nil) throws -> WaitlistEntry {
        try member.checkFrontDesk()
        let now = self.now()
        return try writingJoined { tx in
            guard let department = try tx.department(id: request.departmentId), department.clinicId == member.clinicId else {
                throw ClinicError(.notFound, .departmentNotFound, String(request.departmentId))
            }
            let clientId = try frontDeskPatient(tx, member, login: patientLogin, id: patientId)
            let entry = try waitlist.join(clientId: clientId, request, staffId: member.id)
            try AuditLog.append(tx, by: member.auditActor, action: .waitlistAdd, clientId: clientId, clinicId: member.clinicId,
                                requestId: requestId, detail: "department \(request.departmentId) priority \(entry.priority)", now: now)
            return entry
        }
    }

    /// Sets an entry's priority (the order in which times are offered); the member's clinic's only.
    public func prioritizeWaitlistEntry(_ member: StaffMember, entryId: Int64, priority: Int,
                                        requestId: String? = nil) throws -> WaitlistEntry {
        try member.checkFrontDesk()
        guard WaitlistController.priorities.contains(priority) else { throw ClinicError.invalid(.waitlistPriorityInvalid, String(priority)) }
        let now = self.now()
        return try database.writing { tx in
            var entry = try clinicEntry(tx, member, entryId)
            try tx.setWaitlistEntryPriority(id: entryId, to: priority, at: now)
            try AuditLog.append(tx, by: member.auditActor, action: .waitlistPriority, clientId: entry.clientId,
                                clinicId: member.clinicId, requestId: requestId, detail: "entry \(entryId) priority \(priority)", now: now)
            entry.priority = priority
            entry.updatedAt = now
            return entry
        }
    }

    /// Takes an entry of the member's clinic off the list; an open offer of it goes to the next in line.
    public func removeFromWaitlist(_ member: StaffMember, entryId: Int64, requestId: String? = nil) throws {
        try member.checkFrontDesk()
        let now = self.now()
        try writingJoined { tx in
            let entry = try clinicEntry(tx, member, entryId)
            try waitlist.leave(entryId, clientId: entry.clientId)
            try AuditLog.append(tx, by: member.auditActor, action: .waitlistRemove, clientId: entry.clientId,
                                clinicId: member.clinicId, requestId: requestId, detail: "entry \(entryId)", now: now)
        }
    }

    /// An entry of the member's clinic that is waiting or offered a time; any other is `not_found`.
    private func clinicEntry(_ tx: any StoreReading, _ member: StaffMember, _ entryId: Int64) throws -> WaitlistEntry {
        guard let entry = try tx.waitlistEntry(id: entryId), entry.clinicId == member.clinicId,
              entry.status == .waiting || entry.status == .offered else {
            throw ClinicError(.notFound, .waitlistEntryNotFound, String(entryId))
        }
        return entry
    }
}
