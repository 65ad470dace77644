import Foundation

/// The one file of a `multipart/form-data` upload (RFC 7578): the first part with a file name,
/// or the part named `file`. Only what an upload form sends is read (the file and short text
/// fields); anything else is refused as `body_invalid` by the caller.
struct MultipartFile: Sendable {
    let data: Data
    let contentType: String?
    let filename: String?
}

enum Multipart {
    /// The boundary of a `multipart/form-data` type, nil for any other type.
    static func boundary(_ contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return (1...70).contains(value.count) ? value : nil
        }
        return nil
    }

    /// The file part of `body`, nil when there is none (or the body is not well formed).
    static func file(in body: Data, boundary: String) -> MultipartFile? {
        form(in: body, boundary: boundary)?.file
    }

    /// The file part of `body` (the first part with a file name, or the part named `file`) and
    /// its other parts' values as text (a web form's `csrf`), at most 4 KiB each; nil when the
    /// body is not well formed.
    static func form(in body: Data, boundary: String) -> (file: MultipartFile?, fields: [String: String])? {
        let delimiter = Data(("--" + boundary).utf8)
        let separator = Data("\r\n\r\n".utf8)
        guard var cursor = body.range(of: delimiter)?.upperBound else { return nil }
        var file: MultipartFile?
        var fields: [String: String] = [:]
        while cursor + 2 <= body.endIndex {
            if body[cursor..<cursor + 2] == Data("--".utf8) { return (file, fields) }
            guard let headerEnd = body.range(of: separator, in: cursor..<body.endIndex) else { return nil }
            let headerText = String(decoding: body[cursor..<headerEnd.lowerBound], as: UTF8.self)
            let contentStart = headerEnd.upperBound
            guard let next = body.range(of: Data("\r\n".utf8) + delimiter, in: contentStart..<body.endIndex) else { return nil }
            var disposition = "", type: String?
            for line in headerText.components(separatedBy: "\r\n") {
                let pair = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                switch pair[0].lowercased() {
                case "content-disposition": disposition = pair[1]
                case "content-type": type = pair[1]
                default: break
                }
            }
            let filename = parameter("filename", of: disposition), name = parameter("name", of: disposition)
            if file == nil, filename != nil || name == "file" {
                file = MultipartFile(data: body.subdata(in: contentStart..<next.lowerBound), contentType: type, filename: filename)
            } else if let name, filename == nil, next.lowerBound - contentStart <= 4096 {
                fields[name] = String(decoding: body[contentStart..<next.lowerBound], as: UTF8.self)
            }
            cursor = next.upperBound
        }
        return nil
    }

    /// A parameter of a `Content-Disposition` value (`filename*=UTF-8''…` preferred over
    /// `filename="…"`), nil when absent.
    static func parameter(_ name: String, of header: String) -> String? {
        var plain: String?
        for item in header.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            let key = pair[0].lowercased()
            if key == name + "*", pair[1].lowercased().hasPrefix("utf-8''") {
                return String(pair[1].dropFirst(7)).removingPercentEncoding
            }
            if key == name {
                var value = pair[1]
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
                plain = value.replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\\\", with: "\\")
            }
        }
        return plain
    }
}
