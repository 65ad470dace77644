import Foundation

// The front desk's changes awaited (issue 56). Its booking for a patient: one transaction reads the
// department and the patient named (`DeskBookingFacts`), ClinicKit says who (`DeskBookingRules`),
// the waitlist offers that hold the doctor's time are withdrawn and their patients told (the
// desk can always book a held time, issue 55), the booking is made under its locks as a
// patient's is, and its audit row written. A refusal after the patient was found is audited in
// a transaction of its own by the caller (`StaffController.book`). Its message to patients: one
// transaction reads the clinic, the department and the patient named (`DeskMessageFacts`),
// ClinicKit says to whom (`DeskMessageRules`), the store reads the recipients with their
// languages, and writes each one's message and audit row.

/// The awaited front desk changes a `ClinicStore` offers.
public protocol FrontDeskChangesStore: Sendable {
    /// One transaction: the appointment's row locked, the file's row, `removal.decide` (a
    /// refusal deletes nothing), the file deleted with its chunks; then, on SQLite, the log
    /// truncated so that no copy of the file is left in it.
    func removeFile(_ removal: FileRemoval) async throws
    /// One transaction: the appointment's row locked, the author's files counted,
    /// `addition.decide` (a refusal writes nothing), the key check (stored when none), the file's
    /// row, its sealed name and digest, its sealed chunks, the clinic's audit row.
    func addFile(_ addition: FileAddition) async throws -> AttachmentInfo
    /// One transaction: `DeskBookingFacts` for the rules' ask, `rules.patient` (a refusal writes
    /// nothing); when the rules name a doctor's time (`holding`), the open offers whose holds
    /// overlap it (each locked) with their entries' statuses, patients' languages and clinics,
    /// withdrawn as `rules.withdrawing` says; the booking (`rules.booking`: the booking's locks,
    /// gather, decision, write); the audit row `rules.audit` makes of it. Returns the appointment.
    func deskBook(_ rules: DeskBookingRules) async throws -> Appointment
    /// One transaction: `DeskMessageFacts`, `rules.target` (a refusal writes nothing), the
    /// recipients (the patient named, or the clinic's patients with an active appointment in
    /// the day's span, of one department or all, by id) with their languages, and for each the
    /// message and the audit row `rules.messages` makes. Returns how many were written to.
    func deskMessage(_ rules: DeskMessageRules) async throws -> Int
    /// One transaction: `ClaimCodeFacts` (whether they are the clinic's patient; not: nothing
    /// more is read), `rules.decide` (a refusal writes nothing), the code's hash in place of any
    /// earlier one, its e-mail sealed in the outbox when `rules` says, the audit row.
    func deskClaimCode(_ rules: ClaimCodeRules) async throws -> ClaimCode
    /// One transaction: `DeskBookingFacts` for the patient named, `rules.ask.patient` (a refusal
    /// writes nothing); the join as a patient's own (`WaitlistChangesStore.joinWaitlist`: the
    /// patient's lock, `WaitlistJoinFacts`, `rules.joining`, the entries it ends, the new one);
    /// `rules.after`'s note and audit row. Returns the entry.
    func deskJoinWaitlist(_ rules: DeskWaitlistRules) async throws -> WaitlistEntry
    /// One transaction: the hold (its row locked; nil to `decide`: none), `decide` (the audit
    /// row of its release), the hold deleted and the audit row appended.
    func deskReleaseHold(id: Int64, decide: @escaping @Sendable (SlotHold?) throws -> AuditAsk) async throws
    /// One transaction: the appointment read with its row locked (a patient writing in the
    /// conversation holds it, and is waited for), its conversation, `closing.decide`, the
    /// conversation saved closed and the audit row appended.
    func deskCloseThread(_ closing: ThreadClosing) async throws
    /// One transaction: the appointment read with its row locked (the desk's closing and the
    /// other side's message are waited for), `ThreadPostFacts` (the patient's counts after the
    /// lock), `post.decide` (a refusal writes nothing), the conversation saved, the message
    /// sealed and inserted; an answer's inbox message (its e-mail queued when the patient's
    /// address is confirmed) and audit row. Returns the message. The patient's message or the
    /// front desk's answer: a conversation is the clinic's desk and one patient.
    func postInThread(_ post: ThreadPost) async throws -> ThreadMessage
}

