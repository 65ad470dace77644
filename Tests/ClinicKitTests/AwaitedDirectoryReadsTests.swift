import Foundation
import Testing
@testable import ClinicKit

/// The directory's reads awaited (`DirectoryReadsStore`), on both stores: a clinic with its
/// departments, a department's active doctors with their hours, its offered visit types, the
/// same as the synchronous reads (an inactive doctor and visit type left out, the orders kept),
/// and the same refusals.
@Suite struct AwaitedDirectoryReadsTests {
    @Test func theDirectoryReadAwaitedIsTheSynchronousOne() async throws {
        let system = try makeSystem()
        let la1 = try clinic(system, "LA1"), therapy = try department(system, "LA1", "therapy")
        let therapyId = try #require(therapy.id)
        let admin = try system.staff.addStaff(StaffInput(login: "admin", name: "Sam", surname: "Lee", role: .clinicAdmin,
                                                         clinicId: la1.id ?? 0, password: "counter-shift-73"))
        // Visit types out of their order of creation, one of them no longer offered.
        for (name, minutes) in [("Long", 60), ("Short", 15), ("Gone", 30)] {
            _ = try await system.staff.addVisitType(admin, departmentId: therapyId, nameEn: name, nameRu: name, durationMinutes: minutes)
        }
        let gone = try #require(try Self.synchronousVisitTypes(system, therapyId).first { $0.nameEn == "Gone" })
        _ = try await system.staff.removeVisitType(admin, id: gone.id)
        // A doctor no longer offered.
        let doctors = try system.departments.getDoctorsByDepartmentId(therapyId)
        try #require(doctors.count >= 2)
        try system.database.writing { tx in try tx.deactivateDoctor(id: doctors[0].id ?? 0) }

        let (clinicRead, departments) = try await system.clinics.clinicWithDepartments(la1.id ?? 0)
        #expect(clinicRead == la1)
        #expect(departments == (try system.departments.getDepartmentsByClinicId(la1.id ?? 0)) && departments.count > 1)
        for department in departments {
            let id = try #require(department.id)
            let awaited = try await system.departments.doctorsWithHours(departmentId: id)
            let synchronous = try system.departments.getDoctorsByDepartmentId(id).map {
                DoctorWithHours(doctor: $0, hours: try system.departments.getWorkingHours(doctorId: $0.id ?? 0))
            }
            #expect(awaited == synchronous)
            #expect(try await system.departments.visitTypes(departmentId: id) == (try Self.synchronousVisitTypes(system, id)))
        }
        let listed = try await system.departments.doctorsWithHours(departmentId: therapyId)
        #expect(listed.map(\.doctor.id) == doctors.dropFirst().map(\.id))
        #expect(listed.allSatisfy { !$0.hours.isEmpty })
        #expect(try await system.departments.visitTypes(departmentId: therapyId).map(\.nameEn) == ["Short", "Long"])
        // The clinic's page (`ClinicSystem.clinicWithDepartments`): each department with its active doctors, as the blocking read.
        let page = try await system.clinicWithDepartments(la1.id ?? 0)
        func blockingPage() throws -> [String] {
            try system.clinicWithDepartments(la1.id ?? 0).departments.map { "\($0.department.id ?? 0) \($0.doctors.map(\.id))" }
        }
        let blocking = try blockingPage()
        #expect(page.clinic == la1 && page.departments.map { "\($0.department.id ?? 0) \($0.doctors.map(\.id))" } == blocking)
        #expect(page.departments.first { $0.department.id == therapyId }?.doctors.map(\.id) == doctors.dropFirst().map(\.id))
        await #expect(throws: ClinicError(.notFound, .clinicNotFound, "999999")) { _ = try await system.clinicWithDepartments(999_999) }

        let noClinic = await #expect(throws: ClinicError.self) { _ = try await system.clinics.clinicWithDepartments(999_999) }
        #expect(noClinic?.key == .clinicNotFound)
        let noDoctors = await #expect(throws: ClinicError.self) { _ = try await system.departments.doctorsWithHours(departmentId: 999_999) }
        #expect(noDoctors?.key == .departmentNotFound)
        let noTypes = await #expect(throws: ClinicError.self) { _ = try await system.departments.visitTypes(departmentId: 999_999) }
        #expect(noTypes?.key == .departmentNotFound)
    }

