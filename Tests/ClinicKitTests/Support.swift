import ClinicStorePostgres
import ClinicTestPostgres
import Foundation
import GRDB
import PostgresNIO
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite
import ClinicPDF

/// The store this run of the suite is on: SQLite in memory (the default), or a database of its
/// own on the tests' PostgreSQL per system when `CLINIC_TEST_STORE=postgres` (scripts/test.sh
/// runs the suite once each way).
enum TestStore: String {
    case sqlite, postgres

    static let current: TestStore = TestPostgres.isSelected ? .postgres : .sqlite

    /// A new store of this run's kind (zone data for SQLite's migrations that recompute zones).
    static func make() throws -> any ClinicStore {
        switch current {
        case .sqlite:
            return try SQLiteStore.inMemory(migrations: projectMigrations, zones: LazyZones(data: projectRoot.appendingPathComponent("Data")))
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

    /// For a suite of pure rules that opens no store (text, times, CSV, gzip, fuzzed parsers): a
    /// PostgreSQL pass would run the same code again, so it runs in the SQLite pass only. A suite
    /// that starts to use a store must drop it.
    static var storeFree: Self {
        .enabled(if: TestStore.current == .sqlite, "opens no store: the SQLite pass runs it")
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

/// Two systems on one new, empty store, as two servers (or a server and a `clinic admin`
/// command) of one database: on SQLite both open the file at `sqliteFile`, on PostgreSQL a
/// second store opens the first one's database with the same key files.
func twoSystemsOnOneStore(sqliteFile path: String, clock: TestClock = TestClock()) throws -> (ClinicSystem, ClinicSystem) {
    func system(_ store: any ClinicStore) -> ClinicSystem {
        ClinicSystem(store: store, resources: nil, hasher: fastHasher, now: { clock.now })
    }
    switch TestStore.current {
    case .sqlite:
        return (system(try SQLiteStore.open(path: path, migrations: projectMigrations)),
                system(try SQLiteStore.open(path: path, migrations: projectMigrations)))
    case .postgres:
        let first = try TestPostgres.makeStore()
        let server = try TestPostgres.server()
        let keys = PostgresStoreKeys(personal: first.personalDataKey.file?.path ?? "", audit: first.auditKeys.location)
        let url = first.url, migrations = first.migrations
        let second = try TestPostgres.waitFor {
            try await PostgresStore.open(url, environment: server.environment, logger: TestPostgres.logger,
                                         maximumConnections: 2, keys: keys, migrations: migrations)
        }
        return (system(first), system(second))
    }
}

/// An in-memory system with a small directory: two clinics in Los Angeles (one pediatric),
/// one in São Paulo, one in New York, one in Minsk, each with demo departments and hours.
func makeSystem(clock: TestClock = TestClock(), hasher: PasswordHasher = fastHasher, images: (any ImageProcessing)? = nil,
                pdfs: (any PDFChecking)? = QPDFChecker(), store: (any ClinicStore)? = nil,
                codeLimits: CodeLimits = .standard) throws -> ClinicSystem {
    let system = ClinicSystem(store: try store ?? TestStore.make(), resources: nil, hasher: hasher, images: images, pdfs: pdfs,
                              codeLimits: codeLimits, now: { clock.now })
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

/// Every row of every table of a SQLite file, as text: two equal fingerprints mean nothing changed.
func fingerprint(_ database: SQLiteStore, excluding: Set<String> = []) throws -> String {
    fingerprint(of: try storedTables(database, excluding: excluding))
}

func fingerprint(of tables: [(table: String, rows: [String])]) -> String {
    tables.map { $0.table + ":" + $0.rows.joined(separator: "\n") }.joined(separator: "\n")
}

/// Every table of a SQLite file with each of its rows as text, in rowid order.
func storedTables(_ database: SQLiteStore, excluding: Set<String> = []) throws -> [(table: String, rows: [String])] {
    try database.read { db in
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        return try tables.filter { !excluding.contains($0) }.map { table in
            (table, try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\" ORDER BY rowid").map(\.description))
        }
    }
}

/// The PostgreSQL store of a system the PostgreSQL run made.
func postgresStore(_ system: ClinicSystem) throws -> PostgresStore {
    guard let postgres = system.database as? PostgresStore else {
        throw ClinicError(.internalError, .internalError, "a store the tests do not know")
    }
    return postgres
}

/// Every table of the system's store with each of its rows as text (SQLite's in rowid order,
/// PostgreSQL's sorted by that text), read in one transaction, on either store.
func storedTables(_ system: ClinicSystem, excluding: Set<String> = []) throws -> [(table: String, rows: [String])] {
    if let sqlite = (system.database as? SQLiteStore) { return try storedTables(sqlite, excluding: excluding) }
    return try postgresStore(system).blockingTransaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
        let tables = try connection.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")
            .rows.map { try $0.decode(String.self) }
        return try tables.filter { !excluding.contains($0) }.map { table in
            (table, try connection.query(PostgresQuery(unsafeSQL: "SELECT t::text FROM \"\(table)\" t ORDER BY 1"))
                .rows.map { try $0.decode(String.self) })
        }
    }
}

/// Every row of every table of the system's store, as text, on either store: two equal
/// fingerprints mean nothing changed (a test of a rule that refuses, on any store).
func fingerprint(_ system: ClinicSystem, excluding: Set<String> = []) throws -> String {
    fingerprint(of: try storedTables(system, excluding: excluding))
}

/// One row a test's own query read (`storedRows`): each column as text, a NULL absent.
struct StoredRow {
    let columns: [String: String]

    /// The column's value as `T` (`row["state"] as String?`, `row["attempts"] as Int?`).
    subscript<T: LosslessStringConvertible>(_ column: String) -> T? { columns[column].flatMap(T.init) }
}

/// The rows of a query the test writes in SQL both stores take (the schemas share table and
/// column names): for what a test checks of stored rows where the seam has no read for it (a
/// delivery's state, what the geocode cache keeps). Only text and integer columns compare
/// alike: instants are integers on SQLite and timestamptz on PostgreSQL, booleans 0/1 and
/// true/false. Values go into the text of the query (no arguments).
func storedRows(_ system: ClinicSystem, _ sql: String) throws -> [StoredRow] {
    if let sqlite = (system.database as? SQLiteStore) {
        return try sqlite.read { db in
            try Row.fetchAll(db, sql: sql).map { row in
                var columns: [String: String] = [:]
                for (name, value) in row {
                    switch value.storage {
                    case .null: break
                    case .int64(let number): columns[name] = String(number)
                    case .double(let number): columns[name] = String(number)
                    case .string(let text): columns[name] = text
                    case .blob(let data): columns[name] = data.map { String(format: "%02x", $0) }.joined()
                    }
                }
                return StoredRow(columns: columns)
            }
        }
    }
    return try postgresStore(system).blockingTransaction(begin: "BEGIN READ ONLY") { connection in
        try connection.query(PostgresQuery(unsafeSQL: """
            SELECT (SELECT json_object_agg(key, value) FROM json_each_text(row_to_json(q)))::text FROM (\(sql)) q
            """)).rows.map { row in
            let object = try JSONSerialization.jsonObject(with: Data((try row.decode(String?.self) ?? "{}").utf8))
            return StoredRow(columns: (object as? [String: Any] ?? [:]).compactMapValues { $0 as? String })
        }
    }
}

/// The one integer a query of one column selects (`SELECT count(*) FROM …`), on either store.
func storedInt(_ system: ClinicSystem, _ sql: String) throws -> Int? {
    try storedRows(system, sql).first?.columns.values.first.flatMap { Int($0) }
}

/// Runs `body(0) … body(count - 1)` at once (on PostgreSQL, each on a connection of its own)
/// and gives each one's outcome by its index: "ok", or the code of the `ClinicError` it threw.
func atOnce(_ count: Int, _ body: @Sendable (Int) throws -> Void) -> [String] {
    let outcomes = LockedBox<[Int: String]>([:])
    DispatchQueue.concurrentPerform(iterations: count) { index in
        let outcome: String
        do {
            try body(index)
            outcome = "ok"
        } catch let error as ClinicError {
            outcome = error.code.rawValue
        } catch {
            outcome = "\(error)"
        }
        outcomes.withLock { $0[index] = outcome }
    }
    return (0..<count).map { outcomes.current[$0] ?? "" }
}

/// `atOnce` of an awaited body: each in a task of its own, at most `inFlight` at a time (the
/// test store's PostgreSQL pool has two connections: more at once waited past its 10 s on a
/// loaded machine and were answered `busy`, which is not what these tests look at).
func atOnceAwaited(_ count: Int, inFlight: Int = 2, _ body: @escaping @Sendable (Int) async throws -> Void) async -> [String] {
    await withTaskGroup(of: (Int, String).self) { group in
        var outcomes: [Int: String] = [:]
        for index in 0..<count {
            if index >= inFlight, let (done, outcome) = await group.next() { outcomes[done] = outcome }
            group.addTask {
                do {
                    try await body(index)
                    return (index, "ok")
                } catch let error as ClinicError {
                    return (index, error.code.rawValue)
                } catch {
                    return (index, "\(error)")
                }
            }
        }
        for await (index, outcome) in group { outcomes[index] = outcome }
        return (0..<count).map { outcomes[$0] ?? "" }
    }
}

/// `expectError` of an awaited body.
func expectError(_ code: ClinicError.Code, _ body: () async throws -> Void) async -> ClinicError? {
    do {
        try await body()
        return nil
    } catch let error as ClinicError {
        return error.code == code ? error : nil
    } catch {
        return nil
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
    var sqliteFile: SQLiteStore {
        get throws {
            guard let sqlite = database as? SQLiteStore else {
                throw ClinicError(.internalError, .internalError, "this test needs a SQLite system: mark it .sqliteOnly")
            }
            return sqlite
        }
    }
}

/// Rewrites every doctor's weekly hours through the seam, each interval as `change` gives it
/// back (what `UPDATE working_hours SET …` did to the SQLite file), on either store.
func changeWorkingHours(_ system: ClinicSystem, _ change: (WorkingHours) -> DoctorSchedule.Interval) throws {
    try system.database.writing { tx in
        for clinic in try tx.allClinics() {
            for department in try tx.departments(ofClinic: clinic.id ?? 0) {
                for doctor in try tx.activeDoctors(inDepartment: department.id ?? 0) {
                    let hours = try tx.workingHours(ofDoctor: doctor.id ?? 0)
                    for weekday in Set(hours.map(\.weekday)).sorted() {
                        let intervals = hours.filter { $0.weekday == weekday }.sorted { $0.startMinute < $1.startMinute }.map(change)
                        try tx.replaceWorkingHours(ofDoctor: doctor.id ?? 0, weekday: weekday, with: intervals)
                    }
                }
            }
        }
    }
}

/// How many rows the system's audit trail has, unreadable ones too (`count(*)`), on any store.
func auditRowCount(_ system: ClinicSystem) throws -> Int {
    try system.database.reading { tx in
        var count = 0
        try tx.forEachAuditEntry { _ in
            count += 1
            return true
        }
        return count
    }
}

/// Whether the system's audit trail verifies against its key, on any store.
func auditIsSound(_ system: ClinicSystem) throws -> Bool {
    let check = try system.auditCheck()
    return check.problem == nil && check.broken.isEmpty
}

/// The patient's e-mail address set and confirmed by the code the outbox mailed (through `mailer`).
func confirmEmail(_ system: ClinicSystem, clientId: Int64, _ address: String, mailer: RecordingMailer = RecordingMailer()) async throws {
    _ = try await system.clients.setEmail(clientId: clientId, address: address)
    _ = try await system.outbox.run(mailer: mailer, from: "clinic@example.org")
    let mail = try #require(mailer.messages.last)
    let code = String(try #require(decodedParts(mail.text).first?.split(separator: "\r\n").first?.suffix(6)))
    _ = try await system.clients.confirmEmail(clientId: clientId, code: code)
}

/// The body of each Base64 MIME part of a mail, decoded (the text part comes first).
func decodedParts(_ mail: String) -> [String] {
    mail.components(separatedBy: "Content-Transfer-Encoding: base64\r\n\r\n").dropFirst().map { part in
        let base64 = part.components(separatedBy: "\r\n").prefix { !$0.isEmpty && !$0.hasPrefix("--") }.joined()
        return String(decoding: Data(base64Encoded: base64) ?? Data(), as: UTF8.self)
    }
}