/// The front desk closing the conversation about an appointment of its clinic.
public struct ThreadClosing: Sendable {
    public let appointmentId: Int64
    let member: StaffMember
    let requestId: String?
    let now: Date

    /// Only the front desk closes conversations (`forbidden`, before anything is read).
    init(_ member: StaffMember, appointmentId: Int64, requestId: String?, now: Date) throws {
        try member.checkFrontDesk()
        self.member = member; self.appointmentId = appointmentId; self.requestId = requestId; self.now = now
    }

    /// Decided on the appointment (nil: none) and its conversation (nil: none): an appointment
    /// the member may not see is `not_found`, as none; no conversation is `thread_not_found`.
    /// The conversation closed, nothing left unread for the clinic, and the audit row.
    public func decide(appointment: Appointment?, thread: StoredThread?) throws -> (thread: StoredThread, audit: AuditAsk) {
        let visible = try AttachmentController.visible(appointment, appointmentId, to: member)
        guard var thread else { throw ClinicError(.notFound, .threadNotFound, String(appointmentId)) }
        thread.state = .closed
        thread.staffUnread = 0
        return (thread, AuditAsk(by: member.auditActor, action: .threadClose, clientId: visible.clientId, appointmentId: appointmentId,
                                 requestId: requestId, detail: "", now: now))
    }

    /// The closing in the caller's write transaction (the blocking path, and SQLite's).
    package func apply(_ tx: any StoreWriting) throws {
        try tx.lockAppointment(id: appointmentId)
        let (thread, audit) = try decide(appointment: try tx.appointment(id: appointmentId), thread: try tx.thread(ofAppointment: appointmentId))
        try tx.saveThread(thread)
        try AuditLog.append(tx, audit)
    }
}

/// What a walk-in's claim code is decided on: whether they are the member's clinic's patient,
/// the patient (opened: whether they gave an address), the member's clinic.
public struct ClaimCodeFacts: Sendable, Equatable {
    public var patient: Client?
    public var clinic: Clinic?

    public init(patient: Client?, clinic: Clinic?) {
        self.patient = patient; self.clinic = clinic
    }

    /// The gather with the seam's reads, in the caller's transaction (`opened` opens a patient).
    package static func read(_ tx: any StoreReading, _ rules: ClaimCodeRules, opened: (StoredClient) throws -> Client) throws -> ClaimCodeFacts {
        guard rules.patientId > 0, try tx.isPatient(rules.patientId, ofClinic: rules.member.clinicId) else {
            return ClaimCodeFacts(patient: nil, clinic: nil)
        }
        return ClaimCodeFacts(patient: try tx.storedClient(id: rules.patientId).map(opened), clinic: try tx.clinic(id: rules.member.clinicId))
    }
}

/// A one-time code for a walk-in of the member's clinic to claim their account (`StaffController.claimCode`).
public struct ClaimCodeRules: Sendable {
    public let member: StaffMember
    public let patientId: Int64
    /// The code, as the desk reads it out ("ABCD-EFGH-JKLM").
    public let code: String
    public let expiresAt: Date
    public let requestId: String?
    public let now: Date

    /// What is written: the code's hash, whether it is e-mailed (the outbox's body, sealed by
    /// the store to its delivery), the audit row, and the answer.
    public struct Write: Sendable, Equatable {
        public let hash: String
        public let email: String?
        public let audit: AuditAsk
        public let answer: ClaimCode
    }

