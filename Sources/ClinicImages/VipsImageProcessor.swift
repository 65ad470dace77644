import CVips
import ClinicKit
import Foundation

/// `ImageProcessing` with libvips (Debian's libvips-dev): the photo is decoded, turned
/// upright (EXIF orientation, HEIF rotation), converted to sRGB (an embedded colour profile is
/// not applied: a wide-gamut photo's colours shift a little), shrunk to fit
/// `ImageLimits.longestSide` (never enlarged), made opaque on white, and written as JPEG
/// without any metadata; the thumbnail the same at `ImageLimits.thumbnailSide`. Only JPEG, PNG
/// and HEIF are decoded: libvips's other loaders (PDF, ImageMagick…) are blocked
/// (`cvips_init`), and a file is checked against its detected kind before decoding.
public struct VipsImageProcessor: ImageProcessing {
    /// libvips is started by the first photo (a command that never sees one never loads it).
    public init() {}

    /// libvips is initialised once per process.
    private static let state = LockedState()
    private final class LockedState: @unchecked Sendable {
        let lock = NSLock()
        var done: Bool?
    }

    static func initialise() throws {
        try state.lock.withLock {
            if state.done == nil {
                setenv("VIPS_WARNING", "0", 0)
                state.done = cvips_init() == 0
            }
            guard state.done == true else {
                throw ClinicError(.internalError, .internalError, "libvips: \(Self.takeError())")
            }
        }
    }

    /// The loader class libvips uses for each kind.
    static let loaders: [AttachmentKind: String] = [
        .jpeg: "VipsForeignLoadJpegBuffer", .png: "VipsForeignLoadPngBuffer", .heif: "VipsForeignLoadHeifBuffer",
    ]

    public func process(_ data: Data, kind: AttachmentKind) throws -> ProcessedImage {
        try Self.initialise()
        guard kind.isImage, let expected = Self.loaders[kind] else { throw Self.undecodable() }
        return try data.withUnsafeBytes { raw -> ProcessedImage in
            guard let base = raw.baseAddress, raw.count > 0 else { throw Self.undecodable() }
            // What libvips would read it as must be what its first bytes say.
            guard let loader = cvips_loader_name(base, raw.count), String(cString: loader) == expected else {
                throw Self.undecodable()
            }
            // The header alone first: a few kilobytes can claim billions of pixels.
            guard let header = cvips_load_header(base, raw.count) else { throw Self.undecodable() }
            let pixels = Int(cvips_width(header)) * Int(cvips_height(header))
            let pixelBytes = Int(cvips_pixel_bytes(header))
            cvips_unref(header)
            guard pixels <= ImageLimits.maximumPixels else {
                throw ClinicError.invalid(.attachmentPixels, String(ImageLimits.maximumPixels / 1_000_000))
            }
            // The work is bounded before any pixel is decoded: the decoded bytes, and a JPEG's
            // scans (each one a pass over the whole picture).
            guard pixels * max(1, pixelBytes) <= ImageLimits.maximumDecodedBytes else {
                throw ClinicError.invalid(.attachmentDecodeWork)
            }
            if kind == .jpeg {
                let scans = Self.jpegScans(UnsafeRawBufferPointer(raw))
                guard scans <= ImageLimits.maximumScans, pixels * scans <= ImageLimits.maximumScanPixels else {
                    throw ClinicError.invalid(.attachmentDecodeWork)
                }
            }
            let (image, width, height) = try Self.jpeg(base, raw.count, side: ImageLimits.longestSide)
            let (thumbnail, _, _) = try Self.jpeg(base, raw.count, side: ImageLimits.thumbnailSide)
            return ProcessedImage(image: image, width: width, height: height, thumbnail: thumbnail)
        }
    }

    /// The photo decoded, fitted in a `side` square, and written as JPEG.
    static func jpeg(_ base: UnsafeRawPointer, _ count: Int, side: Int) throws -> (Data, Int, Int) {
        var fitted: UnsafeMutablePointer<VipsImage>?
        guard cvips_fit(base, count, &fitted, Int32(side)) == 0, let fitted else { throw undecodable() }
        defer { cvips_unref(fitted) }
        var colour: UnsafeMutablePointer<VipsImage>?
        guard cvips_srgb(fitted, &colour) == 0, let colour else { throw undecodable() }
        defer { cvips_unref(colour) }
        var opaque: UnsafeMutablePointer<VipsImage>?
        guard cvips_flatten_white(colour, &opaque) == 0, let opaque else { throw undecodable() }
        defer { cvips_unref(opaque) }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        // Decoding happens here (libvips is lazy): a damaged file fails now.
        guard cvips_jpeg(opaque, &buffer, &length, Int32(ImageLimits.quality)) == 0, let buffer else { throw undecodable() }
        defer { cvips_free(buffer) }
        return (Data(bytes: buffer, count: length), Int(cvips_width(opaque)), Int(cvips_height(opaque)))
    }

    /// The start-of-scan markers (SOS) of a JPEG, counted by walking its segments and skipping
    /// each scan's entropy-coded bytes (which end at a 0xFF that is neither stuffing, 0xFF00, nor
    /// a restart marker). Counting stops at the end of the image or of the bytes; a file that is
    /// not a JPEG counts 0 (libvips refuses it anyway).
    static func jpegScans(_ bytes: UnsafeRawBufferPointer) -> Int {
        let count = bytes.count
        guard count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8, let base = bytes.baseAddress else { return 0 }
        var index = 2, scans = 0
        while index + 1 < count {
            guard bytes[index] == 0xFF else { return scans }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue }          // fill bytes before a marker
            if marker == 0xD9 { return scans }                   // EOI
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { index += 2; continue }
            guard index + 3 < count else { return scans }
            index += 2 + (Int(bytes[index + 2]) << 8 | Int(bytes[index + 3]))
            guard marker == 0xDA else { continue }
            scans += 1
            // The scan's data: the next 0xFF followed by a marker other than a restart.
            while index < count {
                guard let found = memchr(base + index, 0xFF, count - index) else { return scans }
                index = base.distance(to: UnsafeRawPointer(found))
                guard index + 1 < count else { return scans }
                let next = bytes[index + 1]
                if next == 0x00 || (0xD0...0xD7).contains(next) { index += 2; continue }
                if next == 0xFF { index += 1; continue }
                break
            }
        }
        return scans
    }

    /// `invalid_input`: the file does not decode (libvips's words are dropped: they name its
    /// internals, not what the patient can do).
    static func undecodable() -> ClinicError {
        _ = takeError()
        return ClinicError.invalid(.attachmentUndecodable)
    }

    static func takeError() -> String {
        guard let text = cvips_error_take() else { return "" }
        defer { cvips_free(text) }
        return String(cString: text)
    }
}
