import Foundation
import Testing
@testable import ClinicKit

/// Issue 23, item 17: one check for every stored name and label, and escaping on the way out
/// to an e-mail, an `.ics` file and every message.
@Suite struct StoredTextTests {
    static let controls: [Unicode.Scalar] = ["\u{1B}", "\u{07}", "\r", "\u{0B}", "\u{85}", "\u{202E}"]

    @Test func namesAndLabelsWithControlCharactersAreRefused() throws {
        let system = try makeSystem()
        let department = try #require(try department(system, "LA1", "therapy").id)
        for control in Self.controls {
            #expect(expectError(.invalidInput) {
                _ = try system.departments.addDoctor(departmentId: department, name: "Dr \(control)Who", hours: [])
            } != nil, "U+\(String(control.value, radix: 16))")
            #expect(Text.checkedLabel("First\(control)visit", maximum: 100) == nil)
        }
        #expect(Text.checkedLabel("  Dr Zoë \u{200D} O’Neil  ", maximum: 100) == "Dr Zoë \u{200D} O’Neil", "spelling is kept")
        #expect(try system.departments.addDoctor(departmentId: department, name: " Dr Who ", hours: []).name == "Dr Who")
    }

    @Test func textStoredBeforeTheCheckGoesOutHarmless() {
        let hostile = "Dr \u{1B}[31mEvil\u{0B}\u{85}\u{202E}x\r\nline"
        let message = Strings.text(.doctorUnknown, .en, [hostile])
        let ics = ICalendar.escape(hostile)
        let mail = String(decoding: Mail.compose(from: "a@example.org", to: "b@example.org", subject: hostile, body: hostile,
                                                 messageId: "1@example.org", date: Date(timeIntervalSince1970: 0)), as: UTF8.self)
        let body = mail.components(separatedBy: "\r\n\r\n").dropFirst().joined()
            .split(separator: "\r\n").compactMap { Data(base64Encoded: String($0)) }.map { String(decoding: $0, as: UTF8.self) }.joined()
        for out in [message, ics, body] {
            for control in ["\u{1B}", "\u{0B}", "\u{85}", "\u{202E}"] {
                #expect(!out.contains(control), "\(out.debugDescription)")
            }
            #expect(out.contains("Evil"))
        }
        #expect(!mail.contains("\u{1B}") && !mail.contains("\u{0B}"), "the subject too")
        #expect(!body.contains("\r\r"), "a bare CR adds no line")
    }
}