    /// Another clinic's patient, or none, is `staff_patient_id_not_found`; a patient with an
    /// online account already `invalid_input` (`walk_in_not_walk_in`).
    public func decide(_ facts: ClaimCodeFacts) throws -> Write {
        guard let patient = facts.patient else { throw ClinicError(.notFound, .staffPatientIdNotFound, String(patientId)) }
        guard !patient.hasOnlineAccount else { throw ClinicError.invalid(.walkInNotWalkIn, String(patientId)) }
        guard let clinic = facts.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId)) }
        let emailed = patient.email != nil
        return Write(hash: ClientController.claimCodeHash(code), email: emailed ? Outbox.claimCodeMark + code : nil,
                     audit: AuditAsk(by: member.auditActor, action: .patientClaimCode, clientId: patientId, requestId: requestId,
                                     detail: "a code to claim the account", now: now),
                     answer: ClaimCode(patientId: patientId, code: code, expiresAt: expiresAt, emailed: emailed, zone: clinic.zone))
    }

    /// The whole code in the caller's write transaction (a store whose transactions run
    /// synchronously), with the seam's statements: what `FrontDeskChangesStore.deskClaimCode` does.
    package func run(_ tx: any StoreWriting, store: any ClinicStore) throws -> ClaimCode {
        let write = try decide(try ClaimCodeFacts.read(tx, self) { try store.opened(tx, $0) })
        try tx.replaceClaimCode(ofClient: patientId, hash: write.hash, expiresAt: expiresAt)
        if let email = write.email {
            let id = try tx.enqueueEmailCodeDelivery(toClient: patientId, at: now)
            try tx.setDeliveryPayload(try Self.sealed(email, deliveryId: id, cipher: try store.sealingCipher(tx)), ofDelivery: id)
        }
        try AuditLog.append(tx, write.audit)
        return write.answer
    }

    /// The e-mail's body as its delivery keeps it: sealed under the personal-data key, to the delivery.
    package static func sealed(_ email: String, deliveryId: Int64, cipher: FieldCipher) throws -> Data {
        try cipher.seal(bytes: Data(email.utf8), context: "delivery:\(deliveryId)")
    }
}

/// What a message from the front desk is decided on: the member's clinic, the department
/// asked, and the patient named by login if they are the clinic's.
public struct DeskMessageFacts: Sendable, Equatable {
    public var clinic: Clinic?
    public var department: Department?
    public var patientId: Int64?

    public init(clinic: Clinic?, department: Department?, patientId: Int64?) {
        self.clinic = clinic; self.department = department; self.patientId = patientId
    }

    /// The gather with the seam's reads, in the caller's transaction.
    package static func read(_ tx: any StoreReading, _ rules: DeskMessageRules) throws -> DeskMessageFacts {
        var patientId: Int64?
        if let key = rules.patientLoginKey, let id = try tx.storedClient(loginKey: key)?.client.id,
           try tx.isPatient(id, ofClinic: rules.member.clinicId) {
            patientId = id
        }
        return DeskMessageFacts(clinic: try tx.clinic(id: rules.member.clinicId),
                                department: try rules.departmentId.flatMap { try tx.department(id: $0) }, patientId: patientId)
    }
}

/// A message from the front desk to one patient, or to the day's patients (of one department or all).
public struct DeskMessageRules: Sendable {
    public let member: StaffMember
    public let patientLogin: String?
    public let day: LocalDateTime?
    public let departmentId: Int64?
    /// The message, checked.
    public let text: String
    public let requestId: String?
    public let now: Date

    /// Whom it goes to: one patient, or the clinic's patients with an active appointment in a span.
    public enum Target: Sendable, Equatable {
        case patient(Int64)
        case day(span: Range<Date>, departmentId: Int64?)
    }

    /// The login's look-up key (nil: by day, or a login no patient can have).
    public var patientLoginKey: String? {
        guard let login = patientLogin, login.count <= 64, Client.couldExist(login: login) else { return nil }
        return Client.key(forLogin: login)
    }

