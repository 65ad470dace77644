import Foundation

/// RFC 4180 CSV over bytes: comma-separated, fields optionally in double quotes with `""`
/// for a quote, CRLF or LF line ends, an optional UTF-8 byte-order mark. A record whose
/// bytes are not UTF-8 is reported, not guessed at.
public enum CSV {
    public struct Record: Sendable, Equatable {
        /// The line on which the record starts, from 1.
        public let line: Int
        public let fields: [String]
    }

    public enum Problem: Sendable, Equatable {
        case invalidUTF8
        case unterminatedQuote
        case characterAfterQuote
    }

    public enum Item: Sendable, Equatable {
        case record(Record)
        case bad(line: Int, problem: Problem)
    }

    public static func parse(_ data: Data) -> [Item] {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        var items: [Item] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1
        var recordLine = 1
        var badUTF8 = false
        var problem: Problem?
        var index = 0
        let count = bytes.count

        func endField() {
            if let text = String(validating: field, as: UTF8.self) {
                fields.append(text)
            } else {
                badUTF8 = true
                fields.append("")
            }
            field.removeAll(keepingCapacity: true)
        }
        func endRecord() {
            endField()
            if let problem {
                items.append(.bad(line: recordLine, problem: problem))
            } else if badUTF8 {
                items.append(.bad(line: recordLine, problem: .invalidUTF8))
            } else if !(fields.count == 1 && fields[0].isEmpty) {
                items.append(.record(Record(line: recordLine, fields: fields)))
            }
            fields.removeAll(keepingCapacity: true)
            badUTF8 = false
            problem = nil
        }

        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\""), field.isEmpty {
                // A quoted field: read to the closing quote.
                index += 1
                var closed = false
                while index < count {
                    let inner = bytes[index]
                    if inner == UInt8(ascii: "\"") {
                        if index + 1 < count, bytes[index + 1] == UInt8(ascii: "\"") {
                            field.append(inner)
                            index += 2
                            continue
                        }
                        closed = true
                        index += 1
                        break
                    }
                    if inner == UInt8(ascii: "\n") { line += 1 }
                    field.append(inner)
                    index += 1
                }
                if !closed {
                    problem = .unterminatedQuote
                    break
                }
                // After the closing quote: a separator, a line end or the end of input.
                if index < count {
                    let next = bytes[index]
                    if next != UInt8(ascii: ","), next != UInt8(ascii: "\n"), next != UInt8(ascii: "\r") {
                        if problem == nil { problem = .characterAfterQuote }
                        // Skip to the next separator so the rest of the line is still read.
                        while index < count, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "\n") {
                            index += 1
                        }
                    }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: ","):
                endField()
                index += 1
            case UInt8(ascii: "\r"):
                index += 1
                if index < count, bytes[index] == UInt8(ascii: "\n") { continue }
                endRecord(); line += 1; recordLine = line
            case UInt8(ascii: "\n"):
                index += 1
                endRecord(); line += 1; recordLine = line
            default:
                field.append(byte)
                index += 1
            }
        }
        if problem == .unterminatedQuote {
            items.append(.bad(line: recordLine, problem: .unterminatedQuote))
        } else if !field.isEmpty || !fields.isEmpty {
            endRecord()
        }
        return items
    }

    /// One field for writing: quoted when it holds a comma, quote or line break.
    public static func escape(_ field: String) -> String {
        if field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return field
    }
}
