import Foundation
import Testing
@testable import ClinicKit

/// gzip for the web app's files (issue 30): what is compressed inflates to the same bytes,
/// broken or oversized streams are refused, and `Accept-Encoding` is read as RFC 9110 says.
@Suite(.storeFree) struct GzipTests {
    @Test func compressedBytesInflateToTheSame() throws {
        let text = Array(String(repeating: "The nearest clinic is 2.4 mi away. ", count: 500).utf8)
        let zipped = try #require(Gzip.compress(text))
        #expect(zipped.count < text.count / 10)
        #expect(zipped.prefix(2) == [0x1f, 0x8b])  // a gzip member, as browsers expect
        #expect(Gzip.decompress(zipped) == text)
        #expect(Gzip.compress([]).flatMap { Gzip.decompress($0) } == [])
    }

    @Test func brokenAndOversizedStreamsAreRefused() throws {
        let zipped = try #require(Gzip.compress(Array(repeating: 0x41, count: 100_000)))
        #expect(Gzip.decompress(Array(zipped.dropLast(20))) == nil)  // truncated
        #expect(Gzip.decompress(Array("not gzip".utf8)) == nil)
        #expect(Gzip.decompress(zipped, limit: 1000) == nil)  // a bomb stops at the limit
    }

    @Test(arguments: [
        ("gzip, deflate, br", true), ("br;q=1.0, gzip;q=0.8", true), ("GZIP", true), ("x-gzip", true), ("*", true),
        ("gzip;q=0", false), ("gzip; q=0.000", false), ("identity", false), ("*;q=0", false), ("br", false), ("", false),
        ("*, gzip;q=0", false),
    ])
    func acceptEncodingIsRead(header: String, accepted: Bool) {
        #expect(Gzip.isAccepted(by: header) == accepted)
    }

    @Test func noHeaderMeansIdentity() {
        #expect(!Gzip.isAccepted(by: nil))
    }
}
