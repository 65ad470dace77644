import ClinicKit
import CQPDF
import Foundation

/// The check of a PDF from outside for content that acts by itself (issue 28; issue 42 item 8),
/// on qpdf's reading of the file (libqpdf, Debian's libqpdf-dev, through its C API): qpdf
/// parses the objects, reads object streams and decodes every standard filter and predictor
/// (ASCIIHex, ASCII85, LZW, RunLength, Flate with TIFF and PNG predictors), so what a viewer
/// decodes is what is looked at. Refused:
/// - a name that makes a PDF act (`activeNames`: scripts, launching programs, embedded files,
///   forms that send or fetch data) anywhere in any object, reachable or not;
/// - in what runs without a click — the document's `/OpenAction` and every `/AA` (a page's, an
///   annotation's, a form field's, the catalog's), with their `/Next` chains — any action
///   other than moving around the document (`automaticAllowed`): `/GoToR` to
///   `\\host\share\x.pdf` sends the reader's Windows password hash to that host on opening,
///   `/URI` calls out; a `/URI` link the reader clicks (a referral letter's) is kept;
/// - what cannot be checked: a file qpdf cannot open (or opens only with a password), an object
///   stream it cannot decode, more than `maximumObjects` objects declared, more work than the
///   budgets below.
/// qpdf only reads from memory here: its warnings are off, errors are collected, nothing is
/// written.
enum PDFActiveContent {
    /// Whether the bodies between `stream` and `endstream` that are zlib streams inflate to at
    /// most `budget` bytes in all (a body that is not one is skipped: qpdf decides about it).
    static func inflatesWithinBudget(_ data: Data, budget: Int = maximumInflatedBytes) -> Bool {
        let start = Data("stream".utf8), end = Data("endstream".utf8)
        var left = budget
        var index = data.startIndex
        while let keyword = data.range(of: start, in: index..<data.endIndex) {
            // "endstream" ends in "stream": a match that is its tail is not a stream's start.
            if keyword.lowerBound - data.startIndex >= 3, data[keyword.lowerBound - 3..<keyword.lowerBound] == Data("end".utf8) {
                index = keyword.upperBound
                continue
            }
            var body = keyword.upperBound
            if body < data.endIndex, data[body] == 0x0D { body += 1 }
            if body < data.endIndex, data[body] == 0x0A { body += 1 }
            guard let stop = data.range(of: end, in: body..<data.endIndex) else { break }
            // 15 + 32: a zlib or a gzip header, detected.
            left -= Gzip.inflatedCount([UInt8](data[body..<stop.lowerBound]), windowBits: 15 + 32, limit: left)
            if left < 0 { return false }
            index = stop.upperBound
        }
        return true
    }

    /// What the check found, nil when nothing.
    typealias Finding = PDFFinding

    /// Objects a PDF may declare (its trailer's `/Size`), checked before any is read; a letter
    /// or a scan has a few hundred.
    static let maximumObjects = 100_000
    /// Objects, array items and dictionary values looked at, in all.
    static let maximumNodes = 2_000_000
    /// Bytes of object streams decoded by the check, in all. Not a bound on qpdf's own memory:
    /// qpdf 11 decodes a cross-reference or object stream whole, with no limit, when it reads
    /// one; so before qpdf sees the file, its Flate streams are inflated here within
    /// `maximumInflatedBytes` (`inflatesWithinBudget`).
    static let maximumDecodedBytes = 64 * 1024 * 1024
    /// Bytes the raw `stream … endstream` bodies of a PDF may inflate to, in all, before qpdf
    /// reads it: a 10 MiB Flate bomb would otherwise be inflated whole (about 10 GiB) inside
    /// qpdf. A Flate stream nested inside another is bounded only by qpdf.
    static let maximumInflatedBytes = 128 * 1024 * 1024
    /// Actions looked at in one `/OpenAction` or `/AA` with its `/Next` chains.
    static let maximumActions = 1_000

