import Foundation

// Staff shapes: accounts and the day's entries.

/// A staff account (`clinic staff … --json`, `/v1/staff/…`); every key always, `null` where absent.
public struct StaffJSON: Encodable, Sendable {
    public let id: Int64; public let login: String; public let name: String; public let surname: String
    public let role: String; public let clinicId: Int64; public let doctorId: Int64?; public let isActive: Bool

    public init(_ member: StaffMember) {
        id = member.id; login = member.login; name = member.name; surname = member.surname; role = member.role.rawValue
        clinicId = member.clinicId; doctorId = member.doctorId; isActive = member.isActive
    }

    private enum Keys: String, CodingKey { case id, login, name, surname, role, clinicId, doctorId, isActive }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id); try container.encode(login, forKey: .login)
        try container.encode(name, forKey: .name); try container.encode(surname, forKey: .surname)
        try container.encode(role, forKey: .role); try container.encode(clinicId, forKey: .clinicId)
        try container.encode(doctorId, forKey: .doctorId); try container.encode(isActive, forKey: .isActive)
    }
}

/// One appointment of a clinic's day as staff see it: the appointment with the patient's name
/// and login (`null` for a deleted account).
public struct DayEntryJSON: Encodable, Sendable {
    public let appointment: AppointmentJSON
    public let patientName: String?
    public let patientLogin: String?

    public init(_ entry: DayEntry) {
        appointment = AppointmentJSON(entry.appointment); patientName = entry.patientName; patientLogin = entry.patientLogin
    }

    private enum Keys: String, CodingKey { case patientName, patientLogin }

    public func encode(to encoder: Encoder) throws {
        try appointment.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(patientName, forKey: .patientName); try container.encode(patientLogin, forKey: .patientLogin)
    }
}

/// The front desk's calendar (`GET /v1/staff/calendar`, `clinic staff calendar`): per doctor,
/// the slots (free or taken) and the appointments of the days shown, in the clinic's zone.
public struct CalendarJSON: Encodable, Sendable {
    public struct Column: Encodable, Sendable {
        public let doctorId: Int64
        public let doctorName: String
        public let departmentId: Int64
        public let specialization: String
        public let slots: [SlotJSON]
        /// The visits that hold the doctor's time; the cancelled ones are apart (issue 55).
        public let appointments: [DayEntryJSON]
        public let cancelled: [DayEntryJSON]
    }
    public let from: String
    public let days: Int
    public let timeZone: String
    public let doctors: [Column]

    public init(_ calendar: FrontDeskCalendar) {
        from = calendar.from.dayText; days = calendar.days; timeZone = calendar.zone.identifier
        doctors = calendar.columns.map { column in
            Column(doctorId: column.doctor.id ?? 0, doctorName: column.doctor.name, departmentId: column.department.id ?? 0,
                   specialization: column.department.specialization, slots: column.slots.map(SlotJSON.init),
                   appointments: column.occupying.map(DayEntryJSON.init), cancelled: column.cancelled.map(DayEntryJSON.init))
        }
    }
}

/// The front desk's search of patients (`GET /v1/staff/patients?q=`, `clinic staff patients`);
/// one item is also a walk-in as registered (`POST /v1/staff/patients`). Every key always,
/// `null` where absent (`login` until a walk-in claims their account).
public struct PatientMatchesJSON: Encodable, Sendable {
    public struct Item: Encodable, Sendable {
        public let id: Int64; public let login: String?; public let name: String; public let surname: String
        public let email: String?; public let birthDate: String?; public let phone: String?

        public init(_ match: PatientMatch) {
            id = match.id; login = match.login; name = match.name; surname = match.surname; email = match.email
            birthDate = match.birthDate; phone = match.phone
        }

        private enum Keys: String, CodingKey { case id, login, name, surname, email, birthDate, phone }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(id, forKey: .id); try container.encode(login, forKey: .login)
            try container.encode(name, forKey: .name); try container.encode(surname, forKey: .surname)
            try container.encode(email, forKey: .email); try container.encode(birthDate, forKey: .birthDate)
            try container.encode(phone, forKey: .phone)
        }
    }
    public let items: [Item]

    public init(_ matches: [PatientMatch]) { items = matches.map(Item.init) }
}

/// A claim code for a walk-in (`POST /v1/staff/patients/{id}/claim-code`, `clinic staff claim-code`).
public struct ClaimCodeJSON: Encodable, Sendable {
    public let patientId: Int64; public let code: String; public let expiresAt: String; public let emailed: Bool

    public init(_ code: ClaimCode) {
        patientId = code.patientId; self.code = code.code; expiresAt = DateText.iso8601(code.expiresAt); emailed = code.emailed
    }
}

/// A month's report (`clinic staff report --json`, the web page's data).
public struct MonthReportJSON: Encodable, Sendable {
    public struct Row: Encodable, Sendable {
        public let scope: String, name: String, booked: Int, completed: Int, noShows: Int, cancelled: Int
        public let cancelledUnder24h: Int, cancelledByClinic: Int, open: Int, freed: Int, refilled: Int
        public let noShowShare: Double?, refilledShare: Double?
        /// A doctor's row: the doctor, and their department's name.
        public let doctorId: Int64?, department: String?

        init(_ row: ReportRow, _ language: Language) {
            scope = row.scope.rawValue
            name = row.label(language)
            doctorId = row.doctorId
            department = row.department.map { Specialization.displayName($0, language) }
            booked = row.booked; completed = row.completed; noShows = row.noShows; cancelled = row.cancelled
            cancelledUnder24h = row.cancelledLate; cancelledByClinic = row.cancelledByClinic; open = row.open
            freed = row.freed; refilled = row.refilled; noShowShare = row.noShowShare; refilledShare = row.refilledShare
        }
    }
    public let clinic: String, timeZone: String, month: String
    public let departments: [Row], doctors: [Row], total: Row

    public init(_ report: MonthReport, language: Language) {
        clinic = report.clinicName; timeZone = report.timeZone; month = String(format: "%04d-%02d", report.year, report.month)
        departments = report.byDepartment.map { Row($0, language) }
        doctors = report.byDoctor.map { Row($0, language) }
        total = Row(report.total, language)
    }
}