    /// The directory's pages awaited (`DirectoryReadsStore.clinics(matching:)`): walked to the
    /// end, the synchronous pages, in (name, id) order; a city's; a bad limit or cursor refused.
    /// The web map's markers and their version awaited (issue 56) are the seam's reads; a
    /// department added moves the version (the map's cache is made again).
    @Test func theMapAwaitedIsTheSeamsRead() async throws {
        let system = try makeSystem()
        let (version, clinics) = try await system.clinics.mapClinics()
        let read = try system.database.reading { tx in (try MapVersionFacts.read(tx), try tx.mapClinics()) }
        #expect(version == read.0.text && clinics == read.1 && clinics.count > 3)
        #expect(try await system.clinics.mapVersion() == version)
        let clinic = try #require(clinics.first { !$0.specializations.contains("dermatology") })
        _ = try system.departments.addDepartment(clinicId: clinic.id, specialization: "dermatology")
        #expect(try await system.clinics.mapVersion() != version)
        #expect(try await system.clinics.mapClinics().clinics.first { $0.id == clinic.id }?.specializations.contains("dermatology") == true)
    }

    @Test func theDirectorysPagesAwaitedAreTheSynchronousOnes() async throws {
        let system = try makeSystem()
        var cursor: String?
        var walked: [Clinic] = []
        repeat {
            let page = try await system.clinics.clinicsPage(limit: 2, cursor: cursor)
            let synchronous = try Self.synchronousPage(system, city: nil, limit: 2, cursor: cursor)
            #expect(page.items == synchronous.items && page.nextCursor == synchronous.nextCursor)
            #expect(page.items.count <= 2)
            walked += page.items
            cursor = page.nextCursor
        } while cursor != nil
        let all = try await system.clinics.getAllClinics().map(\.externalId)
        let blocking = try Self.synchronousAll(system)
        #expect(walked.count == 5 && walked.map(\.externalId) == all && all == blocking)
        let refusedLimit = await #expect(throws: ClinicError.self) { _ = try await system.clinics.getAllClinics(ClinicFilter(limit: 0)) }
        #expect(refusedLimit?.code == .invalidInput)
        let names = walked.map(\.name)
        #expect(names == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        let angeles = try await system.clinics.clinicsPage(city: "los angeles", limit: 10, cursor: nil)
        #expect(angeles.items.map(\.externalId).sorted() == ["LA1", "LA2"] && angeles.nextCursor == nil)
        for (limit, cursor) in [(0, nil), (101, nil), (10, "not a cursor")] as [(Int, String?)] {
            let refused = await #expect(throws: ClinicError.self) { _ = try await system.clinics.clinicsPage(limit: limit, cursor: cursor) }
            #expect(refused?.code == .invalidInput, "\(limit) \(cursor ?? "")")
        }
    }

    static func synchronousAll(_ system: ClinicSystem) throws -> [String] {
        try system.clinics.getAllClinics().map(\.externalId)
    }

    static func synchronousPage(_ system: ClinicSystem, city: String?, limit: Int, cursor: String?) throws -> Page<Clinic> {
        try system.clinics.clinicsPage(city: city, limit: limit, cursor: cursor)
    }

    /// The synchronous read (an async caller would otherwise get the awaited one).
    static func synchronousVisitTypes(_ system: ClinicSystem, _ departmentId: Int64) throws -> [VisitType] {
        try system.departments.visitTypes(departmentId: departmentId)
    }

    /// A server's readiness awaited (`/readyz`): the schema's version is the newest migration in
    /// the store's own folder, on both stores.
    @Test func theSchemaStatusAwaitedIsTheNewestMigration() async throws {
        let system = try makeSystem()
        let folder = projectRoot.appendingPathComponent(TestStore.current == .sqlite ? "Migrations" : "Migrations/postgres")
        let newest = try #require(try Migration.load(from: folder).map(\.version).max())
        let awaited = try await system.schemaStatus()
        #expect(awaited.current == newest && awaited.latest == newest && newest > 10)
    }
}