    /// Names refused wherever they are (as spelled once `#xx` escapes are decoded).
    static let activeNames: Set<String> = ["/JavaScript", "/JS", "/Launch", "/EmbeddedFile", "/EmbeddedFiles", "/RichMedia",
                                           "/XFA", "/SubmitForm", "/ImportData"]
    /// The only actions that may run without a click: moving within the document and showing or
    /// hiding parts of it. Everything else (`/JavaScript`, `/Launch`, `/GoToR`, `/GoToE`, `/URI`,
    /// `/SubmitForm`, `/ImportData`, `/Rendition`, `/RichMediaExecute`, a type unknown) is refused.
    static let automaticAllowed: Set<String> = ["/GoTo", "/Named", "/Thread", "/SetOCGState", "/Trans", "/Hide", "/ResetForm"]

    /// The first thing found that makes `data` refused, nil when it may be kept.
    static func check(_ data: Data) -> Finding? {
        guard !data.isEmpty else { return .unreadable("empty") }
        guard inflatesWithinBudget(data) else { return .unreadable("streams inflate past the budget") }
        return data.withUnsafeBytes { raw -> Finding? in
            // qpdf reads the caller's buffer in place: it stays alive until qpdf_cleanup.
            guard let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self), let qpdf = qpdf_init() else {
                return .unreadable("qpdf")
            }
            var owned: qpdf_data? = qpdf
            defer {
                // An error left unread is printed by qpdf_cleanup: it is taken (and dropped) first.
                if qpdf_has_error(qpdf) != 0 { _ = qpdf_get_error(qpdf) }
                qpdf_cleanup(&owned)
            }
            qpdf_silence_errors(qpdf)
            qpdf_set_suppress_warnings(qpdf, QPDF_BOOL(QPDF_TRUE))
            let read = qpdf_read_memory(qpdf, "attachment", base, UInt64(raw.count), nil)
            guard read & QPDF_ERRORS == 0, qpdf_has_error(qpdf) == 0 else { return .unreadable("not a PDF qpdf can open") }
            var walk = Walk(qpdf: qpdf)
            return walk.run()
        }
    }

    /// One look through one opened file. Every `qpdf_oh` it makes is released once looked at
    /// (qpdf keeps them in a table until then).
    struct Walk {
        let qpdf: qpdf_data
        var seen = Set<Int64>()
        var nodes = 0
        var decoded = 0

        mutating func run() -> Finding? {
            let trailer = qpdf_get_trailer(qpdf)
            let declared = integer(trailer, "/Size") ?? 0
            guard declared <= PDFActiveContent.maximumObjects else {
                qpdf_oh_release(qpdf, trailer)
                return .unreadable("\(declared) objects")
            }
            // What a reader reaches from the trailer, then every object the cross-reference
            // declares, reachable or not (another reader may repair a file differently).
            if let found = visit(trailer) { return found }
            if declared > 1 {
                for id in 1..<declared {
                    if let found = visit(qpdf_get_object_by_id(qpdf, Int32(id), 0)) { return found }
                }
            }
            return nil
        }

        /// Looks at `root` and everything it refers to (each indirect object once); releases `root`.
        mutating func visit(_ root: qpdf_oh) -> Finding? {
            var stack = [root]
            defer { for handle in stack { qpdf_oh_release(qpdf, handle) } }
            while let handle = stack.popLast() {
                defer { qpdf_oh_release(qpdf, handle) }
                nodes += 1
                guard nodes <= PDFActiveContent.maximumNodes else { return .unreadable("more than \(PDFActiveContent.maximumNodes) values") }
                if qpdf_oh_is_indirect(qpdf, handle) != 0 {
                    let id = Int64(qpdf_oh_get_object_id(qpdf, handle)) << 20 | Int64(qpdf_oh_get_generation(qpdf, handle) & 0xFFFFF)
                    guard seen.insert(id).inserted else { continue }
                    guard seen.count <= PDFActiveContent.maximumObjects else {
                        return .unreadable("more than \(PDFActiveContent.maximumObjects) objects")
                    }
                }
                switch qpdf_oh_get_type_code(qpdf, handle) {
                case ot_name:
                    if let name = name(handle), PDFActiveContent.activeNames.contains(name) { return .active(name) }
                case ot_array:
                    let count = qpdf_oh_get_array_n_items(qpdf, handle)
                    if count > 0 { for index in 0..<count { stack.append(qpdf_oh_get_array_item(qpdf, handle, index)) } }
                case ot_dictionary:
                    if let found = dictionary(handle, into: &stack) { return found }
                case ot_stream:
                    let dictionary = qpdf_oh_get_dict(qpdf, handle)
                    stack.append(dictionary)
                    if isName(dictionary, "/Type", "/ObjStm"), let found = objectStream(handle, dictionary) { return found }
                default:
                    break
                }
                if qpdf_has_error(qpdf) != 0 { return .unreadable("damaged object") }
            }
            return nil
        }

        /// Checks a dictionary's keys, and its `/OpenAction` and `/AA`; its values go on `stack`.
        mutating func dictionary(_ handle: qpdf_oh, into stack: inout [qpdf_oh]) -> Finding? {
            // qpdf has one key iterator per file: the keys are taken first.
            var keys: [String] = []
            qpdf_oh_begin_dict_key_iter(qpdf, handle)
            while qpdf_oh_dict_more_keys(qpdf) != 0 {
                if let key = qpdf_oh_dict_next_key(qpdf) { keys.append(String(cString: key)) }
            }
            for key in keys {
                if PDFActiveContent.activeNames.contains(key) { return .active(key) }
                let value = key.withCString { qpdf_oh_get_key(qpdf, handle, $0) }
                stack.append(value)
                if key == "/OpenAction" || key == "/AA", let found = automatic(value, in: key) { return found }
            }
            return nil
        }

        /// The actions under an `/OpenAction` (an action, or a destination: nothing runs) or an
        /// `/AA` (an action per trigger), with their `/Next` chains.
        func automatic(_ value: qpdf_oh, in key: String) -> Finding? {
            var pending: [qpdf_oh] = []
            defer { for handle in pending { qpdf_oh_release(qpdf, handle) } }
            if key == "/AA" {
                guard qpdf_oh_is_dictionary(qpdf, value) != 0 else { return nil }
                var triggers: [String] = []
                qpdf_oh_begin_dict_key_iter(qpdf, value)
                while qpdf_oh_dict_more_keys(qpdf) != 0 {
                    if let trigger = qpdf_oh_dict_next_key(qpdf) { triggers.append(String(cString: trigger)) }
                }
                pending = triggers.map { trigger in trigger.withCString { qpdf_oh_get_key(qpdf, value, $0) } }
            } else {
                pending = [qpdf_oh_new_object(qpdf, value)]
            }
            var looked = 0
            while let action = pending.popLast() {
                defer { qpdf_oh_release(qpdf, action) }
                looked += 1
                guard looked <= PDFActiveContent.maximumActions else { return .unreadable("more than \(PDFActiveContent.maximumActions) actions in \(key)") }
                guard qpdf_oh_is_dictionary(qpdf, action) != 0 else { continue }
                let type = qpdf_oh_get_key(qpdf, action, "/S")
                let name = qpdf_oh_is_name(qpdf, type) != 0 ? self.name(type) : nil
                qpdf_oh_release(qpdf, type)
                if let name, !PDFActiveContent.automaticAllowed.contains(name) { return .active("\(name) in \(key)") }
                let next = qpdf_oh_get_key(qpdf, action, "/Next")
                if qpdf_oh_is_array(qpdf, next) != 0 {
                    let count = qpdf_oh_get_array_n_items(qpdf, next)
                    if count > 0 { for index in 0..<count { pending.append(qpdf_oh_get_array_item(qpdf, next, index)) } }
                    qpdf_oh_release(qpdf, next)
                } else {
                    pending.append(next)
                }
            }
            return nil
        }

        /// An object stream, decoded by qpdf. Its objects are looked at by `visit` where the
        /// cross-reference lists them; here, so that a file that another reader would repair
        /// differently hides nothing: it must decode, its names are looked at as bytes, and each
        /// object it holds must be one qpdf knows.
        mutating func objectStream(_ stream: qpdf_oh, _ dictionary: qpdf_oh) -> Finding? {
            var filtered = QPDF_BOOL(QPDF_FALSE)
            var buffer: UnsafeMutablePointer<UInt8>?
            var length = 0
            let code = qpdf_oh_get_stream_data(qpdf, stream, qpdf_dl_all, &filtered, &buffer, &length)
            defer { free(buffer) }
            guard code & QPDF_ERRORS == 0, qpdf_has_error(qpdf) == 0, filtered != 0, let buffer else {
                return .unreadable("an object stream that cannot be decoded")
            }
            decoded += length
            guard decoded <= PDFActiveContent.maximumDecodedBytes else { return .unreadable("object streams too large") }
            let bytes = UnsafeBufferPointer(start: buffer, count: length)
            if let found = PDFActiveContent.activeName(in: bytes) { return .active(found) }
            let first = integer(dictionary, "/First") ?? 0
            for id in PDFActiveContent.objectNumbers(in: bytes.prefix(max(0, min(first, length)))) {
                nodes += 1
                guard nodes <= PDFActiveContent.maximumNodes else { return .unreadable("more than \(PDFActiveContent.maximumNodes) values") }
                let object = qpdf_get_object_by_id(qpdf, Int32(clamping: id), 0)
                let type = qpdf_oh_get_type_code(qpdf, object)
                qpdf_oh_release(qpdf, object)
                if type == ot_null || type == ot_uninitialized { return .unreadable("an object stream the cross-reference does not list") }
            }
            return nil
        }

        func name(_ handle: qpdf_oh) -> String? {
            qpdf_oh_get_name(qpdf, handle).map { String(cString: $0) }
        }

        func isName(_ dictionary: qpdf_oh, _ key: String, _ expected: String) -> Bool {
            let value = qpdf_oh_get_key(qpdf, dictionary, key)
            defer { qpdf_oh_release(qpdf, value) }
            return qpdf_oh_is_name_and_equals(qpdf, value, expected) != 0
        }

        func integer(_ dictionary: qpdf_oh, _ key: String) -> Int? {
            let value = qpdf_oh_get_key(qpdf, dictionary, key)
            defer { qpdf_oh_release(qpdf, value) }
            var result: Int64 = 0
            return qpdf_oh_get_value_as_longlong(qpdf, value, &result) != 0 ? Int(result) : nil
        }
    }

    /// The object numbers an object stream's header lists (pairs of number and offset).
    static func objectNumbers(in header: UnsafeBufferPointer<UInt8>.SubSequence) -> [Int] {
        let numbers = header.split { !(0x30...0x39).contains($0) }.compactMap { Int(String(decoding: $0, as: UTF8.self)) }
        return stride(from: 0, to: numbers.count - 1, by: 2).map { numbers[$0] }
    }

    /// The first of `activeNames` spelled in `bytes` as a PDF name (`#xx` escapes decoded).
    static func activeName<Bytes: RandomAccessCollection>(in bytes: Bytes) -> String? where Bytes.Element == UInt8, Bytes.Index == Int {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard bytes[index] == UInt8(ascii: "/") else { index += 1; continue }
            // A name: '/' then regular characters; '#xx' is a byte in hex.
            var name: [UInt8] = [UInt8(ascii: "/")]
            var next = index + 1
            while next < bytes.endIndex, name.count <= 32 {
                let byte = bytes[next]
                if isDelimiterOrSpace(byte) { break }
                if byte == UInt8(ascii: "#"), next + 2 < bytes.endIndex,
                   let value = UInt8(String(decoding: [bytes[next + 1], bytes[next + 2]], as: UTF8.self), radix: 16) {
                    name.append(value)
                    next += 3
                } else {
                    name.append(byte)
                    next += 1
                }
            }
            let text = String(decoding: name, as: UTF8.self)
            if activeNames.contains(text) { return text }
            index = max(next, index + 1)
        }
        return nil
    }

    static func isDelimiterOrSpace(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x00, 0x09, 0x0A, 0x0C, 0x0D, 0x20: true
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "["), UInt8(ascii: "]"),
             UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "/"), UInt8(ascii: "%"): true
        default: false
        }
    }
}

/// The PDF check on libqpdf (`PDFActiveContent`), as ClinicKit's port: what the programs give
/// `ClinicSystem` (issue 56: ClinicKit itself no longer links libqpdf).
public struct QPDFChecker: PDFChecking {
    public init() {}

    public func check(_ data: Data) -> PDFFinding? { PDFActiveContent.check(data) }
}
