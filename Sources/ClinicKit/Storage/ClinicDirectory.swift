import Foundation

/// A clinic as read from a directory file or typed by an operator, before it has an id.
public struct ClinicInput: Sendable, Equatable {
    public var externalId: String
    public var name: String
    public var address: String
    public var city: String
    public var state: String
    public var zip: String
    public var phone: String
    public var website: String
    public var category: String
    public var isPediatric: Bool
    public var isHospital: Bool
    public var coordinate: Coordinate
    /// Nil: derived from the state and longitude.
    public var timeZone: String?
    public var description: String

    public init(externalId: String, name: String, address: String = "", city: String = "", state: String = "",
                zip: String = "", phone: String = "", website: String = "", category: String = "",
                isPediatric: Bool = false, isHospital: Bool = false, coordinate: Coordinate,
                timeZone: String? = nil, description: String = "") {
        self.externalId = externalId; self.name = name; self.address = address; self.city = city
        self.state = state; self.zip = zip; self.phone = phone; self.website = website
        self.category = category; self.isPediatric = isPediatric; self.isHospital = isHospital
        self.coordinate = coordinate; self.timeZone = timeZone; self.description = description
    }

    /// The text fields by their column name.
    var textFields: [(column: String, value: String)] {
        [("external_id", externalId), ("name", name), ("address", address), ("city", city), ("state", state), ("zip", zip),
         ("phone", phone), ("website", website), ("category", category), ("description", description),
         ("time_zone", timeZone ?? "")]
    }

    /// Why the directory would refuse this clinic (the same rules for an imported row and for
    /// one added by hand), or nil: no control characters; an external id of 1 to 64
    /// characters; a name of 1 to 200; a known time zone; other fields at most 500.
    func problem() -> (key: MessageKey, arguments: [String])? {
        if let field = textFields.first(where: { $0.value.unicodeScalars.contains { $0.properties.generalCategory == .control } }) {
            return (.importControlCharacter, [field.column])
        }
        let id = externalId.trimmingCharacters(in: .whitespaces), name = name.trimmingCharacters(in: .whitespaces)
        guard !id.isEmpty, id.count <= 64 else { return (.importEmptyId, []) }
        guard !name.isEmpty else { return (.importEmptyName, []) }
        guard name.count <= 200 else { return (.importFieldTooLong, ["name"]) }
        // Shows what it is: no blank letters, no stack of combining marks, bounded in bytes.
        guard Text.checkedText(name, maximum: 200) != nil else { return (.importNameInvalid, []) }
        if let zone = timeZone, TimeZone(identifier: zone) == nil { return (.importBadTimeZone, [zone]) }
        if let field = textFields.dropFirst(2).first(where: { $0.column != "time_zone" && $0.value.count > 500 }) {
            return (.importFieldTooLong, [field.column])
        }
        return nil
    }

    func makeClinic() -> Clinic {
        Clinic(id: nil, externalId: externalId, name: name, address: address, city: city,
               cityKey: Clinic.key(forCity: city), state: state, zip: zip, description: description,
               category: category, lat: coordinate.latitude, lon: coordinate.longitude,
               isPediatric: isPediatric, isHospital: isHospital,
               timeZone: timeZone ?? ZoneApproximation.zone(state: state, longitude: coordinate.longitude),
               phone: phone, website: website)
    }
}

/// A row of a directory file that cannot be imported, and why.
public struct ImportProblem: Sendable, Equatable {
    public let line: Int
    public let key: MessageKey
    public let arguments: [String]
}

/// The project's clinic directory format: CSV with a header naming the columns
/// (`external_id`, `name`, `lat`, `lon` required; `address`, `city`, `state`, `zip`, `phone`,
/// `website`, `category`, `is_pediatric`, `is_hospital`, `time_zone`, `description` optional),
/// in any order. See docs/DATA.md.
public enum ClinicDirectory {
    public static let requiredColumns = ["external_id", "name", "lat", "lon"]
    public static let optionalColumns = ["address", "city", "state", "zip", "phone", "website", "category",
                                         "is_pediatric", "is_hospital", "time_zone", "description"]

    public struct Parsed: Sendable {
        public var clinics: [ClinicInput] = []
        public var problems: [ImportProblem] = []
        /// HIFLD rows left out because their STATUS is CLOSED.
        public var closed = 0
    }

    /// The file formats `import-clinics` reads.
    public enum Format: String, Sendable, CaseIterable {
        /// The project's own (see above and docs/DATA.md).
        case project
        /// HIFLD's "Hospitals" layer as published (Data/clinics.csv is derived from it).
        case hifld
    }

    static let hifldRequired = ["id", "name", "latitude", "longitude", "status"]

