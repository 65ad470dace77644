import Foundation

// The storage seam (issue #25). The rules (booking, lifecycle, sessions, throttling, staff
// permissions, audit, inbox, outbox, idempotency, settings, directory import) live in
// ClinicKit; what they need from a store is one transaction at a time that offers named reads
// and writes ("appointments of doctor D overlapping [a, b)", "insert an appointment", "claim
// outbox rows"), never SQL. Each store (SQLite, PostgreSQL) implements these protocols in its
// own code and turns its own constraint violations into the domain's errors.
//
// A transaction's body is synchronous domain code: each store runs it on threads of its own
// (SQLite on its driver's writer and reader queues), never on an event loop or a cooperative
// thread. The use cases moving to awaited operations of the store (issue 56: `ClinicStore.book`,
// `changeAppointment`, `moveAppointment`) gather, let ClinicKit decide (`BookingRules`), and
// write in one transaction the caller awaits: on PostgreSQL with no thread blocked. See
// docs/ARCHITECTURE.md, "The storage seam".
//
// The operations are grouped by area, one protocol per area in its own file of Storage/Seam/;
// a store's transaction conforms to all of them. Each store is a target of its own
// (ClinicStoreSQLite, ClinicStorePostgres) depending on ClinicKit, never the other way: rows
// come back as ClinicKit's own (`StoredRow`), and only a program's composition root names a
// store.

/// What a read transaction offers: a consistent snapshot.
public protocol StoreReading: AppointmentReading, AttachmentReading, ClientReading, DirectoryReading, GeoReading, MessageReading, SecurityReading,
                              StaffReading, WaitlistReading, TextReading {
    /// The store's personal-data key (`ClinicStore.personalDataKey`), with which the
    /// transaction's appointment notes are sealed and opened; nil only in a SQLite
    /// transaction made for a function that reads none.
    var personalDataKey: PersonalDataKey? { get }
}

/// What a write transaction offers: everything a read does, and the changes. A write
/// transaction's checks hold until it commits (SQLite: IMMEDIATE under the writer lock).
public protocol StoreWriting: StoreReading, AppointmentWriting, AttachmentWriting, ClientWriting, DirectoryWriting, GeoWriting, MessageWriting,
                              SecurityWriting, StaffWriting, WaitlistWriting, TextWriting {
    /// Everything a booking or a move is decided on (`BookingFacts.swift`), read where the
    /// store's locks keep it true until the transaction ends: a store that shares its data
    /// with other servers takes them first.
    func bookingFacts(_ ask: BookingFactsRequest) throws -> BookingFacts
    /// What a hold is decided on (`HoldFacts`): the store first releases the patient's holds
    /// and every expired one, then gathers as `bookingFacts` does, with the candidate doctors'
    /// live holds; under the same locks.
    func holdFacts(_ ask: BookingFactsRequest) throws -> HoldFacts
    /// Writes a new appointment (its notes as stored), its history entry and the patient's
    /// message with its delivery, together; the appointment returned has its id. The store's
    /// constraints refuse a double booking as `insertStoredAppointment`'s do.
    func insertBooking(_ appointment: Appointment, event: AppointmentEvent, message: NewInboxMessage?) throws -> Appointment
    /// Everything a patient's change of an appointment is decided on (`AppointmentChangeFacts`);
    /// nil when there is no such appointment.
    func appointmentChangeFacts(id: Int64) throws -> AppointmentChangeFacts?
    /// Writes a change of an appointment's time, doctor or status (its notes are left as they
    /// are stored), its history entry and the patient's message with its delivery, together,
    /// under the same constraints as `updateStoredAppointment`; the message's id (nil: none).
    @discardableResult
    func changeAppointment(_ appointment: Appointment, event: AppointmentEvent, message: NewInboxMessage?) throws -> Int64?
}

