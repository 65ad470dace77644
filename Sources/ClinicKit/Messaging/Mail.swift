import Foundation

/// E-mail addresses and messages (RFC 5322 with MIME): what the outbox hands to the SMTP client.
public enum Mail {
    /// A plain address (local@domain): 3 to 254 characters, no spaces, quotes, angle brackets
    /// or control characters, one @, a dot in the domain. Deliberately narrower than RFC 5322.
    /// An address as typed, trimmed, or `invalid_input` (`emailInvalid`).
    static func checkedAddress(_ text: String) throws -> String {
        let address = text.trimmingCharacters(in: .whitespaces)
        guard isAddress(address) else { throw ClinicError.invalid(.emailInvalid, String(address.prefix(254))) }
        return address
    }

    public static func isAddress(_ text: String) -> Bool {
        guard (3...254).contains(text.utf8.count), text.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value < 127 }),
              !text.contains(where: { "<>()[]\\,;:\"".contains($0) }) else { return false }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && $0.count <= 63 && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
    }

    /// An attachment: a file name, a content type and its bytes.
    public struct Attachment: Sendable {
        public let filename: String
        public let contentType: String
        public let data: Data
    }

    /// A message with a UTF-8 plain-text body and optional attachments, lines ending in CRLF.
    public static func compose(from: String, to: String, subject: String, body: String, messageId: String, date: Date,
                               attachments: [Attachment] = []) -> Data {
        var lines = [
            "From: " + from,
            "To: " + to,
            "Subject: " + encodedWord(subject.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
                .withoutControls()),
            "Date: " + rfc5322Date(date),
            "Message-ID: <\(messageId)>",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
        ]
        let text = ["Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: base64", ""]
            + base64Lines(Data(body.withoutControls(keeping: ["\n"]).replacingOccurrences(of: "\n", with: "\r\n").utf8))
        if attachments.isEmpty {
            lines += text
        } else {
            let boundary = "=_" + messageId.replacingOccurrences(of: "@", with: "_")
            lines += ["Content-Type: multipart/mixed; boundary=\"\(boundary)\"", "", "--" + boundary] + text
            for attachment in attachments {
                lines += ["--" + boundary, "Content-Type: \(attachment.contentType)",
                          "Content-Disposition: attachment; filename=\"\(attachment.filename)\"",
                          "Content-Transfer-Encoding: base64", ""] + base64Lines(attachment.data)
            }
            lines.append("--\(boundary)--")
        }
        return Data((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// A header value in RFC 2047 encoded words when it is not plain ASCII.
    static func encodedWord(_ text: String) -> String {
        guard !text.unicodeScalars.allSatisfy({ $0.value >= 32 && $0.value < 127 }) else { return text }
        // Words of at most 45 bytes of UTF-8 (60 base64 characters), never splitting a character.
        var words: [String] = [], chunk = ""
        for character in text {
            if (chunk + String(character)).utf8.count > 45 {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?" + Data($0.utf8).base64EncodedString() + "?=" }.joined(separator: "\r\n ")
    }

    static func base64Lines(_ data: Data) -> [String] {
        data.base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
            .components(separatedBy: "\r\n")
    }

    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
