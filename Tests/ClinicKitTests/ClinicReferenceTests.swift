import Foundation
import Testing
@testable import ClinicKit

/// An operator names a clinic by its id, its external id or its name (issue 46: `admin staff
/// add --clinic` took only the id, which had to be looked up first).
@Suite struct ClinicReferenceTests {
    /// By both paths: the blocking look-ups, and the directory read awaited (issue 56: `admin staff add`).
    @Test(arguments: [false, true]) func aClinicIsFoundByIdExternalIdOrNameAndASharedNameIsAsked(awaited: Bool) async throws {
        let system = try makeSystem()
        let bellevue = try clinic(system, "NY1")
        func find(_ reference: String) async throws -> Clinic {
            awaited ? try await system.clinics.clinic(reference: reference) : try { try system.clinics.clinic(reference: reference) }()
        }
        #expect(try await find(String(bellevue.id ?? 0)).id == bellevue.id)
        #expect(try await find("NY1").id == bellevue.id)
        #expect(try await find(" bellevue ").id == bellevue.id)
        #expect(await expectError(.notFound) { _ = try await find("Atlantis General") } != nil)
        #expect(await expectError(.invalidInput) { _ = try await find("  ") } != nil)
        let csv = """
            external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
            NJ9,Bellevue,1 Main Street,Newark,NJ,40.73,-74.17,GENERAL ACUTE CARE,0,1,
            """
        _ = try system.clinics.importClinics(Data(csv.utf8))
        let shared = await expectError(.invalidInput) { _ = try await find("Bellevue") }
        #expect(shared?.key == .clinicNameShared)
        #expect(shared?.arguments.last?.contains("\(bellevue.id ?? 0) (New York, NY)") == true, "\(String(describing: shared))")
    }
}