/// A store: transactions over it. Everything that must hold across requests (and, on a shared
/// store, across servers) is inside one of these.
public protocol ClinicStore: AnyObject, InboxStore, SessionStore, PatientAppointmentsStore, DirectoryReadsStore, LogInStore,
                            AccountSecurityStore, WaitlistReadsStore, WaitlistChangesStore, ClientChangesStore, GeocodeStore,
                            NearestSearchStore, RegistrationStore, FrontDeskStore, ClinicAdminReadsStore,
                            FrontDeskReadsStore, StaffAccountsStore, PatientSearchStore, WaitlistWorkStore, FrontDeskChangesStore,
                            ClaimStore, ClinicAdminChangesStore, PhoneNetworkStore, ProfileReadsStore, OperatorStore,
                            OutboxStore {
    /// One read transaction (a snapshot).
    func reading<T>(_ body: (any StoreReading) throws -> T) throws -> T
    /// One write transaction: the body's changes commit together or not at all.
    func writing<T>(_ body: (any StoreWriting) throws -> T) throws -> T
    /// One write transaction that the writes made inside `body` on this thread join, each in a
    /// savepoint of its own: what they change and what `body` records beside it commit together
    /// or not at all (an idempotent request and its kept response; a clinic admin's change and
    /// its audit row).
    func writingJoined<T>(_ body: (any StoreWriting) throws -> T) throws -> T
    /// The key personal data is sealed with before the store sees it (`PersonalDataKey`).
    var personalDataKey: PersonalDataKey { get }
    /// The audit trail's key (`AuditKeyRing`).
    var auditKeys: AuditKeyRing { get }
    /// Whether every write is refused before it starts (a SQLite file this user may not write).
    var isReadOnly: Bool { get }
    /// The schema version of the store and the newest this program has, awaited (a server's
    /// readiness: `/readyz`).
    func awaitedSchemaStatus() async throws -> (current: Int, latest: Int)
    // MARK: The writers of a process's awaited writes (issue 56)

    /// Starts the store's writers, if it has any (a server does, once, before its first write;
    /// otherwise the first write starts them with the defaults). How a use case's transaction
    /// is written is the store's: SQLite batches the writes waiting at a moment in one
    /// transaction of at most `maximumBatch` (group commit, `ClinicStoreSQLite/GroupCommit.swift`),
    /// and `report` hears of every batch before its writes are answered; PostgreSQL awaits each
    /// on a leased connection and has no writers.
    func startWriters(maximumBatch: Int, report: @escaping @Sendable (WriteBatchReport) -> Void)
    /// Writes waiting for a writer.
    var queuedWrites: Int { get }
    /// Finishes the writes queued and stops the writers (a server's shutdown); a later write
    /// starts new ones. Blocks the calling thread until they are done.
    func drainWriters()

    // MARK: Use cases as one async operation each (issue 56)

    /// A booking (or a booked hold) in one transaction: the store gathers `BookingFacts` for
    /// `ask` under the locks that keep them true, `decide` (a pure function of them,
    /// `BookingRules.book`) says what to write, and the store writes it
    /// (`BookingDecision.write`: the appointment, its history entry, the patient's message).
    /// Returns the appointment as written, its notes in clear.
    func book(_ ask: BookingFactsRequest, decide: @escaping @Sendable (BookingFacts) throws -> BookingDecision) async throws -> Appointment
    /// A change of one appointment's status in one transaction (a patient's cancellation or
    /// confirmation): the store gathers `AppointmentChangeFacts` for `id` (nil: no such
    /// appointment), `decide` says what to write (nil: nothing to change), the store writes it
    /// (`StoreWriting.changeAppointment`). Returns the appointment as it then is, its notes opened.
    func changeAppointment(id: Int64, decide: @escaping @Sendable (AppointmentChangeFacts?) throws -> BookingDecision?) async throws -> Appointment
    /// A patient's move of one appointment in one transaction: the store gathers
    /// `AppointmentChangeFacts` for `id`, `plan` checks them and says what booking facts the new
    /// time is decided on, the store gathers those under the booking's locks, `decide` says
    /// what to write (nil: the same time, nothing to change), the store writes it. Returns the
    /// appointment as it then is, its notes opened.
    func moveAppointment(id: Int64, plan: @escaping @Sendable (AppointmentChangeFacts?) throws -> BookingFactsRequest,
                         decide: @escaping @Sendable (AppointmentChangeFacts, BookingFacts) throws -> BookingDecision?) async throws -> Appointment
    /// A patient's hold booked in one transaction: the store reads the hold (nil: no such
    /// hold), `plan` checks it is the patient's and says what booking facts its time is decided
    /// on (the hold itself out of the way), the store gathers those under the booking's locks,
    /// `decide` says what to write, and the store writes the booking and deletes the hold.
    /// Returns the appointment as written, its notes in clear.
    func bookHold(id: Int64, plan: @escaping @Sendable (SlotHold?) throws -> BookingFactsRequest,
                  decide: @escaping @Sendable (SlotHold, BookingFacts) throws -> BookingDecision) async throws -> Appointment
    /// A patient's hold of a time in one transaction: under the booking's locks, every expired
    /// hold and the patient's own released, the booking's facts gathered with the holds
    /// (`HoldFacts`), `decide` (`BookingRules.hold`) says which hold to keep, the store inserts
    /// it (`slot_taken` when another hold or booking took the time meanwhile). Returns the hold
    /// with its id. A refusal keeps the patient's earlier hold.
    func hold(_ ask: BookingFactsRequest, decide: @escaping @Sendable (HoldFacts) throws -> SlotHold) async throws -> SlotHold
    /// `hold` with the answer to its `Idempotency-Key` kept in the same transaction, as
    /// `perform(_:keeping:answer:)` keeps a booking's.
    func hold(_ ask: BookingFactsRequest, decide: @escaping @Sendable (HoldFacts) throws -> SlotHold,
              keeping request: IdempotentRequest, answer: @escaping IdempotentRequest.Answer<SlotHold>) async throws
        -> IdempotencyStore.Response
    /// One of the patient's changes with the answer to its `Idempotency-Key`, in one
    /// transaction: expired keys forgotten when `request` says so; the answer kept for the key
    /// replayed (changing nothing); else the change run as its own operation above does, and
    /// `answer`'s answer to its outcome kept (a refusal's too, with nothing of the change
    /// written). An answer is sealed under the personal-data key (`IdempotentRequest.kept`).
    /// Two copies of one request at once: the second waits for the first and replays its answer.
    func perform(_ change: AwaitedChange, keeping request: IdempotentRequest,
                 answer: @escaping IdempotentRequest.Answer<Appointment>) async throws -> IdempotencyStore.Response
    /// What a bearer token's look-up needs, gathered at once: the session whose token hashes to
    /// `tokenHash`, its patient as stored and the personal-data key check (nil when the
    /// patient's row has nothing sealed). Nil when no session has that hash. This is the hot
    /// path of every signed-in request: a store does it in one round trip where it can (one
    /// statement is a consistent snapshot by itself); the rules (is the token well formed, is
    /// the session idle too long) are `SessionManager`'s.
    func signedInPatient(tokenHash: String) throws -> SignedInPatientFacts?
    /// The staff session whose token hashes to `tokenHash` with its active account
    /// (`StaffReading.activeStaffSession`), in one round trip where the store can: the hot path
    /// of every staff request. Whether the session is still live is `StaffController`'s rule.
    func signedInStaff(tokenHash: String) throws -> StaffSessionLookup?
    /// `signedInPatient` awaited (issue 56): what every signed-in request of a server does
    /// first, with no thread waiting for the store (SQLite: a read on its reader queue; PostgreSQL:
    /// the statement awaited on a leased connection, or the look-up kept).
    func lookUpPatientSession(tokenHash: String) async throws -> SignedInPatientFacts?
    /// `signedInStaff` awaited (issue 56), as `lookUpPatientSession`.
    func lookUpStaffSession(tokenHash: String) async throws -> StaffSessionLookup?
    /// The patient's unread messages, phone and key check in one awaited read (`GET /v1/me`).
    func accountFacts(clientId: Int64) async throws -> AccountFacts
    /// `slotFacts` awaited (issue 56), as `lookUpPatientSession`.
    func gatherSlotFacts(departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>, takenSpan: Range<Date>,
                         at now: Date) async throws -> SlotFacts?
    /// What a nearest-clinic search reads besides the finder it keeps: the directory's version
    /// (`DirectoryReading.directoryVersion`), and for a specialization key the clinics with a
    /// department of it (`departmentsByClinic`), in one round trip where the store can.
    func nearestSearchFacts(specialization key: String?) throws -> NearestSearchFacts
    /// Everything a department's free slots are computed from (`SlotFacts`), in one round trip
    /// where the store can: exceptions of the days `days` ('YYYY-MM-DD', inclusive), taken
    /// spans (active appointments and holds live at `now`) overlapping `takenSpan`. Nil when
    /// there is no such department.
    func slotFacts(departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>, takenSpan: Range<Date>,
                   at now: Date) throws -> SlotFacts?
    /// After a delete of personal data has committed: shrinks the store's log to nothing where
    /// the store keeps one this program owns (SQLite's WAL, which otherwise holds the deleted
    /// rows' pages until later writes overwrite them). Best effort, outside any transaction: a
    /// reader in the way leaves the log as it is (what it holds opens under no key that is left,
    /// `FieldCipher.newAttachmentKey`). PostgreSQL's WAL is the server's: nothing to do.
    func truncateLog()
}

