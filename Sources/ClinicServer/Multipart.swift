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
        let type = contentType.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "multipart/form-data", let value = parameters(of: contentType).first(where: { $0.name == "boundary" })?.value
        else { return nil }
        return (1...70).contains(value.count) ? value : nil
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
            // ISO-8859-1 maps each byte to one character, so that a parameter's bytes are all
            // still there to be read as UTF-8, or as Latin-1 if they are not UTF-8.
            let headerText = String(String.UnicodeScalarView(body[cursor..<headerEnd.lowerBound].map { Unicode.Scalar($0) }))
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
            let filename = parameter("filename", of: disposition, bytes: true), name = parameter("name", of: disposition, bytes: true)
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
    /// `filename="…"`), nil when absent. `bytes`: the header was read a byte a character
    /// (a multipart part's), and a value that is not UTF-8 is ISO-8859-1, as old clients send.
    static func parameter(_ name: String, of header: String, bytes: Bool = false) -> String? {
        let parameters = parameters(of: header)
        if let extended = parameters.first(where: { $0.name == name + "*" }), let value = extendedValue(extended.value) {
            return value
        }
        guard let plain = parameters.first(where: { $0.name == name })?.value else { return nil }
        return bytes ? text(ofBytes: plain) : plain
    }

    /// The parameters after a header value's first item, names lower-cased, in order. A value
    /// is a token or a quoted string (RFC 9110 5.6.4, as RFC 7578 and RFC 2183 use it): in quotes
    /// a backslash keeps the next character and `;` is part of the value, so
    /// `filename="a\";b.pdf"` is `a";b.pdf`. An unclosed quote runs to the end.
    static func parameters(of header: String) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var characters = Substring(header).unicodeScalars[...]
        func skipSpaces() { while let first = characters.first, first == " " || first == "\t" { characters.removeFirst() } }
        func skipToSeparator() {
            while let first = characters.first, first != ";" { characters.removeFirst() }
            if !characters.isEmpty { characters.removeFirst() }
        }
        skipToSeparator() // the disposition or media type
        while !characters.isEmpty {
            skipSpaces()
            var key = String.UnicodeScalarView()
            while let first = characters.first, first != "=", first != ";" { key.append(characters.removeFirst()) }
            guard characters.first == "=" else { skipToSeparator(); continue }
            characters.removeFirst()
            skipSpaces()
            var value = String.UnicodeScalarView()
            let quoted = characters.first == "\""
            if quoted {
                characters.removeFirst()
                while let first = characters.first {
                    characters.removeFirst()
                    if first == "\"" { break }
                    if first == "\\", let escaped = characters.first {
                        characters.removeFirst()
                        value.append(escaped)
                    } else {
                        value.append(first)
                    }
                }
                skipToSeparator() // anything between the closing quote and the next ';' is not part of it
            } else {
                while let first = characters.first, first != ";" { value.append(characters.removeFirst()) }
                skipToSeparator()
            }
            let name = String(key).trimmingCharacters(in: .whitespaces).lowercased()
            result.append((name, quoted ? String(value) : String(value).trimmingCharacters(in: .whitespaces)))
        }
        return result
    }

    /// An RFC 8187 value (`UTF-8''a%20b.pdf`, or `ISO-8859-1'en'…`), nil when it is not one.
    static func extendedValue(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var bytes: [UInt8] = []
        var scalars = parts[2].unicodeScalars[...]
        while let first = scalars.popFirst() {
            guard first.isASCII else { return nil }
            if first == "%" {
                let digits = scalars.prefix(2)
                guard digits.count == 2, digits.allSatisfy(\.properties.isASCIIHexDigit),
                      let byte = UInt8(String(String.UnicodeScalarView(digits)), radix: 16) else { return nil }
                scalars.removeFirst(2)
                bytes.append(byte)
            } else {
                bytes.append(UInt8(first.value))
            }
        }
        switch parts[0].lowercased() {
        case "utf-8": return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1": return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default: return nil
        }
    }

    /// A value read a byte a character: its bytes as UTF-8 when they are UTF-8, else as
    /// ISO-8859-1 (0xE9 is "é", not U+FFFD). A value with a character past U+00FF came from text
    /// already decoded and is kept as it is.
    static func text(ofBytes value: String) -> String {
        var bytes: [UInt8] = []
        for scalar in value.unicodeScalars {
            guard scalar.value <= 0xFF else { return value }
            bytes.append(UInt8(scalar.value))
        }
        return String(validating: bytes, as: UTF8.self) ?? value
    }
}
