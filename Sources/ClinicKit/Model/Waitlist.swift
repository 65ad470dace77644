import Foundation

// The waitlist (issue 45): what a patient waits for, what a freed time is offered as, and a
// freed time in the queue. The rules (who may join, which time fits whom, who is next, what
// accepting does) are `WaitlistController`'s; Migrations/0021_waitlist.sql says what the
// database holds by itself.

/// Where a waitlist entry is.
public enum WaitlistEntryStatus: String, Sendable, Codable, CaseIterable {
    /// Waiting for a time.
    case waiting
    /// A time is offered to it now (one open offer at most).
    case offered
    /// An offer was accepted: the entry is done.
    case booked
    /// The patient (or the clinic) took it off the list.
    case left

    public func text(_ language: Language) -> String {
        let key: MessageKey = switch self {
        case .waiting: .waitlistStatusWaiting
        case .offered: .waitlistStatusOffered
        case .booked: .waitlistStatusBooked
        case .left: .waitlistStatusLeft
        }
        return Strings.text(key, language)
    }
}

/// Where an offer is.
public enum WaitlistOfferStatus: String, Sendable, Codable, CaseIterable {
    /// Held for its patient until `expiresAt`.
    case open
    case accepted, declined
    /// Its time ran out before an answer.
    case lapsed
    /// Its entry left the list while it was open.
    case withdrawn

    public func text(_ language: Language) -> String {
        let key: MessageKey = switch self {
        case .open: .waitlistOfferOpen
        case .accepted: .waitlistOfferAccepted
        case .declined: .waitlistOfferDeclined
        case .lapsed: .waitlistOfferLapsedStatus
        case .withdrawn: .waitlistOfferWithdrawn
        }
        return Strings.text(key, language)
    }
}

/// A patient waiting for a time at a department: any doctor or one, within local days of the
/// clinic (`firstDay`…`lastDay`, "YYYY-MM-DD"), optionally within minutes of the day and on
/// some ISO weekdays (`weekdays`: bit `weekday - 1`, 127 every day); or for a time earlier
/// than one of their appointments (`beforeAppointmentId`, which accepting moves).
public struct WaitlistEntry: Sendable, Equatable {
    public var id: Int64?
    public var clientId: Int64
    public var clinicId: Int64
    public var departmentId: Int64
    public var doctorId: Int64?
    public var visitTypeId: Int64?
    public var firstDay: String
    public var lastDay: String
    public var fromMinute: Int?
    public var toMinute: Int?
    public var weekdays: Int
    public var beforeAppointmentId: Int64?
    /// Higher first; the same priority in the order of joining.
    public var priority: Int
    /// The staff member who put the patient on the list; nil: the patient.
    public var staffId: Int64?
    public var status: WaitlistEntryStatus
    public var createdAt: Date
    public var updatedAt: Date
    /// Offers of this entry that ran out unanswered since its patient last acted (issue 55).
    public var lapses = 0

    public static let everyDay = 127

    /// Lapses that pause an entry: it is left out of the line until its patient acts.
    public static let lapsesToPause = 2

    /// Waiting, but left out of the line after `lapsesToPause` offers ran out unanswered.
    public var isPaused: Bool { status == .waiting && lapses >= Self.lapsesToPause }

    /// The entry's status as every front names it: "paused" for a paused one.
    public func statusText(_ language: Language) -> String {
        isPaused ? Strings.text(.waitlistStatusPaused, language) : status.text(language)
    }

