import Foundation

// The front desk's day awaited (issue 56): in one transaction the store reads the member's
// clinic with its departments and active doctors, ClinicKit plans the day on them (its span in
// the clinic's zone, the filters checked: `StaffController.planningDay`), the store reads the
// day's appointments with their patients opened, and appends the audit trail's rows ClinicKit
// makes of them (each patient shown is read into the trail, in the same transaction).

/// The awaited front-desk day a `ClinicStore` offers.
public protocol FrontDeskStore: Sendable {
    /// One transaction: the place (`DeskDayPlace`), `plan`, the day's appointments and patients,
    /// `audit`'s rows appended; the facts. `doctorAsked`: a doctor whose clinic is read too.
    func deskDay(clinicId: Int64, doctorAsked: Int64?, plan: @escaping @Sendable (DeskDayPlace) throws -> DeskDayPlan,
                 audit: @escaping @Sendable (DeskDayFacts) -> [AuditAsk]) async throws -> DeskDayFacts
}

/// The clinic a day is planned on.
public struct DeskDayPlace: Sendable {
    /// Nil when there is no such clinic.
    public let clinic: Clinic?
    /// Its departments (by specialization, then id).
    public let departments: [Department]
    /// Its active doctors, department by department, each by id.
    public let doctors: [(doctor: Doctor, department: Department)]
    /// The clinic of the doctor asked for (nil: none asked, or no such doctor).
    public let doctorAskedClinicId: Int64?

    public init(clinic: Clinic?, departments: [Department], doctors: [(doctor: Doctor, department: Department)],
                doctorAskedClinicId: Int64?) {
        self.clinic = clinic; self.departments = departments; self.doctors = doctors; self.doctorAskedClinicId = doctorAskedClinicId
    }

    /// The place in the caller's transaction (the seam's path, and SQLite's).
    package static func read(_ tx: any StoreReading, clinicId: Int64, doctorAsked: Int64?) throws -> DeskDayPlace {
        let departments = try tx.departments(ofClinic: clinicId)
        return DeskDayPlace(clinic: try tx.clinic(id: clinicId), departments: departments,
                            doctors: try departments.flatMap { department in
                                try tx.activeDoctors(inDepartment: department.id ?? 0).map { ($0, department) }
                            },
                            doctorAskedClinicId: try doctorAsked.flatMap { try tx.clinicId(ofDoctor: $0) })
    }
}

/// A day planned: the local day, its instants, the filters of its list, and the instant it was
/// planned at (what the actions shown are decided at).
public struct DeskDayPlan: Sendable, Equatable {
    public let day: LocalDateTime
    public let zone: TimeZone
    public let span: Range<Date>
    public let departmentId: Int64?
    public let doctorId: Int64?
    public let now: Date

    public init(day: LocalDateTime, zone: TimeZone, span: Range<Date>, departmentId: Int64?, doctorId: Int64?, now: Date) {
        self.day = day; self.zone = zone; self.span = span; self.departmentId = departmentId; self.doctorId = doctorId
        self.now = now
    }
}

/// What the front desk's day is made of.
public struct DeskDayFacts: Sendable {
    public let place: DeskDayPlace
    public let plan: DeskDayPlan
    /// The day's appointments (notes opened), by start, then id.
    public let appointments: [Appointment]
    /// Their patients (personal fields opened) by id; one whose account is gone is missing.
    public let patients: [Int64: Client]

    public init(place: DeskDayPlace, plan: DeskDayPlan, appointments: [Appointment], patients: [Int64: Client]) {
        self.place = place; self.plan = plan; self.appointments = appointments; self.patients = patients
    }

    /// The whole day in the caller's write transaction: the place, the plan, the appointments
    /// and patients, the audit rows.
    package static func read(_ tx: any StoreWriting, store: any ClinicStore, clinicId: Int64, doctorAsked: Int64?,
                             plan: (DeskDayPlace) throws -> DeskDayPlan, audit: (DeskDayFacts) -> [AuditAsk]) throws -> DeskDayFacts {
        let place = try DeskDayPlace.read(tx, clinicId: clinicId, doctorAsked: doctorAsked)
        let planned = try plan(place)
        let appointments = try tx.appointments(ofClinic: clinicId, startingIn: planned.span, departmentId: planned.departmentId,
                                               doctorId: planned.doctorId)
        var patients: [Int64: Client] = [:]
        for clientId in Set(appointments.compactMap(\.clientId)) {
            if let client = try store.client(tx, id: clientId) { patients[clientId] = client }
        }
        let facts = DeskDayFacts(place: place, plan: planned, appointments: appointments, patients: patients)
        for ask in audit(facts) { try AuditLog.append(tx, ask) }
        return facts
    }
}
