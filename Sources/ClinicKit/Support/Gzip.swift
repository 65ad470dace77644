import CZlib
import Foundation

/// gzip (RFC 1952) through zlib: the web app's static files and the map's clinics are sent
/// compressed to the browsers that take it (`Accept-Encoding`), and the base map, kept
/// compressed in `Data/`, is inflated once for those that do not.
public enum Gzip {
    /// The gzip stream of `bytes` (zlib's best compression); nil only if zlib fails.
    public static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        // 15 + 16: a 32 KiB window with the gzip header and trailer.
        guard deflateInit2_(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY,
                            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 32)
        var input = bytes
        let status = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target -> Int32 in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        return Array(output[0..<Int(stream.total_out)])
    }

    /// The bytes a gzip (or zlib) stream holds, at most `limit` of them; nil when the stream is
    /// broken or inflates past the limit.
    public static func decompress(_ bytes: [UInt8], limit: Int = 256 * 1024 * 1024) -> [UInt8]? {
        // 15 + 32: the header (gzip or zlib) is detected.
        let result = inflate(bytes, windowBits: 15 + 32, limit: limit)
        return result.finished && result.output.count <= limit ? result.output : nil
    }

    /// zlib's inflate of `input` (`windowBits` as `inflateInit2` takes them), stopping once
    /// more than `limit` bytes came out: what came out, and whether the stream ended cleanly.
    static func inflate(_ input: [UInt8], windowBits: Int32, limit: Int) -> (output: [UInt8], finished: Bool) {
        let (output, _, finished) = inflated(input, windowBits: windowBits, limit: limit, keep: true)
        return (output, finished)
    }

    /// How many bytes `input` inflates to, counting past `limit` no further than one buffer; the
    /// bytes are counted, not kept (`PDFActiveContent` measures a PDF's streams against a budget).
    package static func inflatedCount(_ input: [UInt8], windowBits: Int32, limit: Int) -> Int {
        inflated(input, windowBits: windowBits, limit: limit, keep: false).count
    }

    private static func inflated(_ input: [UInt8], windowBits: Int32, limit: Int, keep: Bool)
        -> (output: [UInt8], count: Int, finished: Bool) {
        var stream = z_stream()
        guard inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return ([], 0, false) }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        let finished = input.withUnsafeMutableBufferPointer { source -> Bool in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while true {
                let status = buffer.withUnsafeMutableBufferPointer { target -> Int32 in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = buffer.count - Int(stream.avail_out)
                if keep { output.append(contentsOf: buffer[0..<produced]) }
                count += produced
                if count > limit { return false }
                switch status {
                case Z_STREAM_END: return true
                case Z_OK: if stream.avail_in == 0 && produced == 0 { return false }
                default: return false
                }
            }
        }
        return (output, count, finished)
    }

    /// Whether a request's `Accept-Encoding` takes gzip: named (or `*`) without `q=0`.
    public static func isAccepted(by acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else { return false }
        var star = false
        for item in acceptEncoding.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first else { continue }
            let refused = parts.dropFirst().contains { part in
                part.hasPrefix("q=") && (Double(part.dropFirst(2)) ?? 1) == 0
            }
            if coding == "gzip" || coding == "x-gzip" { return !refused }
            if coding == "*" { star = !refused }
        }
        return star
    }
}
