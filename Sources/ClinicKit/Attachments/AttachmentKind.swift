import Foundation

/// What an attached file is, decided by its first bytes (never by its name or the type a
/// client declared): a JPEG, PNG or HEIC/HEIF photo, or a PDF document.
public enum AttachmentKind: String, Sendable, CaseIterable {
    case jpeg, png, heif, pdf

    /// The type the file is served with.
    public var contentType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .heif: "image/heif"
        case .pdf: "application/pdf"
        }
    }

    /// Photos are decoded and written again (`ImageProcessing`); PDFs are kept as sent.
    public var isImage: Bool { self != .pdf }

    /// HEIF brands of HEVC-coded images. `mif1`/`msf1` are the generic brands AVIF uses too:
    /// such a file is HEIC only if it also names an HEVC brand.
    static let hevcBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]

    /// The kind of these bytes, or nil for anything else.
    public static func detect(_ data: Data) -> AttachmentKind? {
        let bytes = [UInt8](data.prefix(64))
        func starts(_ prefix: [UInt8]) -> Bool { bytes.count >= prefix.count && Array(bytes.prefix(prefix.count)) == prefix }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("%PDF-".utf8)) { return .pdf }
        return isHEIF(bytes) ? .heif : nil
    }

    /// An ISO base media file whose `ftyp` box names an HEVC image brand.
    static func isHEIF(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 16, Array(bytes[4..<8]) == Array("ftyp".utf8) else { return false }
        let size = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard size >= 16, size % 4 == 0 else { return false }
        func brand(at offset: Int) -> String? {
            guard offset + 4 <= min(size, bytes.count) else { return nil }
            return String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
        }
        guard let major = brand(at: 8) else { return false }
        if hevcBrands.contains(major) { return true }
        guard major == "mif1" || major == "msf1" else { return false }
        return stride(from: 16, to: min(size, bytes.count), by: 4).contains { brand(at: $0).map(hevcBrands.contains) ?? false }
    }
}

/// A photo as it is kept: decoded and written again as JPEG — upright, in sRGB, with no
/// metadata (no EXIF, no GPS position), its longest side at most `ImageLimits.longestSide` —
/// and a thumbnail.
public struct ProcessedImage: Sendable, Equatable {
    public let image: Data
    public let width: Int
    public let height: Int
    public let thumbnail: Data

    public init(image: Data, width: Int, height: Int, thumbnail: Data) {
        self.image = image; self.width = width; self.height = height; self.thumbnail = thumbnail
    }
}

/// The limits of a kept photo.
public enum ImageLimits {
    public static let longestSide = 3000
    public static let thumbnailSide = 320
    /// A photo of more pixels than this is refused before it is decoded (a small file can
    /// claim a huge picture).
    public static let maximumPixels = 100_000_000
    /// The decoded picture's bytes (pixels x bands x bytes a sample, from the header) may not
    /// pass this: 100 MP of 8-bit RGB, the most a camera writes. A 100 MP 16-bit RGBA PNG (800
    /// MB, 8 s of a core) is refused before it is decoded (issue 42).
    public static let maximumDecodedBytes = 300_000_000
    /// A progressive JPEG is decoded once per scan over the whole picture: legitimate ones have
    /// about ten (libjpeg's scripts: 6 for grey, 10 for colour), a hostile one thousands of
    /// scans a few bytes long (1,000 over 100 MP: 20 s of a core). At most this many scans,
    /// and at most `maximumScanPixels` pixels decoded over all scans (20 scans of 100 MP).
    public static let maximumScans = 100
    public static let maximumScanPixels = 2_000_000_000
    public static let quality = 82
}

/// Decodes a photo and writes it again (`ProcessedImage`); a file that does not decode is
/// `invalid_input` (`attachmentUndecodable`). ClinicImages implements it with libvips.
public protocol ImageProcessing: Sendable {
    func process(_ data: Data, kind: AttachmentKind) throws -> ProcessedImage
}

/// What a PDF from outside is checked for before it is kept: content that acts by itself
/// (scripts, actions that run on opening, embedded files). ClinicPDF implements it with libqpdf
/// (`QPDFChecker`).
public protocol PDFChecking: Sendable {
    /// The first thing found that makes `data` refused, nil when it may be kept.
    func check(_ data: Data) -> PDFFinding?
}

/// What a PDF check found.
public enum PDFFinding: Equatable, Sendable {
    /// Active content, named as in the file (`/JavaScript`, `/URI in /OpenAction`).
    case active(String)
    /// The file, or a part of it that matters, cannot be read or would take too much work.
    case unreadable(String)
}
