import Foundation

/// How much one search for a free slot may do: clinics looked at, and wall-clock seconds.
public struct SearchBudget: Sendable, Equatable {
    public var clinics: Int
    public var seconds: TimeInterval

    public init(clinics: Int, seconds: TimeInterval) {
        self.clinics = clinics
        self.seconds = seconds
    }

    /// 200 clinics (a limit of 100 still finds its clinics among them where slots are common)
    /// or 2 s: measured in docs/BENCHMARKS.md ("A search that finds nothing").
    public static let standard = SearchBudget(clinics: 200, seconds: 2)

    struct Spent: Error {}
}

/// What a search for free slots found, and whether it looked everywhere it should have
/// (`complete` is false when the budget ran out first: nearer clinics may have been skipped
/// by no one, but farther ones were not looked at).
public struct FreeSlotSearch: Sendable, Equatable {
    public let slots: [FreeSlotNearby]
    public let complete: Bool
    public let clinicsExamined: Int
}

/// A clinic near the patient and its earliest free slot for a specialization.
public struct FreeSlotNearby: Sendable, Equatable {
    public let clinic: NearbyClinic
    /// The clinic's department of the specialization (read with the slot's facts).
    public let department: Department
    public let slot: Slot

    public var departmentId: Int64 { department.id ?? 0 }
}

extension AppointmentController {
    /// How far ahead `findFreeSlots` looks without `before`.
    public static let findWindow: TimeInterval = 14 * 86_400
    /// How far ahead it looks at most: a later `before` is cut to this, so that a department
    /// whose doctors have no hours is not walked week by week for centuries.
    public static let findMaximumWindow: TimeInterval = 366 * 86_400

    /// The `limit` nearest clinics that have a department of the specialization with a free
    /// slot starting before `before` (default: within 14 days, at most a year), nearest first, each with its
    /// earliest free slot. Clinics are taken in order of distance from the finder, in growing
    /// batches, and the walk stops as soon as `limit` clinics with a slot are found: every
    /// clinic nearer than the last one found has been looked at.
    /// With `minutes`, a visit of that length: a free time where it fits (the rules of a visit
    /// type's slots), at any clinic, whatever visit types each department defines; a visit type
    /// belongs to one department, so a search across clinics asks for a length instead.
    public func findFreeSlots(specialization: String, near point: Coordinate, before: Date? = nil, limit: Int = 1,
                              pediatricOnly: Bool = false, minutes: Int? = nil, clinics: ClinicController) async throws -> [FreeSlotNearby] {
        try await searchFreeSlots(specialization: specialization, near: point, before: before, limit: limit, pediatricOnly: pediatricOnly,
                                  minutes: minutes, clinics: clinics).slots
    }

