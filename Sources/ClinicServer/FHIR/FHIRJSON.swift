import Foundation

/// A FHIR JSON value with its object keys in the order written (FHIR's examples, and people,
/// read `resourceType` first). Resources are built as values of this type, not as Codable
/// structs: dozens of resource shapes each used in one place, written as the spec shows them.
indirect enum FHIRJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case number(Double)
    case string(String)
    case array([FHIRJSON])
    case object([Member])

    struct Member: Sendable, Equatable {
        let key: String
        let value: FHIRJSON
    }

    /// An object from pairs; a nil value (`.null`) and an empty array are left out, as FHIR
    /// wants (no empty elements).
    static func object(_ pairs: KeyValuePairs<String, FHIRJSON?>) -> FHIRJSON {
        .object(pairs.compactMap { key, value in
            guard let value, value != .null, value != .array([]) else { return nil }
            return Member(key: key, value: value)
        })
    }

    static func string(_ text: String?) -> FHIRJSON? { text.map { .string($0) } }

    // MARK: Reading input

    subscript(key: String) -> FHIRJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    var stringValue: String? { if case .string(let text) = self { return text }; return nil }
    var arrayValue: [FHIRJSON]? { if case .array(let items) = self { return items }; return nil }
    var isObject: Bool { if case .object = self { return true }; return false }
    var keys: [String] { if case .object(let members) = self { return members.map(\.key) }; return [] }

    /// Parses a body; nil for one that is not JSON.
    static func parse(_ data: Data) -> FHIRJSON? {
        try? JSONDecoder().decode(Decoded.self, from: data).value
    }

    private struct Decoded: Decodable {
        let value: FHIRJSON
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { value = .null }
            else if let bool = try? container.decode(Bool.self) { value = .bool(bool) }
            else if let int = try? container.decode(Int64.self) { value = .int(int) }
            else if let number = try? container.decode(Double.self) { value = .number(number) }
            else if let text = try? container.decode(String.self) { value = .string(text) }
            else if let items = try? container.decode([Decoded].self) { value = .array(items.map(\.value)) }
            else {
                let object = try container.decode([String: Decoded].self)
                value = .object(object.keys.sorted().map { Member(key: $0, value: object[$0]?.value ?? .null) })
            }
        }
    }

    // MARK: Writing

    var data: Data {
        var out = [UInt8]()
        out.reserveCapacity(1024)
        write(into: &out)
        return Data(out)
    }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let value): out += Array((value ? "true" : "false").utf8)
        case .int(let value): out += Array(String(value).utf8)
        case .number(let value):
            // FHIR decimals: no exponent, no NaN; whole numbers written without ".0".
            if !value.isFinite { out += Array("null".utf8) }
            else if value == value.rounded(), abs(value) < 1e15 { out += Array(String(Int64(value)).utf8) }
            else { out += Array(String(format: "%.6f", value).replacingOccurrences(of: #"0+$"#, with: "", options: .regularExpression).utf8) }
        case .string(let text): Self.writeString(text, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension FHIRJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
                    ExpressibleByArrayLiteral {
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(arrayLiteral elements: FHIRJSON...) { self = .array(elements) }
}
