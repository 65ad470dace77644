import Foundation
import GRDB

public struct ImportReport: Sendable, Equatable {
    public var inserted = 0
    public var updated = 0
    /// Rows left out under `skipInvalid`.
    public var skipped: [ImportProblem] = []
    /// Clinics that received demo departments, doctors and hours.
    public var demoFilled = 0
}

/// The UML's `ClinicController`: the clinic directory.
public final class ClinicController: Sendable {
    let database: DatabaseManager

    public init(database: DatabaseManager) { self.database = database }

    /// Adds one clinic. Its external id must be new.
    public func addClinic(_ input: ClinicInput) throws -> Clinic {
        guard !input.name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ClinicError.invalid(.importEmptyName)
        }
        if let zone = input.timeZone, TimeZone(identifier: zone) == nil {
            throw ClinicError.invalid(.importBadTimeZone, zone)
        }
        return try database.write { db in
            if try Clinic.filter(Column("external_id") == input.externalId).fetchCount(db) > 0 {
                throw ClinicError.invalid(.clinicExists, input.externalId)
            }
            return try database.addClinic(db, input.makeClinic(id: nil))
        }
    }

    public func getAllClinics(_ filter: ClinicFilter = ClinicFilter()) throws -> [Clinic] {
        if let limit = filter.limit, limit < 1 { throw ClinicError.invalid(.limitRange, String(limit)) }
        return try database.read { db in try database.getAllClinics(db, filter) }
    }

    public func getClinicById(_ id: Int64) throws -> Clinic {
        guard let clinic = try database.read({ db in try database.getClinicById(db, id) }) else {
            throw ClinicError(.notFound, .clinicNotFound, String(id))
        }
        return clinic
    }

    /// Imports a directory file: all or nothing unless `skipInvalid`, idempotent by external
    /// id (a known id updates its clinic, a new one inserts). With `demo`, clinics left
    /// without departments get the demo ones. One transaction.
    public func importClinics(_ data: Data, skipInvalid: Bool = false, demo: Bool = false,
                              progress: ((Int, Int) -> Void)? = nil,
                              alsoInTransaction: ((Database) throws -> Void)? = nil) throws -> ImportReport {
        let parsed = try ClinicDirectory.parse(data)
        if !parsed.problems.isEmpty && !skipInvalid {
            throw ClinicError(.invalidInput, .importRejected,
                              arguments: [String(parsed.problems.count)], problems: parsed.problems)
        }
        return try database.write { db in
            var report = ImportReport()
            report.skipped = parsed.problems
            let existing = try Dictionary(
                Row.fetchAll(db, sql: "SELECT external_id, id FROM clinics").map { row -> (String, Int64) in
                    (row["external_id"], row["id"])
                }, uniquingKeysWith: { first, _ in first })
            for (index, input) in parsed.clinics.enumerated() {
                var clinic = input.makeClinic(id: existing[input.externalId])
                if clinic.id == nil {
                    try clinic.insert(db)
                    report.inserted += 1
                } else {
                    try clinic.update(db)
                    report.updated += 1
                }
                if let progress, index % 500 == 0 { progress(index, parsed.clinics.count) }
            }
            if demo { report.demoFilled = try DemoDirectory.fill(db) }
            try alsoInTransaction?(db)
            return report
        }
    }

    /// The number of clinics in the directory.
    public func count() throws -> Int {
        try database.read { db in try Clinic.fetchCount(db) }
    }

    /// The distinct cities of the directory (the UML's `Validator.CITIES`).
    public func cities() throws -> [String] {
        try database.read { db in try String.fetchAll(db, sql: "SELECT DISTINCT city FROM clinics WHERE city <> ''") }
    }
}
