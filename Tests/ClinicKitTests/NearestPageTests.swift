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
