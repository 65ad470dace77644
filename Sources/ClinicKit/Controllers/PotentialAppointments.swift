import Foundation

/// What to look for when a client asks for bookable times (FHIR's `Appointment/$find`,
/// IHE ITI-115): a window, and where — a department, a doctor, a visit type, a clinic (with a
/// specialization), or a point with a specialization (the nearest clinics with a free time).
public struct PotentialQuery: Sendable, Equatable {
    /// The window's first and last instants (default: from now, for 7 days).
    public var start: Date?
    public var end: Date?
    /// A specialization key or its English or Russian name.
    public var specialization: String?
    public var visitTypeId: Int64?
    public var doctorId: Int64?
    public var departmentId: Int64?
    public var clinicId: Int64?
    /// Look around this point: the nearest clinics (with the specialization) that have a free time.
    public var near: Coordinate?
    /// How many times at most (1 to `NearestQuery.maximumLimit`).
    public var limit: Int

    /// The longest window asked for at once, in days.
    public static let maximumDays = 31
    public static let defaultDays = 7

    public init(start: Date? = nil, end: Date? = nil, specialization: String? = nil, visitTypeId: Int64? = nil,
                doctorId: Int64? = nil, departmentId: Int64? = nil, clinicId: Int64? = nil, near: Coordinate? = nil,
                limit: Int = 20) {
        self.start = start; self.end = end; self.specialization = specialization; self.visitTypeId = visitTypeId
        self.doctorId = doctorId; self.departmentId = departmentId; self.clinicId = clinicId; self.near = near
        self.limit = limit
    }
}

/// A time that could be booked now: the slot, its department and clinic, the visit type asked
/// for, and how far the clinic is from the point of a `near` search.
public struct PotentialAppointment: Sendable, Equatable {
    public let clinic: Clinic
    public let department: Department
    public let slot: Slot
    public let visitTypeId: Int64?
    /// The visit type asked for (`visitTypeId`'s), as the search read it.
    public let visitType: VisitType?
    /// Metres, for a search near a point.
    public let distance: Double?
}

/// What `findPotentialAppointments(_:patientId:)` found, and whether it looked near the
/// patient's registered address because the query named no place.
public struct PotentialSearch: Sendable, Equatable {
    public let appointments: [PotentialAppointment]
    public let nearRegisteredAddress: Bool
}

extension ClinicSystem {
    /// As `findPotentialAppointments(_:computing:)`, for a signed-in patient: a query with a
    /// specialization and no place at all (IHE's `$find` has no location parameter) looks near
    /// the patient's registered address, and says so. Without a patient, or a patient without a
    /// known address, such a query is refused as before (`potentialWhere`).
    public func findPotentialAppointments(_ query: PotentialQuery, patientId: Int64?, computing runner: some PasswordRunner,
                                          budget: SearchBudget = .standard) async throws -> PotentialSearch {
        let placeless = query.departmentId == nil && query.visitTypeId == nil && query.doctorId == nil && query.clinicId == nil
            && query.near == nil
        guard placeless, query.specialization != nil, let patientId else {
            return PotentialSearch(appointments: try await findPotentialAppointments(query, computing: runner, budget: budget), nearRegisteredAddress: false)
        }
        guard let home = try await database.client(id: patientId)?.coordinate else { throw ClinicError.invalid(.potentialWhere) }
        var query = query
        query.near = home
        return PotentialSearch(appointments: try await findPotentialAppointments(query, computing: runner, budget: budget), nearRegisteredAddress: true)
    }

