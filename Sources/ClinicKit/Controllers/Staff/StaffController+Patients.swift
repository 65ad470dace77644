import Foundation

// Finding a patient at the front desk (issue 29): by the start of a name, surname, e-mail
// address, phone, date of birth or login, through the blind index (`PatientIndex`), among the clinic's own patients.

/// A patient as the front desk's search shows them.
public struct PatientMatch: Sendable, Equatable {
    public let id: Int64
    /// Nil for a walk-in who has not claimed their online account yet.
    public let login: String?
    public let name: String
    public let surname: String
    public let email: String?
    public let birthDate: String?
    public let phone: String?

    init(_ client: Client, id: Int64) {
        self.id = id
        login = client.hasOnlineAccount ? client.login : nil
        name = client.name; surname = client.surname; email = client.email; birthDate = client.birthDate; phone = client.phone
    }
}

extension StaffController {
    /// The most patients one search shows.
    public static let mostPatientsFound = 20

    /// The clinic's patients (`isPatient`: an appointment there in any state, or registered there
    /// as a walk-in; staff see no one else) whose name, surname, e-mail address, phone, date of
    /// birth or login starts with each word of `query`, by
    /// surname and name: receptionists and clinic admins. Only the candidates the index names are
    /// opened; each patient shown is a `patient.search` row in their access log, in the same
    /// transaction. A database whose index is not under its key yet has it made first.
    public func findPatients(_ member: StaffMember, query: String, requestId: String? = nil) throws -> [PatientMatch] {
        try member.checkFrontDesk()
        let words = try PatientIndex.queryWords(query)
        guard let cipher = try database.currentPatientIndex() else { return [] }
        let key = PatientIndex.key(cipher)
        let now = self.now()
        // Candidates are found and opened in a read transaction (no writer's lock held meanwhile);
        // the write records only the patients shown.
        let shown = try Self.ranked(try database.reading { tx in
            try PatientSearchReads.patients(tx, clinicId: member.clinicId, wordTokens: words.map { PatientIndex.token(ofQueryWord: $0, key: key) })
        }, words, cipher: cipher)
        guard !shown.isEmpty else { return [] }
        let audits = Self.searchAudits(shown, member, requestId: requestId, now: now)
        try database.writing { tx in for ask in audits { try AuditLog.append(tx, ask) } }
        return shown.map { PatientMatch($0, id: $0.id ?? 0) }
    }

    /// `findPatients` awaited (issue 56): the checks, the candidates and the audit rows each one
    /// awaited operation of the store. An index not made under the current key (after the key's
    /// rotation) is made first, once, through the store's writers, as the blocking search does.
    public func findPatients(_ member: StaffMember, query: String, requestId: String? = nil) async throws -> [PatientMatch] {
        try member.checkFrontDesk()
        let words = try PatientIndex.queryWords(query)
        let checks = try await database.patientIndexChecks()
        guard let keyCheck = checks.personalData else { return [] }
        var cipher = try database.personalDataKey.cipher(keyCheck: keyCheck)
        if checks.index != PatientIndex.check(cipher) { cipher = try await database.makePatientIndexCurrent() }
        let key = PatientIndex.key(cipher), now = self.now()
        let stored = try await database.searchedPatients(clinicId: member.clinicId,
                                                         wordTokens: words.map { PatientIndex.token(ofQueryWord: $0, key: key) })
        let shown = try Self.ranked(stored, words, cipher: cipher)
        guard !shown.isEmpty else { return [] }
        try await database.appendAudit(Self.searchAudits(shown, member, requestId: requestId, now: now))
        return shown.map { PatientMatch($0, id: $0.id ?? 0) }
    }

    /// The candidates opened, those that match every word (the index's tokens are prefixes of
    /// any field), by surname, name and id, at most `mostPatientsFound`.
    static func ranked(_ stored: [StoredClient], _ words: [String], cipher: FieldCipher) throws -> [Client] {
        let matches = try stored.map { try $0.opened(with: cipher) }.filter { $0.id != nil && PatientIndex.matches($0, words) }
        return Array(matches.sorted { ($0.surname.lowercased(), $0.name.lowercased(), $0.id ?? 0)
            < ($1.surname.lowercased(), $1.name.lowercased(), $1.id ?? 0) }
            .prefix(Self.mostPatientsFound))
    }

    /// One `patient.search` row per patient shown.
    static func searchAudits(_ shown: [Client], _ member: StaffMember, requestId: String?, now: Date) -> [AuditAsk] {
        shown.map { AuditAsk(by: member.auditActor, action: .patientSearch, clientId: $0.id, requestId: requestId,
                             detail: "found by the front desk's search", now: now) }
    }

    /// The patient's page at the front desk: the patient, and their visits at the member's
    /// clinic, the latest first, each with its history (appointments at other clinics stay
    /// unseen). One read in the audit trail the patient sees, as `patient`.
    public func patientPage(_ member: StaffMember, id: Int64, requestId: String? = nil) throws
        -> (patient: PatientMatch, visits: [(appointment: Appointment, history: [AppointmentEvent])]) {
        try member.checkFrontDesk()
        let audit = Self.pageRead(member, requestId: requestId, now: now())
        let page = try Self.shown(try database.writing { tx in
            try DeskPatient.read(tx, store: database, id: id, clinicId: member.clinicId, audit: audit)
        }, id)
        return (page.patient, page.visits)
    }

    /// `patientPage` as the store's one awaited operation (issue 56), with the member's clinic:
    /// what a server runs.
    public func patientPage(_ member: StaffMember, id: Int64, requestId: String? = nil) async throws
        -> (patient: PatientMatch, visits: [(appointment: Appointment, history: [AppointmentEvent])], clinic: Clinic) {
        try member.checkFrontDesk()
        let read = try await database.deskPatient(id: id, clinicId: member.clinicId,
                                                  audit: Self.pageRead(member, requestId: requestId, now: now()))
        let page = try Self.shown(read, id)
        guard let clinic = read?.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId)) }
        return (page.patient, page.visits, clinic)
    }

    /// The audit row of a patient's page read by the member.
    static func pageRead(_ member: StaffMember, requestId: String?, now: Date) -> @Sendable (Int64) -> AuditAsk {
        { id in
            AuditAsk(by: member.auditActor, action: .patientRead, clientId: id, requestId: requestId, detail: "the patient's page", now: now)
        }
    }

    /// The page as shown: another clinic's patient, or none, is `not_found`; the latest visit first.
    static func shown(_ read: DeskPatient?, _ id: Int64) throws
        -> (patient: PatientMatch, visits: [(appointment: Appointment, history: [AppointmentEvent])]) {
        guard let read else { throw ClinicError(.notFound, .staffPatientIdNotFound, String(id)) }
        return (PatientMatch(read.patient, id: id), read.visits.sorted { $0.appointment.startsAt > $1.appointment.startsAt })
    }
}
