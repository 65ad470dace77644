import Foundation
import Testing
@testable import ClinicKit

/// An operator names a clinic by its id, its external id or its name (issue 46: `admin staff
/// add --clinic` took only the id, which had to be looked up first).
@Suite struct ClinicReferenceTests {
    @Test func aClinicIsFoundByIdExternalIdOrNameAndASharedNameIsAsked() throws {
        let system = try makeSystem()
        let bellevue = try clinic(system, "NY1")
        #expect(try system.clinics.clinic(reference: String(bellevue.id ?? 0)).id == bellevue.id)
        #expect(try system.clinics.clinic(reference: "NY1").id == bellevue.id)
        #expect(try system.clinics.clinic(reference: " bellevue ").id == bellevue.id)
        #expect(expectError(.notFound) { _ = try system.clinics.clinic(reference: "Atlantis General") } != nil)
        #expect(expectError(.invalidInput) { _ = try system.clinics.clinic(reference: "  ") } != nil)
        let csv = """
            external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
            NJ9,Bellevue,1 Main Street,Newark,NJ,40.73,-74.17,GENERAL ACUTE CARE,0,1,
            """
        _ = try system.clinics.importClinics(Data(csv.utf8))
        let shared = expectError(.invalidInput) { _ = try system.clinics.clinic(reference: "Bellevue") }
        #expect(shared?.key == .clinicNameShared)
        #expect(shared?.arguments.last?.contains("\(bellevue.id ?? 0) (New York, NY)") == true, "\(String(describing: shared))")
    }
}
