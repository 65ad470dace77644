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
            cvips_unref(header)
            guard pixels <= ImageLimits.maximumPixels else {
                throw ClinicError.invalid(.attachmentPixels, String(ImageLimits.maximumPixels / 1_000_000))
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
