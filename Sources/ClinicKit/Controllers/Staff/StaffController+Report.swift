import Foundation

/// One line of a month's report: a department, a doctor, or the clinic in all.
public struct ReportRow: Sendable, Equatable {
    public enum Scope: String, Sendable { case department, doctor, total }
    public let scope: Scope
    /// The department's specialization key, the doctor's name, or "" for the total.
    public let key: String
    /// A doctor's row: the doctor (rows are per doctor, not per name: two "John Smith" are two
    /// rows) and their department's specialization key.
    public var doctorId: Int64? = nil
    public var department: String? = nil
    /// Another doctor of the report has this doctor's name: `label` tells them apart.
    public var namesake = false
    /// Visits of the month (by their time, in the clinic's zone), whatever became of them.
    public var booked = 0
    public var completed = 0
    public var noShows = 0
    public var cancelled = 0
    /// Cancelled less than `MonthReport.lateHours` before the visit (by the patient or the clinic).
    public var cancelledLate = 0
    /// Cancelled by the clinic's staff (not by the patient).
    public var cancelledByClinic = 0
    /// Times given up before they came (visits cancelled ahead of their time), and how many of
    /// those someone booked again.
    public var freed = 0
    public var refilled = 0
    /// Booked and not yet seen (scheduled, confirmed, arrived, in progress).
    public var open = 0

    public init(scope: Scope, key: String, doctorId: Int64? = nil, department: String? = nil) {
        self.scope = scope; self.key = key; self.doctorId = doctorId; self.department = department
    }

    /// The row's name as every front shows it: a department's in `language`, a doctor's name,
    /// with their department (and id, when that is not enough) beside a namesake's.
    public func label(_ language: Language) -> String {
        switch scope {
        case .department: return Specialization.displayName(key, language)
        case .total: return key
        case .doctor:
            guard namesake else { return key }
            return "\(key) (\(Specialization.displayName(department ?? "", language)), \(doctorId ?? 0))"
        }
    }

    public var noShowShare: Double? { booked - cancelled == 0 ? nil : Double(noShows) / Double(booked - cancelled) }
    public var refilledShare: Double? { freed == 0 ? nil : Double(refilled) / Double(freed) }
}

/// A clinic's month as its admin reads it (issue 46): bookings, cancellations and how late,
/// no-shows by doctor and department, and the share of freed times booked again; computed
/// here, in the clinic's zone, for the web page, the CSV and `clinic staff report` alike.
public struct MonthReport: Sendable, Equatable {
    public let clinicName: String
    public let timeZone: String
    public let year: Int
    public let month: Int
    public let byDepartment: [ReportRow]
    public let byDoctor: [ReportRow]
    public let total: ReportRow
    /// A cancellation this close to the visit is late.
    public static let lateHours = 24

