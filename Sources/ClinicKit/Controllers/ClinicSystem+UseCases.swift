import Foundation

/// What a search from a place found, and the address look-up it made (the fronts tell the
/// user when the address was ambiguous and which place was taken).
public struct FromPlace<Found: Sendable>: Sendable {
    public let found: Found
    /// Where the search started.
    public let place: LocatedPlace
    /// The point (a map centres on it).
    public var point: Coordinate { place.point }
    /// The geocoding of an address, nil for coordinates or the patient's home.
    public var geocoded: GeocodeResult? { place.geocoded }
}

extension ClinicSystem {
    /// "The nearest clinics from a place", the one use case behind `clinic nearest`,
    /// `GET /v1/clinics/nearest` and the web's nearest page: resolve the place (coordinates,
    /// a coordinate text, an address, or the patient's home), search the finder, and
    /// remember the address in the geocode cache once the search succeeded.
    /// `patient` is asked only for the home place.
    public func nearestClinics(from place: PlaceChoice, _ query: NearestQuery,
                               patient: () throws -> Client) throws -> FromPlace<[NearbyClinic]> {
        try query.validate()
        let located = try locate(place, patient: patient)
        let found = try clinics.nearest(to: located.point, query)
        if let geocoded = located.geocoded { try geocoding.remember(geocoded) }
        return FromPlace(found: found, place: located)
    }

    /// `nearestClinics` awaited (issue 56): the place located, the search and the address's
    /// memory each awaited, with no thread waiting for the store or the HTTP geocoder.
    public func nearestClinics(from place: PlaceChoice, _ query: NearestQuery,
                               patient: () throws -> Client) async throws -> FromPlace<[NearbyClinic]> {
        try query.validate()
        let located = try await locate(place, patient: patient)
        let found = try await clinics.nearest(to: located.point, query)
        if let geocoded = located.geocoded { try await geocoding.remember(geocoded) }
        return FromPlace(found: found, place: located)
    }

    /// "The nearest clinics with a free slot from a place" (`clinic appointments find`,
    /// `GET /v1/find`): the place resolved as for `nearestClinics`, then the budgeted search
    /// (`AppointmentController.searchFreeSlots`), its weeks of slots computed by `runner`.
    public func findFreeSlots(from place: PlaceChoice, specialization: String, before: Date? = nil, limit: Int = 1,
                              pediatricOnly: Bool = false, minutes: Int? = nil, budget: SearchBudget = .standard,
                              computing runner: some PasswordRunner = InlinePasswordRunner(),
                              patient: () throws -> Client) async throws -> FromPlace<FreeSlotSearch> {
        try NearestQuery.checkLimit(limit)
        return try await findFreeSlots(at: try await locate(place, patient: patient), specialization: specialization, before: before,
                                       limit: limit, pediatricOnly: pediatricOnly, minutes: minutes, budget: budget, computing: runner)
    }

    /// The place of a search as a point (an address looked up: the gazetteer, the cache, or the
    /// HTTP geocoder), not yet remembered. A server resolves it apart from the search, so that
    /// a slow geocoder does not hold one of the few threads searches have.
    public func locate(_ place: PlaceChoice, patient: () throws -> Client) throws -> LocatedPlace {
        let (point, geocoded) = try place.resolve(geocoding, patient: patient)
        return LocatedPlace(point: point, geocoded: geocoded)
    }

    /// `locate` awaited: an address looked up with no thread waiting for the store or the
    /// HTTP geocoder.
    public func locate(_ place: PlaceChoice, patient: () throws -> Client) async throws -> LocatedPlace {
        let (point, geocoded) = try await place.resolving(geocoding, patient: patient)
        return LocatedPlace(point: point, geocoded: geocoded)
    }

    /// `findFreeSlots(from:)` from a place already located; the address is remembered once the
    /// search succeeded.
    public func findFreeSlots(at place: LocatedPlace, specialization: String, before: Date? = nil, limit: Int = 1,
                              pediatricOnly: Bool = false, minutes: Int? = nil, budget: SearchBudget = .standard,
                              computing runner: some PasswordRunner = InlinePasswordRunner()) async throws -> FromPlace<FreeSlotSearch> {
        let search = try await appointments.searchFreeSlots(specialization: specialization, near: place.point, before: before,
                                                            limit: limit, pediatricOnly: pediatricOnly, minutes: minutes,
                                                            clinics: clinics, budget: budget, computing: runner)
        if let geocoded = place.geocoded { try await geocoding.remember(geocoded) }
        return FromPlace(found: search, place: place)
    }
}

