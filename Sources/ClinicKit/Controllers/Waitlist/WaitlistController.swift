import Foundation

/// The waitlist (issue 45): a patient waits for a time at a department; a time that becomes
/// free there (Migrations/0021_waitlist.sql queues it, whoever frees it) is offered to the first
/// waiting entry it fits, and held for that patient for `booking.waitlist_offer_minutes`; if
/// they decline or let it lapse, the next in line gets it. Accepting books it under every
/// booking rule (or, for "an earlier time", moves the later appointment to it), in one
/// transaction. The rules are here, once; the stores hold what must hold across servers
/// (`WaitlistStorage.swift`).
public final class WaitlistController: Sendable {
    let database: any ClinicStore
    let appointments: AppointmentController
    let now: @Sendable () -> Date
    /// How many waiting entries one freed time is tried on before it is let go: the first that
    /// it fits (and whose patient may take it) gets it.
    static let candidatesPerTime = 50
    /// The priorities the front desk may give an entry.
    static let priorities = -1000...1000

    init(database: any ClinicStore, appointments: AppointmentController, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.appointments = appointments
        self.now = now
    }

    /// What a patient (or the front desk for them) asks to wait for.
    public struct Request: Sendable, Equatable {
        public var departmentId: Int64
        public var doctorId: Int64?
        public var visitTypeId: Int64?
        /// The first and last day to wait for ("YYYY-MM-DD", the clinic's days); nil: from today,
        /// and to the booking horizon's last day (or, with `appointmentId`, that appointment's day).
        public var from: String?
        public var to: String?
        /// Hours of the day ("HH:MM"), both or neither.
        public var hoursFrom: String?
        public var hoursTo: String?
        /// ISO weekdays, 1 = Monday … 7 = Sunday; nil or empty: every day.
        public var weekdays: [Int]?
        /// Wait for a time earlier than this appointment of the patient's (accepting moves it).
        public var appointmentId: Int64?
        /// The front desk's priority (higher first); a patient's own entry has 0.
        public var priority: Int

        public init(departmentId: Int64, doctorId: Int64? = nil, visitTypeId: Int64? = nil, from: String? = nil, to: String? = nil,
                    hoursFrom: String? = nil, hoursTo: String? = nil, weekdays: [Int]? = nil, appointmentId: Int64? = nil,
                    priority: Int = 0) {
            self.departmentId = departmentId; self.doctorId = doctorId; self.visitTypeId = visitTypeId; self.from = from
            self.to = to; self.hoursFrom = hoursFrom; self.hoursTo = hoursTo; self.weekdays = weekdays
            self.appointmentId = appointmentId; self.priority = priority
        }
    }

    // MARK: The patient's list

    /// Puts the patient on a department's waitlist. Refused (and nothing stored) for a window
    /// that ends before today or past the booking horizon, hours that are not a span within one
    /// day, weekdays out of 1…7, a department nobody works in (or a doctor not of it), a visit
    /// type it does not offer, an appointment that is not the patient's upcoming one there, a
    /// second entry at the department, or more entries than `booking.waitlist_entries`.
    public func join(clientId: Int64, _ request: Request, staffId: Int64? = nil) throws -> WaitlistEntry {
        let now = self.now()
        let input = try Self.checkedInput(request, staffId: staffId)
        return try database.writing { tx in
            let facts = try WaitlistJoinFacts.read(tx, Self.ask(clientId, request))
            return try Self.joining(facts, request, clientId: clientId, staffId: staffId, input: input, now: now).apply(tx)
        }
    }

    /// `join` awaited: one transaction of the store (`joinWaitlist`).
    public func join(clientId: Int64, _ request: Request, staffId: Int64? = nil) async throws -> WaitlistEntry {
        let now = self.now()
        let input = try Self.checkedInput(request, staffId: staffId)
        return try await database.joinWaitlist(Self.ask(clientId, request)) { facts in
            try Self.joining(facts, request, clientId: clientId, staffId: staffId, input: input, now: now)
        }
    }

    /// `join` awaited with the answer to its `Idempotency-Key` kept in the same transaction.
    public func join(clientId: Int64, _ request: Request, keeping: AnswerKeeping<WaitlistEntry>) async throws
        -> IdempotencyStore.Response {
        let now = self.now()
        let input = try Self.checkedInput(request, staffId: nil)
        let ask = try keeping.store.request(clientId: clientId, key: keeping.key, fingerprint: keeping.fingerprint)
        return try await database.joinWaitlist(Self.ask(clientId, request), decide: { facts in
            try Self.joining(facts, request, clientId: clientId, staffId: nil, input: input, now: now)
        }, keeping: ask, answer: keeping.answer)
    }

    static func ask(_ clientId: Int64, _ request: Request) -> WaitlistJoinAsk {
        WaitlistJoinAsk(clientId: clientId, departmentId: request.departmentId, visitTypeId: request.visitTypeId,
                        appointmentId: request.appointmentId)
    }

    /// A join's input as checked before any store is asked: the hours as minutes of the day, the
    /// weekdays as bits, the front desk's priority within what `prioritizeWaitlistEntry` takes
    /// (a patient's own entry has 0).
    public struct JoinInput: Sendable, Equatable {
        public let hours: Range<Int>?
        public let weekdays: Int
    }

