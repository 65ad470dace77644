import Foundation

/// Where a clinic is and what the nearest-clinic finder filters on: one row of
/// `DirectoryReading.clinicPoints()`.
public struct ClinicPoint: Sendable, Equatable {
    public let id: Int64
    /// As stored; the store's constraints keep them in range, and a reader that needs a
    /// `Coordinate` still skips a pair that is not one rather than trap.
    public let latitude: Double
    public let longitude: Double
    public let isPediatric: Bool
    public let isHospital: Bool

    public init(id: Int64, latitude: Double, longitude: Double, isPediatric: Bool, isHospital: Bool) {
        self.id = id
        self.latitude = latitude
        self.longitude = longitude
        self.isPediatric = isPediatric
        self.isHospital = isHospital
    }
}

/// A clinic's point and its IANA zone: what the zone recomputation reads, one row of
/// `DirectoryReading.clinicZones()`.
public struct ClinicZone: Sendable, Equatable {
    public let id: Int64
    public let latitude: Double
    public let longitude: Double
    public let timeZone: String

    public init(id: Int64, latitude: Double, longitude: Double, timeZone: String) {
        self.id = id
        self.latitude = latitude
        self.longitude = longitude
        self.timeZone = timeZone
    }
}

/// The clinic directory (clinics, departments, doctors, working hours and their exceptions,
/// the clinics' zone changes, the directory's version): the operations of issue #25's seam for
/// this area. The reads booking shares (`clinic(id:)`, `department(id:)`,
/// `activeDoctors(inDepartment:)`, `workingHours(ofDoctor:)`, `departmentsByClinic`,
/// `settings(prefix:)`, `setSetting`) are `AppointmentReading`'s/`AppointmentWriting`'s.
///
/// ## The directory's version
///
/// `directoryVersion()` is how a process notices that the directory changed under it, whoever
/// changed it: a long-running server keeps its nearest-clinic finder and the clinic rows
/// beside it, and rebuilds them when the version it reads differs from the one it kept. The
/// contract every store keeps:
///
/// - the version moves (to a value it has not had before) in the **same transaction** as any
///   insert, update or delete of a clinic row, whichever process, server or path made it (the
///   writes below, a migration, another program on the same database). A store keeps this
///   itself (SQLite: the triggers of migrations 8 and 9 bump the one-row `directory_version`);
///   no caller bumps it, so none can forget to;
/// - read in a transaction, it describes exactly the clinic rows that transaction sees, so a
///   finder built in the same read transaction as the version is never older than it claims;
/// - it never moves for a change of departments, doctors or hours (`mapVersion` adds the
///   departments' own tally for the map);
/// - it is 0 on a database whose schema has no version yet (SQLite before migration 8).
///
/// A store for several servers may also push the change (PostgreSQL: LISTEN/NOTIFY), but the
/// version read at each search stays the contract: a missed notification costs nothing more
/// than one read.
public protocol DirectoryReading {
    /// Clinics matching the filter (city key, pediatric, hospital, after a page position), in
    /// the order (name, id), at most `filter.limit`.
    func clinics(matching filter: ClinicFilter) throws -> [Clinic]
    /// Every clinic, by id.
    func allClinics() throws -> [Clinic]
    /// The clinics of these ids that exist, in no particular order.
    func clinics(ids: [Int64]) throws -> [Clinic]
    func clinicCount() throws -> Int
    func clinic(externalId: String) throws -> Clinic?
    /// Every clinic's point and flags, by id: what the nearest-clinic finder is built from.
    func clinicPoints() throws -> [ClinicPoint]
    /// Every clinic's point and zone, by id: what the zone recomputation reads.
    func clinicZones() throws -> [ClinicZone]
    /// Every clinic's id and zone by its external id: what an import matches its rows with
    /// (only these columns: an import rewrites the rest, a damaged value included).
    func clinicIdsAndZones() throws -> [String: (id: Int64, timeZone: String)]
    /// The clinics that have no department yet, by id.
    func clinicsWithoutDepartments() throws -> [Clinic]

    /// See "The directory's version" above.
    func directoryVersion() throws -> Int64
    /// How many departments there are and the largest id given to one (0, 0 for none): with
    /// the directory's version, what the map's markers depend on.
    func departmentTally() throws -> (count: Int64, lastId: Int64)
    /// Every clinic by id with the specialization keys of its departments (sorted): the map.
    func mapClinics() throws -> [MapClinic]

    /// A clinic's departments in the order (specialization, id).
    func departments(ofClinic clinicId: Int64) throws -> [Department]
    /// Whether the clinic has a department of the specialization (a key).
    func departmentExists(clinicId: Int64, specialization key: String) throws -> Bool

