import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// The directory area of the storage seam (issue #25), on either store: the contract of
/// the directory's version, and the import's work written through the named operations.
@Suite struct DirectorySeamTests {
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("directory-seam-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    /// The version moves in the transaction that changes a clinic row (insert, update, a new
    /// zone), is seen by that transaction and by the next, and does not move for a department.
    @Test func theVersionMovesWithEveryChangeOfAClinicRowInItsOwnTransaction() throws {
        let system = try makeSystem()
        let la1 = try clinic(system, "LA1")
        var seen: [Int64] = [try system.database.reading { tx in try tx.directoryVersion() }]
        try system.database.writing { tx in
            var moved = la1
            moved.name = "Renamed"
            try tx.updateClinic(moved)
            seen.append(try tx.directoryVersion())
            try tx.setTimeZone(ofClinic: la1.id ?? 0, to: "America/Denver")
            seen.append(try tx.directoryVersion())
            var added = la1
            added.id = nil
            added.externalId = "LA9"
            let inserted = try tx.insertClinic(added)
            #expect(inserted.id != nil && inserted.id != la1.id)
            #expect(try tx.clinic(externalId: "LA9")?.id == inserted.id)
            seen.append(try tx.directoryVersion())
            _ = try tx.insertDepartment(Department(id: nil, clinicId: la1.id ?? 0, specialization: "dermatology", isDemo: false))
            seen.append(try tx.directoryVersion())
        }
        #expect(seen[1] != seen[0] && seen[2] != seen[1] && seen[3] != seen[2], "\(seen)")
        #expect(seen[4] == seen[3], "a department is not a clinic row: \(seen)")
        #expect(try system.database.reading { tx in try tx.directoryVersion() } == seen[4])

        // A refused write changes nothing, the version included.
        #expect(throws: (any Error).self) {
            try system.database.writing { tx in
                try tx.setTimeZone(ofClinic: la1.id ?? 0, to: "Europe/Paris")
                throw ClinicError(.invalidInput, .importRejected, "0")
            }
        }
        #expect(try system.database.reading { tx in try tx.directoryVersion() } == seen[4])
    }

    /// Two systems on one database (a SQLite file, or a PostgreSQL database), as two servers
    /// (or a server and `clinic admin import-clinics`): a clinic the second one imports is found
    /// by the first one's next nearest search, without a restart, because the first reads the
    /// version.
    @Test func aDirectoryImportedByAnotherProcessIsSearchedAtOnce() async throws {
        let folder = try Folder()
        let (server, importer) = try twoSystemsOnOneStore(sqliteFile: folder.path("shared.sqlite"))
        _ = try importer.importDirectory(Data("""
            external_id,name,city,state,lat,lon,category
            LA1,Adventist,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE
            """.utf8), demo: true)
        let point = try #require(Coordinate(latitude: 40.0, longitude: -100.0))
        #expect(try await server.clinics.nearest(to: point).map(\.clinic.externalId) == ["LA1"])
        let before = try await server.clinics.mapVersion()

        _ = try importer.importDirectory(Data("""
            external_id,name,city,state,lat,lon,category
            KS1,Prairie Clinic,Hays,KS,40.1,-100.1,GENERAL ACUTE CARE
            """.utf8), demo: true)
        #expect(try await server.clinics.nearest(to: point).map(\.clinic.externalId) == ["KS1"])
        #expect(try await server.clinics.mapVersion() != before)

        // A rename moves the version too: the server's kept rows are read again.
        _ = try importer.importDirectory(Data("""
            external_id,name,city,state,lat,lon,category
            KS1,Prairie Hospital,Hays,KS,40.1,-100.1,GENERAL ACUTE CARE
            """.utf8))
        #expect(try await server.clinics.nearest(to: point).map(\.clinic.name) == ["Prairie Hospital"])
    }

    /// The demo directory written through the seam: every clinic without departments gets its
    /// category's departments, one doctor each (two in therapy and pediatrics), each working
    /// Monday to Friday in two stretches; a second fill adds nothing.
    @Test func theDemoDirectoryIsWrittenThroughTheSeamOnce() throws {
        let system = try makeSystem()
        let minsk = try clinic(system, "MN1")
        let departments = try system.departments.getDepartmentsByClinicId(minsk.id ?? 0)
        #expect(Set(departments.map(\.specialization)) == Set(Specialization.demo(forCategory: minsk.category)))
        #expect(departments.allSatisfy { $0.isDemo })
        for department in departments {
            let doctors = try system.departments.getDoctorsByDepartmentId(department.id ?? 0)
            #expect(doctors.count == (["therapy", "pediatrics"].contains(department.specialization) ? 2 : 1))
            for (index, doctor) in doctors.enumerated() {
                let hours = try system.departments.getWorkingHours(doctorId: doctor.id ?? 0)
                #expect(hours.map { [$0.weekday, $0.startMinute, $0.endMinute, $0.slotMinutes] }
                        == DemoDirectory.demoHours.map { [$0.weekday, $0.startMinute, $0.endMinute, $0.slotMinutes] })
                let seed = "MN1/\(department.specialization)/\(index)"
                #expect(doctor.name == DemoDirectory.doctorName(seed: seed))
            }
        }
        let before = try fingerprint(system)
        #expect(try system.database.writing { tx in try DemoDirectory.fill(tx) } == 0)
        #expect(try fingerprint(system) == before)
    }

    /// An import matches its rows by external id reading only the id and the zone of the
    /// clinics there: a clinic whose stored latitude cannot be read is rewritten by the import,
    /// not refused by it.
    @Test(.sqliteOnly) func anImportRewritesAClinicWhosePointCannotBeRead() throws {
        let system = try makeSystem()
        let la1 = try clinic(system, "LA1")
        try system.sqliteFile.write { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: "UPDATE clinics SET lat = 'x' WHERE id = ?", arguments: [la1.id])
            try db.execute(sql: "PRAGMA ignore_check_constraints = OFF")
        }
        let report = try system.clinics.importClinics(Data("""
            external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
            LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE,0,1,
            """.utf8))
        #expect(report.updated == 1 && report.inserted == 0)
        #expect(try system.clinics.getClinicById(la1.id ?? 0).lat == 34.05)
    }
}