    /// Free times in a window, soonest first (or, near a point, the earliest of each of the
    /// nearest clinics, nearest first, as `clinic appointments find` finds them). Times held by
    /// someone else are not free. A window before now starts now. Awaited (issue 56): the visit
    /// type, the doctor's place, the department or the clinic read awaited, each department's
    /// slots gathered awaited (`slotsWithClinic`) and computed by `runner`; so are the weeks of
    /// the walk near a point (`searchFreeSlots`, batches of the finder's clinics and a week of
    /// each at a time).
    public func findPotentialAppointments(_ query: PotentialQuery, computing runner: some PasswordRunner,
                                          budget: SearchBudget = .standard) async throws
        -> [PotentialAppointment] {
        try NearestQuery.checkLimit(query.limit)
        let now = appointments.now()
        let from = max(query.start ?? now, now)
        let until = query.end ?? from.addingTimeInterval(TimeInterval(PotentialQuery.defaultDays) * 86_400)
        guard until > from, until.timeIntervalSince(from) <= TimeInterval(PotentialQuery.maximumDays) * 86_400 else {
            throw ClinicError.invalid(.potentialWindow, String(PotentialQuery.maximumDays))
        }
        var departmentId = query.departmentId
        var visit: VisitType?
        if let visitTypeId = query.visitTypeId {
            visit = try await database.visitType(id: visitTypeId)
            guard let found = visit, found.isActive, departmentId == nil || departmentId == found.departmentId else {
                throw ClinicError(.notFound, .visitTypeNotFound, String(visitTypeId))
            }
            departmentId = found.departmentId
        }
        // A doctor alone names their department and its clinic, read with them.
        var doctorsPlace: (department: Department, clinic: Clinic)?
        if let doctorId = query.doctorId, departmentId == nil {
            guard let place = try await database.doctorPlace(id: doctorId) else { throw ClinicError(.notFound, .doctorNotFound, String(doctorId)) }
            departmentId = place.department.id
            doctorsPlace = (place.department, place.clinic)
        }
        let key = query.specialization.map(Specialization.key(for:))
        let list: [(department: Department, clinic: Clinic)]
        if let departmentId {
            var read = doctorsPlace
            if read == nil { read = try await database.departmentWithClinic(id: departmentId) }
            guard let found = read else { throw ClinicError(.notFound, .departmentNotFound, String(departmentId)) }
            if let clinicId = query.clinicId, found.department.clinicId != clinicId { return [] }
            list = [found]
        } else if let clinicId = query.clinicId {
            guard let found = try await database.clinicWithDepartments(id: clinicId) else {
                throw ClinicError(.notFound, .clinicNotFound, String(clinicId))
            }
            list = found.departments.map { ($0, found.clinic) }
        } else if let near = query.near, let specialization = query.specialization {
            return try await nearestPotential(near: near, specialization: specialization, from: from, until: until, limit: query.limit,
                                              computing: runner, budget: budget)
        } else {
            throw ClinicError.invalid(.potentialWhere)
        }
        var found: [PotentialAppointment] = []
        for (department, clinic) in list where key == nil || department.specialization == key {
            let first = LocalDateTime.of(from, in: clinic.zone).at(minuteOfDay: 0)
            let last = LocalDateTime.of(until, in: clinic.zone)
            let days = Int(min(last.daysSinceEpoch - first.daysSinceEpoch + 1, Int64(PotentialQuery.maximumDays)))
            let slots = try await appointments.slotsWithClinic(departmentId: department.id ?? 0, doctorId: query.doctorId, from: first,
                                                               days: days, visitTypeId: query.visitTypeId, computing: runner).slots
            for slot in slots where slot.isAvailable && slot.start >= from && slot.start < until {
                found.append(PotentialAppointment(clinic: clinic, department: department, slot: slot, visitTypeId: query.visitTypeId,
                                                  visitType: visit, distance: nil))
            }
        }
        found.sort { ($0.slot.start, $0.department.id ?? 0, $0.slot.doctorId) < ($1.slot.start, $1.department.id ?? 0, $1.slot.doctorId) }
        return Array(found.prefix(query.limit))
    }

    /// The walk near a point (`searchFreeSlots`): the earliest free time of each of the nearest
    /// clinics with the specialization, each with its department.
    private func nearestPotential(near: Coordinate, specialization: String, from: Date, until: Date, limit: Int,
                                  computing runner: some PasswordRunner, budget: SearchBudget) async throws -> [PotentialAppointment] {
        let search = try await appointments.searchFreeSlots(specialization: specialization, near: near, before: until, limit: limit,
                                                            clinics: clinics, budget: budget, after: from, computing: runner)
        return search.slots.map { item in
            PotentialAppointment(clinic: item.clinic.clinic, department: item.department, slot: item.slot, visitTypeId: nil, visitType: nil,
                                 distance: item.clinic.distance)
        }
    }
}