/// Where a search starts, resolved: the point, and the address look-up that found it.
public struct LocatedPlace: Sendable {
    public let point: Coordinate
    public let geocoded: GeocodeResult?
}

/// A patient's appointment with the clinic and department it is at (their names, the
/// address and the time zone are what every front shows next to it).
public struct AppointmentAtClinic: Sendable {
    public let appointment: Appointment
    public let clinic: Clinic
    public let department: Department
}

/// What a patient picks from when booking at a clinic: its departments, the chosen
/// department's visit types, and the chosen day's free slots.
public struct BookingChoices: Sendable {
    public let clinic: Clinic
    public let departments: [Department]
    public let visitTypes: [VisitType]
    /// The free slots of the chosen day (empty without a department and a day), of the chosen
    /// doctor when one was chosen.
    public let freeSlots: [Slot]
    /// The chosen department's doctors (empty without a department).
    public var doctors: [Doctor] = []
    /// The days (`YYYY-MM-DD`, the clinic's) among the next `BookingChoices.days` that have a
    /// free time for the department, visit type and doctor chosen: a day picker marks them
    /// (asked for with `firstFreeDay`; empty otherwise).
    public var freeDays: Set<String> = []
    /// The day whose free times `freeSlots` are: the one asked for, or the first free one.
    public var chosenDay: LocalDateTime?

    /// How many days ahead the booking's day picker offers.
    public static let days = 14
}

/// What `moveChoice` finds: where the appointment is and the time it would move to.
public struct MoveChoice: Sendable {
    public let appointment: Appointment
    public let clinic: Clinic
    public let department: Department
    public let day: LocalDateTime
    public let slot: Slot?
}

/// An appointment with its history, its clinic, and the free times of a day to move it to.
public struct AppointmentDetails: Sendable {
    public let appointment: Appointment
    public let history: [AppointmentEvent]
    public let clinic: Clinic
    /// Free times of the chosen day: the day asked for, else the first of the next
    /// `BookingChoices.days` with a free time (`rescheduleDay`); empty for an appointment that
    /// cannot move.
    public let rescheduleTimes: [Slot]
    /// The day `rescheduleTimes` are of, and the local dates (`dayText`) of the next
    /// `BookingChoices.days` with a time to move to (the day picker marks the others).
    public var rescheduleDay: LocalDateTime?
    public var rescheduleFreeDays: Set<String> = []
    /// Whether the patient may still move or cancel it: booked, not checked in, not begun.
    public var patientMayChange = false

    static func patientMayChange(_ appointment: Appointment, now: Date) -> Bool {
        appointment.status.isPatientChangeable && appointment.startsAt > now
    }
    /// The appointment's files and conversation (the clinic's answers are read now).
    public let folder: AppointmentFolder
    /// The appointment's department, and its visit type when it has one.
    public var department: Department?
    public var visitType: VisitType?
}

/// A message of the inbox as its page shows it: with the first lines of the clinic's answer it
/// announces (read from the sealed conversation, never stored in the message or e-mailed).
public struct InboxEntry: Sendable {
    public let message: InboxMessage
    public let quote: String?

    /// How much of an answer the inbox quotes.
    public static let quoteLength = 200
}

extension ClinicSystem {
    /// The patient's messages, newest first; a clinic's answer quotes the answer it announced
    /// (its first `InboxEntry.quoteLength` characters), read without marking the conversation read.
    public func inbox(clientId: Int64) throws -> [InboxEntry] {
        let messages = try clients.messages(clientId: clientId)
        return Self.entries(messages, answers: try attachments.answers(clientId: clientId, appointmentIds: Self.answered(messages)))
    }

    /// `inbox` awaited (issue 56: `InboxStore.inbox`, then `InboxStore.clinicAnswers`).
    public func inbox(clientId: Int64) async throws -> [InboxEntry] {
        let messages = try await clients.messages(clientId: clientId)
        return Self.entries(messages, answers: try await attachments.answers(clientId: clientId, appointmentIds: Self.answered(messages)))
    }

    /// Only the conversations a clinic's message announced an answer in are opened.
    static func answered(_ messages: [InboxMessage]) -> Set<Int64> {
        Set(messages.filter { $0.kind == .clinic }.compactMap(\.appointmentId))
    }