    public static func parse(_ data: Data, format: Format = .project) throws -> Parsed {
        let items = CSV.parse(data)
        guard let first = items.first else { throw ClinicError.invalid(.importNoHeader) }
        guard case .record(let header) = first else { throw ClinicError.invalid(.importBadHeader) }
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        var position: [String: Int] = [:]
        for (index, name) in names.enumerated() where position[name] == nil { position[name] = index }
        let missing = (format == .hifld ? hifldRequired : requiredColumns).filter { position[$0] == nil }
        guard missing.isEmpty else {
            throw ClinicError.invalid(.importMissingColumns, missing.joined(separator: ", "))
        }
        // A HIFLD row is first translated into a row of the project's format.
        let columns = requiredColumns + optionalColumns
        let projectPosition = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, $0) })
        var result = Parsed()
        var seen: [String: Int] = [:]
        for item in items.dropFirst() {
            switch item {
            case .bad(let line, let problem):
                let key: MessageKey = switch problem {
                case .invalidUTF8: .importInvalidUTF8
                case .unterminatedQuote: .importUnterminatedQuote
                case .characterAfterQuote: .importBadQuote
                }
                result.problems.append(ImportProblem(line: line, key: key, arguments: []))
            case .record(var record):
                do {
                    var count = names.count, fields = position
                    if format == .hifld {
                        guard record.fields.count == names.count else {
                            throw ImportFailure(.importColumnCount, [String(record.fields.count), String(names.count)])
                        }
                        guard let translated = hifld(record, position) else { result.closed += 1; continue }
                        record = translated
                        count = columns.count
                        fields = projectPosition
                    }
                    let clinic = try row(record, header: count, position: fields)
                    if let first = seen[clinic.externalId] {
                        throw ImportFailure(.importDuplicateId, [clinic.externalId, String(first)])
                    }
                    seen[clinic.externalId] = record.line
                    result.clinics.append(clinic)
                } catch let failure as ImportFailure {
                    result.problems.append(ImportProblem(line: record.line, key: failure.key, arguments: failure.arguments))
                }
            }
        }
        return result
    }

    /// A HIFLD row as a row of the project's format, nil for a CLOSED hospital. Missing values
    /// (`NOT AVAILABLE`, `-999`) become empty; control characters become spaces and format
    /// characters go (the source has U+001E inside names and U+200E after websites), as in
    /// scripts/derive-default-directory.py; `TYPE = CHILDREN` is pediatric; all are hospitals.
    static func hifld(_ record: CSV.Record, _ position: [String: Int]) -> CSV.Record? {
        func field(_ name: String) -> String {
            guard let index = position[name], index < record.fields.count else { return "" }
            var scalars = String.UnicodeScalarView()
            for scalar in record.fields[index].unicodeScalars {
                switch scalar.properties.generalCategory {
                case .control: scalars.append(" ")
                case .format: continue
                default: scalars.append(scalar)
                }
            }
            let text = String(scalars).split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
            return text == "NOT AVAILABLE" || text == "-999" ? "" : text
        }
        guard field("status").uppercased() != "CLOSED" else { return nil }
        let kind = field("type"), beds = field("beds")
        var description = kind.isEmpty ? "Hospital" : kind.prefix(1).uppercased() + kind.dropFirst().lowercased() + " hospital"
        if !beds.isEmpty { description += ", \(beds) beds" }
        // In the order of requiredColumns + optionalColumns.
        let fields = [field("id"), field("name"), field("latitude"), field("longitude"), field("address"), field("city"),
                      field("state"), field("zip"), field("telephone"), field("website"), kind,
                      kind.uppercased() == "CHILDREN" ? "1" : "0", "1", "", description]
        return CSV.Record(line: record.line, fields: fields)
    }

    struct ImportFailure: Error {
        let key: MessageKey
        let arguments: [String]
        init(_ key: MessageKey, _ arguments: [String] = []) { self.key = key; self.arguments = arguments }
    }

    static func row(_ record: CSV.Record, header count: Int, position: [String: Int]) throws -> ClinicInput {
        guard record.fields.count == count else {
            throw ImportFailure(.importColumnCount, [String(record.fields.count), String(count)])
        }
        func field(_ name: String) -> String {
            guard let index = position[name] else { return "" }
            return record.fields[index].trimmingCharacters(in: .whitespaces)
        }
        // Numbers and flags fail their own parse; the text fields are checked by `problem()`.
        guard let lat = Text.decimal(field("lat")), let lon = Text.decimal(field("lon")),
              let coordinate = Coordinate(latitude: lat, longitude: lon) else {
            throw ImportFailure(.importBadCoordinates, [field("lat"), field("lon")])
        }
        func flag(_ name: String) throws -> Bool {
            switch field(name).lowercased() {
            case "", "0", "false", "no", "n": return false
            case "1", "true", "yes", "y": return true
            default: throw ImportFailure(.importBadFlag, [name, field(name)])
            }
        }
        let zone = field("time_zone")
        let input = ClinicInput(
            externalId: field("external_id"), name: field("name"), address: field("address"), city: field("city"),
            state: field("state"), zip: field("zip"), phone: field("phone"), website: field("website"),
            category: field("category"), isPediatric: try flag("is_pediatric"), isHospital: try flag("is_hospital"),
            coordinate: coordinate, timeZone: zone.isEmpty ? nil : zone, description: field("description"))
        if let problem = input.problem() { throw ImportFailure(problem.key, problem.arguments) }
        return input
    }
}
