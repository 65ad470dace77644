import Crypto
import Foundation
import GRDB

// The UML's storage operations (`addUser`, `getClinicById`, …), each in the caller's transaction.

extension DatabaseManager {
    /// Stores a patient with the personal fields sealed in `personal` and blank in the plain
    /// columns.
    public func addUser(_ db: Database, _ client: Client) throws -> Client {
        var stored = client
        stored.take(FieldCipher.Personal(name: "", surname: "", street: "", house: "", lat: nil, lon: nil))
        try stored.insert(db)
        try db.execute(sql: "UPDATE clients SET personal = ? WHERE id = ?",
                       arguments: [try sealingCipher(db).seal(client.personal, loginKey: client.loginKey), stored.id])
        var added = client
        added.id = stored.id
        return added
    }

    /// Rewrites a patient's row, personal fields sealed again.
    public func updateUser(_ db: Database, _ client: Client) throws {
        var stored = client
        stored.take(FieldCipher.Personal(name: "", surname: "", street: "", house: "", lat: nil, lon: nil))
        try stored.update(db)
        try db.execute(sql: "UPDATE clients SET personal = ? WHERE id = ?",
                       arguments: [try sealingCipher(db).seal(client.personal, loginKey: client.loginKey), client.id])
        // Whether to e-mail the patient is decided without opening the profile (migration 13).
        if try db.tableExists("calendar_feeds") {
            try db.execute(sql: "UPDATE clients SET email_confirmed = ? WHERE id = ?", arguments: [client.email != nil, client.id])
        }
    }

    // The look-ups on the booking path use cached statements: preparing SQL (and GRDB's query
    // generation with its authorizer) cost more than running it.

    public func getUserById(_ db: Database, _ id: Int64) throws -> Client? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM clients WHERE id = ?"), arguments: [id]).map { try opened(db, $0) }
    }

    public func getUserByLogin(_ db: Database, _ login: String) throws -> Client? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM clients WHERE login_key = ?"),
                         arguments: [Client.key(forLogin: login)]).map { try opened(db, $0) }
    }

    /// A patient by login with the personal fields left sealed (empty): what a log-in needs to
    /// check a password, so that a wrong password never depends on the key (a missing key
    /// would otherwise tell a known login from an unknown one).
    func getSealedUserByLogin(_ db: Database, _ login: String) throws -> Client? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM clients WHERE login_key = ?"),
                         arguments: [Client.key(forLogin: login)]).map { try Client(row: $0) }
    }

    /// Whether a login is taken (any case), without opening anyone's personal data.
    public func loginExists(_ db: Database, _ login: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM clients WHERE login_key = ?)"),
                          arguments: [Client.key(forLogin: login)]) ?? false
    }

    /// Whether a patient exists, without opening their personal data.
    public func clientExists(_ db: Database, _ id: Int64) throws -> Bool {
        try transaction(db).clientExists(id: id)
    }

    /// A patient row with its personal fields opened (rows from before encryption have none).
    func opened(_ db: Database, _ row: Row) throws -> Client {
        var client = try Client(row: row)
        if let envelope = try row.value("personal", in: "clients") as Data? {
            client.take(try cipher(db).open(envelope, loginKey: client.loginKey))
        }
        return client
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
