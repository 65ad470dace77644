import Foundation
import Testing
@testable import ClinicKit

/// The paged nearest search (FHIR's `Location?near`): pages follow on from each other, and an
/// offset from outside is refused before it is added to (a huge one would overflow).
@Suite struct NearestPageTests {
    @Test func pagesFollowOnAndAHugeOffsetIsRefused() throws {
        let system = try makeSystem()
        guard let point = Coordinate(latitude: 34.05, longitude: -118.25) else { Issue.record("no point"); return }
        let all = try system.clinics.nearest(to: point, NearestQuery(limit: 4))
        let first = try system.clinics.nearestPage(to: point, NearestQuery(limit: 2), offset: 0)
        let second = try system.clinics.nearestPage(to: point, NearestQuery(limit: 2), offset: 2)
        #expect((first.items + second.items).map(\.clinic.id) == all.map(\.clinic.id))
        #expect(first.more)
        for offset in [Int.max, -1, ClinicController.maximumReach] {
            #expect(expectError(.invalidInput) { _ = try system.clinics.nearestPage(to: point, NearestQuery(limit: 2), offset: offset) } != nil,
                    "\(offset)")
        }
    }
}

/// Everyday hospitals (issue 55): near a children's hospital, an adult is shown the nearest
/// general one and a child the children's; every kind is there when asked. Exact all the same.
@Suite struct EverydayHospitalTests {
    @Test func aChildrensHospitalIsForChildrenAndEveryKindWhenAsked() throws {
        let system = try makeSystem()
        let nextToLA2 = try #require(Coordinate(latitude: 34.099, longitude: -118.289))
        var adult = NearestQuery(limit: 2)
        adult.everydayOnly = true
        #expect(try system.clinics.nearest(to: nextToLA2, adult).map(\.clinic.externalId) == ["LA1", "NY1"])
        var child = NearestQuery(limit: 1, pediatricOnly: true)
        child.everydayOnly = true
        #expect(try system.clinics.nearest(to: nextToLA2, child).map(\.clinic.externalId) == ["LA2"])
        #expect(try system.clinics.nearest(to: nextToLA2, NearestQuery(limit: 2)).map(\.clinic.externalId) == ["LA2", "LA1"])
        // Far from any everyday hospital but one, the search widens until it has enough.
        let minsk = try #require(Coordinate(latitude: 53.9, longitude: 27.56))
        var everyday = NearestQuery(limit: 1)
        everyday.everydayOnly = true
        #expect(try system.clinics.nearest(to: minsk, everyday).first?.clinic.kind?.servesEveryday(child: false) == true)
        #expect(ClinicKind(category: "children").map { $0.text(.en) } == "children's hospital")
        #expect(ClinicKind(category: "PSYCHIATRIC")?.text(.ru) == "психиатрическая больница")
        #expect(ClinicKind(category: "CLINIC") == nil)
    }
}
