import ClinicKit
import Foundation
import GRDB

// The hot reads a server awaits (issue 56): run on GRDB's reader queue with its async `read`,
// which suspends the caller's task instead of blocking its thread.

extension SQLiteStore {
    /// One read transaction (a snapshot), awaited.
    func readAwaited<T: Sendable>(_ body: @escaping @Sendable (any StoreReading) throws -> T) async throws -> T {
        do {
            return try await writer.read { db in try body(SQLiteTransaction(db: db, manager: self)) }
        } catch {
            throw Self.mapped(error)
        }
    }

    public func lookUpPatientSession(tokenHash: String) async throws -> SignedInPatientFacts? {
        try await readAwaited { tx in try SignedInPatientFacts.read(tx, tokenHash: tokenHash) }
    }

    public func lookUpStaffSession(tokenHash: String) async throws -> StaffSessionLookup? {
        try await readAwaited { tx in try tx.activeStaffSession(tokenHash: tokenHash) }
    }

    public func accountFacts(clientId: Int64) async throws -> AccountFacts {
        try await readAwaited { tx in try AccountFacts.read(tx, clientId: clientId) }
    }

    public func gatherSlotFacts(departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>, takenSpan: Range<Date>,
                                at now: Date) async throws -> SlotFacts? {
        try await readAwaited { tx in
            try SlotFacts.read(tx, departmentId: departmentId, visitTypeId: visitTypeId, days: days, takenSpan: takenSpan, at: now)
        }
    }
}

// MARK: The inbox (`InboxStore`): reads on the reader queue, changes in the next batch

extension SQLiteStore {
    public func inbox(clientId: Int64, unreadOnly: Bool, limit: Int) async throws -> [InboxMessage]? {
        try await readAwaited { tx in
            try tx.clientExists(id: clientId) ? try Inbox.messages(tx, clientId: clientId, unreadOnly: unreadOnly, limit: limit) : nil
        }
    }

    public func markRead(messageId: Int64, clientId: Int64, at now: Date) async throws -> InboxMessage? {
        try await commit { try self.writing { tx in try tx.markMessageRead(messageId, ofClient: clientId, at: now) } }
    }

    public func recordReport(_ report: TextReport, ofDelivery deliveryId: Int64, at now: Date) async throws -> Bool {
        try await commit { try self.writing { tx in try tx.recordTextReport(report, ofDelivery: deliveryId, at: now) } }
    }

    public func replySender(number: String) async throws -> ReplySender? {
        try await readAwaited { tx in try ReplySender.read(tx, store: self, number: number) }
    }

    public func client(id: Int64) async throws -> Client? {
        try await readAwaited { tx in try tx.storedClient(id: id).map { try self.opened(tx, $0) } }
    }

    public func textGatewaySeen() async throws -> Int64? {
        try await readAwaited { tx in try tx.setting(Outbox.textGatewaySetting).flatMap { Int64($0) } }
    }

    public func exportFacts(clientId: Int64) async throws -> PersonalExportFacts {
        try await readAwaited { tx in try PersonalExportFacts.read(tx, clientId: clientId) }
    }

    public func markAllRead(clientId: Int64, at now: Date) async throws -> Int {
        try await commit { try self.writing { tx in try Inbox.markAllRead(tx, clientId: clientId, at: now) } }
    }

    public func unreadCount(clientId: Int64) async throws -> Int {
        try await readAwaited { tx in try Inbox.unreadCount(tx, clientId: clientId) }
    }
}

// MARK: Sessions ended (`SessionStore`), in the next batch

extension SQLiteStore {
    public func endPatientSession(tokenHash: String) async throws -> Bool {
        try await commit { try self.writing { tx in try tx.deleteSession(tokenHash: tokenHash) } }
    }

    public func endPatientSession(id: Int64, clientId: Int64) async throws -> Bool {
        try await commit { try self.writing { tx in try tx.deleteSession(id: id, ofClient: clientId) } }
    }

    public func endStaffSession(tokenHash: String) async throws -> Bool {
        try await commit { try self.writing { tx in try tx.deleteStaffSession(tokenHash: tokenHash) } }
    }

    public func touchPatientSession(tokenHash: String, at: Date) async throws {
        try await commit { try self.writing { tx in try tx.touchSession(tokenHash: tokenHash, at: at) } }
    }

