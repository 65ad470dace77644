import Foundation

// Clinic staff (issue #25's seam): staff accounts, their sessions, the clinic's day as the
// front desk reads it, and the changes a clinic admin makes to the doctors. Who may do what
// (`StaffMember.may`, `StaffAction.refusal`), which local day is "today" at a clinic, what a
// clinic admin may change and what a change to a doctor's hours does to booked appointments
// are `StaffController`'s rules; these only store and find.
//
// Staff log-ins are throttled by the security area's attempt counting (`reserveAttempt`, under
// a `staff:` login key), so the count is the store's and holds across several servers; staff
// sessions are rows of the store for the same reason: a session opened through one server is
// known to every other, and ending one (log-out, a disabled account) ends it everywhere.

/// Reading staff accounts and sessions, and the clinic's appointments as staff see them.
public protocol StaffReading {
    /// A staff account, active or not.
    func staffMember(id: Int64) throws -> StaffMember?
    /// A clinic's staff accounts, active or not, by id.
    func staffMembers(ofClinic clinicId: Int64) throws -> [StaffMember]
    /// The account with this login key (`Client.key(forLogin:)`), active or not, with its
    /// password hash: what a log-in checks the password against.
    func staffCredentials(loginKey: String) throws -> (member: StaffMember, passwordHash: String)?
    /// The session whose token hashes to `tokenHash` with its account, when the account is
    /// active, whatever the session's age (`StaffController.current` decides); nil otherwise.
    func activeStaffSession(tokenHash: String) throws -> StaffSessionLookup?

    /// A clinic's appointments (any status) starting in `span`, optionally of one department
    /// and of one doctor, by start then id.
    func storedAppointments(ofClinic clinicId: Int64, startingIn span: Range<Date>, departmentId: Int64?,
                            doctorId: Int64?) throws -> [Appointment]
    /// The patients with an active appointment at the clinic starting in `span` (optionally in
    /// one department), each once, by id. Appointments whose patient deleted their account
    /// have none and are left out.
    func activePatients(ofClinic clinicId: Int64, startingIn span: Range<Date>, departmentId: Int64?) throws -> [Int64]
    /// Whether the patient is the clinic's: they have (or had) an appointment there, any status,
    /// or its front desk registered them (a walk-in).
    func isPatient(_ clientId: Int64, ofClinic clinicId: Int64) throws -> Bool
    /// The language a message to the patient is written in (their preferred one); nil when the
    /// patient is unknown or the stored code is not one this program knows.
    func messageLanguage(ofClient clientId: Int64) throws -> Language?

    /// A doctor's active appointments starting at or after `start`, by start.
    func storedFutureActiveAppointments(ofDoctor doctorId: Int64, from start: Date) throws -> [Appointment]
    /// The doctor a working exception belongs to; nil when there is no such exception.
    func doctorId(ofWorkingException exceptionId: Int64) throws -> Int64?
}

/// Changing staff accounts and sessions, and the doctors of a clinic.
public protocol StaffWriting: StaffReading {
    /// Stores a new staff account (active, no sessions) and returns it with its id. A store
    /// refuses a login key some account already has with `login_taken` (the login as typed is
    /// the message's argument) by its own unique constraint, so that two servers adding the
    /// same login at once cannot both succeed: the refused insert changes nothing, and the store
    /// tells this refusal from any other by asking, not by reading its error's text.
    func insertStaffMember(login: String, loginKey: String, passwordHash: String, name: String, surname: String,
                           role: StaffRole, clinicId: Int64, doctorId: Int64?, createdAt: Date) throws -> StaffMember
    /// Marks an account disabled (kept for the audit trail and the appointments' history).
    func deactivateStaffMember(id: Int64) throws

    /// Opens a session for an account; the token is never stored, only its hash, which is
    /// unique among sessions.
    /// `idleSeconds`: the session's own idle limit (a web session's); nil: `StaffController.idleLimit`.
    func insertStaffSession(staffId: Int64, tokenHash: String, at: Date, idleSeconds: Int?) throws
    /// Records a use of a session. The last use never moves back: of two servers touching the
    /// same session at once, the later instant wins whatever order they commit in.
    func touchStaffSession(tokenHash: String, at: Date) throws
    /// Ends one session; whether there was one.
    func deleteStaffSession(tokenHash: String) throws -> Bool
    /// Ends every session of an account.
    func deleteStaffSessions(ofStaff staffId: Int64) throws
    /// Forgets the sessions of every account last used before `cutoff`.
    func deleteStaffSessions(lastUsedBefore cutoff: Date) throws

    /// Stops offering a doctor (not booked, listed or offered any more; their appointments keep them).
    func deactivateDoctor(id: Int64) throws
    /// Replaces a doctor's weekly hours on one ISO weekday (1 Monday … 7 Sunday) with these
    /// intervals (none: not working that day), in local minutes.
    func replaceWorkingHours(ofDoctor doctorId: Int64, weekday: Int, with intervals: [DoctorSchedule.Interval]) throws
}

/// A staff session as a token's look-up reads it: its active account, its last use and its own
/// idle limit (nil: `StaffController.idleLimit`).
public struct StaffSessionLookup: Sendable, Equatable {
    public let member: StaffMember
    public let lastUsedAt: Date
    public let idleSeconds: Int?

    public init(member: StaffMember, lastUsedAt: Date, idleSeconds: Int?) {
        self.member = member; self.lastUsedAt = lastUsedAt; self.idleSeconds = idleSeconds
    }
}

extension StaffWriting {
    /// A session with the idle limit of its kind (the API's and the CLI's).
    public func insertStaffSession(staffId: Int64, tokenHash: String, at: Date) throws {
        try insertStaffSession(staffId: staffId, tokenHash: tokenHash, at: at, idleSeconds: nil)
    }
}