    /// Each message with the answer it announced quoted (the latest written before it).
    static func entries(_ messages: [InboxMessage], answers: [Int64: [(at: Date, text: String)]]) -> [InboxEntry] {
        messages.map { message in
            guard message.kind == .clinic, let appointment = message.appointmentId,
                  let answer = answers[appointment]?.last(where: { $0.at <= message.createdAt }) else {
                return InboxEntry(message: message, quote: nil)
            }
            let text = answer.text.count > InboxEntry.quoteLength ? String(answer.text.prefix(InboxEntry.quoteLength)) + "…" : answer.text
            return InboxEntry(message: message, quote: text)
        }
    }

    /// A patient's appointments, each with its clinic.
    public func appointments(ofPatient clientId: Int64, scope: AppointmentScope) throws -> [AppointmentAtClinic] {
        let list = try appointments.getAppointmentsByClientId(clientId, scope: scope)
        return try withPlaces(list)
    }

    /// `appointments(ofPatient:scope:)` awaited (issue 56): the patient's appointments
    /// (`PatientAppointmentsStore`) with their places (`DirectoryReadsStore`).
    public func appointments(ofPatient clientId: Int64, scope: AppointmentScope) async throws -> [AppointmentAtClinic] {
        try await withPlaces(try await appointments.getAppointmentsByClientId(clientId, scope: scope))
    }

    /// `withPlaces` awaited: each clinic read once, with its departments, in one snapshot.
    public func withPlaces(_ list: [Appointment]) async throws -> [AppointmentAtClinic] {
        let places = try await database.departmentsWithClinics(list.map { ($0.clinicId, $0.departmentId) })
        return try list.map { appointment in
            guard let place = places[appointment.departmentId] else {
                throw ClinicError(.notFound, .departmentNotFound, String(appointment.departmentId))
            }
            return AppointmentAtClinic(appointment: appointment, clinic: place.clinic, department: place.department)
        }
    }

    /// Appointments, each with its clinic and department (each read once).
    public func withPlaces(_ list: [Appointment]) throws -> [AppointmentAtClinic] {
        var clinicsRead: [Int64: Clinic] = [:], departmentsRead: [Int64: Department] = [:]
        return try list.map { appointment in
            let clinic = try clinicsRead[appointment.clinicId] ?? clinics.getClinicById(appointment.clinicId)
            let department = try departmentsRead[appointment.departmentId] ?? departments.getDepartmentById(appointment.departmentId)
            clinicsRead[appointment.clinicId] = clinic
            departmentsRead[appointment.departmentId] = department
            return AppointmentAtClinic(appointment: appointment, clinic: clinic, department: department)
        }
    }

    /// One of a patient's appointments with its history, clinic, files and conversation, and
    /// while it can move, the days it could move to and the free times of `day` (or of the first
    /// day with one, as the booking page); the conversation's latest page, or the one before
    /// `threadCursor`. Read awaited (issue 56); the free times are computed by `runner`.
    public func appointmentDetails(_ id: Int64, ofPatient clientId: Int64, rescheduleDay day: LocalDateTime? = nil,
                                   threadCursor: String? = nil,
                                   computing runner: some PasswordRunner) async throws -> AppointmentDetails {
        let now = appointments.now()
        let (appointment, history) = try await appointments.appointmentWithHistory(id, clientId: clientId)
        let place = try await place(of: appointment)
        let clinic = place.clinic
        var times: [Slot] = [], freeDays: Set<String> = [], chosen = day
        let mayChange = AppointmentDetails.patientMayChange(appointment, now: now)
        if mayChange {
            let zone = clinic.zone
            func dayText(_ slot: Slot) -> String { LocalDateTime.of(slot.start, in: zone).dayText }
            let today = LocalDateTime.of(now, in: zone).at(minuteOfDay: 0)
            let ahead = try await appointments.rescheduleTimes(appointment, from: today, days: BookingChoices.days, computing: runner)
            freeDays = Set(ahead.map(dayText))
            let horizon = (0..<BookingChoices.days).map { today.adding(days: $0).dayText }
            if let day, horizon.contains(day.dayText) {
                // A day of the look-ahead: its own times, no second query.
                times = ahead.filter { dayText($0) == day.dayText }
            } else if let day {
                times = try await appointments.rescheduleTimes(appointment, from: day, computing: runner)
            } else if let first = ahead.first {
                chosen = LocalDateTime.of(first.start, in: zone).at(minuteOfDay: 0)
                times = ahead.filter { dayText($0) == dayText(first) }
            }
        }
        let folder = try await attachments.folder(clientId: clientId, appointmentId: id, cursor: threadCursor)
        var details = AppointmentDetails(appointment: appointment, history: history, clinic: clinic, rescheduleTimes: times,
                                         folder: folder)
        details.rescheduleDay = chosen
        details.rescheduleFreeDays = freeDays
        details.patientMayChange = mayChange
        details.department = place.department
        if let visitTypeId = appointment.visitTypeId {
            details.visitType = try await departments.visitTypes(departmentId: appointment.departmentId).first { $0.id == visitTypeId }
        }
        return details
    }