    /// `findFreeSlots` within `budget`: the walk stops after `budget.clinics` clinics or
    /// `budget.seconds`, whichever comes first, and says whether it looked at every clinic it
    /// should have. A search anyone can start without logging in must not hold a thread for
    /// as long as a year of every clinic's calendar takes to read.
    ///
    /// Awaited (issue 56): the specialization's departments, and each clinic's facts a week at
    /// a time (`gatherSlotFacts`), are read with no thread waiting for the store; each week's
    /// slots are computed by `runner` (a server's pool), the finder on the caller's task.
    public func searchFreeSlots(specialization: String, near point: Coordinate, before: Date? = nil, limit: Int = 1,
                                pediatricOnly: Bool = false, minutes: Int? = nil, clinics: ClinicController,
                                budget: SearchBudget = .standard, after: Date? = nil,
                                computing runner: some PasswordRunner = InlinePasswordRunner()) async throws -> FreeSlotSearch {
        try NearestQuery.checkLimit(limit)
        if let minutes, !(5...480).contains(minutes) || minutes % 5 != 0 {
            throw ClinicError.invalid(.visitTypeDurationInvalid, String(minutes))
        }
        let now = self.now()
        let deadline = min(before ?? now.addingTimeInterval(Self.findWindow), now.addingTimeInterval(Self.findMaximumWindow))
        guard deadline > now else { throw ClinicError.invalid(.beforeInPast) }
        let key = Specialization.key(for: specialization)
        let departments = try await database.specializationDepartments(key)
        if departments.isEmpty {
            let known = try await database.knownSpecializations()
            if !known.contains(key) { throw Specialization.unknown(specialization, known: known) }
        }
        if let minutes { try Self.checkVisitFits(minutes: minutes, longest: try await database.longestStretch(specialization: key)) }
        let finder = try await clinics.finder()
        let filter = NearestClinicFinder.Filter(pediatricOnly: pediatricOnly, clinicIds: Set(departments.keys))
        let stopAt = Date().addingTimeInterval(budget.seconds)
        var found: [FreeSlotNearby] = []
        var examined = 0, looked = 0
        var batch = max(8, limit * 2)
        while true {
            let matches = try finder.nearest(to: point, limit: batch, filter: filter)
            for match in matches.dropFirst(examined) {
                guard let departmentId = departments[match.clinicId] else { continue }
                guard looked < budget.clinics, Date() < stopAt else {
                    return FreeSlotSearch(slots: found, complete: false, clinicsExamined: looked)
                }
                looked += 1
                let earliest: (Slot, Clinic, Department)?
                do {
                    earliest = try await earliestFreeSlot(departmentId: departmentId, before: deadline, now: now, minutes: minutes,
                                                          stopAt: stopAt, after: after, computing: runner)
                } catch is SearchBudget.Spent {
                    return FreeSlotSearch(slots: found, complete: false, clinicsExamined: looked)
                }
                if let (slot, clinic, department) = earliest {
                    found.append(FreeSlotNearby(clinic: NearbyClinic(clinic: clinic, distance: match.distance),
                                                department: department, slot: slot))
                    if found.count == limit { return FreeSlotSearch(slots: found, complete: true, clinicsExamined: looked) }
                }
            }
            examined = matches.count
            if matches.count < batch { // every matching clinic has been looked at
                return FreeSlotSearch(slots: found, complete: true, clinicsExamined: looked)
            }
            batch *= 4
        }
    }

    /// `invalid_input` for a visit longer than any stretch of hours a doctor of the
    /// specialization has (`longest`, weekly or on a given day): no clinic could ever offer it,
    /// and looking would read every clinic's year.
    static func checkVisitFits(minutes: Int, longest: Int) throws {
        guard minutes <= longest else {
            throw ClinicError.invalid(.findVisitTooLong, String(minutes), String(longest))
        }
    }

    /// The first bookable slot of a department starting before `deadline`: the first week,
    /// then up to four weeks at a time (`findChunkDays`), each one gather, with the department and its
    /// clinic; `SearchBudget.Spent` once `stopAt` has passed. With `after`, the first starting
    /// then or later.
    ///
    /// The days are dates counted from the day before `after`'s UTC date, read as the
    /// clinic's dates: the clinic's zone comes with the first gather's facts, and a day early
    /// covers every zone (a slot before `after` is not taken).
    func earliestFreeSlot(departmentId: Int64, before deadline: Date, now: Date, minutes: Int? = nil,
                          stopAt: Date = .distantFuture, after: Date? = nil,
                          computing runner: some PasswordRunner) async throws -> (Slot, Clinic, Department)? {
        let after = max(after ?? now, now)
        let start = LocalDateTime.of(after, in: Self.utc).adding(days: -1).at(minuteOfDay: 0)
        var first = start
        let lastDay = LocalDateTime.of(deadline, in: Self.utc).adding(days: 1)
        while first <= lastDay {
            if Date() >= stopAt { throw SearchBudget.Spent() }
            // The first week (and the day early) alone: most departments have a time in it.
            let chunk = first == start ? 8 : Self.findChunkDays
            let days = Int(min(Int64(chunk), lastDay.daysSinceEpoch - first.daysSinceEpoch + 1))
            let ask = try SlotsAsk(departmentId: departmentId, doctorId: nil, from: first, days: days, visitTypeId: nil, now: now,
                                   minutes: minutes)
            let facts = try await database.gatherSlotFacts(departmentId: departmentId, visitTypeId: nil, days: ask.factDays,
                                                           takenSpan: ask.takenSpan, at: now)
            let (clinic, slots) = try await runner.run { try ask.slots(facts) }
            if let slot = slots.first(where: { $0.isAvailable && $0.start >= after && $0.start < deadline }), let department = facts?.department {
                return (slot, clinic, department)
            }
            first = first.adding(days: days)
        }
        return nil
    }

    /// The most days of one department the walk gathers at once after its first week.
    static let findChunkDays = 28
}
