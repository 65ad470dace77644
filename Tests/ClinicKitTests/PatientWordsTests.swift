import Foundation
import Testing
@testable import ClinicKit

/// Issue 42, items 18 and 19: the times a patient reads are in their own zone, named; every
/// action of the audit trail has words in both languages for their access log.
@Suite struct PatientWordsTests {
    func patient(latitude: Double?, longitude: Double?) -> Client {
        Client(id: 1, login: "anna", loginKey: "anna", passwordHash: "", name: "Anna", surname: "Smith", street: "Main Street",
               house: "1", city: "Somewhere", lat: latitude, lon: longitude, homeClinicId: nil, preferredLanguage: "en",
               privacyAcceptedAt: nil, privacyVersion: nil, createdAt: Date(timeIntervalSince1970: 0))
    }

    @Test func aPatientsTimesAreInTheZoneOfTheirAddressWithTheZoneNamed() throws {
        let system = ClinicSystem(store: try TestStore.make(), resources: Resources(root: projectRoot))
        let newYork = system.clients.timeZone(of: patient(latitude: 40.7128, longitude: -74.0060))
        #expect(newYork.identifier == "America/New_York")
        #expect(system.clients.timeZone(of: patient(latitude: 39.5296, longitude: -119.8138)).identifier == "America/Los_Angeles")
        // No coordinates: UTC, still named.
        let nowhere = system.clients.timeZone(of: patient(latitude: nil, longitude: nil))
        #expect(nowhere.secondsFromGMT() == 0)
        // 2026-11-27T21:57:00Z
        let instant = Date(timeIntervalSince1970: 1_795_816_620)
        #expect(DateText.dateTimeWithZone(instant, timeZone: newYork, language: .en) == "Nov 27, 2026 at 4:57 PM EST")
        let utc = DateText.dateTimeWithZone(instant, timeZone: nowhere, language: .en)
        #expect(utc.hasPrefix("Nov 27, 2026 at 9:57 PM ") && utc.count > "Nov 27, 2026 at 9:57 PM ".count, "\(utc)")
        let russian = DateText.dateTimeWithZone(instant, timeZone: newYork, language: .ru)
        #expect(russian.hasPrefix("27.11.2026, 16:57 ") && russian.count > "27.11.2026, 16:57 ".count, "\(russian)")
    }

    @Test func everyAuditActionHasWordsInBothLanguages() {
        for action in AuditAction.allCases {
            let english = action.text(in: .en), russian = action.text(in: .ru)
            #expect(!english.isEmpty && english != action.rawValue, "\(action.rawValue)")
            #expect(russian != english && russian.unicodeScalars.contains { (0x0400...0x04FF).contains($0.value) }, "\(action.rawValue)")
            #expect(AuditAction.text(of: action.rawValue, in: .ru) == russian)
        }
        // Every staff step on an appointment is an action of the list.
        #expect(StaffAction.allCases.allSatisfy { AuditAction.appointment($0).rawValue == "appointment." + $0.rawValue })
        // A code no list knows (a row of another version) is shown as it is.
        #expect(AuditAction.text(of: "something.else", in: .en) == "something.else")
    }

    /// `AuditLog.append` takes an `AuditAction`: no action is written as a bare string anywhere in
    /// the sources (a store writing its own rows would bypass the list).
    @Test func noSourceWritesAnAuditActionAsAString() throws {
        let sources = projectRoot.appendingPathComponent("Sources")
        var offenders: [String] = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            guard url.pathExtension == "swift", let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n") where line.contains("AuditLog.append(") && line.contains("action: \"") {
                offenders.append("\(url.lastPathComponent): \(line)")
            }
        }
        #expect(offenders.isEmpty, "\(offenders)")
    }
}