    /// The report as CSV (RFC 4180, a header line, `scope,name,…`): department names are the
    /// specialization's in `language`, shares are fractions with three decimals (empty when
    /// there is nothing to divide by).
    public func csv(_ language: Language) -> String {
        let header = ["scope", "name", "booked", "completed", "no_shows", "no_show_share", "cancelled", "cancelled_under_24h",
                      "cancelled_by_clinic", "open", "freed", "refilled", "refilled_share", "department", "doctor_id"]
        func share(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "" }
        func field(_ text: String) -> String {
            // A name that starts like a formula is not one to a spreadsheet (CSV injection);
            // a semicolon is the separator of spreadsheets in many locales (Russian among them).
            var text = text
            if let first = text.first, "=+-@\t\r".contains(first) { text = "'" + text }
            return text.contains(where: { $0 == "," || $0 == ";" || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        }
        let rows = (byDepartment + byDoctor + [total]).map { row -> String in
            return [row.scope.rawValue, field(row.scope == .doctor ? row.key : row.label(language)), String(row.booked), String(row.completed), String(row.noShows),
                    share(row.noShowShare), String(row.cancelled), String(row.cancelledLate), String(row.cancelledByClinic),
                    String(row.open), String(row.freed), String(row.refilled), share(row.refilledShare),
                    field(row.department.map { Specialization.displayName($0, language) } ?? ""),
                    row.doctorId.map(String.init) ?? ""].joined(separator: ",")
        }
        return ([header.joined(separator: ",")] + rows).joined(separator: "\r\n") + "\r\n"
    }
}

extension StaffController {
    /// The report of a month given as `YYYY-MM` (a bad one is `invalid_input`), or of this month
    /// in the clinic's calendar when nil: one snapshot (`MonthFacts`).
    public func monthReport(_ member: StaffMember, month text: String?) throws -> MonthReport {
        try monthReport(member, plan: try Self.monthPlanning(member, month: text, now: now()))
    }

    /// The report of `year`-`month` (the clinic's calendar) for a clinic admin (`forbidden` for
    /// the others).
    public func monthReport(_ member: StaffMember, year: Int, month: Int) throws -> MonthReport {
        try monthReport(member, plan: try Self.monthPlanning(member, year: year, month: month))
    }

    private func monthReport(_ member: StaffMember, plan: (Clinic) throws -> MonthPlan) throws -> MonthReport {
        try Self.monthReport(try database.reading { tx in try MonthFacts.read(tx, clinicId: member.clinicId, plan: plan) }, member)
    }

    /// `monthReport(_:month:)` as the store's one awaited read (issue 56), what a server runs.
    public func monthReport(_ member: StaffMember, month text: String?) async throws -> MonthReport {
        let plan = try Self.monthPlanning(member, month: text, now: now())
        return try Self.monthReport(try await database.monthFacts(clinicId: member.clinicId, plan: plan), member)
    }

    /// The month a report covers, decided on the member's clinic: this month in the clinic's
    /// calendar when `text` is nil or blank. A bad month, or a member who is not the clinic's
    /// admin, is refused before anything is read.
    static func monthPlanning(_ member: StaffMember, month text: String?, now: Date) throws -> @Sendable (Clinic) throws -> MonthPlan {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            guard member.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
            return { clinic in
                let today = LocalDateTime.of(now, in: clinic.zone)
                return try monthPlanning(member, year: today.year, month: today.month)(clinic)
            }
        }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let year = Int(parts[0]), let month = Int(parts[1]) else {
            throw ClinicError.invalid(.invalidDay, text)
        }
        return try monthPlanning(member, year: year, month: month)
    }

    /// `year`-`month` checked (the clinic admin's, a month of 2000 to 9998), its span made in
    /// the clinic's zone.
    static func monthPlanning(_ member: StaffMember, year: Int, month: Int) throws -> @Sendable (Clinic) throws -> MonthPlan {
        guard member.role == .clinicAdmin else { throw ClinicError(.forbidden, .staffForbidden, member.role.rawValue) }
        guard (2000...9998).contains(year), (1...12).contains(month),
              let first = LocalDateTime(year: year, month: month, day: 1),
              let next = month == 12 ? LocalDateTime(year: year + 1, month: 1, day: 1) : LocalDateTime(year: year, month: month + 1, day: 1)
        else { throw ClinicError.invalid(.invalidDay, String(format: "%04d-%02d", year, month)) }
        return { clinic in
            guard let start = first.firstInstant(in: clinic.zone), let end = next.firstInstant(in: clinic.zone) else {
                throw ClinicError.invalid(.invalidDay, first.dayText)
            }
            return MonthPlan(year: year, month: month, span: start..<end)
        }
    }

    /// The report of what was read (nil: the member's clinic is gone). A time is freed when its
    /// visit is cancelled before it starts; it is refilled when another visit holds that
    /// doctor's time then (booked after the cancellation, by anyone: the waitlist, the desk, the
    /// patient). Nothing personal is read: counts only.
    static func monthReport(_ facts: MonthFacts?, _ member: StaffMember) throws -> MonthReport {
        guard let facts else { throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId)) }
        let visits = facts.visits, events = facts.events
        let departments = Dictionary(facts.departments.map { ($0.id ?? 0, $0.specialization) }) { a, _ in a }
        // Who holds each doctor's time, and since when (the booking or the move to it).
        var holders: [String: [(id: Int64, since: Date)]] = [:]
        for visit in visits where visit.status != .cancelled {
            let since = (events[visit.id ?? 0] ?? []).last { $0.event == "booked" || $0.event == "rescheduled" }?.at ?? visit.createdAt
            holders["\(visit.doctorId)@\(visit.startsAt.seconds)", default: []].append((visit.id ?? 0, since))
        }
        var byDepartment: [String: ReportRow] = [:], byDoctor: [Int64: ReportRow] = [:]
        var total = ReportRow(scope: .total, key: "")
        for visit in visits {
            let department = departments[visit.departmentId] ?? ""
            var change = ReportRow(scope: .total, key: "")
            change.booked = 1
            switch visit.status {
            case .completed: change.completed = 1
            case .noShow: change.noShows = 1
            case .cancelled:
                change.cancelled = 1
                let cancel = (events[visit.id ?? 0] ?? []).last { $0.event == AppointmentStatus.cancelled.rawValue }
                let at = cancel?.at ?? visit.updatedAt
                if visit.startsAt.timeIntervalSince(at) < Double(MonthReport.lateHours * 3600) { change.cancelledLate = 1 }
                if cancel?.staffId != nil { change.cancelledByClinic = 1 }
                if at < visit.startsAt {
                    change.freed = 1
                    let after = holders["\(visit.doctorId)@\(visit.startsAt.seconds)"] ?? []
                    if after.contains(where: { $0.since >= at }) { change.refilled = 1 }
                }
            default: change.open = 1
            }
            total.add(change)
            byDepartment[department, default: ReportRow(scope: .department, key: department)].add(change)
            byDoctor[visit.doctorId, default: ReportRow(scope: .doctor, key: visit.doctorName, doctorId: visit.doctorId,
                                                        department: department)].add(change)
        }
        var doctors = byDoctor.values.sorted { ($0.key, $0.doctorId ?? 0) < ($1.key, $1.doctorId ?? 0) }
        let names = Dictionary(doctors.map { ($0.key, 1) }, uniquingKeysWith: +)
        for index in doctors.indices { doctors[index].namesake = (names[doctors[index].key] ?? 0) > 1 }
        return MonthReport(clinicName: facts.clinic.name, timeZone: facts.clinic.timeZone, year: facts.plan.year,
                           month: facts.plan.month, byDepartment: byDepartment.values.sorted { $0.key < $1.key }, byDoctor: doctors,
                           total: total)
    }
}

extension ReportRow {
    init(scope: Scope, key: String) {
        self.scope = scope
        self.key = key
    }

    mutating func add(_ other: ReportRow) {
        booked += other.booked; completed += other.completed; noShows += other.noShows; cancelled += other.cancelled
        cancelledLate += other.cancelledLate; cancelledByClinic += other.cancelledByClinic; freed += other.freed
        refilled += other.refilled; open += other.open
    }
}