    /// An appointment's department and clinic, awaited (`department_not_found` for one gone).
    private func place(of appointment: Appointment) async throws -> (department: Department, clinic: Clinic) {
        let places = try await database.departmentsWithClinics([(appointment.clinicId, appointment.departmentId)])
        guard let place = places[appointment.departmentId] else {
            throw ClinicError(.notFound, .departmentNotFound, String(appointment.departmentId))
        }
        return place
    }

    /// A move of a patient's appointment to `start`, as its summary shows it: the appointment,
    /// its clinic and department, the local day of `start`, and the free time it would take
    /// (nil when that time is not free to move to now, or the appointment cannot move). Read
    /// awaited; the day's free times are computed by `runner`.
    public func moveChoice(_ id: Int64, ofPatient clientId: Int64, to start: Date,
                           computing runner: some PasswordRunner) async throws -> MoveChoice {
        let now = appointments.now()
        let appointment = try await appointments.appointmentWithHistory(id, clientId: clientId).appointment
        let place = try await place(of: appointment)
        let day = LocalDateTime.of(start, in: place.clinic.zone).at(minuteOfDay: 0)
        let slot = AppointmentDetails.patientMayChange(appointment, now: now)
            ? try await appointments.rescheduleTimes(appointment, from: day, computing: runner).first { $0.start == start } : nil
        return MoveChoice(appointment: appointment, clinic: place.clinic, department: place.department, day: day, slot: slot)
    }

    /// The choices of a booking at `clinicId`: a department that is not the clinic's is
    /// `not_found`, as one that does not exist.
    /// With `firstFreeDay` (a day picker) the next `BookingChoices.days` are looked ahead: their
    /// free days are marked (`freeDays`, empty otherwise), and with no `day` the first of them
    /// with a free time is chosen (`chosenDay`), its slots from the same look-ahead.
    /// Read awaited (issue 56); the free slots are computed by `runner`.
    public func bookingChoices(clinicId: Int64, departmentId: Int64? = nil, visitTypeId: Int64? = nil,
                               doctorId: Int64? = nil, day: LocalDateTime? = nil, firstFreeDay: Bool = false,
                               computing runner: some PasswordRunner) async throws -> BookingChoices {
        let now = appointments.now()
        let (clinic, list) = try await clinics.clinicWithDepartments(clinicId)
        var visitTypes: [VisitType] = [], slots: [Slot] = [], doctors: [Doctor] = [], freeDays: Set<String> = []
        var chosen: LocalDateTime?
        if let departmentId {
            guard list.contains(where: { $0.id == departmentId }) else {
                throw ClinicError(.notFound, .departmentNotFound, String(departmentId))
            }
            visitTypes = try await departments.visitTypes(departmentId: departmentId)
            doctors = try await departments.doctorsWithHours(departmentId: departmentId).map(\.doctor)
            // A doctor of another department is no choice at all: `not_found`, as elsewhere.
            if let doctorId, !doctors.contains(where: { $0.id == doctorId }) {
                throw ClinicError(.notFound, .doctorNotFound, String(doctorId))
            }
            func free(from day: LocalDateTime, days: Int) async throws -> [Slot] {
                try await appointments.slotsWithClinic(departmentId: departmentId, doctorId: doctorId, from: day, days: days,
                                                       visitTypeId: visitTypeId, computing: runner).slots.filter(\.isAvailable)
            }
            // The look-ahead only for the day picker (`firstFreeDay`): the confirmation and the
            // desk's booking page show no picker, and 14 days of slots are not free to compute.
            let ahead = firstFreeDay ? try await free(from: LocalDateTime.of(now, in: clinic.zone).at(minuteOfDay: 0),
                                                      days: BookingChoices.days) : []
            freeDays = Set(ahead.map { LocalDateTime.of($0.start, in: clinic.zone).dayText })
            if let day {
                slots = try await free(from: day, days: 1)
            } else if let first = ahead.first {
                // The look-ahead's own slots of its first free day: no second query.
                let firstDay = LocalDateTime.of(first.start, in: clinic.zone).dayText
                chosen = LocalDateTime.of(first.start, in: clinic.zone).at(minuteOfDay: 0)
                slots = ahead.filter { LocalDateTime.of($0.start, in: clinic.zone).dayText == firstDay }
            }
        }
        var choices = BookingChoices(clinic: clinic, departments: list, visitTypes: visitTypes, freeSlots: slots)
        choices.doctors = doctors
        choices.freeDays = freeDays
        choices.chosenDay = day ?? chosen
        return choices
    }