    /// To whom: only a patient of the member's clinic (staff see no one else:
    /// `staff_patient_not_found`); a department of the clinic (`department_not_found`); the day
    /// in the clinic's zone (`invalid_day` for one that has no such span).
    public func target(_ facts: DeskMessageFacts) throws -> Target {
        guard let clinic = facts.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId)) }
        if let patientLogin {
            guard let id = facts.patientId else { throw ClinicError(.notFound, .staffPatientNotFound, patientLogin) }
            return .patient(id)
        }
        if let departmentId, facts.department?.clinicId != member.clinicId {
            throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
        }
        guard let day, let span = StaffController.instants(of: day, in: clinic.zone) else {
            throw ClinicError.invalid(.invalidDay, day?.dayText ?? "")
        }
        return .day(span: span, departmentId: departmentId)
    }

    /// Each recipient's message (the subject in their language) and audit row, in order.
    public func messages(_ recipients: [(clientId: Int64, language: Language?)], clinic: Clinic) -> [(PatientMessage, AuditAsk)] {
        recipients.map { recipient in
            let language = recipient.language ?? .en
            return (PatientMessage(clientId: recipient.clientId, clinicId: member.clinicId,
                                    subject: Strings.text(.messageClinicSubject, language, ["", clinic.name]), body: text),
                    AuditAsk(by: member.auditActor, action: .messageSend, clientId: recipient.clientId, requestId: requestId,
                             detail: String(text.prefix(200)), now: now))
        }
    }

    /// The whole message in the caller's write transaction (a store whose transactions run
    /// synchronously), with the seam's statements: what `FrontDeskChangesStore.deskMessage` does.
    package func run(_ tx: any StoreWriting) throws -> Int {
        let facts = try DeskMessageFacts.read(tx, self)
        let ids: [Int64] = switch try target(facts) {
        case .patient(let id): [id]
        case .day(let span, let departmentId): try tx.activePatients(ofClinic: member.clinicId, startingIn: span, departmentId: departmentId)
        }
        guard let clinic = facts.clinic else { return 0 }
        let written = messages(try ids.map { ($0, try tx.messageLanguage(ofClient: $0)) }, clinic: clinic)
        for (message, audit) in written {
            _ = try Inbox.post(tx, clientId: message.clientId, kind: .clinic, subject: message.subject, body: message.body,
                               clinicId: message.clinicId, staffId: member.id, now: now)
            try AuditLog.append(tx, audit)
        }
        return written.count
    }
}

/// What a desk booking is decided on: the department asked, its clinic, and the patient named.
public struct DeskBookingFacts: Sendable, Equatable {
    public var department: Department?
    /// The department's clinic (its zone places the time).
    public var clinic: Clinic?
    /// The patient named: by login, any patient's id; by id, the id of a patient of the member's clinic.
    public var patientId: Int64?

    public init(department: Department?, clinic: Clinic?, patientId: Int64?) {
        self.department = department; self.clinic = clinic; self.patientId = patientId
    }

    /// The gather with the seam's reads, in the caller's transaction.
    package static func read(_ tx: any StoreReading, _ ask: DeskPatientAsk) throws -> DeskBookingFacts {
        let department = try tx.department(id: ask.departmentId)
        var patientId: Int64?
        if let id = ask.patientId {
            patientId = try id > 0 && tx.isPatient(id, ofClinic: ask.member.clinicId) ? id : nil
        } else if let key = ask.patientLoginKey {
            patientId = try tx.storedClient(loginKey: key)?.client.id
        }
        return DeskBookingFacts(department: department, clinic: try department.flatMap { try tx.clinic(id: $0.clinicId) },
                                patientId: patientId)
    }
}

/// A patient the front desk names for a department of its clinic: by id (a patient of the
/// member's clinic only: ids are not to be tried one by one), or by login (any patient).
public struct DeskPatientAsk: Sendable, Equatable {
    public let member: StaffMember
    public let departmentId: Int64
    public let patientId: Int64?
    public let patientLogin: String?

    /// The login's look-up key (nil: by id, or a login no patient can have).
    public var patientLoginKey: String? {
        guard patientId == nil, let login = patientLogin, Client.couldExist(login: login) else { return nil }
        return Client.key(forLogin: login)
    }

    /// The patient: the department must be of the member's clinic (`department_not_found`), the
    /// patient found (`staff_patient_id_not_found` for an id that is not the clinic's patient's,
    /// `staff_patient_not_found` for a login).
    public func patient(_ facts: DeskBookingFacts) throws -> Int64 {
        guard let department = facts.department, department.clinicId == member.clinicId else {
            throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
        }
        guard let id = facts.patientId else {
            if let patientId { throw ClinicError(.notFound, .staffPatientIdNotFound, String(patientId)) }
            throw ClinicError(.notFound, .staffPatientNotFound, patientLogin ?? "")
        }
        return id
    }
}

