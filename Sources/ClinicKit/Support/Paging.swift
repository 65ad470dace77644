import Foundation

/// One page of a list of unbounded length: `{"items":[…],"nextCursor":"…"|null}`. A cursor is
/// opaque to clients: base64url of the position after which the next page starts.
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let nextCursor: String?

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    public static var limits: ClosedRange<Int> { 1...100 }

    /// `limit` checked against `limits`.
    public static func checkLimit(_ limit: Int) throws {
        guard limits.contains(limit) else {
            throw ClinicError.invalid(.limitBetween, String(limit), String(limits.lowerBound), String(limits.upperBound))
        }
    }
}

/// Where a page ends: a sort key and an id, as a cursor.
public struct PagePosition: Sendable, Equatable, Codable {
    public let key: String
    public let id: Int64

    public init(key: String, id: Int64) { self.key = key; self.id = id }

    /// The same text for the same position: its keys sorted (Foundation's encoder otherwise
    /// writes them in any order, so that two reads of one page gave two cursors).
    public var cursor: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(self)) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The position a cursor names; `invalid_input` for anything else.
    public init(cursor: String) throws {
        var text = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard cursor.count <= 1024, let data = Data(base64Encoded: text),
              let position = try? JSONDecoder().decode(PagePosition.self, from: data) else {
            throw ClinicError.invalid(.cursorInvalid)
        }
        self = position
    }
}
