import ClinicKit
import Foundation

enum Output {
    static func encoder(pretty: Bool = true) -> JSONEncoder { Shapes.encoder(pretty: pretty) }

    static func printJSON<T: Encodable>(_ value: T) throws {
        let data = try encoder().encode(value)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// Columns aligned by the width the terminal gives each character. On a terminal, the table
    /// is cut to its width (the widest columns lose characters first, marked with "…") and the
    /// header is bold where colour is allowed; elsewhere every character is printed.
    static func table(_ headers: [String], _ rows: [[String]], width: Int? = Terminal().columns,
                      style: Style = .stdout, flexible: Set<Int>? = nil) -> String {
        // Stored text is shown, never obeyed: a control character in a name is not an escape sequence here.
        let rows = rows.map { $0.map { $0.withoutControls() } }
        var widths = headers.map(displayWidth)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], displayWidth(cell))
            }
        }
        if let width { widths = fit(widths, into: width, flexible: flexible) }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let text = index < widths.count ? truncate(cell, to: widths[index]) : cell
                return index == cells.count - 1 ? text : text + String(repeating: " ", count: widths[index] - displayWidth(text))
            }.joined(separator: "  ")
        }
        var lines = [style.bold(line(headers)), line(widths.map { String(repeating: "-", count: $0) })]
        lines += rows.map(line)
        return lines.joined(separator: "\n")
    }

    /// Column widths that fit `limit` columns with two spaces between them: the widest of the
    /// `flexible` columns (names; default all) gives up one at a time, down to 4, then the
    /// widest of the others (a table too wide even then is left to wrap).
    static func fit(_ widths: [Int], into limit: Int, flexible: Set<Int>? = nil) -> [Int] {
        var widths = widths
        let gaps = 2 * max(widths.count - 1, 0)
        let groups = [flexible ?? Set(widths.indices), Set(widths.indices)]
        for group in groups {
            while widths.reduce(0, +) + gaps > limit {
                guard let widest = group.filter({ $0 < widths.count }).max(by: { (widths[$0], $1) < (widths[$1], $0) }),
                      widths[widest] > 4 else { break }
                widths[widest] -= 1
            }
        }
        return widths
    }

    /// The text cut to `width` display columns, ending in "…" when it was cut.
    static func truncate(_ text: String, to width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        var result = "", used = 0
        for character in text {
            let next = displayWidth(String(character))
            if used + next > width - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    /// Display columns: combining marks take none, East Asian wide characters two.
    static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { width, scalar in
            let value = scalar.value
            if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .enclosingMark
                || value == 0x200B { return width }
            if (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value) || (0xAC00...0xD7A3).contains(value)
                || (0xF900...0xFAFF).contains(value) || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
                || (0xFFE0...0xFFE6).contains(value) || (0x1F300...0x1FAFF).contains(value) || (0x20000...0x3FFFD).contains(value) {
                return width + 2
            }
            return width + 1
        }
    }
}

func minutesText(_ minutes: Int) -> String { Shapes.minutesText(minutes) }

/// Working hours with their slot length: "08:00–12:00/20′".
func hoursText(_ start: Int, _ end: Int, slot: Int) -> String {
    minutesText(start) + "–" + minutesText(end) + "/" + String(slot) + "′"
}