/// The front desk puts a patient on a department's waitlist (`StaffController.addToWaitlist`).
public struct DeskWaitlistRules: Sendable {
    public let ask: DeskPatientAsk
    public let request: WaitlistController.Request
    /// The desk's note, checked (nil: none).
    public let note: String?
    public let requestId: String?
    public let now: Date

    /// The join for the patient found: as a patient's own (`WaitlistController.joining`), with
    /// the desk's priority, the staff account named.
    public func joining(_ facts: WaitlistJoinFacts, clientId: Int64) throws -> WaitlistJoin {
        let input = try WaitlistController.checkedInput(request, staffId: ask.member.id)
        return try WaitlistController.joining(facts, request, clientId: clientId, staffId: ask.member.id, input: input, now: now)
    }

    public func joinAsk(clientId: Int64) -> WaitlistJoinAsk { WaitlistController.ask(clientId, request) }

    /// What follows the join: the note (sealed by the store to the entry), the audit row.
    public func after(_ entry: WaitlistEntry) -> WaitlistDecision<Void> {
        let note = self.note.flatMap { note in entry.id.map { WaitlistWrite.setNote(entryId: $0, note: note) } }
        return WaitlistDecision(writes: note.map { [$0] } ?? [], now: now, result: (), audits: [AuditAsk(
            by: ask.member.auditActor, action: .waitlistAdd, clientId: entry.clientId, clinicId: ask.member.clinicId, requestId: requestId,
            detail: "department \(request.departmentId) priority \(entry.priority)", now: now)])
    }

    /// The whole join in the caller's write transaction (a store whose transactions run
    /// synchronously), with the seam's statements: what `FrontDeskChangesStore.deskJoinWaitlist` does.
    package func run(_ tx: any StoreWriting) throws -> WaitlistEntry {
        let clientId = try ask.patient(try DeskBookingFacts.read(tx, ask))
        let entry = try joining(try WaitlistJoinFacts.read(tx, joinAsk(clientId: clientId)), clientId: clientId).apply(tx)
        try after(entry).apply(tx)
        return entry
    }
}

/// An open offer whose hold is in the way of a desk booking, with what its withdrawal is told from.
public struct HoldingOffer: Sendable, Equatable {
    public let offer: WaitlistOffer
    /// Its entry's status (nil: gone).
    public let entryStatus: WaitlistEntryStatus?
    /// Its patient's language (nil: none stored).
    public let language: Language?
    /// The offer's clinic (nil: gone).
    public let clinic: Clinic?

    public init(offer: WaitlistOffer, entryStatus: WaitlistEntryStatus?, language: Language?, clinic: Clinic?) {
        self.offer = offer; self.entryStatus = entryStatus; self.language = language; self.clinic = clinic
    }
}

/// A message to a patient that a front desk change writes (its e-mail copy queued when their address is confirmed).
public struct PatientMessage: Sendable, Equatable {
    public let clientId: Int64
    public let clinicId: Int64
    public let subject: String
    public let body: String
}

/// The front desk's booking for a patient, as ClinicKit decides it around the store's reads.
public struct DeskBookingRules: Sendable {
    /// Whom and where: the member, the department, the patient by id or by login.
    public let ask: DeskPatientAsk
    public let doctorId: Int64?
    public let time: TimeInput.Parsed
    public let requestId: String?
    public let now: Date
    /// The booking for the patient found (`AppointmentController`'s, with the member as its staff).
    package let booking: @Sendable (Int64) throws -> AwaitedChange
    /// The patient found, once `patient` found them: a refusal after is audited for them.
    let found = LockedBox<Int64?>(nil)

    /// The patient booked for (`DeskPatientAsk.patient`), remembered for a refusal's audit row.
    public func patient(_ facts: DeskBookingFacts) throws -> Int64 {
        let id = try ask.patient(facts)
        found.withLock { $0 = id }
        return id
    }

