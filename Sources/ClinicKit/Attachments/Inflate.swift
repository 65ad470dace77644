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

    /// The inflated bytes (nil when they are not a zlib stream), at most `budget` of them.
    static func inflate(_ input: ArraySlice<UInt8>, budget: inout Int) -> Data? {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var input = Array(input)
        let inflated: Bool = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while true {
                let status = buffer.withUnsafeMutableBufferPointer { target -> Int32 in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = buffer.count - Int(stream.avail_out)
                budget -= produced
                output.append(contentsOf: buffer[0..<produced])
                if budget <= 0 { return !output.isEmpty }
                switch status {
                case Z_STREAM_END: return true
                case Z_OK: if stream.avail_in == 0 && produced == 0 { return !output.isEmpty }
                case Z_BUF_ERROR: return !output.isEmpty
                default: return !output.isEmpty
                }
            }
        }
        return inflated ? output : nil
    }
}
