import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A FHIR request's search parameters: each name with its values in the order sent (a name may
/// repeat), checked against the names the interaction takes. An unknown name is refused
/// (`invalid_input`) unless the client asked `Prefer: handling=lenient`, as FHIR's search says.
struct FHIRParameters: Sendable {
    private(set) var pairs: [(name: String, value: String)]

    /// The query's parameters, decoded as a form is (`+` is a space, as everywhere in the API:
    /// `address-city=New+York`); a time's offset sent as a bare `+` is read back by `instant`.
    init(query: String) {
        func decode(_ text: Substring) -> String {
            let spaced = text.replacingOccurrences(of: "+", with: " ")
            return spaced.removingPercentEncoding ?? spaced
        }
        pairs = query.split(separator: "&", omittingEmptySubsequences: true).map { part in
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(pieces[0]), pieces.count > 1 ? decode(pieces[1]) : "")
        }
    }

    init(pairs: [(name: String, value: String)]) { self.pairs = pairs }

    /// Parameters every interaction takes: `_format` (JSON only), `_pretty`, `_count`, and our paging's `_offset` and `_cursor`.
    static let common: Set<String> = ["_format", "_pretty", "_count", "_offset", "_cursor"]

    func check(allowed: Set<String>, lenient: Bool) throws {
        for (name, value) in pairs {
            if name == "_format" {
                let format = value.lowercased()
                guard ["json", "application/json", "application/fhir+json"].contains(format) else {
                    throw ServerError.invalid(.fhirFormat, value)
                }
            }
            guard !Self.common.contains(name), !allowed.contains(name) else { continue }
            if !lenient { throw ServerError.invalid(.fhirUnknownParameter, name, allowed.sorted().joined(separator: ", ")) }
        }
    }

    func values(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }
    func first(_ name: String) -> String? { values(name).first }

    /// `_count`: 1 to `maximum` (default `fallback`).
    func count(fallback: Int = 20, maximum: Int = 100) throws -> Int {
        guard let text = first("_count") else { return fallback }
        guard let number = Int(text), (1...maximum).contains(number) else {
            throw ServerError.invalid(.fhirCount, text, String(maximum))
        }
        return number
    }

    func offset() throws -> Int {
        guard let text = first("_offset") else { return 0 }
        guard let number = Int(text), number >= 0 else { throw ServerError.invalid(.fieldWholeNumber, "_offset") }
        return number
    }

    /// An id from a reference or a bare id (`Location/12`, `12`, `http://…/Location/12`).
    static func id(_ text: String, type: String, parameter: String) throws -> Int64 {
        let last = text.split(separator: "/").last.map(String.init) ?? text
        let owner = text.split(separator: "/").dropLast().last.map(String.init)
        guard owner == nil || owner == type, let id = Int64(last), id > 0 else {
            throw ServerError.invalid(.fhirReference, parameter, type)
        }
        return id
    }

    /// A token's code, `system|code` or `code`, with its system when given.
    static func token(_ text: String) -> (system: String?, code: String) {
        guard let bar = text.firstIndex(of: "|") else { return (nil, text) }
        let system = String(text[..<bar])
        return (system.isEmpty ? nil : system, String(text[text.index(after: bar)...]))
    }

    /// A specialization key from a token: SNOMED CT or ours, with or without its system.
    static func specialization(_ text: String) throws -> String {
        let (system, code) = token(text)
        switch system {
        case FHIRResources.snomed?:
            guard let key = Specialization.key(snomed: code) else { throw ServerError.invalid(.fhirCode, text) }
            return key
        case FHIRResources.specializationSystem?: return code
        case nil: return Specialization.key(snomed: code) ?? code
        default: throw ServerError.invalid(.fhirCode, text)
        }
    }

    /// A date or dateTime (FHIR's forms: `2026-12-01`, `2026-12-01T10:00:00Z`, with an offset);
    /// a date alone is its UTC midnight.
    static func instant(_ text: String, parameter: String) throws -> Date {
        // `2026-12-01T10:00:00+01:00` with its plus not encoded arrives with a space.
        let text = text.replacingOccurrences(of: " ", with: "+")
        if text.count == 10, let day = try? TimeInput.parseDay(text),
           let date = instant(seconds: day.daysSinceEpoch * 86_400) {
            return date
        }
        guard case .instant(let date)? = try? TimeInput.parse(text), FHIRParameters.instants.contains(date) else {
            throw ServerError.invalid(.fhirDate, parameter, text)
        }
        return date
    }

    /// The instants this server reads and writes: 1970 to the end of 9999 (four-digit years).
    static let instants = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 253_402_300_799)

    /// An instant from whole seconds since 1970 (a slot's or a proposal's id), nil outside `instants`.
    static func instant(seconds: Int64) -> Date? {
        guard seconds >= 0, seconds <= 253_402_300_799 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// A date search value with its prefix: `ge2026-12-01`, `lt2026-12-02T00:00:00Z`; `eq` (or
    /// none) on a date alone means that whole UTC day.
    static func dateRange(_ text: String, parameter: String) throws -> Range<Date> {
        let prefixes = ["eq", "ge", "gt", "le", "lt", "ne", "sa", "eb", "ap"]
        var prefix = "eq", value = text
        if let found = prefixes.first(where: { text.hasPrefix($0) }) { prefix = found; value = String(text.dropFirst(2)) }
        let start = try instant(value, parameter: parameter)
        let width: TimeInterval = value.count == 10 ? 86_400 : 1
        // `start` is within `instants`, so no bound below passes another.
        let first = instants.lowerBound, last = instants.upperBound, next = min(start.addingTimeInterval(width), last)
        switch prefix {
        case "eq": return start..<next
        case "ge": return start..<last
        case "gt": return next..<last
        case "le": return first..<next
        case "lt": return first..<start
        default: throw ServerError.invalid(.fhirDate, parameter, text)
        }
    }
}

extension Request {
    var fhirParameters: FHIRParameters { FHIRParameters(query: uri.query ?? "") }
    /// `Prefer: handling=lenient`: unknown search parameters are ignored rather than refused.
    var fhirLenient: Bool { headers[.prefer]?.lowercased().contains("handling=lenient") ?? false }
}

extension HTTPField.Name {
    static let prefer = Self("Prefer")!
    static let ifNoneExist = Self("If-None-Exist")!
}
