import Foundation

/// A staff role, scoped to one clinic (the operator is not an account: see `AuditActor`).
public enum StaffRole: String, Sendable, CaseIterable {
    case clinicAdmin = "clinic-admin", receptionist, doctor

    var auditRole: AuditActor.Role {
        switch self {
        case .clinicAdmin: .clinicAdmin
        case .receptionist: .receptionist
        case .doctor: .doctor
        }
    }
}

/// A clinic staff account (migration 11). Not a patient: its own table and sessions. A store
/// makes it from its row (`StaffReading`).
public struct StaffMember: Sendable, Equatable {
    public let id: Int64
    public let login: String
    public let name: String
    public let surname: String
    public let role: StaffRole
    public let clinicId: Int64
    /// The doctor a `doctor` account is; nil for the other roles.
    public let doctorId: Int64?
    public let isActive: Bool
    public let createdAt: Date

    /// What a store makes of its row (public: a store may live in a module of its own).
    public init(id: Int64, login: String, name: String, surname: String, role: StaffRole, clinicId: Int64, doctorId: Int64?,
                isActive: Bool, createdAt: Date) {
        self.id = id; self.login = login; self.name = name; self.surname = surname; self.role = role
        self.clinicId = clinicId; self.doctorId = doctorId; self.isActive = isActive; self.createdAt = createdAt
    }

    /// Booking for patients and writing to them is the front desk's: receptionists and clinic
    /// admins, not doctors (`book`, `message` refuse the others).
    public var runsTheFrontDesk: Bool { role != .doctor }

    /// Refuses (`forbidden`) a member who does not run the front desk.
    func checkFrontDesk() throws {
        guard runsTheFrontDesk else { throw ClinicError(.forbidden, .staffForbidden, role.rawValue) }
    }

    /// Whether this member may take `action` on `appointment` now: the one permission rule
    /// (`StaffAction.refusal`) that `StaffController.act` enforces and that pages offer
    /// actions by. `zone` is the appointment's clinic's (which day is "today" there).
    public func may(_ action: StaffAction, on appointment: Appointment, now: Date = Date(), zone: TimeZone) -> Bool {
        action.refusal(by: self, on: appointment, now: now, zone: zone) == nil
    }

    /// Why this member may not move `appointment` to another time, nil when they may: the rule
    /// `StaffController.reschedule` enforces and fronts offer "Move" by. Another clinic's
    /// appointment (or one without a patient) is `not_found`; a doctor's account is `forbidden`;
    /// a visit under way or over is `invalid_transition`.
    public func rescheduleRefusal(on appointment: Appointment) -> ClinicError? {
        guard appointment.clinicId == clinicId, appointment.clientId != nil,
              role != .doctor || appointment.doctorId == doctorId else {
            return ClinicError(.notFound, .appointmentNotFound, String(appointment.id ?? 0))
        }
        guard runsTheFrontDesk else { return ClinicError(.forbidden, .staffForbidden, role.rawValue) }
        guard appointment.status.isPatientChangeable else {
            return ClinicError(.invalidTransition, .cannotReschedule, appointment.status.rawValue)
        }
        return nil
    }

    /// What this member may do to `appointment` now, as the fronts offer it: the status actions
    /// `StaffAction.refusal` allows, and `reschedule` when `rescheduleRefusal` allows it.
    public func offers(on appointment: Appointment, now: Date, zone: TimeZone) -> [String] {
        StaffAction.allCases.filter { may($0, on: appointment, now: now, zone: zone) }.map(\.rawValue)
            + (rescheduleRefusal(on: appointment) == nil ? ["reschedule"] : [])
    }

    public var auditActor: AuditActor { AuditActor(staffId: id, role: role.auditRole, clinicId: clinicId) }
}

/// What a new staff account is.
public struct StaffInput: Sendable {
    public var login: String
    public var name: String
    public var surname: String
    public var role: StaffRole
    public var clinicId: Int64
    public var doctorId: Int64?
    public var password: String

    public init(login: String, name: String, surname: String, role: StaffRole, clinicId: Int64, doctorId: Int64? = nil,
                password: String) {
        self.login = login; self.name = name; self.surname = surname; self.role = role; self.clinicId = clinicId
        self.doctorId = doctorId; self.password = password
    }
}

/// One appointment of a clinic's day, as staff see it: with the patient's name, decrypted
/// only here (and the read written to the audit trail).
public struct DayEntry: Sendable, Equatable {
    public let appointment: Appointment
    /// Nil when the patient deleted their account.
    public let patientName: String?
    public let patientLogin: String?
    /// What the member who read the day may do to it now (`StaffAction.refusal`): what a
    /// front offers, so that no button leads to a refusal.
    public let actions: [StaffAction]
    /// The patient's date of birth (YYYY-MM-DD) and phone where the front desk took them (a
    /// walk-in's), for the printed day; nil otherwise and for a doctor.
    public var patientBirthDate: String? = nil
    public var patientPhone: String? = nil
}

/// What staff do to an appointment, and the status it leads to.
public enum StaffAction: String, Sendable, CaseIterable {
    /// `undoCheckIn` takes back a check-in made by mistake (the wrong patient, the wrong
    /// visit): the appointment is booked again, until the doctor starts the visit.
    case checkIn = "check-in", undoCheckIn = "undo-check-in", start, complete, noShow = "no-show", cancel

    public var status: AppointmentStatus {
        switch self {
        case .checkIn: .arrived
        case .undoCheckIn: .scheduled
        case .start: .inProgress
        case .complete: .completed
        case .noShow: .noShow
        case .cancel: .cancelled
        }
    }

    /// Why `member` may not take this action on `appointment` at `now`, nil when they may: the
    /// one rule that `StaffController.act` enforces and that fronts offer actions by.
    /// Another clinic's appointment, or another doctor's for a doctor, is `not_found`; an
    /// action the role may not take is `forbidden`; a status that cannot move there, a
    /// completion or no-show before the start, or a check-in on another day than the visit's
    /// (in the clinic's `zone`), is `invalid_transition`.
    public func refusal(by member: StaffMember, on appointment: Appointment, now: Date, zone: TimeZone) -> ClinicError? {
        guard appointment.clinicId == member.clinicId, member.role != .doctor || appointment.doctorId == member.doctorId else {
            return ClinicError(.notFound, .appointmentNotFound, String(appointment.id ?? 0))
        }
        guard isAllowed(for: member.role) else { return ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        guard appointment.status.canMove(to: status) else {
            return ClinicError(.invalidTransition, .transitionRefused, appointment.status.rawValue, status.rawValue)
        }
        if (status == .completed || status == .noShow) && now < appointment.startsAt {
            return ClinicError(.invalidTransition, .notStartedYet, status.rawValue)
        }
        // A check-in says the patient is at the front desk: days early it is a mistake (the
        // wrong row of the list), which then blocked moving the visit (issue 42).
        let visitDay = LocalDateTime.of(appointment.startsAt, in: zone).dayText
        if self == .checkIn && LocalDateTime.of(now, in: zone).dayText != visitDay {
            return ClinicError(.invalidTransition, .checkInNotToday, visitDay)
        }
        return nil
    }

    /// Who may: receptionists (and clinic admins) run the front desk; doctors start and
    /// complete their own appointments. Clinic admins may do everything.
    func isAllowed(for role: StaffRole) -> Bool {
        switch (self, role) {
        case (_, .clinicAdmin): true
        case (.checkIn, .receptionist), (.undoCheckIn, .receptionist), (.noShow, .receptionist), (.cancel, .receptionist): true
        case (.start, .doctor), (.complete, .doctor): true
        default: false
        }
    }
}