/// What one batch of writes did (`ClinicStore.startWriters`), for a server's metrics: how
/// many writes it held, how many of them failed, whether it committed, how long it took.
public struct WriteBatchReport: Sendable {
    public let size: Int
    public let failed: Int
    public let committed: Bool
    public let seconds: Double

    public init(size: Int, failed: Int, committed: Bool, seconds: Double) {
        self.size = size; self.failed = failed; self.committed = committed; self.seconds = seconds
    }
}

/// Errors after which a write transaction cannot be trusted to commit its other writes (a
/// group commit's batch): storage (I/O, full disk), busy, the personal-data key, anything internal.
extension ClinicError {
    public var spoilsTheTransaction: Bool {
        switch code {
        case .storage, .busy, .keyError, .internalError, .migrationMismatch, .databaseTooNew: true
        default: false
        }
    }
}

/// What `ClinicStore.slotFacts` gathers: the department, its clinic, its active doctors (by id)
/// with their weekly hours, their exceptions of the days asked for and the spans taken, the
/// `booking.` settings, and the visit type asked for (whatever department it is of: the rule
/// that it must be this department's and active is `VisitType.offered`'s).
public struct SlotFacts: Sendable, Equatable {
    public var department: Department
    /// Nil only if the department's clinic is gone (the schema's foreign key forbids it).
    public var clinic: Clinic?
    public var doctors: [Doctor]
    public var hours: [Int64: [WorkingHours]]
    public var exceptions: [Int64: [WorkingException]]
    public var taken: [Int64: [Range<Date>]]
    public var bookingSettings: [String: String]
    public var visitType: VisitType?