/// FHIR's Location read awaited: a clinic's opening hours per weekday, from its active
/// doctors' hours (the earliest start to the latest end).
@Suite struct OpeningHoursTests {
    @Test func openingHoursSpanEachWeekdaysHours() {
        let hours = [WorkingHours(doctorId: 1, weekday: 1, startMinute: 540, endMinute: 780, slotMinutes: 20),
                     WorkingHours(doctorId: 2, weekday: 1, startMinute: 720, endMinute: 1080, slotMinutes: 20),
                     WorkingHours(doctorId: 2, weekday: 3, startMinute: 600, endMinute: 660, slotMinutes: 30)]
        #expect(OpeningHours.of(hours) == [OpeningHours(weekday: 1, startMinute: 540, endMinute: 1080),
                                           OpeningHours(weekday: 3, startMinute: 600, endMinute: 660)])
        #expect(OpeningHours.of([]).isEmpty)
    }

    @Test func aClinicsOpeningHoursAwaited() async throws {
        let system = try makeSystem()
        let therapy = try department(system, "LA1", "therapy")
        let (clinic, hours) = try await system.clinicWithOpeningHours(therapy.clinicId)
        #expect(clinic.id == therapy.clinicId)
        let doctors = try await system.departments.doctorsWithHours(departmentId: therapy.id ?? 0)
        let monday = doctors.flatMap(\.hours).filter { $0.weekday == 1 }
        let open = try #require(hours.first { $0.weekday == 1 })
        #expect(!monday.isEmpty && monday.allSatisfy { open.startMinute <= $0.startMinute && $0.endMinute <= open.endMinute })
        let missing = await #expect(throws: ClinicError.self) { _ = try await system.clinicWithOpeningHours(999_999) }
        #expect(missing?.key == .clinicNotFound)
    }
}

/// A doctor's place and a department's clinic awaited (`DirectoryReadsStore.doctorPlace`,
/// `departmentWithClinic`), what FHIR's Practitioner, Schedule, Slot and HealthcareService
/// reads are answered with, on both stores: an inactive doctor still has a place (their
/// appointments name them), a department's list leaves them out, and none is `not_found`.
@Suite struct AwaitedPlacesTests {
    @Test func aDoctorsPlaceAndADepartmentsClinicAwaited() async throws {
        let system = try makeSystem()
        let la1 = try clinic(system, "LA1"), therapy = try department(system, "LA1", "therapy")
        let therapyId = try #require(therapy.id)
        let doctors = try system.departments.getDoctorsByDepartmentId(therapyId)
        try #require(doctors.count >= 2)
        let gone = try #require(doctors[0].id)
        try system.database.writing { tx in try tx.deactivateDoctor(id: gone) }

        let place = try await system.doctorPlace(gone)
        #expect(place.doctor.id == gone && !place.doctor.isActive && place.department == therapy && place.clinic == la1)
        #expect(place.hours == (try system.departments.getWorkingHours(doctorId: gone)) && !place.hours.isEmpty)
        let listed = try await system.doctorPlaces(departmentId: therapyId)
        #expect(listed.map(\.doctor.id) == doctors.dropFirst().map(\.id))
        #expect(listed.allSatisfy { $0.department == therapy && $0.clinic == la1 })

        let (department, clinic) = try await system.departmentWithClinic(therapyId)
        #expect(department == therapy && clinic == la1)
        let noDoctor = await #expect(throws: ClinicError.self) { _ = try await system.doctorPlace(999_999) }
        #expect(noDoctor?.key == .doctorNotFound)
        let noDepartment = await #expect(throws: ClinicError.self) { _ = try await system.departmentWithClinic(999_999) }
        #expect(noDepartment?.key == .departmentNotFound)
        let noList = await #expect(throws: ClinicError.self) { _ = try await system.doctorPlaces(departmentId: 999_999) }
        #expect(noList?.key == .departmentNotFound)
    }
}