    public func touchStaffSession(tokenHash: String, at: Date) async throws {
        try await commit { try self.writing { tx in try tx.touchStaffSession(tokenHash: tokenHash, at: at) } }
    }

    public func patientSessions(clientId: Int64, lastUsedSince: Date) async throws -> [StoredSession] {
        try await readAwaited { tx in try tx.sessions(ofClient: clientId, lastUsedSince: lastUsedSince) }
    }
}

// MARK: A patient's appointments (`PatientAppointmentsStore`), on the reader queue

extension SQLiteStore {
    public func patientAppointments(clientId: Int64) async throws -> [Appointment] {
        try await readAwaited { tx in try tx.appointments(ofClient: clientId) }
    }

    public func appointmentWithHistory(id: Int64) async throws -> (appointment: Appointment, history: [AppointmentEvent])? {
        try await readAwaited { tx in
            guard let appointment = try tx.appointment(id: id) else { return nil }
            return (appointment, try tx.appointmentEvents(of: [id]))
        }
    }

    public func calendarFeed(tokenHash: String) async throws -> CalendarFeedFacts? {
        try await readAwaited { tx in try CalendarFeedFacts.read(tx, tokenHash: tokenHash) }
    }

    public func slotHold(id: Int64) async throws -> SlotHold? {
        try await readAwaited { tx in try tx.slotHold(id: id) }
    }

    public func patientWaitlist(clientId: Int64) async throws -> PatientWaitlistFacts {
        try await readAwaited { tx in try PatientWaitlistFacts.read(tx, clientId: clientId) }
    }

    public func offerByLink(hash: String) async throws -> OfferLinkFacts? {
        try await readAwaited { tx in try OfferLinkFacts.read(tx, hash: hash) }
    }
}

// MARK: The directory (`DirectoryReadsStore`), on the reader queue

extension SQLiteStore {
    public func clinics(matching filter: ClinicFilter) async throws -> [Clinic] {
        try await readAwaited { tx in try tx.clinics(matching: filter) }
    }

    public func clinicWithDepartments(id: Int64) async throws -> (clinic: Clinic, departments: [Department])? {
        try await readAwaited { tx in
            guard let clinic = try tx.clinic(id: id) else { return nil }
            return (clinic, try tx.departments(ofClinic: id))
        }
    }

    public func departmentWithClinic(id: Int64) async throws -> (department: Department, clinic: Clinic)? {
        try await readAwaited { tx in
            guard let department = try tx.department(id: id), let clinic = try tx.clinic(id: department.clinicId) else { return nil }
            return (department, clinic)
        }
    }

    public func doctorPlace(id: Int64) async throws -> DoctorPlace? {
        try await readAwaited { tx in try DoctorPlace.read(tx, doctorId: id) }
    }

    public func visitType(id: Int64) async throws -> VisitType? {
        try await readAwaited { tx in try tx.visitType(id: id) }
    }

    public func setting(_ key: String) async throws -> String? {
        try await readAwaited { tx in try tx.setting(key) }
    }

    public func mapVersionFacts() async throws -> MapVersionFacts {
        try await readAwaited { tx in try MapVersionFacts.read(tx) }
    }

    public func mapSnapshot() async throws -> (version: MapVersionFacts, clinics: [MapClinic]) {
        try await readAwaited { tx in (try MapVersionFacts.read(tx), try tx.mapClinics()) }
    }

    public func departmentDoctors(id: Int64) async throws -> [DoctorWithHours]? {
        try await readAwaited { tx in try DoctorWithHours.read(tx, departmentId: id) }
    }

    public func departmentVisitTypes(id: Int64) async throws -> [VisitType]? {
        try await readAwaited { tx in
            guard try tx.department(id: id) != nil else { return nil }
            return try tx.visitTypes(ofDepartment: id, includingInactive: false)
        }
    }
}

extension SQLiteStore {
    public func geocodeFacts(_ ask: GeocodeFactsRequest) async throws -> GeocodeFacts {
        try await readAwaited { tx in try GeocodeFacts.read(tx, ask) }
    }

    public func recordGeocode(_ write: GeocodeCacheWrite) async throws {
        try await commit { try self.writing { tx in try write.apply(tx) } }
    }
}