    /// A doctor, deactivated or not.
    func doctor(id: Int64) throws -> Doctor?
    /// The clinic a doctor works at.
    func clinicId(ofDoctor doctorId: Int64) throws -> Int64?

    /// Every exception of a doctor, in the order (day, start).
    func workingExceptions(ofDoctor doctorId: Int64) throws -> [WorkingException]
    func workingException(id: Int64) throws -> WorkingException?

    /// The upcoming active appointments booked (or last moved) before their clinic's latest
    /// zone change, soonest first (none on a schema before zone changes were recorded).
    func appointmentsAfterZoneChanges(from now: Date) throws -> [ZoneChangedAppointment]
    /// A clinic's active appointments with a patient starting at or after `start`, soonest first.
    func storedUpcomingPatientAppointments(atClinic clinicId: Int64, startingFrom start: Date) throws -> [Appointment]
}

public protocol DirectoryWriting: DirectoryReading {
    /// Stores a new clinic and returns it with its id (the directory's version moves).
    func insertClinic(_ clinic: Clinic) throws -> Clinic
    /// Rewrites a clinic's row by its id (the directory's version moves).
    func updateClinic(_ clinic: Clinic) throws
    /// Gives a clinic another IANA zone (the directory's version moves).
    func setTimeZone(ofClinic clinicId: Int64, to zone: String) throws
    /// Records that a clinic's zone changed from `old` to `new` at `now`.
    func recordZoneChange(clinicId: Int64, from old: String, to new: String, at now: Date) throws

    /// Stores a new department and returns it with its id.
    func insertDepartment(_ department: Department) throws -> Department
    /// Stores a new doctor and returns it with its id.
    func insertDoctor(_ doctor: Doctor) throws -> Doctor
    /// Adds weekly hours to a doctor (their own ids and doctor ids are not read).
    func insertWorkingHours(_ hours: [WorkingHours], ofDoctor doctorId: Int64) throws
    /// Stores new clinics and returns their ids, in the order given: an import's or a first
    /// fill's thousands. (A store may do it in one statement; the default inserts one by one.)
    func insertClinics(_ clinics: [Clinic]) throws -> [Int64]
    /// Stores new departments and returns their ids, in the order given.
    func insertDepartments(_ departments: [Department]) throws -> [Int64]
    /// Stores new doctors and returns their ids, in the order given.
    func insertDoctors(_ doctors: [Doctor]) throws -> [Int64]
    /// Adds the same weekly hours to each of these doctors, doctor by doctor in the order given
    /// (the hours' own ids and doctor ids are not read).
    func insertWorkingHours(_ hours: [WorkingHours], ofDoctors doctorIds: [Int64]) throws
    /// Stores a new exception and returns it with its id.
    func insertWorkingException(_ exception: WorkingException) throws -> WorkingException
    func deleteWorkingException(id: Int64) throws

    /// Sets a setting only if it has no value yet.
    func setSettingIfAbsent(_ key: String, to value: String) throws

    /// Makes the directory imports of every process wait for this transaction (an import, a
    /// first fill), however long it takes: two servers starting together on an empty database
    /// fill it once. SQLite: nothing (its one writer already does).
    func lockDirectoryForImport() throws
}

extension DirectoryWriting {
    public func insertClinics(_ clinics: [Clinic]) throws -> [Int64] {
        try clinics.map { try insertClinic($0).id ?? 0 }
    }

    public func insertDepartments(_ departments: [Department]) throws -> [Int64] {
        try departments.map { try insertDepartment($0).id ?? 0 }
    }

    public func insertDoctors(_ doctors: [Doctor]) throws -> [Int64] {
        try doctors.map { try insertDoctor($0).id ?? 0 }
    }

    public func insertWorkingHours(_ hours: [WorkingHours], ofDoctors doctorIds: [Int64]) throws {
        for doctorId in doctorIds { try insertWorkingHours(hours, ofDoctor: doctorId) }
    }
}

/// Which clinics `DirectoryReading.clinics(matching:)` lists, in the order (name, id).
public struct ClinicFilter: Sendable, Equatable {
    public var city: String?
    public var pediatricOnly: Bool
    public var hospitalOnly: Bool
    public var limit: Int?
    /// Only clinics after this one in the order (name, id): the next page.
    public var after: PagePosition?

    public init(city: String? = nil, pediatricOnly: Bool = false, hospitalOnly: Bool = false, limit: Int? = nil,
                after: PagePosition? = nil) {
        self.city = city
        self.pediatricOnly = pediatricOnly
        self.hospitalOnly = hospitalOnly
        self.limit = limit
        self.after = after
    }
}
