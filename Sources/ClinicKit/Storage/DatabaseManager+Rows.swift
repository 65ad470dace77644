import Crypto
import Foundation
import GRDB

// The UML's storage operations (`addUser`, `getClinicById`, …), each in the caller's transaction.

extension DatabaseManager {
    /// Stores a patient with the personal fields sealed in `personal` and blank in the plain
    /// columns.
    // Forwarding overloads for callers not yet behind the seam (issue #25): the rules are in
    // ClientRecords.swift, the SQL in SQLiteTransaction+Clients.swift.

    public func addUser(_ db: Database, _ client: Client) throws -> Client {
        try addClient(transaction(db), client)
    }

    public func updateUser(_ db: Database, _ client: Client) throws {
        try updateClient(transaction(db), client)
    }

    public func getUserById(_ db: Database, _ id: Int64) throws -> Client? {
        try client(transaction(db), id: id)
    }

    public func getUserByLogin(_ db: Database, _ login: String) throws -> Client? {
        try client(transaction(db), login: login)
    }

    func getSealedUserByLogin(_ db: Database, _ login: String) throws -> Client? {
        try sealedClient(transaction(db), login: login)
    }

    public func loginExists(_ db: Database, _ login: String) throws -> Bool {
        try transaction(db).loginExists(loginKey: Client.key(forLogin: login))
    }

    public func clientExists(_ db: Database, _ id: Int64) throws -> Bool {
        try transaction(db).clientExists(id: id)
    }

    func opened(_ db: Database, _ row: Row) throws -> Client {
        try opened(transaction(db), try SQLiteTransaction.storedClient(row))
    }

    public func addClinic(_ db: Database, _ clinic: Clinic) throws -> Clinic {
        var clinic = clinic
        try clinic.insert(db)
        return clinic
    }

    public func getAllClinics(_ db: Database, _ filter: ClinicFilter = ClinicFilter()) throws -> [Clinic] {
        var request = Clinic.all()
        if let city = filter.city { request = request.filter(Column("city_key") == Clinic.key(forCity: city)) }
        if filter.pediatricOnly { request = request.filter(Column("is_pediatric") == true) }
        if filter.hospitalOnly { request = request.filter(Column("is_hospital") == true) }
        if let after = filter.after {
            request = request.filter(Column("name") > after.key || (Column("name") == after.key && Column("id") > after.id))
        }
        request = request.order(Column("name"), Column("id"))
        if let limit = filter.limit { request = request.limit(limit) }
        return try request.fetchAll(db)
    }

    // Forwarding overloads for callers not yet behind the seam (issue #25): the SQL is the
    // SQLite store's (SQLiteTransaction+Appointments.swift).

    public func getClinicById(_ db: Database, _ id: Int64) throws -> Clinic? {
        try transaction(db).clinic(id: id)
    }

    public func getAppointmentById(_ db: Database, _ id: Int64) throws -> Appointment? {
        try transaction(db).appointment(id: id)
    }

    public func getAppointmentsByUserId(_ db: Database, _ clientId: Int64) throws -> [Appointment] {
        try transaction(db).appointments(ofClient: clientId)
    }

    public func addDepartment(_ db: Database, _ department: Department) throws -> Department {
        var department = department
        try department.insert(db)
        return department
    }

    public func getDepartmentsByClinicId(_ db: Database, _ clinicId: Int64) throws -> [Department] {
        try Department.filter(Column("clinic_id") == clinicId).order(Column("specialization"), Column("id")).fetchAll(db)
    }

    public func getDepartmentById(_ db: Database, _ id: Int64) throws -> Department? {
        try transaction(db).department(id: id)
    }

    /// Deactivated doctors (migration 12) are not offered, booked or listed.
    public func getDoctorsByDepartmentId(_ db: Database, _ departmentId: Int64) throws -> [Doctor] {
        try transaction(db).activeDoctors(inDepartment: departmentId)
    }

    public func getDoctorById(_ db: Database, _ id: Int64) throws -> Doctor? {
        try Doctor.fetchOne(db.cachedStatement(sql: "SELECT * FROM doctors WHERE id = ?"), arguments: [id])
    }

    public func getWorkingHours(_ db: Database, doctorId: Int64) throws -> [WorkingHours] {
        try transaction(db).workingHours(ofDoctor: doctorId)
    }
}

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