    /// A clinic with its departments and each department's doctors.
    public func clinicWithDepartments(_ id: Int64) throws -> (clinic: Clinic, departments: [(department: Department, doctors: [Doctor])]) {
        let clinic = try clinics.getClinicById(id)
        let list = try departments.getDepartmentsByClinicId(id).map { department in
            (department, try departments.getDoctorsByDepartmentId(department.id ?? 0))
        }
        return (clinic, list)
    }

    /// `clinicWithDepartments` awaited (issue 56): the clinic with its departments, then its
    /// active doctors (`ClinicAdminReadsStore.clinicDoctors`). Two snapshots: a department added
    /// between the two is shown without doctors until the page is read again.
    public func clinicWithDepartments(_ id: Int64) async throws
        -> (clinic: Clinic, departments: [(department: Department, doctors: [Doctor])]) {
        let (clinic, departments) = try await clinics.clinicWithDepartments(id)
        let doctors = Dictionary(grouping: try await database.clinicDoctors(clinicId: id), by: { $0.department.id ?? 0 })
        return (clinic, departments.map { ($0, (doctors[$0.id ?? 0] ?? []).map(\.doctor)) })
    }

    /// A department's slots with the clinic they are at (for showing them in its zone).
    public func slots(departmentId: Int64, doctorId: Int64? = nil, from day: LocalDateTime? = nil, days: Int? = nil,
                      visitTypeId: Int64? = nil) throws -> (clinic: Clinic, slots: [Slot]) {
        try appointments.slotsWithClinic(departmentId: departmentId, doctorId: doctorId, from: day, days: days,
                                         visitTypeId: visitTypeId)
    }

    /// `slots` with the facts gathered awaited (issue 56): what a server's request does.
    public func slotsAwaited(departmentId: Int64, doctorId: Int64? = nil, from day: LocalDateTime? = nil, days: Int? = nil,
                             visitTypeId: Int64? = nil) async throws -> (clinic: Clinic, slots: [Slot]) {
        try await appointments.slotsAwaited(departmentId: departmentId, doctorId: doctorId, from: day, days: days,
                                            visitTypeId: visitTypeId)
    }
}

/// The front desk's page of a day: the day's list (`StaffController.schedule`) with the clinic
/// and what it can be filtered by.
public struct FrontDeskDay: Sendable {
    public let day: LocalDateTime
    public let zone: TimeZone
    public let entries: [DayEntry]
    public let clinic: Clinic
    public let departments: [Department]
    public let doctors: [(doctor: Doctor, department: Department)]
}

extension ClinicSystem {
    /// The member's clinic's day for the front desk's page, awaited in one transaction
    /// (`StaffController.deskDay`; each patient shown is read into the audit trail, as
    /// `StaffController.schedule` says).
    public func frontDeskDay(_ member: StaffMember, day: LocalDateTime? = nil, departmentId: Int64? = nil,
                             doctorId: Int64? = nil, requestId: String? = nil) async throws -> FrontDeskDay {
        let facts = try await staff.deskDay(member, day: day, departmentId: departmentId, doctorId: doctorId, requestId: requestId)
        guard let clinic = facts.place.clinic else { throw ClinicError(.notFound, .clinicNotFound, String(member.clinicId)) }
        return FrontDeskDay(day: facts.plan.day, zone: facts.plan.zone, entries: StaffController.dayEntries(facts, member),
                            clinic: clinic, departments: facts.place.departments, doctors: facts.place.doctors)
    }
}
