import Foundation

// The front desk and the clinic's day: the day's list, the lifecycle actions, booking for a
// patient, and messages to patients.

extension StaffController {
    /// The appointments of one local day of the member's clinic (default: today there), by
    /// start, optionally of one department or doctor; a doctor sees their own only. Each
    /// patient shown is one `patient.read` row in the audit trail, in the same transaction.
    public func schedule(_ member: StaffMember, day: LocalDateTime? = nil, departmentId: Int64? = nil, doctorId: Int64? = nil,
                         requestId: String? = nil) throws -> (day: LocalDateTime, zone: TimeZone, entries: [DayEntry]) {
        let facts = try dayFacts(member, day: day, departmentId: departmentId, doctorId: doctorId, requestId: requestId)
        return (facts.plan.day, facts.plan.zone, Self.dayEntries(facts, member))
    }

    /// `schedule` awaited: `deskDay`'s facts as the day's entries.
    public func schedule(_ member: StaffMember, day: LocalDateTime? = nil, departmentId: Int64? = nil, doctorId: Int64? = nil,
                         requestId: String? = nil) async throws -> (day: LocalDateTime, zone: TimeZone, entries: [DayEntry]) {
        let facts = try await deskDay(member, day: day, departmentId: departmentId, doctorId: doctorId, requestId: requestId)
        return (facts.plan.day, facts.plan.zone, Self.dayEntries(facts, member))
    }

    /// What `schedule` is made of, in one write transaction with its audit rows.
    func dayFacts(_ member: StaffMember, day: LocalDateTime?, departmentId: Int64?, doctorId: Int64?,
                  requestId: String?) throws -> DeskDayFacts {
        let now = self.now()
        return try database.writing { tx in
            try DeskDayFacts.read(tx, store: database, clinicId: member.clinicId, doctorAsked: member.role == .doctor ? nil : doctorId,
                                  plan: { try Self.planningDay($0, member, day: day, departmentId: departmentId, doctorId: doctorId, now: now) },
                                  audit: { Self.dayReads($0, member, requestId: requestId, now: now) })
        }
    }

    /// `schedule` awaited (issue 56: `FrontDeskStore.deskDay`), with the clinic, its departments
    /// and its active doctors read in the same transaction: the front desk's page.
    public func deskDay(_ member: StaffMember, day: LocalDateTime? = nil, departmentId: Int64? = nil, doctorId: Int64? = nil,
                        requestId: String? = nil) async throws -> DeskDayFacts {
        let now = self.now()
        return try await database.deskDay(clinicId: member.clinicId, doctorAsked: member.role == .doctor ? nil : doctorId,
                                          plan: { try Self.planningDay($0, member, day: day, departmentId: departmentId, doctorId: doctorId, now: now) },
                                          audit: { Self.dayReads($0, member, requestId: requestId, now: now) })
    }

