import ClinicStorePostgres
import ClinicTestPostgres
import Foundation
import GRDB
import Testing
@testable import ClinicKit

/// The store this run of the suite is on: SQLite in memory (the default), or a database of its
/// own on the tests' PostgreSQL per system when `CLINIC_TEST_STORE=postgres` (scripts/test.sh
/// runs the suite once each way).
enum TestStore: String {
    case sqlite, postgres

    static let current = TestStore(rawValue: ProcessInfo.processInfo.environment["CLINIC_TEST_STORE"] ?? "") ?? .sqlite

    /// A new store of this run's kind (zone data for SQLite's migrations that recompute zones).
    static func make() throws -> any ClinicStore {
        switch current {
        case .sqlite:
            return try DatabaseManager.inMemory(migrations: projectMigrations, zones: LazyZones(data: projectRoot.appendingPathComponent("Data")))
        case .postgres:
            return try TestPostgres.makeStore()
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// For a test of SQLite's own file, SQL or migrations: it runs in the SQLite pass only.
    static var sqliteOnly: Self {
        .enabled(if: TestStore.current == .sqlite, "reads or writes the SQLite store's own file or SQL")
    }
}

/// The project's root folder (this file is Tests/ClinicKitTests/Support.swift).
let projectRoot: URL = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url = url.deletingLastPathComponent() }
    return url
}()

let projectMigrations: [Migration] = {
    do { return try Migration.load(from: projectRoot.appendingPathComponent("Migrations")) } catch {
        fatalError("cannot load the project's migrations: \(error)")
    }
}()

/// A fixed "now" for tests: Sunday 2026-11-22 12:00 UTC.
let testNow = Date(timeIntervalSince1970: 1_795_348_800)

/// Argon2id parameters cheap enough for many tests; the real ones are tested separately.
let fastHasher = PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1))

func utc(_ text: String) -> Date {
    guard case .instant(let date)? = try? TimeInput.parse(text) else { fatalError("bad test time \(text)") }
    return date
}

/// Thread-safe mutable clock for tests that move time.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date
    init(_ start: Date = testNow) { current = start }
    var now: Date { lock.withLock { current } }
    func advance(_ seconds: TimeInterval) { lock.withLock { current += seconds } }
}

/// An in-memory system with a small directory: two clinics in Los Angeles (one pediatric),
/// one in São Paulo, one in New York, one in Minsk, each with demo departments and hours.
func makeSystem(clock: TestClock = TestClock(), hasher: PasswordHasher = fastHasher) throws -> ClinicSystem {
    let system = ClinicSystem(store: try TestStore.make(), resources: nil, hasher: hasher, now: { clock.now })
    let csv = """
        external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
        LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE,0,1,
        LA2,Children's Hospital,4650 Sunset Blvd,LOS ANGELES,CA,34.10,-118.29,CHILDREN,1,1,
        SP1,Hospital São Luiz,Rua Dr. Alceu,São Paulo,,-23.59,-46.68,GENERAL ACUTE CARE,0,1,America/Sao_Paulo
        NY1,Bellevue,462 First Avenue,New York,NY,40.74,-73.97,GENERAL ACUTE CARE,0,1,
        MN1,Минская больница,пр. Независимости,Минск,,53.90,27.56,PSYCHIATRIC,0,0,Europe/Minsk
        """
    _ = try system.clinics.importClinics(Data(csv.utf8), demo: true)
    try system.initialize(.empty)
    return system
}

func clinic(_ system: ClinicSystem, _ externalId: String) throws -> Clinic {
    guard let clinic = try system.database.reading({ tx in try tx.clinic(externalId: externalId) }) else {
        fatalError("no clinic \(externalId)")
    }
    return clinic
}

func department(_ system: ClinicSystem, _ externalId: String, _ specialization: String) throws -> Department {
    let clinicId = try clinic(system, externalId).id ?? 0
    guard let department = try system.departments.getDepartmentsByClinicId(clinicId)
        .first(where: { $0.specialization == specialization }) else { fatalError("no \(specialization)") }
    return department
}

func register(_ system: ClinicSystem, _ login: String, city: String = "Los Angeles",
              password: String = "correct-horse-42") throws -> Client {
    try system.clients.registerUser(RegistrationRequest(
        login: login, password: password, name: "Anna", surname: "Smith", street: "Main Street",
        house: "12", city: city, acceptedPrivacy: true))
}

/// Every row of every table, as text: two equal fingerprints mean nothing changed.
func fingerprint(_ database: DatabaseManager, excluding: Set<String> = []) throws -> String {
    try database.read { db in
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        return try tables.filter { !excluding.contains($0) }.map { table in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\" ORDER BY rowid")
            return table + ":" + rows.map(\.description).joined(separator: "\n")
        }.joined(separator: "\n")
    }
}

func expectError(_ code: ClinicError.Code, _ body: () throws -> Void) -> ClinicError? {
    do {
        try body()
        return nil
    } catch let error as ClinicError {
        return error.code == code ? error : nil
    } catch {
        return nil
    }
}

extension ClinicSystem {
    /// The SQLite database of a system these tests made on one (they read and write its SQL).
    var sqliteFile: DatabaseManager {
        get throws {
            guard let sqlite else { throw ClinicError(.internalError, .internalError, "this test needs a SQLite system: mark it .sqliteOnly") }
            return sqlite
        }
    }
}

/// Whether the system's audit trail verifies against its key, on any store.
func auditIsSound(_ system: ClinicSystem) throws -> Bool {
    let check = try system.auditCheck()
    return check.problem == nil && check.broken.isEmpty
}
