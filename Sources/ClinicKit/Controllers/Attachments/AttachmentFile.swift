import Crypto
import Foundation

/// The limits of attachments and conversations.
public enum AttachmentLimits {
    /// Files one side (the patient, or the clinic) may keep on one appointment.
    public static let maximumFiles = 5
    /// The largest file taken, as sent (10 MiB).
    public static let maximumBytes = 10 * 1024 * 1024
    /// Stored and read a chunk at a time (each sealed on its own).
    public static let chunkSize = 256 * 1024
    /// The longest file name taken and kept, in bytes of UTF-8: a file system's NAME_MAX, and a
    /// bound on what a name costs. Counted in characters, one "e" with 2,000 combining accents
    /// was one character, and 200 of them (800 KB) made every list and download that large.
    public static let maximumNameLength = 255
}

/// A file as it arrives from outside: its bytes, and what the sender says of it (both only
/// checked against the bytes, never believed).
public struct AttachmentUpload: Sendable {
    public let data: Data
    /// The `Content-Type` it came with (nil: none said).
    public let declaredType: String?
    /// The name it came with (nil: none).
    public let name: String?

    public init(data: Data, declaredType: String? = nil, name: String? = nil) {
        self.data = data; self.declaredType = declaredType; self.name = name
    }
}

/// A file checked and made ready to store: what it is (from its bytes), what is kept of it, and
/// the name it is kept under. Made outside any transaction (decoding a photo takes a while).
public struct PreparedAttachment: Sendable {
    public let kind: AttachmentKind
    public let contentType: String
    public let data: Data
    public let thumbnail: Data?
    public let width: Int?
    public let height: Int?
    public let name: String
    public let sha256: String
}

/// What an attachment is, for lists and downloads (its bytes aside).
public struct AttachmentInfo: Sendable, Equatable {
    public let id: Int64
    public let appointmentId: Int64
    public let author: AttachmentAuthor
    public let contentType: String
    public let size: Int
    public let name: String
    /// The SHA-256 of the bytes as kept (hex).
    public let sha256: String
    public let width: Int?
    public let height: Int?
    public let hasThumbnail: Bool
    public let createdAt: Date
}

/// The sealed part of an attachment's row.
struct AttachmentMeta: Codable {
    let name: String
    let sha256: String
}

/// The checks of a file from outside, and what is kept of it (`AttachmentController.prepare`).
enum AttachmentFile {
    /// Other names of each kind's type that senders use.
    static func acceptsDeclared(_ declared: String, for kind: AttachmentKind) -> Bool {
        let type = declared.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if type.isEmpty || type == "application/octet-stream" { return true }
        switch kind {
        case .jpeg: return ["image/jpeg", "image/jpg", "image/pjpeg"].contains(type)
        case .png: return ["image/png", "image/x-png"].contains(type)
        case .heif: return ["image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence"].contains(type)
        case .pdf: return ["application/pdf", "application/x-pdf"].contains(type)
        }
    }

    static func extensions(of kind: AttachmentKind) -> Set<String> {
        switch kind {
        case .jpeg: ["jpg", "jpeg", "jpe", "jfif"]
        case .png: ["png"]
        case .heif: ["heic", "heif", "hif"]
        case .pdf: ["pdf"]
        }
    }

    /// The name a file is kept under: the sender's, checked, with the extension of what is kept
    /// (a photo is kept as JPEG). Refused: a path (`/`, `\`), a control character (NUL
    /// included) or a bidirectional override, more than `maximumNameLength` bytes of UTF-8, and
    /// an extension that says another type than the bytes are. The kept name fits the same limit.
    static func keptName(_ sent: String?, kind: AttachmentKind) throws -> String {
        let keptExtension = kind.isImage ? "jpg" : "pdf"
        let trimmed = (sent ?? "").trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return (kind.isImage ? "photo." : "document.") + keptExtension }
        guard trimmed.utf8.count <= AttachmentLimits.maximumNameLength, !Text.hasForbiddenControl(trimmed),
              !trimmed.contains("/"), !trimmed.contains("\\"), trimmed != ".", trimmed != ".." else {
            throw ClinicError.invalid(.attachmentNameInvalid, String(AttachmentLimits.maximumNameLength))
        }
        var stem = trimmed
        if let dot = trimmed.lastIndex(of: "."), dot != trimmed.startIndex {
            let suffix = String(trimmed[trimmed.index(after: dot)...]).lowercased()
            if (1...5).contains(suffix.count), suffix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                guard extensions(of: kind).contains(suffix) else {
                    throw ClinicError(.unsupportedType, .attachmentTypeMismatch, kind.contentType, "." + suffix)
                }
                stem = String(trimmed[..<dot])
            }
        }
        // The kept extension may be added or longer than the sent one: the stem gives way, so
        // that a name saved to disk under its kept name still fits NAME_MAX.
        while !stem.isEmpty, stem.utf8.count + 1 + keptExtension.utf8.count > AttachmentLimits.maximumNameLength { stem.removeLast() }
        if stem.isEmpty { stem = kind.isImage ? "photo" : "document" }
        return stem + "." + keptExtension
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}