    public init(department: Department, clinic: Clinic?, doctors: [Doctor], hours: [Int64: [WorkingHours]],
                exceptions: [Int64: [WorkingException]], taken: [Int64: [Range<Date>]], bookingSettings: [String: String],
                visitType: VisitType?) {
        self.department = department; self.clinic = clinic; self.doctors = doctors; self.hours = hours
        self.exceptions = exceptions; self.taken = taken; self.bookingSettings = bookingSettings; self.visitType = visitType
    }
}

/// What `ClinicStore.nearestSearchFacts(specialization:)` gathers.
public struct NearestSearchFacts: Sendable, Equatable {
    public let directoryVersion: Int64
    /// The clinics with a department of the specialization asked for; nil when none was asked for.
    public let clinicIds: Set<Int64>?

    public init(directoryVersion: Int64, clinicIds: Set<Int64>?) {
        self.directoryVersion = directoryVersion; self.clinicIds = clinicIds
    }
}

extension NearestSearchFacts {
    /// The gather as reads of the seam, in the caller's snapshot.
    public static func read(_ tx: any StoreReading, specialization key: String?) throws -> NearestSearchFacts {
        NearestSearchFacts(directoryVersion: try tx.directoryVersion(),
                           clinicIds: try key.map { Set(try tx.departmentsByClinic(specialization: $0).keys) })
    }
}

