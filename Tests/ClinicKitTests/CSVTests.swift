import Foundation
import Testing
@testable import ClinicKit

@Suite(.storeFree) struct CSVTests {
    func records(_ text: String) -> [CSV.Item] { CSV.parse(Data(text.utf8)) }

    @Test func quotingFollowsRFC4180() {
        let items = records("a,\"b, c\",\"say \"\"hi\"\"\"\r\n\"multi\nline\",x,\n")
        #expect(items == [
            .record(.init(line: 1, fields: ["a", "b, c", "say \"hi\""])),
            .record(.init(line: 2, fields: ["multi\nline", "x", ""])),
        ])
    }

    @Test func byteOrderMarkIsSkipped() {
        let data = Data([0xEF, 0xBB, 0xBF]) + Data("id,name\n1,x".utf8)
        #expect(CSV.parse(data) == [.record(.init(line: 1, fields: ["id", "name"])), .record(.init(line: 2, fields: ["1", "x"]))])
    }

    @Test func problemsKeepTheirLineNumbers() {
        var data = Data("h1,h2\nok,1\n".utf8)
        data += Data([0x62, 0xFF, 0x2C, 0x32, 0x0A]) // "b\xFF,2\n": not UTF-8
        data += Data("\"x\"y,3\n\"open,4\n".utf8)
        let items = CSV.parse(data)
        #expect(items.count == 5)
        #expect(items[2] == .bad(line: 3, problem: .invalidUTF8))
        #expect(items[3] == .bad(line: 4, problem: .characterAfterQuote))
        #expect(items[4] == .bad(line: 5, problem: .unterminatedQuote))
    }

    @Test func escapeRoundTrips() {
        let fields = ["plain", "a,b", "say \"hi\"", "two\nlines", ""]
        let line = fields.map(CSV.escape).joined(separator: ",")
        #expect(CSV.parse(Data(line.utf8)) == [.record(.init(line: 1, fields: fields))])
    }
}