    /// The doctor's time the booking takes, in the clinic's zone: the waitlist offers holding it
    /// are withdrawn (nil: no doctor named, or a time the booking will refuse).
    public func holding(_ facts: DeskBookingFacts) -> (doctorId: Int64, span: Range<Date>)? {
        guard let doctorId, let zone = facts.clinic?.zone, let start = try? TimeInput.resolve(time, in: zone) else { return nil }
        return (doctorId, start..<start.addingTimeInterval(60))
    }

    /// The offers withdrawn: each closed with its hold (`closing`), its entry waiting again (that
    /// time is not offered to it again), its patient told in their language.
    public func withdrawing(_ offers: [HoldingOffer]) -> (writes: [WaitlistWrite], messages: [PatientMessage]) {
        var writes: [WaitlistWrite] = [], messages: [PatientMessage] = []
        for holding in offers {
            let offer = holding.offer
            writes += WaitlistController.closing(offer, as: .withdrawn, entryStatus: nil, now: now)
            if holding.entryStatus == .offered { writes.append(.setEntryStatus(id: offer.entryId, status: .waiting)) }
            let language = holding.language ?? .en
            let when = DateText.dateTimeWithZone(offer.startsAt, timeZone: holding.clinic?.zone ?? .gmt, language: language)
            messages.append(PatientMessage(clientId: offer.clientId, clinicId: offer.clinicId,
                                            subject: Strings.text(.waitlistOfferTakenSubject, language),
                                            body: Strings.text(.waitlistOfferTakenBody, language, [when, holding.clinic?.name ?? ""])))
        }
        return (writes, messages)
    }

    /// The audit row of the booking made.
    public func audit(_ booked: Appointment) -> AuditAsk {
        AuditAsk(by: ask.member.auditActor, action: .appointmentBook, clientId: booked.clientId, appointmentId: booked.id,
                 requestId: requestId, detail: DateText.iso8601(booked.startsAt), now: now)
    }

    /// The audit row of a refusal once the patient was found (nil: not found, nothing audited):
    /// in their access log too, and saying nothing of their other bookings (`staffFacing`).
    func refusalAudit(_ shown: ClinicError) -> AuditAsk? {
        guard let clientId = found.current else { return nil }
        return AuditAsk(by: ask.member.auditActor, action: .appointmentBookRefused, clientId: clientId, requestId: requestId,
                        detail: shown.code.rawValue, now: now)
    }

    /// The whole booking in the caller's write transaction (a store whose transactions run
    /// synchronously), with the seam's statements: what `FrontDeskChangesStore.deskBook` does.
    package func run(_ tx: any StoreWriting) throws -> Appointment {
        let facts = try DeskBookingFacts.read(tx, ask)
        let clientId = try patient(facts)
        if let (doctorId, span) = holding(facts) {
            var offers: [HoldingOffer] = []
            for hold in try tx.liveSlotHolds(doctorId: doctorId, overlapping: span, at: now) {
                guard let offer = try tx.openWaitlistOffers(ofClient: hold.clientId).first(where: { $0.holdId == hold.id }) else { continue }
                offers.append(HoldingOffer(offer: offer, entryStatus: try tx.waitlistEntry(id: offer.entryId)?.status,
                                           language: try tx.storedClient(id: offer.clientId)?.client.language,
                                           clinic: try tx.clinic(id: offer.clinicId)))
            }
            let withdrawal = withdrawing(offers)
            try WaitlistDecision(writes: withdrawal.writes, now: now, result: ()).apply(tx)
            for message in withdrawal.messages {
                _ = try Inbox.post(tx, clientId: message.clientId, kind: .waitlist, subject: message.subject, body: message.body,
                                   clinicId: message.clinicId, now: now)
            }
        }
        let booked = try booking(clientId).run(tx)
        try AuditLog.append(tx, audit(booked))
        return booked
    }
}

/// The front desk's release of a hold in the caller's write transaction (the blocking path, and SQLite's).
package enum HoldRelease {
    package static func apply(_ tx: any StoreWriting, id: Int64, decide: (SlotHold?) throws -> AuditAsk) throws {
        let audit = try decide(try tx.slotHold(id: id))
        try tx.deleteSlotHold(id: id)
        try AuditLog.append(tx, audit)
    }
}