/// What `ClinicStore.signedInPatient(tokenHash:)` gathers.
public struct SignedInPatientFacts: Sendable {
    public let session: SessionLookup
    public let client: StoredClient
    /// The stored personal-data key check; nil when none is stored or none is needed.
    public let personalDataKeyCheck: String?

    public init(session: SessionLookup, client: StoredClient, personalDataKeyCheck: String?) {
        self.session = session; self.client = client; self.personalDataKeyCheck = personalDataKeyCheck
    }
}

extension SignedInPatientFacts {
    /// The gather as reads of the seam, in the caller's snapshot.
    public static func read(_ tx: any StoreReading, tokenHash: String) throws -> SignedInPatientFacts? {
        guard let session = try tx.session(tokenHash: tokenHash), let client = try tx.storedClient(id: session.clientId)
        else { return nil }
        return SignedInPatientFacts(session: session, client: client,
                                    personalDataKeyCheck: client.personal == nil ? nil : try tx.personalDataKeyCheck())
    }
}

extension ClinicStore {
    /// The gather as reads of one snapshot (a store in this process: no round trips to save).
    public func signedInPatient(tokenHash: String) throws -> SignedInPatientFacts? {
        try reading { tx in try SignedInPatientFacts.read(tx, tokenHash: tokenHash) }
    }

    /// The reads of one snapshot (a store in this process: no round trips to save).
    public func nearestSearchFacts(specialization key: String?) throws -> NearestSearchFacts {
        try reading { tx in try NearestSearchFacts.read(tx, specialization: key) }
    }

    /// The reads of one snapshot (a store in this process: no round trips to save).
    public func slotFacts(departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>, takenSpan: Range<Date>,
                          at now: Date) throws -> SlotFacts? {
        try reading { tx in try SlotFacts.read(tx, departmentId: departmentId, visitTypeId: visitTypeId, days: days,
                                               takenSpan: takenSpan, at: now) }
    }

    /// The look-up as a read of its own (a store in this process: no round trips to save).
    public func signedInStaff(tokenHash: String) throws -> StaffSessionLookup? {
        try reading { tx in try tx.activeStaffSession(tokenHash: tokenHash) }
    }
    public func truncateLog() {}
}

extension SlotFacts {
    /// The gather as reads of the seam, in the caller's transaction (the default of
    /// `ClinicStore.slotFacts`, and what a store without a one-statement form does).
    public static func read(_ tx: any StoreReading, departmentId: Int64, visitTypeId: Int64?, days: ClosedRange<String>,
                     takenSpan: Range<Date>, at now: Date) throws -> SlotFacts? {
        guard let department = try tx.department(id: departmentId) else { return nil }
        let doctors = try tx.activeDoctors(inDepartment: departmentId)
        var hours: [Int64: [WorkingHours]] = [:], exceptions: [Int64: [WorkingException]] = [:], taken: [Int64: [Range<Date>]] = [:]
        for doctor in doctors {
            let id = doctor.id ?? 0
            hours[id] = try tx.workingHours(ofDoctor: id)
            exceptions[id] = try tx.workingExceptions(ofDoctor: id, from: days.lowerBound, through: days.upperBound)
            taken[id] = try tx.takenSpans(doctorId: id, overlapping: takenSpan, at: now, exceptAppointment: nil, exceptHold: nil)
        }
        return SlotFacts(department: department, clinic: try tx.clinic(id: department.clinicId), doctors: doctors, hours: hours,
                         exceptions: exceptions, taken: taken, bookingSettings: try tx.settings(prefix: "booking."),
                         visitType: try visitTypeId.map { try tx.visitType(id: $0) } ?? nil)
    }
}
