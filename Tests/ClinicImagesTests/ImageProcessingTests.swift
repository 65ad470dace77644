@testable import ClinicImages
import Foundation
import Testing
@testable import ClinicKit

/// Photos decoded and written again with libvips (issue 28's groundwork): kinds decided by
/// content, metadata (EXIF, the GPS position) gone, orientation applied, the longest side
/// capped, a thumbnail, and files that do not decode refused with a stable code.
@Suite struct ImageProcessingTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    func fixture(_ name: String) throws -> Data { try Data(contentsOf: Self.fixtures.appendingPathComponent(name)) }

    /// JPEG's segment markers before the image data: an APPn segment (0xE0…0xEF) carries
    /// metadata (APP1: EXIF and XMP, APP2: ICC).
    func metadataSegments(_ jpeg: Data) -> [UInt8] {
        let bytes = [UInt8](jpeg)
        var found: [UInt8] = [], index = 2
        while index + 4 <= bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            if marker == 0xDA { break }
            if (0xE0...0xEF).contains(marker) { found.append(marker) }
            index += 2 + (Int(bytes[index + 2]) << 8 | Int(bytes[index + 3]))
        }
        return found
    }

    @Test func kindsAreDecidedByTheFirstBytes() throws {
        #expect(AttachmentKind.detect(try fixture("portrait-exif.jpg")) == .jpeg)
        #expect(AttachmentKind.detect(try fixture("alpha.png")) == .png)
        #expect(AttachmentKind.detect(try fixture("small.heic")) == .heif)
        #expect(AttachmentKind.detect(try fixture("tiny.pdf")) == .pdf)
        #expect(AttachmentKind.detect(try fixture("garbage.bin")) == nil)
        #expect(AttachmentKind.detect(Data()) == nil)
        #expect(AttachmentKind.detect(Data("GIF89a".utf8)) == nil)
        // An AVIF (ftyp avif, or mif1 without an HEVC brand) is not a HEIC.
        func ftyp(_ brands: String...) -> Data {
            var data = Data([0, 0, 0, UInt8(8 + 4 * (brands.count + 1))]) + Data("ftyp".utf8)
            data += Data(brands[0].utf8) + Data([0, 0, 0, 0])
            for brand in brands.dropFirst() { data += Data(brand.utf8) }
            return data
        }
        #expect(AttachmentKind.detect(ftyp("avif", "mif1", "avif")) == nil)
        #expect(AttachmentKind.detect(ftyp("mif1", "mif1", "avif")) == nil)
        #expect(AttachmentKind.detect(ftyp("mif1", "mif1", "heic")) == .heif)
        #expect(AttachmentKind.detect(ftyp("heic", "mif1", "heic")) == .heif)
    }

    @Test func aPhotoLosesItsMetadataAndStandsUpright() throws {
        let original = try fixture("portrait-exif.jpg")
        #expect(original.range(of: Data("Exif".utf8)) != nil, "the fixture has EXIF with a GPS position and orientation 6")
        let processed = try VipsImageProcessor().process(original, kind: .jpeg)
        // 400×300 with "rotate 90° clockwise": kept 300×400.
        #expect(processed.width == 300 && processed.height == 400)
        #expect(metadataSegments(processed.image).isEmpty, "\(metadataSegments(processed.image))")
        #expect(processed.image.range(of: Data("Exif".utf8)) == nil && processed.image.range(of: Data("GPS".utf8)) == nil)
        #expect(AttachmentKind.detect(processed.thumbnail) == .jpeg && metadataSegments(processed.thumbnail).isEmpty)
        #expect(processed.thumbnail.count < processed.image.count)
    }

    @Test func theLongestSideIsCappedAndSmallPhotosAreNotEnlarged() throws {
        let processor = VipsImageProcessor()
        let wide = try processor.process(try fixture("wide.jpg"), kind: .jpeg)
        #expect(wide.width == ImageLimits.longestSide && wide.height == 53, "3400×60 fitted in 3000: \(wide.width)×\(wide.height)")
        let small = try processor.process(try fixture("alpha.png"), kind: .png)
        #expect(small.width == 400 && small.height == 300, "never enlarged")
        #expect(AttachmentKind.detect(small.image) == .jpeg, "a PNG is kept as JPEG, its transparency on white")
        let heic = try processor.process(try fixture("small.heic"), kind: .heif)
        #expect(heic.width == 400 && heic.height == 300 && metadataSegments(heic.image).isEmpty)
    }

    @Test func whatDoesNotDecodeIsRefused() throws {
        let processor = VipsImageProcessor()
        for (name, kind) in [("truncated.jpg", AttachmentKind.jpeg), ("garbage.bin", .jpeg), ("tiny.pdf", .pdf),
                             ("portrait-exif.jpg", .png), ("alpha.png", .heif)] {
            var refused: ClinicError?
            do { _ = try processor.process(try fixture(name), kind: kind) } catch let error as ClinicError { refused = error }
            #expect(refused?.code == .invalidInput && refused?.key == .attachmentUndecodable, "\(name) as \(kind)")
        }
        // 69 bytes that claim 20,000 × 20,000 pixels: refused from the header, never decoded.
        var huge: ClinicError?
        do { _ = try processor.process(try fixture("huge-header.png"), kind: .png) } catch let error as ClinicError { huge = error }
        #expect(huge?.code == .invalidInput && huge?.key == .attachmentPixels && huge?.arguments == ["100"])
        var empty: ClinicError?
        do { _ = try processor.process(Data(), kind: .jpeg) } catch let error as ClinicError { empty = error }
        #expect(empty?.key == .attachmentUndecodable)
    }

    /// Issue 42's decoding bombs (scripts/derive-image-bombs.py): a progressive JPEG of 1,001
    /// scans over 100 MP (20 s of a core) and a 16-bit RGBA PNG of 100 MP (800 MB decoded) are
    /// refused for the work they would take, from their headers and segments.
    @Test func decodingBombsAreRefusedBeforeDecoding() throws {
        let processor = VipsImageProcessor()
        for (name, kind) in [("scan-bomb.jpg", AttachmentKind.jpeg), ("deep.png", .png)] {
            var refused: ClinicError?
            do { _ = try processor.process(try fixture(name), kind: kind) } catch let error as ClinicError { refused = error }
            #expect(refused?.code == .invalidInput && refused?.key == .attachmentDecodeWork, "\(name): \(String(describing: refused))")
        }
    }

    @Test func aJPEGsScansAreCounted() throws {
        func scans(_ data: Data) -> Int { data.withUnsafeBytes { VipsImageProcessor.jpegScans($0) } }
        #expect(scans(try fixture("scan-bomb.jpg")) == 1_001)
        #expect(scans(try fixture("portrait-exif.jpg")) == 1)
        // Stuffed 0xFF00 and restart markers inside a scan are data, not the scan's end; fill
        // bytes before a marker are skipped; a cut file counts what it has.
        let sos = Data([0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00])
        let body = Data([0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xFF])
        #expect(scans(Data([0xFF, 0xD8]) + sos + body + sos + body + Data([0xFF, 0xD9])) == 2)
        #expect(scans(Data([0xFF, 0xD8]) + sos + body) == 1)
        #expect(scans(Data("not a jpeg".utf8)) == 0)
    }
}
