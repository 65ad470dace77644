import Foundation
import Testing
@testable import ClinicKit

/// A page's cursor names its position, and only it: the same text every time (two reads of one
/// page compare equal), read back to the same position, anything else `cursor_invalid`.
@Suite struct PagingTests {
    @Test func aPositionHasOneCursor() throws {
        let position = PagePosition(key: "1795543200", id: 2)
        // Encoded again and again with other allocations alive in between: a dictionary's order
        // follows where its storage lies, so an unsorted encoder's order changed between them.
        var cursors = Set<String>(), alive: [[String: Int]] = []
        for round in 0..<200 {
            alive.append([String(round): round, "x": round])
            cursors.insert(position.cursor)
        }
        #expect(cursors.count == 1 && alive.count == 200)
        #expect(try PagePosition(cursor: position.cursor) == position)
        #expect(position.cursor == PagePosition(key: "1795543200", id: 2).cursor)
        #expect(position.cursor != PagePosition(key: "1795543200", id: 3).cursor)
        // A cursor written with the keys the other way round (as before they were sorted) still reads.
        let older = Data(#"{"key":"1795543200","id":2}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(try PagePosition(cursor: older) == position)
        let refused = #expect(throws: ClinicError.self) { _ = try PagePosition(cursor: "not a cursor") }
        #expect(refused?.key == .cursorInvalid)
    }
}
