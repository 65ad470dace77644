import CZlib
import Foundation

/// zlib's inflate, for the Flate streams of a PDF (`AttachmentFile.activeContent`): what a PDF
/// compresses (object streams, content) is looked into as well as what it does not.
enum Inflate {
    /// The inflated contents of each `stream … endstream` of a PDF that inflates (others are
    /// skipped), at most `budget` bytes in all: a stream that inflates past it ends the search
    /// with the budget spent (a compression bomb is not inflated whole).
    static func flateStreams(in data: Data, budget: inout Int) -> [Data] {
        let bytes = [UInt8](data)
        let start = Array("stream".utf8), end = Array("endstream".utf8)
        var found: [Data] = []
        var index = 0
        while budget > 0, let keyword = firstIndex(of: start, in: bytes, from: index) {
            // "endstream" contains "stream": skip a match that is the tail of it.
            if keyword >= 3, Array(bytes[keyword - 3..<keyword]) == Array("end".utf8) { index = keyword + start.count; continue }
            var body = keyword + start.count
            if body < bytes.count, bytes[body] == 0x0D { body += 1 }
            if body < bytes.count, bytes[body] == 0x0A { body += 1 }
            guard let stop = firstIndex(of: end, in: bytes, from: body) else { break }
            if let inflated = inflate(bytes[body..<stop], budget: &budget) { found.append(inflated) }
            index = stop + end.count
        }
        return found
    }

    static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard needle.count <= bytes.count, from <= bytes.count - needle.count else { return nil }
        var index = from
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0], Array(bytes[index..<index + needle.count]) == needle { return index }
            index += 1
        }
        return nil
    }

    /// The inflated bytes (nil when they are not a zlib stream), at most `budget` of them
    /// (and what came out before a stream broke off).
    static func inflate(_ input: ArraySlice<UInt8>, budget: inout Int) -> Data? {
        let result = Gzip.inflate(Array(input), windowBits: 15, limit: max(0, budget))
        budget -= result.output.count
        return result.finished || !result.output.isEmpty ? Data(result.output) : nil
    }
}