    /// The day planned on its clinic: the day asked for (default: today there) and its instants
    /// in the clinic's zone; a department of another clinic, or a doctor of another clinic (for a
    /// doctor: any other doctor) is `not_found`; a doctor sees their own appointments only.
    static func planningDay(_ place: DeskDayPlace, _ member: StaffMember, day: LocalDateTime?, departmentId: Int64?, doctorId: Int64?,
                            now: Date) throws -> DeskDayPlan {
        guard let clinic = place.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId)) }
        let zone = clinic.zone
        let local = day ?? LocalDateTime.of(now, in: zone)
        guard let span = instants(of: local, in: zone) else { throw ClinicError.invalid(.invalidDay, local.dayText) }
        if let departmentId, !place.departments.contains(where: { $0.id == departmentId }) {
            throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
        }
        var doctor = doctorId
        if member.role == .doctor {
            if let doctorId, doctorId != member.doctorId { throw ClinicError(.notFound, .doctorNotFound, String(doctorId)) }
            doctor = member.doctorId ?? -1
        } else if let doctorId, place.doctorAskedClinicId != member.clinicId {
            throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
        }
        return DeskDayPlan(day: local, zone: zone, span: span, departmentId: departmentId, doctorId: doctor, now: now)
    }

    /// One `patient.read` row per patient shown, by id.
    static func dayReads(_ facts: DeskDayFacts, _ member: StaffMember, requestId: String?, now: Date) -> [AuditAsk] {
        facts.patients.keys.sorted().map { clientId in
            AuditAsk(by: member.auditActor, action: .patientRead, clientId: clientId, requestId: requestId,
                     detail: "schedule \(facts.plan.day.dayText)", now: now)
        }
    }

    /// The day's list: each appointment with its patient and the actions the member may take
    /// (at the instant the day was planned).
    public static func dayEntries(_ facts: DeskDayFacts, _ member: StaffMember) -> [DayEntry] {
        let now = facts.plan.now
        return facts.appointments.map { appointment in
            let patient = appointment.clientId.flatMap { facts.patients[$0] }
            var entry = DayEntry(appointment: appointment, patientName: patient.map { "\($0.name) \($0.surname)" },
                                 patientLogin: patient.flatMap { $0.hasOnlineAccount ? $0.login : nil },
                                 actions: StaffAction.allCases.filter { member.may($0, on: appointment, now: now, zone: facts.plan.zone) })
            if member.runsTheFrontDesk {
                entry.patientBirthDate = patient?.birthDate
                entry.patientPhone = patient?.phone
            }
            return entry
        }
    }

    /// Moves an appointment of the member's clinic along the lifecycle: check-in (on the
    /// visit's day), undoing a check-in, start, complete, no-show, cancel (with a reason).
    /// Another clinic's appointment, or another doctor's for a doctor, is `not_found`; an
    /// action the role may not take is `forbidden`. The history and the audit trail have each.
    public func act(_ member: StaffMember, _ action: StaffAction, appointmentId: Int64, reason: String? = nil,
                    requestId: String? = nil) throws -> Appointment {
        try appointments.changes.count(action == .cancel ? "staff-cancel" : action.rawValue) {
            try act(member, action, appointmentId, reason: reason, requestId: requestId)
        }
    }

    private func act(_ member: StaffMember, _ action: StaffAction, _ appointmentId: Int64, reason: String?,
                     requestId: String?) throws -> Appointment {
        let reason = try Self.reason(reason, of: action), now = self.now()
        return try database.writing { tx in
            try BookingDecision.change(tx, id: appointmentId) { facts in
                try StaffRules.act(facts, id: appointmentId, member: member, action: action, reason: reason, requestId: requestId,
                                   now: now)
            }
        }
    }

    /// The reason given for an action, checked; a cancellation needs one.
    static func reason(_ reason: String?, of action: StaffAction) throws -> String? {
        let reason = try checkedReason(reason)
        if action == .cancel && reason == nil { throw ClinicError.invalid(.staffReasonRequired) }
        return reason
    }

    /// `act` as the store's one awaited operation (issue 56): the store gathers the appointment
    /// with its clinic's zone, `StaffRules.act` decides, the store writes the change, the
    /// patient's message and text of a cancellation, and the audit trail's row (on PostgreSQL
    /// with no thread blocked).
    public func act(_ member: StaffMember, _ action: StaffAction, appointmentId: Int64, reason: String? = nil,
                    requestId: String? = nil) async throws -> Appointment {
        let now = self.now()
        return try await appointments.changes.count(action == .cancel ? "staff-cancel" : action.rawValue) {
            let reason = try Self.reason(reason, of: action)
            return try await database.run(.change(id: appointmentId) { facts in
                try StaffRules.act(facts, id: appointmentId, member: member, action: action, reason: reason, requestId: requestId,
                                   now: now)
            })
        }
    }

    /// Books for a patient (by login, or by id for a patient of the clinic: one with an
    /// appointment there) at the member's clinic: receptionists and clinic admins. The
    /// patient's rules hold (lead time, their limit and overlaps); the history says which staff
    /// account booked, and the audit trail has it, in the booking's transaction.
    public func book(_ member: StaffMember, patientLogin: String? = nil, patientId: Int64? = nil, departmentId: Int64,
                     at time: TimeInput.Parsed, doctorId: Int64? = nil, visitTypeId: Int64? = nil,
                     requestId: String? = nil) throws -> Appointment {
        let rules = try deskBooking(member, patientLogin: patientLogin, patientId: patientId, departmentId: departmentId, at: time,
                                    doctorId: doctorId, visitTypeId: visitTypeId, requestId: requestId)
        do {
            return try appointments.changes.count("book") { try database.writing { tx in try rules.run(tx) } }
        } catch let error as ClinicError {
            let shown = Self.staffFacing(error)
            if let audit = rules.refusalAudit(shown) { try database.writing { tx in try AuditLog.append(tx, audit) } }
            throw shown
        }
    }

    /// `book` awaited: the store's one transaction (`FrontDeskChangesStore.deskBook`), and a refusal's
    /// audit row in one more.
    public func book(_ member: StaffMember, patientLogin: String? = nil, patientId: Int64? = nil, departmentId: Int64,
                     at time: TimeInput.Parsed, doctorId: Int64? = nil, visitTypeId: Int64? = nil,
                     requestId: String? = nil) async throws -> Appointment {
        let rules = try deskBooking(member, patientLogin: patientLogin, patientId: patientId, departmentId: departmentId, at: time,
                                    doctorId: doctorId, visitTypeId: visitTypeId, requestId: requestId)
        do {
            return try await appointments.changes.count("book") { try await database.deskBook(rules) }
        } catch let error as ClinicError {
            let shown = Self.staffFacing(error)
            if let audit = rules.refusalAudit(shown) { try await database.appendAudit([audit]) }
            throw shown
        }
    }

    /// The desk booking's rules: receptionists and clinic admins, a patient by login or by id.
    func deskBooking(_ member: StaffMember, patientLogin: String?, patientId: Int64?, departmentId: Int64, at time: TimeInput.Parsed,
                     doctorId: Int64?, visitTypeId: Int64?, requestId: String?) throws -> DeskBookingRules {
        try member.checkFrontDesk()
        guard (patientLogin == nil) != (patientId == nil) else { throw ClinicError.invalid(.staffPatientChoice) }
        let now = self.now()
        let appointments = self.appointments
        return DeskBookingRules(
            ask: DeskPatientAsk(member: member, departmentId: departmentId, patientId: patientId, patientLogin: patientLogin),
            doctorId: doctorId, time: time,
            requestId: requestId, now: now, booking: { clientId in
                try appointments.booking(clientId: clientId, departmentId: departmentId, at: time, doctorId: doctorId, notes: "",
                                         staffId: member.id, visitTypeId: visitTypeId)
            })
    }

    /// Whether the patient of an appointment at the member's clinic hears of a change: they have
    /// an online account (its inbox) or a confirmed e-mail address (the inbox's messages are
    /// e-mailed). A walk-in with neither is not told, and the front desk's pages say so (issue 46).
    /// Nothing personal is returned. The store's one awaited read (issue 56).
    public func patientIsTold(_ member: StaffMember, appointmentId: Int64) async throws -> Bool {
        try Self.isTold(try await database.deskAppointment(id: appointmentId, withPatient: true), appointmentId, member)
    }

    /// Whether the patient of what was read hears of a change; another clinic's appointment is
    /// `not_found`.
    static func isTold(_ read: DeskAppointment?, _ id: Int64, _ member: StaffMember) throws -> Bool {
        guard let read, read.appointment.clinicId == member.clinicId else {
            throw ClinicError(.notFound, .appointmentNotFound, String(id))
        }
        guard let client = read.patient else { return false }
        return client.hasOnlineAccount || client.email != nil
    }

    /// Moves a patient's appointment at the member's clinic to another time (with `doctorId`,
    /// to that doctor): receptionists and clinic admins. One change, as the patient's own: the
    /// slot's rules and the patient's other appointments hold (told as `staffFacing` says), the
    /// patient's cutoff does not (the clinic moves it). The history names the staff account and
    /// the reason, which reaches the patient's inbox in their language; the audit trail has it.
    public func reschedule(_ member: StaffMember, appointmentId: Int64, to time: TimeInput.Parsed, doctorId: Int64? = nil,
                           reason: String? = nil, requestId: String? = nil) throws -> Appointment {
        try member.checkFrontDesk()
        let reason = try Self.checkedReason(reason)
        let now = self.now()
        let (plan, decide) = Self.move(member, appointmentId, to: time, doctorId: doctorId, reason: reason, requestId: requestId,
                                       now: now)
        do {
            return try appointments.changes.count("staff-reschedule") {
                try database.writing { tx in try BookingDecision.move(tx, id: appointmentId, plan: plan, decide: decide) }
            }
        } catch let error as ClinicError {
            throw Self.staffFacing(error)
        }
    }

    /// `reschedule` as the store's one awaited operation (issue 56), what a server runs.
    public func reschedule(_ member: StaffMember, appointmentId: Int64, to time: TimeInput.Parsed, doctorId: Int64? = nil,
                           reason: String? = nil, requestId: String? = nil) async throws -> Appointment {
        try member.checkFrontDesk()
        let reason = try Self.checkedReason(reason)
        let (plan, decide) = Self.move(member, appointmentId, to: time, doctorId: doctorId, reason: reason, requestId: requestId,
                                       now: self.now())
        do {
            return try await appointments.changes.count("staff-reschedule") {
                try await database.run(.move(id: appointmentId, plan: plan, decide: decide))
            }
        } catch let error as ClinicError {
            throw Self.staffFacing(error)
        }
    }

    /// A staff move's plan and decision (`StaffRules.reschedulePlan`, `StaffRules.reschedule`).
    static func move(_ member: StaffMember, _ id: Int64, to time: TimeInput.Parsed, doctorId: Int64?, reason: String?,
                     requestId: String?, now: Date)
        -> (plan: @Sendable (AppointmentChangeFacts?) throws -> BookingFactsRequest,
            decide: @Sendable (AppointmentChangeFacts, BookingFacts) throws -> BookingDecision?) {
        ({ facts in try StaffRules.reschedulePlan(facts, id: id, member: member, time: time, doctorId: doctorId, now: now) },
         { change, facts in
             try StaffRules.reschedule(change, facts, member: member, time: time, doctorId: doctorId, reason: reason,
                                       requestId: requestId, now: now)
         })
    }

    /// What the member may do to an appointment of their clinic now (`StaffMember.offers`):
    /// the same rule the pages offer buttons by and the changes enforce.
    public func actions(_ member: StaffMember, appointmentId: Int64) throws -> [String] {
        let now = self.now()
        return try Self.offered(try database.reading { tx in
            try DeskAppointment.read(tx, store: database, id: appointmentId, withPatient: false)
        }, appointmentId, member, now: now)
    }

    /// `actions` as the store's one awaited read (issue 56), what a server runs.
    public func actions(_ member: StaffMember, appointmentId: Int64) async throws -> [String] {
        let now = self.now()
        return try Self.offered(try await database.deskAppointment(id: appointmentId, withPatient: false), appointmentId, member,
                                now: now)
    }

    /// What the member may do now to what was read: another clinic's appointment, or for a
    /// doctor another doctor's, is `not_found`.
    static func offered(_ read: DeskAppointment?, _ id: Int64, _ member: StaffMember, now: Date) throws -> [String] {
        guard let read, read.appointment.clinicId == member.clinicId,
              member.role != .doctor || read.appointment.doctorId == member.doctorId else {
            throw ClinicError(.notFound, .appointmentNotFound, String(id))
        }
        guard let clinic = read.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(read.appointment.clinicId)) }
        return member.offers(on: read.appointment, now: now, zone: clinic.zone)
    }

    /// The free times an appointment of the member's clinic could move to on `day` (default:
    /// today in the clinic's zone), one per start, its own doctor first; with the clinic. Read
    /// awaited (`FrontDeskReadsStore.deskAppointment`); the times are computed by `runner`.
    public func moveChoices(_ member: StaffMember, appointmentId: Int64, day: LocalDateTime? = nil,
                            computing runner: some PasswordRunner) async throws
        -> (appointment: Appointment, clinic: Clinic, day: LocalDateTime, times: [Slot]) {
        let now = self.now()
        guard let read = try await database.deskAppointment(id: appointmentId, withPatient: false) else {
            throw ClinicError(.notFound, .appointmentNotFound, String(appointmentId))
        }
        let appointment = read.appointment
        if let refusal = member.rescheduleRefusal(on: appointment) { throw refusal }
        guard let clinic = read.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(appointment.clinicId)) }
        let shown = day ?? LocalDateTime.of(now, in: clinic.zone).at(minuteOfDay: 0)
        return (appointment, clinic, shown, try await appointments.rescheduleTimes(appointment, from: shown, computing: runner))
    }

    /// The instants of a local day in a clinic's zone, from its start to the next day's start;
    /// nil when either has no instant (no zone skips both 0:00 and 1:00). Midnight may not exist
    /// (a zone that springs forward at 0:00): then 1:00 starts the day.
    static func instants(of day: LocalDateTime, in zone: TimeZone) -> Range<Date>? {
        func dayStart(_ day: LocalDateTime) -> Date? {
            day.at(minuteOfDay: 0).firstInstant(in: zone) ?? day.at(minuteOfDay: 60).firstInstant(in: zone)
        }
        guard let start = dayStart(day), let end = dayStart(day.adding(days: 1)), start < end else { return nil }
        return start..<end
    }

    /// What staff are told of a refusal that comes from the patient's other bookings: neither
    /// where they are (an overlapping appointment's id may be at another clinic) nor how many
    /// (the limit's count). Refusals about the clinic's own slot stay as they are.
    static func staffFacing(_ error: ClinicError) -> ClinicError {
        switch error.code {
        case .overlappingAppointment, .limitReached: ClinicError(.patientUnavailable, .staffPatientUnavailable)
        default: error
        }
    }

    // MARK: Messages to patients

    /// Writes a message from the clinic (receptionists and clinic admins): to one patient who
    /// has an appointment at the clinic (`patientLogin`), or to every patient with an active
    /// appointment there on a local date (`day`, optionally in one department). Each patient
    /// gets it in their inbox (and by e-mail), in the audit trail as `message.send`. Returns how
    /// many patients it went to.
    public func message(_ member: StaffMember, patientLogin: String? = nil, day: LocalDateTime? = nil,
                        departmentId: Int64? = nil, text: String, requestId: String? = nil) throws -> Int {
        try database.writing { tx in try messaging(member, patientLogin: patientLogin, day: day, departmentId: departmentId, text: text,
                                                   requestId: requestId).run(tx) }
    }

    /// `message` awaited: the store's one transaction (`FrontDeskChangesStore.deskMessage`).
    public func message(_ member: StaffMember, patientLogin: String? = nil, day: LocalDateTime? = nil,
                        departmentId: Int64? = nil, text: String, requestId: String? = nil) async throws -> Int {
        try await database.deskMessage(try messaging(member, patientLogin: patientLogin, day: day, departmentId: departmentId, text: text,
                                                     requestId: requestId))
    }

    /// The message's rules: the front desk's, to a patient by login or to a day's patients, the text checked.
    func messaging(_ member: StaffMember, patientLogin: String?, day: LocalDateTime?, departmentId: Int64?, text: String,
                   requestId: String?) throws -> DeskMessageRules {
        try member.checkFrontDesk()
        guard (patientLogin == nil) != (day == nil), patientLogin == nil || departmentId == nil else {
            throw ClinicError.invalid(.staffMessageTarget)
        }
        return DeskMessageRules(member: member, patientLogin: patientLogin, day: day, departmentId: departmentId,
                                text: try Inbox.checkedText(text), requestId: requestId, now: now())
    }
}
