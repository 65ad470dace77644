import Foundation

/// A migration file's statements, one by one. postgres-nio speaks only the extended query
/// protocol, which takes one statement at a time, so a file is split at the semicolons that end
/// statements: not those inside quotes ('…', "…"), dollar quotes ($$…$$, $tag$…$tag$, function
/// bodies) or comments (-- …, /* … */).
enum SQLScript {
    static func statements(_ script: String) -> [String] {
        let characters = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0
        func flush() {
            let text = String(current).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty && !isOnlyComments(text) { statements.append(text) }
            current = String.UnicodeScalarView()
        }
        while index < characters.count {
            let c = characters[index]
            let next: Unicode.Scalar? = index + 1 < characters.count ? characters[index + 1] : nil
            if c == "-" && next == "-" {
                while index < characters.count && characters[index] != "\n" { current.append(characters[index]); index += 1 }
                continue
            }
            if c == "/" && next == "*" {
                var depth = 0
                while index < characters.count {
                    if characters[index] == "/" && index + 1 < characters.count && characters[index + 1] == "*" {
                        depth += 1; current.append("/"); current.append("*"); index += 2; continue
                    }
                    if characters[index] == "*" && index + 1 < characters.count && characters[index + 1] == "/" {
                        depth -= 1; current.append("*"); current.append("/"); index += 2
                        if depth == 0 { break }
                        continue
                    }
                    current.append(characters[index]); index += 1
                }
                continue
            }
            if c == "'" || c == "\"" {
                current.append(c); index += 1
                while index < characters.count {
                    current.append(characters[index])
                    if characters[index] == c {
                        // A doubled quote is one quote inside the string.
                        if index + 1 < characters.count && characters[index + 1] == c {
                            current.append(c); index += 2; continue
                        }
                        index += 1
                        break
                    }
                    index += 1
                }
                continue
            }
            if c == "$", let tag = dollarTag(characters, at: index) {
                for scalar in tag { current.append(scalar) }
                index += tag.count
                while index < characters.count {
                    if characters[index] == "$", matches(characters, at: index, tag) {
                        for scalar in tag { current.append(scalar) }
                        index += tag.count
                        break
                    }
                    current.append(characters[index]); index += 1
                }
                continue
            }
            if c == ";" { flush(); index += 1; continue }
            current.append(c); index += 1
        }
        flush()
        return statements
    }

    /// `$$` or `$tag$` starting at `index` (a tag is letters, digits and `_`, not first a digit).
    static func dollarTag(_ characters: [Unicode.Scalar], at index: Int) -> [Unicode.Scalar]? {
        var end = index + 1
        while end < characters.count, characters[end] != "$" {
            let scalar = characters[end]
            let isLetter = scalar.properties.isAlphabetic || scalar == "_"
            let isDigit = ("0"..."9").contains(scalar)
            guard isLetter || (isDigit && end > index + 1) else { return nil }
            end += 1
        }
        guard end < characters.count else { return nil }
        return Array(characters[index...end])
    }

    static func matches(_ characters: [Unicode.Scalar], at index: Int, _ tag: [Unicode.Scalar]) -> Bool {
        guard index + tag.count <= characters.count else { return false }
        return Array(characters[index..<(index + tag.count)]) == tag
    }

    static func isOnlyComments(_ text: String) -> Bool {
        text.split(separator: "\n").allSatisfy { $0.trimmingCharacters(in: .whitespaces).hasPrefix("--") || $0.trimmingCharacters(in: .whitespaces).isEmpty }
    }
}