    public init(id: Int64? = nil, clientId: Int64, clinicId: Int64, departmentId: Int64, doctorId: Int64?, visitTypeId: Int64?,
                firstDay: String, lastDay: String, fromMinute: Int?, toMinute: Int?, weekdays: Int, beforeAppointmentId: Int64?,
                priority: Int, staffId: Int64?, status: WaitlistEntryStatus, createdAt: Date, updatedAt: Date) {
        self.id = id; self.clientId = clientId; self.clinicId = clinicId; self.departmentId = departmentId; self.doctorId = doctorId
        self.visitTypeId = visitTypeId; self.firstDay = firstDay; self.lastDay = lastDay; self.fromMinute = fromMinute
        self.toMinute = toMinute; self.weekdays = weekdays; self.beforeAppointmentId = beforeAppointmentId
        self.priority = priority; self.staffId = staffId; self.status = status; self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public init(row: some StoredRow) throws {
        let table = "waitlist_entries"
        id = try row.value("id", in: table); clientId = try row.value("client_id", in: table)
        clinicId = try row.value("clinic_id", in: table); departmentId = try row.value("department_id", in: table)
        doctorId = try row.value("doctor_id", in: table); visitTypeId = try row.value("visit_type_id", in: table)
        firstDay = try row.value("first_day", in: table); lastDay = try row.value("last_day", in: table)
        fromMinute = try row.value("from_minute", in: table); toMinute = try row.value("to_minute", in: table)
        weekdays = try row.value("weekdays", in: table)
        beforeAppointmentId = try row.value("before_appointment_id", in: table)
        priority = try row.value("priority", in: table); staffId = try row.value("staff_id", in: table)
        let status: String = try row.value("status", in: table)
        guard let known = WaitlistEntryStatus(rawValue: status) else {
            throw ClinicError(.storage, .storedValueUnreadable, "\(table).status", String(id ?? 0))
        }
        self.status = known
        createdAt = try row.instant("created_at", in: table); updatedAt = try row.instant("updated_at", in: table)
        lapses = try row.value("lapses", in: table)
    }

    /// The ISO weekdays (1 = Monday … 7 = Sunday) of `weekdays`.
    public var weekdayList: [Int] { (1...7).filter { weekdays & (1 << ($0 - 1)) != 0 } }

    /// Whether a time `start`..<`end` at a clinic in `zone` is one this entry waits for: its
    /// local day within the window and on one of the weekdays, within the hours when there are
    /// any, and before `before` (the start of the appointment it should come before).
    public func fits(start: Date, end: Date, zone: TimeZone, before: Date?) -> Bool {
        let local = LocalDateTime.of(start, in: zone)
        let day = local.dayText
        guard day >= firstDay, day <= lastDay, weekdays & (1 << (local.weekday - 1)) != 0 else { return false }
        if let fromMinute, let toMinute {
            let length = Int(end.timeIntervalSince(start) / 60)
            guard local.minuteOfDay >= fromMinute, local.minuteOfDay + length <= toMinute else { return false }
        }
        if let before, start >= before { return false }
        return true
    }
}

/// A freed time offered to one waiting entry, held for its patient until `expiresAt` by a hold
/// (`holdId`) that nobody else can book or hold over.
public struct WaitlistOffer: Sendable, Equatable {
    public var id: Int64?
    public var entryId: Int64
    public var clientId: Int64
    public var holdId: Int64?
    public var clinicId: Int64
    public var departmentId: Int64
    public var doctorId: Int64
    public var startsAt: Date
    public var endsAt: Date
    public var expiresAt: Date
    public var status: WaitlistOfferStatus
    /// The appointment an accepted offer became.
    public var appointmentId: Int64?
    public var createdAt: Date
    public var closedAt: Date?

    public init(id: Int64? = nil, entryId: Int64, clientId: Int64, holdId: Int64?, clinicId: Int64, departmentId: Int64,
                doctorId: Int64, startsAt: Date, endsAt: Date, expiresAt: Date, status: WaitlistOfferStatus,
                appointmentId: Int64?, createdAt: Date, closedAt: Date?) {
        self.id = id; self.entryId = entryId; self.clientId = clientId; self.holdId = holdId; self.clinicId = clinicId
        self.departmentId = departmentId; self.doctorId = doctorId; self.startsAt = startsAt; self.endsAt = endsAt
        self.expiresAt = expiresAt; self.status = status; self.appointmentId = appointmentId; self.createdAt = createdAt
        self.closedAt = closedAt
    }

    public init(row: some StoredRow) throws {
        let table = "waitlist_offers"
        id = try row.value("id", in: table); entryId = try row.value("entry_id", in: table)
        clientId = try row.value("client_id", in: table); holdId = try row.value("hold_id", in: table)
        clinicId = try row.value("clinic_id", in: table); departmentId = try row.value("department_id", in: table)
        doctorId = try row.value("doctor_id", in: table)
        startsAt = try row.instant("starts_at", in: table); endsAt = try row.instant("ends_at", in: table)
        expiresAt = try row.instant("expires_at", in: table)
        let status: String = try row.value("status", in: table)
        guard let known = WaitlistOfferStatus(rawValue: status) else {
            throw ClinicError(.storage, .storedValueUnreadable, "\(table).status", String(id ?? 0))
        }
        self.status = known
        appointmentId = try row.value("appointment_id", in: table)
        createdAt = try row.instant("created_at", in: table)
        closedAt = try row.optionalInstant("closed_at", in: table)
    }
}

/// A time that became free at a department while someone waited there, queued (by the
/// database's trigger, or by an offer that ended unanswered) for the waitlist's worker.
public struct FreedTime: Sendable, Equatable {
    public var id: Int64
    public var departmentId: Int64
    public var doctorId: Int64
    public var startsAt: Date
    public var endsAt: Date
    /// When it was queued (the database's clock).
    public var freedAt: Date

    public init(id: Int64, departmentId: Int64, doctorId: Int64, startsAt: Date, endsAt: Date, freedAt: Date) {
        self.id = id; self.departmentId = departmentId; self.doctorId = doctorId; self.startsAt = startsAt; self.endsAt = endsAt
        self.freedAt = freedAt
    }

    public init(row: some StoredRow) throws {
        let table = "waitlist_freed"
        id = try row.value("id", in: table); departmentId = try row.value("department_id", in: table)
        doctorId = try row.value("doctor_id", in: table)
        startsAt = try row.instant("starts_at", in: table); endsAt = try row.instant("ends_at", in: table)
        freedAt = try row.instant("freed_at", in: table)
    }
}