    public static func checkedInput(_ request: Request, staffId: Int64?) throws -> JoinInput {
        let hours = try Self.hours(request.hoursFrom, request.hoursTo)
        if staffId != nil, !Self.priorities.contains(request.priority) {
            throw ClinicError.invalid(.waitlistPriorityInvalid, String(request.priority))
        }
        return JoinInput(hours: hours, weekdays: try Self.weekdays(request.weekdays))
    }

    /// The join decided on its facts: the patient, the department with its clinic and doctors,
    /// the visit type, the window (from today, within the booking horizon, not after the
    /// appointment it is to come before), and the patient's entries: those that can no longer
    /// be offered anything (their last day past, their appointment gone) end and neither count
    /// nor stand in the way; the rest count against `booking.waitlist_entries`.
    public static func joining(_ facts: WaitlistJoinFacts, _ request: Request, clientId: Int64, staffId: Int64?, input: JoinInput,
                               now: Date) throws -> WaitlistJoin {
        guard facts.clientExists else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        guard let department = facts.department else { throw ClinicError(.notFound, .departmentNotFound, String(request.departmentId)) }
        guard let clinic = facts.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(department.clinicId)) }
        if let doctorId = request.doctorId, !facts.doctorIds.contains(doctorId) {
            throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
        }
        guard !facts.doctorIds.isEmpty else { throw ClinicError(.slotUnavailable, .waitlistNoDoctor) }
        let visit = try request.visitTypeId.map { try VisitType.offered(facts.visitType, id: $0, departmentId: request.departmentId) }
        let policy = BookingPolicy(settings: facts.bookingSettings)
        let today = LocalDateTime.of(now, in: clinic.zone).at(minuteOfDay: 0)
        let lastBookable = LocalDateTime.of(now.addingTimeInterval(policy.horizon), in: clinic.zone).at(minuteOfDay: 0)
        var last = try request.to.map(TimeInput.parseDay) ?? lastBookable
        if let appointmentId = request.appointmentId {
            guard let appointment = facts.before, appointment.clientId == clientId, appointment.departmentId == request.departmentId,
                  appointment.status.isActive, appointment.startsAt > now
            else { throw ClinicError(.invalidInput, .waitlistAppointmentInvalid, String(appointmentId)) }
            last = min(last, LocalDateTime.of(appointment.startsAt, in: clinic.zone).at(minuteOfDay: 0))
        }
        let first = max(try request.from.map(TimeInput.parseDay) ?? today, today)
        if let from = request.from, let to = request.to, try TimeInput.parseDay(from) > TimeInput.parseDay(to) {
            throw ClinicError.invalid(.waitlistWindowInvalid, today.dayText)
        }
        guard last >= today, first <= last else { throw ClinicError.invalid(.waitlistWindowInvalid, today.dayText) }
        guard last <= lastBookable else {
            throw ClinicError.invalid(.waitlistWindowBeyondHorizon, String(policy.horizonDays), lastBookable.dayText)
        }
        var ended: [Int64] = [], current = 0
        for facts in facts.entries {
            if facts.isOver(now: now), let id = facts.entry.id, facts.entry.status == .waiting { ended.append(id) } else { current += 1 }
        }
        guard current < policy.waitlistEntries else {
            throw ClinicError(.limitReached, .waitlistEntriesLimit, String(policy.waitlistEntries))
        }
        return WaitlistJoin(ended: ended, entry: WaitlistEntry(
            clientId: clientId, clinicId: clinic.id ?? department.clinicId, departmentId: request.departmentId,
            doctorId: request.doctorId, visitTypeId: visit?.id, firstDay: first.dayText, lastDay: last.dayText,
            fromMinute: input.hours?.lowerBound, toMinute: input.hours?.upperBound, weekdays: input.weekdays,
            beforeAppointmentId: request.appointmentId, priority: staffId == nil ? 0 : request.priority, staffId: staffId,
            status: .waiting, createdAt: now, updatedAt: now))
    }

    /// What a patient's waitlist page shows: their entries, their open offers within their
    /// time, and each one's department with its clinic (the clinic's zone tells the times).
    public struct Overview: Sendable {
        public let entries: [WaitlistEntry]
        public let offers: [WaitlistOffer]
        public let places: [Int64: (department: Department, clinic: Clinic)]
    }

    /// The patient's entries that are still waiting (or offered a time), by id; one whose
    /// last day is past, or whose appointment is gone, is not shown (`join` ends it).
    public func entries(clientId: Int64) throws -> [WaitlistEntry] {
        let now = self.now()
        return try database.reading { tx in Self.shown(try PatientWaitlistFacts.read(tx, clientId: clientId), now: now).entries }
    }

    /// Takes the patient off a waitlist; an open offer of that entry is withdrawn and its time
    /// goes to the next in line.
    public func leave(_ id: Int64, clientId: Int64) throws {
        let now = self.now()
        try database.writing { tx in
            try Self.leaving(try WaitlistEntryState.read(tx, id: id), id: id, clientId: clientId, now: now).apply(tx)
        }
    }

    /// Puts a paused entry back in line (issue 55): an entry whose offers ran out unanswered
    /// `WaitlistEntry.lapsesToPause` times is left out of the line until its patient says they
    /// still want a time; it goes to the back of the line, its lapses forgotten.
    public func resume(_ id: Int64, clientId: Int64) throws -> WaitlistEntry {
        let now = self.now()
        return try database.writing { tx in
            let decision = try Self.resuming(try WaitlistEntryState.read(tx, id: id), id: id, clientId: clientId, now: now)
            try decision.apply(tx)
            return decision.result
        }
    }

    // MARK: Offers

    /// The patient's open offers still within their time, by id.
    public func offers(clientId: Int64) throws -> [WaitlistOffer] {
        let now = self.now()
        return try database.reading { tx in Self.shown(try PatientWaitlistFacts.read(tx, clientId: clientId), now: now).offers }
    }

    /// One of the patient's offers, whatever its state.
    public func offer(_ id: Int64, clientId: Int64) throws -> WaitlistOffer {
        try database.reading { tx in try owned(offer: id, tx, clientId) }
    }

    /// Books an offered time: every booking rule applies (a time meanwhile booked by staff, an
    /// overlap, the limit refuse it), the hold does not stand in its way; for "an earlier time"
    /// the later appointment is moved to it instead. The offer and its entry are closed in the
    /// same transaction. Refused when the offer is not open, or past its time.
    public func accept(_ id: Int64, clientId: Int64) throws -> Appointment {
        let now = self.now()
        return try appointments.changes.count("book") {
            try database.writing { tx in try Self.acceptance(.id(id), clientId: clientId, now: now).run(tx) }
        }
    }

    // MARK: One-tap links

    /// The offer a text's one-tap link opens, whoever follows it (nobody needs to be signed
    /// in: the link is the patient's). Refused alike when the link was never made, was used,
    /// or its offer is closed.
    public func offer(link token: String) throws -> (offer: WaitlistOffer, department: Department, clinic: Clinic) {
        guard Texts.isLinkToken(token) else { throw ClinicError(.notFound, .offerLinkInvalid) }
        let now = self.now()
        return try Self.linkOffer(try database.reading { tx in try OfferLinkFacts.read(tx, hash: Texts.linkHash(token)) }, now: now)
    }

    /// `offer(link:)` awaited: one read of the store (`offerByLink`).
    public func offer(link token: String) async throws -> (offer: WaitlistOffer, department: Department, clinic: Clinic) {
        guard Texts.isLinkToken(token) else { throw ClinicError(.notFound, .offerLinkInvalid) }
        let now = self.now()
        return try Self.linkOffer(try await database.offerByLink(hash: Texts.linkHash(token)), now: now)
    }

    /// What a link's page shows: the offer while it is open and within its time, with its
    /// department and clinic; refused alike (`offer_link_invalid`) otherwise.
    public static func linkOffer(_ facts: OfferLinkFacts?, now: Date) throws -> (offer: WaitlistOffer, department: Department, clinic: Clinic) {
        guard let facts, facts.offer.status == .open, facts.offer.expiresAt > now, let department = facts.department,
              let clinic = facts.clinic else {
            throw ClinicError(.notFound, .offerLinkInvalid)
        }
        return (facts.offer, department, clinic)
    }

    /// Declines an offer: its time goes to the next in line, and the entry waits again (that
    /// time is not offered to it again).
    public func decline(_ id: Int64, clientId: Int64) throws {
        let now = self.now()
        try database.writing { tx in
            try Self.declining(try WaitlistOfferState.read(tx, .id(id)), id: id, clientId: clientId, now: now).apply(tx)
        }
    }

    // MARK: Input

    /// "HH:MM" to "HH:MM" as minutes of the day, both or neither, the first before the second.
    static func hours(_ from: String?, _ to: String?) throws -> Range<Int>? {
        let given = [from, to].compactMap { $0?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !given.isEmpty else { return nil }
        func minutes(_ text: String) -> Int? {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
                  parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
                  (0...24).contains(hour), (0...59).contains(minute), hour * 60 + minute <= 1440 else { return nil }
            return hour * 60 + minute
        }
        let shown = "\(from ?? "") – \(to ?? "")"
        guard given.count == 2, let start = minutes(given[0]), let end = minutes(given[1]), start < end, start < 1440 else {
            throw ClinicError.invalid(.waitlistHoursInvalid, shown)
        }
        return start..<end
    }

    /// ISO weekdays as `WaitlistEntry.weekdays`' bits; not given: every day. An empty list is
    /// refused as the message says ("at least one"), not read as every day.
    static func weekdays(_ days: [Int]?) throws -> Int {
        guard let days else { return WaitlistEntry.everyDay }
        guard !days.isEmpty, days.allSatisfy({ (1...7).contains($0) }) else {
            throw ClinicError.invalid(.waitlistWeekdaysInvalid, days.map(String.init).joined(separator: ","))
        }
        return days.reduce(0) { $0 | 1 << ($1 - 1) }
    }
}