// MARK: The nearest-clinic search (`NearestSearchStore`): reads on the reader queue

extension SQLiteStore {
    public func searchFacts(specialization key: String?) async throws -> NearestSearchFacts {
        try await readAwaited { tx in try NearestSearchFacts.read(tx, specialization: key) }
    }

    public func directoryPoints() async throws -> DirectorySnapshot<ClinicPoint> {
        try await readAwaited { tx in DirectorySnapshot(rows: try tx.clinicPoints(), version: try tx.directoryVersion()) }
    }

    public func directoryClinics() async throws -> DirectorySnapshot<Clinic> {
        try await readAwaited { tx in DirectorySnapshot(rows: try tx.allClinics(), version: try tx.directoryVersion()) }
    }

    public func searchedClinics(ids: [Int64]) async throws -> [Clinic] {
        try await readAwaited { tx in try tx.clinics(ids: ids) }
    }

    public func knownSpecializations() async throws -> [String] {
        try await readAwaited { tx in try tx.specializationKeys() }
    }

    public func specializationDepartments(_ key: String) async throws -> [Int64: Int64] {
        try await readAwaited { tx in try tx.departmentsByClinic(specialization: key) }
    }

    public func longestStretch(specialization key: String) async throws -> Int {
        try await readAwaited { tx in try tx.longestWorkingStretch(specialization: key) }
    }
}

// MARK: The clinic admin's reads (`ClinicAdminReadsStore`): reads on the reader queue

extension SQLiteStore {
    public func clinicDoctors(clinicId: Int64) async throws -> [ClinicDoctor] {
        try await readAwaited { tx in try ClinicDoctor.read(tx, clinicId: clinicId) }
    }

    public func doctorWeek(doctorId: Int64) async throws -> DoctorWeek? {
        try await readAwaited { tx in try DoctorWeek.read(tx, doctorId: doctorId) }
    }

    public func staffAccounts(clinicId: Int64) async throws -> [StaffMember] {
        try await readAwaited { tx in try tx.staffMembers(ofClinic: clinicId) }
    }

    public func everyVisitType(departmentId: Int64) async throws -> (clinicId: Int64, types: [VisitType])? {
        try await readAwaited { tx in
            guard let department = try tx.department(id: departmentId) else { return nil }
            return (department.clinicId, try tx.visitTypes(ofDepartment: departmentId, includingInactive: true))
        }
    }
}

// MARK: The front desk's other reads (`FrontDeskReadsStore`): reads on the reader queue

extension SQLiteStore {
    public func deskAppointment(id: Int64, withPatient: Bool) async throws -> DeskAppointment? {
        try await readAwaited { tx in try DeskAppointment.read(tx, store: self, id: id, withPatient: withPatient) }
    }

    public func monthFacts(clinicId: Int64, plan: @escaping @Sendable (Clinic) throws -> MonthPlan) async throws -> MonthFacts? {
        try await readAwaited { tx in try MonthFacts.read(tx, clinicId: clinicId, plan: plan) }
    }

    public func liveHolds(doctorIds: [Int64], overlapping span: Range<Date>, at now: Date) async throws -> [SlotHold] {
        try await readAwaited { tx in
            try doctorIds.flatMap { try tx.liveSlotHolds(doctorId: $0, overlapping: span, at: now) }
                .sorted { ($0.startsAt, $0.id ?? 0) < ($1.startsAt, $1.id ?? 0) }
        }
    }
}

// MARK: The front desk's patient search (`PatientSearchStore`): reads on the reader queue, the
// audit rows in the next batch

extension SQLiteStore {
    public func makePatientIndexCurrent() async throws -> FieldCipher {
        try await commit { try self.writing { tx in try self.makePatientIndexCurrent(tx) } }
    }

    public func patientIndexChecks() async throws -> PatientIndexChecks {
        try await readAwaited { tx in try PatientSearchReads.checks(tx) }
    }

    public func searchedPatients(clinicId: Int64, wordTokens: [Data]) async throws -> [StoredClient] {
        try await readAwaited { tx in try PatientSearchReads.patients(tx, clinicId: clinicId, wordTokens: wordTokens) }
    }

    public func appendAudit(_ asks: [AuditAsk]) async throws {
        try await commit { try self.writing { tx in for ask in asks { try AuditLog.append(tx, ask) } } }
    }
}
